#include "partition/partition.h"

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"
#include "partition/partition_test_util.h"

namespace graphrun {

// A stateful op with a ref output, to check that ref edges are never
// deduplicated (graphrun registers no variable ops yet).
REGISTER_OP("PartitionTestRefVar")
    .Output("ref: Ref(float)")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

namespace {

using partition_testing::AddConst;
using partition_testing::AddOp;
using partition_testing::Evaluate;
using partition_testing::Find;
using partition_testing::Import;
using partition_testing::Inputs;
using partition_testing::PartitionOk;
using partition_testing::WithOp;

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr char kGpu1[] = "/job:localhost/replica:0/task:0/device:GPU:1";
constexpr char kW1Cpu[] = "/job:worker/replica:0/task:1/device:CPU:0";
constexpr char kW1Gpu[] = "/job:worker/replica:0/task:1/device:GPU:0";

TEST(PartitionTest, TwoDevices) {
  GraphDef def;
  def.mutable_versions()->set_producer(1234);
  AddConst(&def, "a", kCpu, 1);
  AddOp(&def, "b", "Identity", {"a"}, kGpu);
  AddOp(&def, "c", "AddV2", {"a", "b"}, kCpu);
  PartitionStats stats;
  auto parts = PartitionOk(def, {}, &stats);
  ASSERT_EQ(parts.size(), 2u);
  const GraphDef& cpu = parts[kCpu];
  const GraphDef& gpu = parts[kGpu];
  EXPECT_EQ(cpu.versions().producer(), 1234);
  EXPECT_EQ(gpu.versions().producer(), 1234);
  EXPECT_EQ(stats.data_sends, 2);
  EXPECT_EQ(stats.control_sends, 0);

  // a -> b: edge 0 (b's first in-edge), first new names a/_0 and a/_1.
  const NodeDef* send = Find(cpu, "a/_0");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->op(), "_Send");
  EXPECT_EQ(Inputs(send), std::vector<std::string>{"a"});
  EXPECT_EQ(send->attr().at("T").type(), DT_FLOAT);
  EXPECT_EQ(send->attr().at("tensor_name").s(), "edge_0_a");
  EXPECT_EQ(send->attr().at("send_device").s(), kCpu);
  EXPECT_EQ(send->attr().at("recv_device").s(), kGpu);
  EXPECT_EQ(send->attr().at("send_device_incarnation").i(), 1);
  const NodeDef* recv = Find(gpu, "a/_1");
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->op(), "_Recv");
  EXPECT_EQ(recv->attr().at("tensor_type").type(), DT_FLOAT);
  EXPECT_EQ(recv->attr().at("tensor_name").s(), "edge_0_a");
  EXPECT_EQ(Inputs(Find(gpu, "b")), std::vector<std::string>{"a/_1"});
  // b -> c: edge 2 (edges 1 and 2 are c's inputs a and b).
  ASSERT_EQ(WithOp(gpu, "_Send").size(), 1u);
  EXPECT_EQ(WithOp(gpu, "_Send")[0]->attr().at("tensor_name").s(), "edge_2_b");
  EXPECT_EQ(Inputs(Find(cpu, "c")),
            (std::vector<std::string>{"a", WithOp(cpu, "_Recv")[0]->name()}));
}

TEST(PartitionTest, ThreeDevicesChain) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddOp(&def, "b", "Identity", {"a"}, kGpu);
  AddOp(&def, "c", "Identity", {"b"}, kGpu1);
  AddOp(&def, "d", "AddV2", {"c", "a"}, kCpu);
  PartitionStats stats;
  auto parts = PartitionOk(def, {}, &stats);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(stats.data_sends, 3);
  EXPECT_EQ(WithOp(parts[kCpu], "_Send").size(), 1u);
  EXPECT_EQ(WithOp(parts[kCpu], "_Recv").size(), 1u);
  EXPECT_EQ(WithOp(parts[kGpu], "_Send").size(), 1u);
  EXPECT_EQ(WithOp(parts[kGpu1], "_Send").size(), 1u);
  EXPECT_EQ(Inputs(Find(parts[kCpu], "d"))[1], "a");
}

