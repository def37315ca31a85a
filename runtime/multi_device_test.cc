// A Session over several devices: placement + partition + one executor per
// device joined by Send/Recv through a per-step rendezvous.
#include <algorithm>
#include <atomic>
#include <random>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "runtime/testing/test_ops.h"

namespace graphrun {
namespace {

std::string Dev(int k) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", k); }

// Text NodeDefs for the small pinned graphs below.
std::string ConstNode(const std::string& name, int dev, float value) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" device: \"", Dev(dev),
                      "\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
                      "attr { key: \"value\" value { tensor { dtype: DT_FLOAT float_val: ",
                      value, " } } } }\n");
}
// A one-input op; `typed` adds T: float (the test ops have no T).
std::string OpNode(const std::string& name, const std::string& op, const std::string& input,
                   int dev, bool typed = true) {
  return absl::StrCat("node { name: \"", name, "\" op: \"", op, "\" input: \"", input,
                      "\" device: \"", Dev(dev), "\"",
                      typed ? " attr { key: \"T\" value { type: DT_FLOAT } }" : "", " }\n");
}
std::unique_ptr<Session> PinnedSession(const std::string& nodes, int cpu_devices) {
  auto def = ParseGraphDef(nodes, GraphFormat::kText);
  EXPECT_TRUE(def.ok()) << def.status();
  SessionOptions options;
  options.cpu_devices = cpu_devices;
  auto session = Session::Create(*def, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return std::move(session).value();
}

// TestWaitForCancel and TestFailLater: runtime/testing/test_ops.cc.

// A random DAG of float ops on [4] vectors, each node pinned to a random
// device among `devices` (or unpinned when devices == 0), with random
// control edges. Returns the GraphDef and the names of the sinks.
struct RandomGraph {
  GraphDef def;
  std::vector<std::string> fetches;
};

RandomGraph MakeRandomGraph(uint64_t seed, int num_nodes, int devices) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  RandomGraph g;
  std::vector<int> uses(num_nodes, 0);
  static const char* kUnary[] = {"Neg", "Relu", "Identity", "Tanh", "Square"};
  static const char* kBinary[] = {"AddV2", "Mul", "Sub", "Maximum"};
  for (int i = 0; i < num_nodes; ++i) {
    NodeDef* n = g.def.add_node();
    n->set_name(absl::StrCat("n", i));
    if (devices > 0) n->set_device(Dev(uniform(devices)));
    AttrValue t;
    t.set_type(DT_FLOAT);
    const int kind = i < 3 ? 0 : uniform(10);
    if (kind == 0) {
      n->set_op("Const");
      (*n->mutable_attr())["dtype"] = t;
      TensorProto* v = (*n->mutable_attr())["value"].mutable_tensor();
      v->set_dtype(DT_FLOAT);
      v->mutable_tensor_shape()->add_dim()->set_size(4);
      for (int k = 0; k < 4; ++k) v->add_float_val(0.25f * static_cast<float>(uniform(9)) - 1);
    } else if (kind < 5) {
      n->set_op(kUnary[uniform(5)]);
      (*n->mutable_attr())["T"] = t;
      const int a = uniform(i);
      n->add_input(absl::StrCat("n", a));
      ++uses[a];
    } else {
      n->set_op(kBinary[uniform(4)]);
      (*n->mutable_attr())["T"] = t;
      const int a = uniform(i), b = uniform(i);
      n->add_input(absl::StrCat("n", a));
      n->add_input(absl::StrCat("n", b));
      ++uses[a];
      ++uses[b];
    }
    if (i > 3 && uniform(5) == 0) {
      const int c = uniform(i);
      n->add_input(absl::StrCat("^n", c));
      ++uses[c];
    }
  }
  for (int i = 0; i < num_nodes; ++i) {
    if (uses[i] == 0) g.fetches.push_back(absl::StrCat("n", i));
  }
  return g;
}