TEST(PartitionTest, OneSendPerTensorAndDestination) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddOp(&def, "x", "Identity", {"a"}, kGpu);
  AddOp(&def, "y", "AddV2", {"a", "a"}, kGpu);
  AddOp(&def, "z", "Identity", {"a"}, kGpu1);
  PartitionStats stats;
  auto parts = PartitionOk(def, {}, &stats);
  EXPECT_EQ(stats.data_sends, 2);
  ASSERT_EQ(WithOp(parts[kCpu], "_Send").size(), 2u);
  const auto recvs = WithOp(parts[kGpu], "_Recv");
  ASSERT_EQ(recvs.size(), 1u);
  const std::string r = recvs[0]->name();
  EXPECT_EQ(Inputs(Find(parts[kGpu], "x")), std::vector<std::string>{r});
  EXPECT_EQ(Inputs(Find(parts[kGpu], "y")), (std::vector<std::string>{r, r}));
}

TEST(PartitionTest, ControlEdgesCrossWithDummyTensor) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddConst(&def, "b", kGpu, 2)->add_input("^a");
  AddConst(&def, "c", kGpu, 3)->add_input("^a");
  AddConst(&def, "d", kCpu, 4)->add_input("^a");
  PartitionStats stats;
  auto parts = PartitionOk(def, {}, &stats);
  EXPECT_EQ(stats.control_sends, 1);
  EXPECT_EQ(stats.data_sends, 0);
  const GraphDef& cpu = parts[kCpu];
  const GraphDef& gpu = parts[kGpu];
  EXPECT_EQ(Inputs(Find(cpu, "d")), std::vector<std::string>{"^a"});

  const NodeDef* dummy = Find(cpu, "a/_0");
  ASSERT_NE(dummy, nullptr);
  EXPECT_EQ(dummy->op(), "Const");
  EXPECT_EQ(Inputs(dummy), std::vector<std::string>{"^a"});
  EXPECT_EQ(dummy->attr().at("dtype").type(), DT_FLOAT);
  const TensorProto& value = dummy->attr().at("value").tensor();
  EXPECT_EQ(value.dtype(), DT_FLOAT);
  ASSERT_EQ(value.tensor_shape().dim_size(), 1);
  EXPECT_EQ(value.tensor_shape().dim(0).size(), 0);
  const auto sends = WithOp(cpu, "_Send");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(Inputs(sends[0]), std::vector<std::string>{"a/_0"});
  EXPECT_EQ(sends[0]->attr().at("T").type(), DT_FLOAT);

  const auto identities = WithOp(gpu, "Identity");
  ASSERT_EQ(identities.size(), 1u);
  EXPECT_EQ(Inputs(identities[0]),
            std::vector<std::string>{WithOp(gpu, "_Recv")[0]->name()});
  const std::string ctl = "^" + identities[0]->name();
  EXPECT_EQ(Inputs(Find(gpu, "b")), std::vector<std::string>{ctl});
  EXPECT_EQ(Inputs(Find(gpu, "c")), std::vector<std::string>{ctl});
}

TEST(RendezvousKeyTest, TensorFlowFormatAndRoundTrip) {
  const std::string key = RendezvousKey(kCpu, 1, kGpu, "edge_5_MatMul", 0, 0);
  EXPECT_EQ(key,
            "/job:localhost/replica:0/task:0/device:CPU:0;0000000000000001;"
            "/job:localhost/replica:0/task:0/device:GPU:0;edge_5_MatMul;0:0");
  auto parsed = ParseRendezvousKey(key);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->send_device, kCpu);
  EXPECT_EQ(parsed->incarnation, 1u);
  EXPECT_EQ(parsed->recv_device, kGpu);
  EXPECT_EQ(parsed->tensor_name, "edge_5_MatMul");
  EXPECT_EQ(parsed->frame_id, 0u);
  EXPECT_EQ(parsed->iter_id, 0);

  const std::string big = RendezvousKey(kW1Cpu, 0xfedcba9876543210u, kCpu, "t",
                                        0x8000000000000001u, 42);
  EXPECT_EQ(big, absl::StrCat(kW1Cpu, ";fedcba9876543210;", kCpu,
                              ";t;9223372036854775809:42"));
  parsed = ParseRendezvousKey(big);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->incarnation, 0xfedcba9876543210u);
  EXPECT_EQ(parsed->frame_id, 0x8000000000000001u);
  EXPECT_EQ(parsed->iter_id, 42);
}