TEST(MultiDeviceTest, RandomGraphsOnRandomDevicesMatchOneDevice) {
  int graphs_with_transfers = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    const int devices = 2 + static_cast<int>(seed % 7);  // 2..8
    RandomGraph pinned = MakeRandomGraph(seed, 12 + static_cast<int>(seed % 40), devices);
    RandomGraph single = pinned;
    for (NodeDef& n : *single.def.mutable_node()) n.clear_device();
    SessionOptions one;
    auto s1 = Session::Create(single.def, one);
    ASSERT_TRUE(s1.ok()) << s1.status();
    std::vector<Tensor> want;
    ASSERT_TRUE((*s1)->Run({}, single.fetches, {}, &want).ok());

    SessionOptions many;
    many.cpu_devices = devices;
    // Partitions are compared node by node with the pinned graph: keep
    // it as written (the one-device run is optimized, a cross-check).
    many.optimize = SessionOptions::Optimize::kNone;
    // Every other graph fetches through the client side of the rendezvous.
    const bool client = seed % 2 == 1;
    many.feeds_through_rendezvous = client;
    auto s2 = Session::Create(pinned.def, many);
    ASSERT_TRUE(s2.ok()) << s2.status();
    RunOptions options;
    options.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor> got;
    absl::Status st = (*s2)->Run(options, {}, pinned.fetches, {}, &got, &metadata);
    ASSERT_TRUE(st.ok()) << "seed " << seed << ": " << st;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].NumElements(), want[i].NumElements());
      for (int64_t k = 0; k < want[i].NumElements(); ++k) {
        // Same kernels on both sides: bit-identical results.
        ASSERT_EQ(got[i].flat<float>()[k], want[i].flat<float>()[k])
            << "seed " << seed << " fetch " << pinned.fetches[i];
      }
    }

    // Every node runs where it was pinned; Sends equal the deduplicated
    // crossings of the placed graph.
    std::map<std::string, std::string> device_of;
    std::map<std::string, const NodeDef*> by_name;
    for (const GraphDef& part : metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        device_of[n.name()] = n.device();
        by_name[n.name()] = &n;
      }
    }
    for (const NodeDef& n : pinned.def.node()) {
      ASSERT_EQ(device_of[n.name()], n.device()) << n.name();
    }
    std::set<std::pair<std::string, std::string>> data_cross, control_cross;
    for (const NodeDef& n : pinned.def.node()) {
      for (const std::string& in : n.input()) {
        const bool ctl = in[0] == '^';
        const std::string src = ctl ? in.substr(1) : in;
        if (device_of[src] == n.device()) continue;
        (ctl ? control_cross : data_cross).insert({src, n.device()});
      }
    }
    auto is_client = [](const NodeDef& n) {
      auto it = n.attr().find("client_terminated");
      return it != n.attr().end() && it->second.b();
    };
    std::vector<std::string> sorted_fetches = pinned.fetches;
    std::stable_sort(sorted_fetches.begin(), sorted_fetches.end());
    for (const auto& [name, n] : by_name) {
      const bool fetch_node = client ? (n->op() == "_Send" && is_client(*n))
                                     : n->op() == "_Retval";
      if (!fetch_node) continue;
      // Its input was rewritten to the Recv when it crosses; recover the
      // source from the plan's fetch order ("_retval_<i>" / "_send_<i>"),
      // the fetches sorted by name.
      int64_t index = std::stoll(name.substr(name.rfind('_') + 1));
      const std::string& src = sorted_fetches[index];
      if (device_of[src] != n->device()) data_cross.insert({src, n->device()});
    }
    int data_sends = 0, control_sends = 0;
    for (const GraphDef& part : metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        if (n.op() != "_Send" || is_client(n)) continue;
        const NodeDef* src = by_name[n.input(0)];
        // A control transfer sends a dummy Const fed by ^src.
        if (src != nullptr && src->op() == "Const" && src->input_size() == 1 &&
            src->input(0)[0] == '^' && absl::StrContains(src->name(), "/_")) {
          ++control_sends;
        } else {
          ++data_sends;
        }
      }
    }
    EXPECT_EQ(data_sends, static_cast<int>(data_cross.size())) << "seed " << seed;
    EXPECT_EQ(control_sends, static_cast<int>(control_cross.size())) << "seed " << seed;
    graphs_with_transfers += data_sends > 0;
  }
  EXPECT_GT(graphs_with_transfers, 100);
}