TEST(RendezvousKeyTest, ParseErrors) {
  const std::string cpu = kCpu;
  for (const std::string& bad : {
           std::string(""),
           cpu + ";0000000000000001;" + cpu + ";t",        // 4 parts
           cpu + ";0000000000000001;" + cpu + ";t;0:0;x",  // 6 parts
           cpu + ";1;" + cpu + ";t;0:0",                   // short hex
           cpu + ";000000000000000g;" + cpu + ";t;0:0",    // not hex
           cpu + ";0000000000000001;" + cpu + ";t;0",      // no iter
           cpu + ";0000000000000001;" + cpu + ";t;a:0",    // bad frame
       }) {
    auto parsed = ParseRendezvousKey(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(PartitionTest, AttrsSpellTheKeyWithIncarnation) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddOp(&def, "b", "Identity", {"a"}, kGpu);
  PartitionOptions options;
  options.get_incarnation = [](const std::string& d) -> uint64_t {
    return d == kCpu ? 0xfedcba9876543210u : 7;
  };
  auto parts = PartitionOk(def, options);
  const NodeDef* recv = WithOp(parts[kGpu], "_Recv")[0];
  const auto& a = recv->attr();
  EXPECT_EQ(RendezvousKey(
                a.at("send_device").s(), a.at("send_device_incarnation").i(),
                a.at("recv_device").s(), a.at("tensor_name").s(), 0, 0),
            absl::StrCat(kCpu, ";fedcba9876543210;", kGpu, ";edge_0_a;0:0"));
}

// task 0: CPU, GPU; task 1 (another worker): CPU. Float and int32 tensors
// go everywhere.
GraphDef CompressionGraph() {
  GraphDef def;
  AddConst(&def, "f", kCpu, 1.5);
  AddConst(&def, "i", kCpu, 3, DT_INT32);
  AddOp(&def, "f_gpu", "Identity", {"f"}, kGpu);
  AddOp(&def, "f_w1", "Identity", {"f"}, kW1Cpu);
  AddOp(&def, "f_w1b", "AddV2", {"f", "f"}, kW1Cpu);
  AddOp(&def, "i_w1", "Identity", {"i"}, kW1Cpu, DT_INT32);
  return def;
}

TEST(PartitionTest, CompressesOnlyFloatEdgesBetweenTasks) {
  for (auto mode : {PartitionOptions::WireCompression::kFp16,
                    PartitionOptions::WireCompression::kBf16Truncate}) {
    const bool bf16 = mode == PartitionOptions::WireCompression::kBf16Truncate;
    const DataType wire = bf16 ? DT_BFLOAT16 : DT_HALF;
    SCOPED_TRACE(DataTypeString(wire));
    PartitionOptions options;
    options.compression = mode;
    PartitionStats stats;
    auto parts = PartitionOk(CompressionGraph(), options, &stats);
    EXPECT_EQ(stats.compressed_edges, 1);
    EXPECT_EQ(stats.data_sends, 3);

    const auto send_casts = WithOp(parts[kCpu], "Cast");
    ASSERT_EQ(send_casts.size(), 1u);
    EXPECT_EQ(Inputs(send_casts[0]), std::vector<std::string>{"f"});
    EXPECT_EQ(send_casts[0]->attr().at("SrcT").type(), DT_FLOAT);
    EXPECT_EQ(send_casts[0]->attr().at("DstT").type(), wire);
    EXPECT_EQ(send_casts[0]->attr().at("Truncate").b(), bf16);
    int compressed_sends = 0;
    for (const NodeDef* send : WithOp(parts[kCpu], "_Send")) {
      if (send->attr().at("recv_device").s() == kW1Cpu &&
          send->attr().at("T").type() == wire) {
        ++compressed_sends;
        EXPECT_EQ(Inputs(send),
                  std::vector<std::string>{send_casts[0]->name()});
      } else {
        EXPECT_NE(send->attr().at("T").type(), wire);
      }
    }
    EXPECT_EQ(compressed_sends, 1);

    const GraphDef& w1 = parts[kW1Cpu];
    const auto back = WithOp(w1, "Cast");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0]->attr().at("SrcT").type(), wire);
    EXPECT_EQ(back[0]->attr().at("DstT").type(), DT_FLOAT);
    const NodeDef* recv = Find(w1, Inputs(back[0])[0]);
    ASSERT_NE(recv, nullptr);
    EXPECT_EQ(recv->op(), "_Recv");
    EXPECT_EQ(recv->attr().at("tensor_type").type(), wire);
    const std::string& cast = back[0]->name();
    EXPECT_EQ(Inputs(Find(w1, "f_w1")), std::vector<std::string>{cast});
    EXPECT_EQ(Inputs(Find(w1, "f_w1b")),
              (std::vector<std::string>{cast, cast}));
    // Same task: plain float; int32: plain even across tasks.
    EXPECT_EQ(WithOp(parts[kGpu], "_Recv")[0]->attr().at("tensor_type").type(),
              DT_FLOAT);
    EXPECT_EQ(Find(w1, Inputs(Find(w1, "i_w1"))[0])->op(), "_Recv");
    EXPECT_TRUE(WithOp(parts[kGpu], "Cast").empty());
  }
}