// b (cheap, CPU:1) must wait for a (after a 512x512 MatMul, CPU:0) only
// because of ^a. Both are TestRecord ops, which append their names to one
// mutex-ordered sequence as they run: the order is recorded, not inferred
// from wall-clock stamps taken on different threads.
TEST(MultiDeviceTest, ControlEdgeAcrossDevicesOrdersExecution) {
  auto session = PinnedSession(absl::StrCat(R"pb(
    node { name: "m" op: "Const" device: ")pb", Dev(0), R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT
             tensor_shape { dim { size: 512 } dim { size: 512 } } float_val: 0.5 } } } }
    node { name: "mm" op: "MatMul" input: "m" input: "m" device: ")pb", Dev(0), R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "a" op: "TestRecord" input: "mm" device: ")pb", Dev(0), R"pb(" }
    node { name: "c" op: "Const" device: ")pb", Dev(1), R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
    node { name: "b" op: "TestRecord" input: "c" input: "^a" device: ")pb", Dev(1), R"pb(" }
  )pb"), 2);
  test_ops::TakeRecordedOrder();
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {"b", "a"}, {}, &out).ok());
    EXPECT_EQ(test_ops::TakeRecordedOrder(), (std::vector<std::string>{"a", "b"}))
        << "rep " << rep;
    EXPECT_EQ(out[0].scalar<float>(), 1.0f);
    EXPECT_EQ(out[1].dim_size(0), 512);
  }
}

// A partition fails while another waits in a Recv for its output: the step
// ends with the failing node's error, not a hang, and not "cancelled".
// TestFailLater fails only once the Recv of its output (on CPU:1) is
// waiting, so every repetition covers that case.
TEST(MultiDeviceTest, ErrorInOnePartitionAbortsTheOthers) {
  auto session = PinnedSession(
      ConstNode("x", 0, 1) + OpNode("bad", "TestFailLater", "x", 0, false) +
          OpNode("waits", "Neg", "bad", 1) + OpNode("other", "Neg", "x", 2),
      3);
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({}, {"waits", "other"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "node 'bad' (TestFailLater) on " + Dev(0))) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "always fails")) << s;
  }
  // The session still runs what does not fail.
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"other"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), -1.0f);
}

// A step stuck on one device while others wait in Recvs: the timeout
// cancels it everywhere; concurrent steps are independent.
TEST(MultiDeviceTest, TimeoutCancelsEveryPartition) {
  auto session = PinnedSession(absl::StrCat(R"pb(
    node { name: "x" op: "Placeholder" device: ")pb", Dev(0), R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "stuck" op: "TestWaitForCancel" input: "x" device: ")pb", Dev(1), R"pb(" }
    node { name: "after" op: "Neg" input: "stuck" device: ")pb", Dev(0), R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "fine" op: "Neg" input: "x" device: ")pb", Dev(1), R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb"), 2);
  RunOptions run;
  run.set_timeout_in_ms(50);
  std::atomic<int> timed_out{0}, fine{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      std::vector<Tensor> out;
      if (i % 2 == 0) {
        absl::Status s = session->Run(run, {{"x", Tensor::Scalar<float>(1)}}, {"after"},
                                         {}, &out, nullptr);
        if (s.code() == absl::StatusCode::kDeadlineExceeded) ++timed_out;
      } else {
        absl::Status s = session->Run({{"x", Tensor::Scalar<float>(2)}}, {"fine"}, {}, &out);
        if (s.ok() && out[0].scalar<float>() == -2.0f) ++fine;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(timed_out.load(), 3);
  EXPECT_EQ(fine.load(), 3);
}

// Feeds and fetches through the client side of the rendezvous give the
// same results as the call frame, on one device and across three.
TEST(MultiDeviceTest, FeedsAndFetchesThroughTheClientRendezvous) {
  auto def = ParseGraphDef(absl::StrCat(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "a" op: "Neg" input: "x" device: ")pb", Dev(1), R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "b" op: "Square" input: "a" device: ")pb", Dev(2), R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "AddV2" input: "a" input: "b"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb"), GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  const Tensor x = Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}));
  for (bool through_rendezvous : {false, true}) {
    SessionOptions options;
    options.cpu_devices = 3;
    options.feeds_through_rendezvous = through_rendezvous;
    auto session = Session::Create(*def, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunOptions run;
    run.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run(run, {{"x", x}}, {"c", "a", "c"}, {}, &out, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      const float v = static_cast<float>(i + 1);
      EXPECT_EQ(out[0].flat<float>()[i], -v + v * v);
      EXPECT_EQ(out[1].flat<float>()[i], -v);
      EXPECT_EQ(out[2].flat<float>()[i], -v + v * v);
    }
    int client_recvs = 0, client_sends = 0;
    for (const GraphDef& part : metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        const auto it = n.attr().find("client_terminated");
        if (it == n.attr().end() || !it->second.b()) continue;
        if (n.op() == "_Recv") {
          ++client_recvs;
          EXPECT_EQ(n.attr().at("tensor_name").s(), "x:0");
          EXPECT_EQ(n.device(), Dev(0));
        }
        client_sends += n.op() == "_Send";
      }
    }
    EXPECT_EQ(client_recvs, through_rendezvous ? 1 : 0);
    EXPECT_EQ(client_sends, through_rendezvous ? 3 : 0);
    // Every key, the client's included, carries the live incarnation of
    // the session's device that sends.
    std::map<std::string, uint64_t> incarnations;
    for (const Device* d : (*session)->devices()) incarnations[d->name()] = d->incarnation();
    int keyed = 0;
    for (const GraphDef& part : metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        if (n.op() != "_Send" && n.op() != "_Recv") continue;
        EXPECT_EQ(static_cast<uint64_t>(n.attr().at("send_device_incarnation").i()),
                  incarnations.at(n.attr().at("send_device").s()))
            << n.name();
        ++keyed;
      }
    }
    EXPECT_GT(keyed, 0);
    // A wrong feed is still caught before the step starts.
    s = (*session)->Run({{"x", Tensor::Scalar<int32_t>(1)}}, {"c"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

// A dead tensor crossing devices arrives as deadness: its consumers on the
// other device are skipped and the step ends (it does not wait for a value
// that will never come), while the live branch computes.
TEST(MultiDeviceTest, DeadTensorsCrossDevices) {
  auto session = PinnedSession(
      ConstNode("x", 0, 3) + OpNode("dead", "TestDead", "x", 0, false) +
          OpNode("after", "Neg", "dead", 1) + OpNode("live", "Neg", "x", 1),
      2);
  RunOptions run;
  run.set_timeout_in_ms(10000);  // a lost deadness would hang until here
  run.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status s = session->Run(run, {}, {"live"}, {"after"}, &out, &metadata);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), -3.0f);
  std::set<std::string> ran;
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& n : dev.node_stats()) ran.insert(n.node_name());
  }
  EXPECT_TRUE(ran.count("live"));
  EXPECT_FALSE(ran.count("after"));
  // Fetching the dead tensor itself is an error, not a hang.
  s = session->Run(run, {}, {"after"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "was not produced")) << s;
}

TEST(MultiDeviceTest, RequestForAMissingDeviceNamesTheNode) {
  auto def = ParseGraphDef(absl::StrCat(R"pb(
    node { name: "x" op: "Const" device: ")pb", Dev(5), R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
  )pb"), GraphFormat::kText);
  ASSERT_TRUE(def.ok());
  SessionOptions options;
  options.cpu_devices = 2;
  auto session = Session::Create(*def, options);
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({}, {"x"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "cannot place node 'x' (Const)")) << s;
  options.allow_soft_placement = true;
  auto soft = Session::Create(*def, options);
  ASSERT_TRUE(soft.ok());
  ASSERT_TRUE((*soft)->Run({}, {"x"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.0f);
}

}  // namespace
}  // namespace graphrun