TEST(PartitionTest, NoCompressionByDefaultOrWithinATask) {
  PartitionStats stats;
  auto parts = PartitionOk(CompressionGraph(), {}, &stats);
  EXPECT_EQ(stats.compressed_edges, 0);
  for (const auto& [loc, part] : parts)
    EXPECT_TRUE(WithOp(part, "Cast").empty());

  // A task_of that puts every device in one task: nothing to compress.
  PartitionOptions options;
  options.compression = PartitionOptions::WireCompression::kBf16Truncate;
  options.task_of = [](const std::string&) { return std::string("one"); };
  PartitionOk(CompressionGraph(), options, &stats);
  EXPECT_EQ(stats.compressed_edges, 0);
}

TEST(PartitionTest, HostMemoryEndsUseHostSendAndRecv) {
  GraphDef def;
  AddConst(&def, "shape", kGpu, 2, DT_INT32);  // output in host memory
  AddOp(&def, "on_cpu", "Identity", {"shape"}, kCpu, DT_INT32);
  AddOp(&def, "on_gpu1", "Identity", {"shape"}, kGpu1, DT_INT32);  // host in
  AddOp(&def, "same_dev", "Identity", {"shape"}, kGpu, DT_INT32);  // device in
  AddConst(&def, "c", kCpu, 1, DT_INT32);
  AddOp(&def, "c_gpu1", "Identity", {"c"}, kGpu1, DT_INT32);  // host in
  PartitionOptions options;
  std::vector<std::string> asked;
  options.host_memory = [&](const Node& node, bool is_output, int index,
                            const std::string& device) {
    EXPECT_NE(device, kCpu);
    asked.push_back(node.name());
    if (node.name() == "shape") return is_output && index == 0;
    return node.name() == "on_gpu1" || node.name() == "c_gpu1";
  };
  PartitionStats stats;
  auto parts = PartitionOk(def, options, &stats);
  EXPECT_FALSE(asked.empty());
  EXPECT_EQ(stats.data_sends, 4);

  // GPU: _HostSend to CPU and to GPU1, plus a same-device pair for same_dev.
  const GraphDef& gpu = parts[kGpu];
  const auto host_sends = WithOp(gpu, "_HostSend");
  ASSERT_EQ(host_sends.size(), 3u);
  const auto gpu_recvs = WithOp(gpu, "_Recv");
  ASSERT_EQ(gpu_recvs.size(), 1u);
  EXPECT_EQ(gpu_recvs[0]->attr().at("send_device").s(), kGpu);
  EXPECT_EQ(gpu_recvs[0]->attr().at("recv_device").s(), kGpu);
  ASSERT_EQ(gpu_recvs[0]->input_size(), 1);
  EXPECT_EQ(Find(gpu, gpu_recvs[0]->input(0).substr(1))->op(), "_HostSend");
  EXPECT_EQ(Inputs(Find(gpu, "same_dev")),
            std::vector<std::string>{gpu_recvs[0]->name()});
  // CPU ends are always plain.
  EXPECT_EQ(WithOp(parts[kCpu], "_Recv").size(), 1u);
  EXPECT_EQ(WithOp(parts[kCpu], "_Send").size(), 1u);
  // GPU1 inputs in host memory.
  EXPECT_EQ(WithOp(parts[kGpu1], "_HostRecv").size(), 2u);
  EXPECT_TRUE(WithOp(parts[kGpu1], "_Recv").empty());
}

TEST(PartitionTest, RefEdgesAreNeverDeduplicated) {
  GraphDef def;
  NodeDef* var = def.add_node();
  var->set_name("var");
  var->set_op("PartitionTestRefVar");
  var->set_device(kCpu);
  AddConst(&def, "k", kGpu, 1);
  AddOp(&def, "x", "Identity", {"var"}, kGpu);
  AddOp(&def, "y", "AddV2", {"k", "var"}, kGpu);
  PartitionStats stats;
  auto parts = PartitionOk(def, {}, &stats);
  EXPECT_EQ(stats.data_sends, 2);
  const auto recvs = WithOp(parts[kGpu], "_Recv");
  ASSERT_EQ(recvs.size(), 2u);
  EXPECT_EQ(recvs[0]->attr().at("tensor_type").type(), DT_FLOAT);
  // y's ref recv waits for y's other input.
  const NodeDef* y = Find(parts[kGpu], "y");
  const NodeDef* y_recv = Find(parts[kGpu], Inputs(y)[1]);
  EXPECT_EQ(Inputs(y_recv), std::vector<std::string>{"^k"});
}

TEST(PartitionTest, DropsColocationWithOtherPartitions) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddConst(&def, "k", kGpu, 1);
  NodeDef* b = AddOp(&def, "b", "AddV2", {"a", "k"}, kGpu);
  auto* classes = (*b->mutable_attr())["_class"].mutable_list();
  classes->add_s("loc:@a");
  classes->add_s("loc:@k");
  NodeDef* c = AddOp(&def, "c", "Identity", {"a"}, kGpu);
  (*c->mutable_attr())["_class"].mutable_list()->add_s("loc:@a");
  auto parts = PartitionOk(def);
  const auto& b_classes =
      Find(parts[kGpu], "b")->attr().at("_class").list().s();
  EXPECT_EQ(std::vector<std::string>(b_classes.begin(), b_classes.end()),
            std::vector<std::string>{"loc:@k"});
  EXPECT_EQ(Find(parts[kGpu], "c")->attr().count("_class"), 0u);
}

TEST(PartitionTest, NewNamesSkipExistingOnes) {
  GraphDef def;
  AddConst(&def, "a", kCpu, 1);
  AddConst(&def, "a/_0", kCpu, 2);
  AddConst(&def, "a/_2", kGpu, 3);
  AddOp(&def, "b", "AddV2", {"a", "a/_0"}, kGpu);
  auto parts = PartitionOk(def);
  std::set<std::string> names;
  for (const auto& [loc, part] : parts) {
    for (const NodeDef& n : part.node()) {
      EXPECT_TRUE(names.insert(n.name()).second) << n.name();
    }
  }
  EXPECT_EQ(names.size(), 4u + 4u);  // a, a/_0, a/_2, b + two pairs
  EXPECT_EQ(Find(parts[kCpu], "a/_1")->op(), "_Send");
  EXPECT_EQ(Find(parts[kGpu], "a/_3")->op(), "_Recv");
}

TEST(PartitionTest, CustomLocationFunctionAndDevices) {
  GraphDef def;
  AddConst(&def, "a", "", 1);
  AddOp(&def, "b", "Identity", {"a"}, "");
  PartitionOptions options;
  options.node_to_loc = [](const Node& n) {
    return std::string(n.name() == "a" ? kW1Gpu : kCpu);
  };
  options.devices = {kCpu, kW1Gpu};
  auto parts = PartitionOk(def, options);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Find(parts[kW1Gpu], "a")->device(), kW1Gpu);
}

absl::Status PartitionError(const GraphDef& def,
                            const PartitionOptions& options = {}) {
  std::unique_ptr<Graph> graph = Import(def);
  if (graph == nullptr) return absl::InternalError("import failed");
  return Partition(*graph, options).status();
}

TEST(PartitionTest, ErrorsNameTheNode) {
  struct Case {
    std::string device;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "has no assigned device"},
           {"/device:GPU:0", "not a complete device name"},
           {"/job:localhost/replica:0/task:0/device:GPU", "not a complete"},
           {"/job:localhost/task:0/device:GPU:0", "not a complete"},
           {"/job:localhost/replica:0/task:x/device:GPU:0", "not a complete"},
           {kGpu1, "not one of the 2 known devices"},
       }) {
    GraphDef def;
    AddConst(&def, "a", kCpu, 1);
    AddOp(&def, "b", "Identity", {"a"}, c.device);
    PartitionOptions options;
    options.devices = {kCpu, kGpu};
    const absl::Status s = PartitionError(def, options);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.device;
    EXPECT_NE(s.message().find("node 'b' (Identity)"), std::string::npos) << s;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
}

TEST(PartitionTest, Deterministic) {
  GraphDef def = CompressionGraph();
  AddConst(&def, "late", kW1Cpu, 1)->add_input("^f_gpu");
  PartitionOptions options;
  options.compression = PartitionOptions::WireCompression::kBf16Truncate;
  auto first = PartitionOk(def, options);
  auto second = PartitionOk(def, options);
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [loc, part] : first) {
    EXPECT_EQ(SerializeDeterministically(part),
              SerializeDeterministically(second[loc]))
        << loc;
  }
}

TEST(PartitionTest, RandomDagsSendOncePerTensorAndDestination) {
  const std::vector<std::string> devices = {kCpu, kGpu, kW1Cpu, kW1Gpu};
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    auto pick = [&](int n) {
      return static_cast<int>(
          std::uniform_int_distribution<int>(0, n - 1)(rng));
    };
    GraphDef def;
    std::vector<std::string> device_of;
    // (src, dst device) for data and control crossings.
    std::set<std::pair<int, std::string>> data_crossings, control_crossings;
    for (int i = 0; i < 200; ++i) {
      const std::string name = absl::StrCat("n", i);
      const std::string device = devices[pick(4)];
      NodeDef* n;
      std::vector<int> srcs;
      if (i < 8 || pick(5) == 0) {
        n = AddConst(&def, name, device, static_cast<float>(pick(10)));
      } else if (pick(2) == 0) {
        srcs = {pick(i)};
        n = AddOp(&def, name, "Identity", {absl::StrCat("n", srcs[0])}, device);
      } else {
        srcs = {pick(i), pick(i)};
        n = AddOp(&def, name, "AddV2",
                  {absl::StrCat("n", srcs[0]), absl::StrCat("n", srcs[1])},
                  device);
      }
      for (int s : srcs) {
        if (device_of[s] != device) data_crossings.insert({s, device});
      }
      if (i > 0 && pick(4) == 0) {
        const int s = pick(i);
        n->add_input(absl::StrCat("^n", s));
        if (device_of[s] != device) control_crossings.insert({s, device});
      }
      device_of.push_back(device);
    }
    PartitionStats stats;
    PartitionOptions options;
    options.devices = devices;
    auto parts = PartitionOk(def, options, &stats);
    ASSERT_EQ(parts.size(), 4u);
    EXPECT_EQ(stats.data_sends, static_cast<int>(data_crossings.size()));
    EXPECT_EQ(stats.control_sends, static_cast<int>(control_crossings.size()));
    int sends = 0;
    std::vector<const GraphDef*> all;
    for (const auto& [loc, part] : parts) {
      sends += static_cast<int>(WithOp(part, "_Send").size());
      all.push_back(&part);
    }
    EXPECT_EQ(sends, stats.data_sends + stats.control_sends);

    // The partitions compute what the graph computes.
    const std::map<std::string, float> want = Evaluate({&def});
    const std::map<std::string, float> got = Evaluate(all);
    ASSERT_EQ(want.size(), 200u);
    int nodes = 0;
    for (const GraphDef* g : all) nodes += g->node_size();
    EXPECT_EQ(got.size(), static_cast<size_t>(nodes));
    for (const auto& [name, v] : want) EXPECT_EQ(got.at(name), v) << name;
  }
}

}  // namespace
}  // namespace graphrun
