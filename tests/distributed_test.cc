// The distributed runtime in one process: Workers (distributed/worker.h)
// joined directly through WorkerInterface, with their real data planes on
// loopback, and a MasterSession over them. Graphs TensorFlow exported run
// with their nodes pinned to random tasks and match TensorFlow's outputs;
// float32 tensors crossing tasks as fp16/bf16 stay within the formats'
// bounds; a failing worker fails the step naming its task; steps and
// graphs are cleaned up. Real processes over gRPC:
// tests/distributed_process_test.cc.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distributed/master_session.h"
#include "distributed/worker.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/testing/loop_graphs.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

std::string TaskName(int i) { return absl::StrCat("/job:worker/replica:0/task:", i); }

// Wraps a worker; fails the chosen methods with Unavailable, as a dead
// process would.
class FaultyWorker : public WorkerInterface {
 public:
  explicit FaultyWorker(WorkerInterface* base) : base_(base) {}
  // A restarted process behind the same address.
  void Replace(WorkerInterface* base) { base_ = base; }
  std::atomic<bool> fail_run_graph{false};
  std::atomic<bool> fail_get_status{false};

  void GetStatusAsync(const GetStatusRequest* q, GetStatusResponse* r, CallOptions* o,
                      StatusCallback d) override {
    if (fail_get_status) return d(absl::UnavailableError("connection refused"));
    base_.load()->GetStatusAsync(q, r, o, std::move(d));
  }
  void RegisterGraphAsync(const RegisterGraphRequest* q, RegisterGraphResponse* r,
                          CallOptions* o, StatusCallback d) override {
    base_.load()->RegisterGraphAsync(q, r, o, std::move(d));
  }
  void RunGraphAsync(const RunGraphRequest* q, RunGraphResponse* r, CallOptions* o,
                     StatusCallback d) override {
    if (fail_run_graph) return d(absl::UnavailableError("connection reset by peer"));
    base_.load()->RunGraphAsync(q, r, o, std::move(d));
  }
  void CleanupGraphAsync(const CleanupGraphRequest* q, CleanupGraphResponse* r, CallOptions* o,
                         StatusCallback d) override {
    base_.load()->CleanupGraphAsync(q, r, o, std::move(d));
  }
  void CleanupStepAsync(const CleanupStepRequest* q, CleanupStepResponse* r, CallOptions* o,
                        StatusCallback d) override {
    base_.load()->CleanupStepAsync(q, r, o, std::move(d));
  }
  void RecvTensorAsync(const RecvTensorRequest* q, RecvTensorReply* r, CallOptions* o,
                       StatusCallback d) override {
    base_.load()->RecvTensorAsync(q, r, o, std::move(d));
  }
  void HealthAsync(const HealthRequest* q, HealthResponse* r, CallOptions* o,
                   StatusCallback d) override {
    base_.load()->HealthAsync(q, r, o, std::move(d));
  }

 private:
  std::atomic<WorkerInterface*> base_;
};

// N workers in this process, each reaching the others (and the master
// reaching them) through a FaultyWorker that passes everything by default.
class Cluster {
 public:
  explicit Cluster(int n, int64_t inline_limit_bytes = 1024) {
    for (int i = 0; i < n; ++i) {
      WorkerOptions o;
      o.task_name = TaskName(i);
      o.inline_limit_bytes = inline_limit_bytes;
      o.connect = connect();
      auto w = Worker::Create(o);
      EXPECT_TRUE(w.ok()) << w.status();
      workers_.push_back(std::move(*w));
      fronts_.push_back(std::make_unique<FaultyWorker>(workers_.back().get()));
    }
  }

  ConnectFn connect() {
    return [this](const std::string& task, const std::string&)
               -> absl::StatusOr<std::shared_ptr<WorkerInterface>> {
      for (size_t i = 0; i < workers_.size(); ++i) {
        if (TaskName(static_cast<int>(i)) == task) {
          // Not owned: the cluster outlives every session.
          return std::shared_ptr<WorkerInterface>(fronts_[i].get(), [](WorkerInterface*) {});
        }
      }
      return absl::NotFoundError(task);
    };
  }

  std::map<std::string, std::string> addresses() const {
    std::map<std::string, std::string> m;
    for (size_t i = 0; i < workers_.size(); ++i) {
      m[TaskName(static_cast<int>(i))] = absl::StrCat("in-process:", i);
    }
    return m;
  }

  absl::StatusOr<std::unique_ptr<Session>> NewSession(
      const GraphDef& graph, WireEncoding wire = WIRE_ENCODING_NONE, bool soft = false) {
    MasterSessionOptions o;
    o.session.allow_soft_placement = soft;
    o.cluster = addresses();
    o.connect = connect();
    o.wire_encoding = wire;
    o.connect_timeout = absl::Seconds(5);
    return NewMasterSession(graph, o);
  }

  // A restarted process: a new Worker under the same task name.
  void Restart(int i) {
    WorkerOptions o;
    o.task_name = TaskName(i);
    o.connect = connect();
    auto w = Worker::Create(o);
    ASSERT_TRUE(w.ok());
    fronts_[i]->Replace(w->get());
    workers_[i] = std::move(*w);
  }

  Worker& worker(int i) { return *workers_[i]; }
  FaultyWorker& front(int i) { return *fronts_[i]; }
  int size() const { return static_cast<int>(workers_.size()); }

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<FaultyWorker>> fronts_;
};

// How many partitions of the step's plan run on each task.
std::map<std::string, int> PartitionsPerTask(const RunMetadata& metadata) {
  std::map<std::string, int> out;
  for (const std::string& d : metadata.placement().devices()) {
    out[d.substr(0, d.find("/device:"))]++;
  }
  return out;
}

TEST(DistributedTest, TensorFlowModelsMatchOverTwoAndThreeWorkers) {
  const auto models = testing::ReadFixtureManifest("tests/fixtures/");
  ASSERT_FALSE(models.empty());
  for (int n : {2, 3}) {
    Cluster cluster(n);
    int ran = 0;  // the MLP and the CNN, each once: an empty manifest fails
    for (const auto& m : models) {
      if (m.name != "mlp" && m.name != "cnn") continue;
      ++ran;
      for (uint32_t seed : {1u, 2u}) {
        SCOPED_TRACE(absl::StrCat(m.name, " over ", n, " workers, seed ", seed));
        RunMetadata metadata;
        absl::Status s = testing::RunFixtureIn(
            m, [&](const GraphDef& g) { return cluster.NewSession(g); }, &metadata,
            testing::PinToRandomTasks(n, seed));
        ASSERT_TRUE(s.ok()) << s;
        // The step really ran on every task.
        EXPECT_EQ(PartitionsPerTask(metadata).size(), static_cast<size_t>(n));
      }
    }
    EXPECT_EQ(ran, 2) << "tests/fixtures/MANIFEST lists the MLP and the CNN";
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(cluster.worker(i).NumSteps(), 0) << "task " << i << " kept a step";
      EXPECT_EQ(cluster.worker(i).NumGraphs(), 0) << "task " << i << " kept a graph";
    }
  }
}

TEST(DistributedTest, LoopsSpanningWorkersMatchTensorFlow) {
  const auto models = testing::ReadFixtureManifest("tests/fixtures/control_flow/");
  ASSERT_FALSE(models.empty());
  Cluster cluster(2);
  int ran = 0;
  for (const auto& m : models) {
    // Lowered and v1 loops are cut by task. TensorList (variant) tensors
    // cannot cross workers: the recurrent models' lists stay unpinned.
    if (m.form == "functional") continue;
    SCOPED_TRACE(m.name);
    RunMetadata metadata;
    absl::Status s = testing::RunFixtureIn(
        // Soft placement: a TensorArray's colocation group follows its
        // first member's pin.
        m, [&](const GraphDef& g) { return cluster.NewSession(g, WIRE_ENCODING_NONE, true); },
        &metadata, testing::PinToTasksAlternately(2));
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(PartitionsPerTask(metadata).size(), 2u);
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

// x (fed on task 0) -> y = Identity on task 1 -> z = Identity on task 0;
// w = Identity(x) on task 1.
GraphDef RoundTripGraph() {
  auto g = testing::LoopGraphDef(
      "node { name: 'x' op: 'Placeholder' device: '/job:worker/task:0' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'y' op: 'Identity' input: 'x' device: '/job:worker/task:1' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'z' op: 'Identity' input: 'y' device: '/job:worker/task:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'w' op: 'Identity' input: 'x' device: '/job:worker/task:1' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n");
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

std::vector<float> WireTestValues(int n) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,     -0.0f,    1.0f,     -2.5f,    1e-8f,   -3e-6f,
                          65504.0f, 65519.0f, 65520.0f, 70000.0f, -1e6f,   3.4e38f,
                          inf,      -inf,     std::nanf(""), 1.0009765625f, 1.00048828125f,
                          0.333333f};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 300.0f);
  while (static_cast<int>(v.size()) < n) v.push_back(normal(rng));
  v.resize(n);
  return v;
}

TEST(DistributedTest, Fp16AndBf16OnCrossWorkerEdgesStayWithinTheirBounds) {
  Cluster cluster(2);
  // 18 values travel inline in RecvTensor, 4096 over the data plane.
  for (int n : {18, 4096}) {
    const std::vector<float> x = WireTestValues(n);
    int64_t beyond = 0;
    // Beyond what rounding keeps finite: these saturate (65519 rounds to
    // 65504 as any value does).
    for (float v : x) beyond += std::isfinite(v) && std::fabs(v) >= 65520.0f;
    for (WireEncoding wire : {WIRE_ENCODING_FP16, WIRE_ENCODING_BF16, WIRE_ENCODING_NONE}) {
      SCOPED_TRACE(absl::StrCat(n, " values, encoding ", wire));
      auto session = cluster.NewSession(RoundTripGraph(), wire);
      ASSERT_TRUE(session.ok()) << session.status();
      std::vector<Tensor> out;
      RunMetadata metadata;
      ASSERT_TRUE((*session)
                      ->Run(RunOptions(), {{"x", Tensor::FromVector(x)}}, {"z", "w"}, {}, &out,
                            &metadata)
                      .ok());
      // The feed reaches task 1, and w comes back, exact: only y -> z
      // crosses in the wire encoding.
      const auto w = out[1].flat<float>();
      ASSERT_EQ(w.size(), x.size());
      EXPECT_EQ(std::memcmp(w.data(), x.data(), x.size() * sizeof(float)), 0);
      const auto z = out[0].flat<float>();
      ASSERT_EQ(z.size(), x.size());
      for (int i = 0; i < n; ++i) {
        const float a = x[i], b = z[i];
        SCOPED_TRACE(absl::StrCat("x = ", a, " arrived as ", b));
        if (std::isnan(a)) {
          EXPECT_TRUE(std::isnan(b));
        } else if (std::isinf(a)) {
          EXPECT_EQ(a, b);
        } else if (wire == WIRE_ENCODING_NONE) {
          EXPECT_EQ(std::signbit(a), std::signbit(b));
          EXPECT_EQ(a, b);
        } else if (wire == WIRE_ENCODING_FP16) {
          EXPECT_EQ(std::signbit(a), std::signbit(b));
          if (std::fabs(a) > 65504.0f) {
            EXPECT_EQ(b, std::copysign(65504.0f, a));  // saturated, not Inf
          } else {
            // Round to nearest: within half a unit in the last place of
            // half (11 significant bits; 2^-24 spacing below 2^-14).
            EXPECT_LE(std::fabs(b - a), std::max(std::ldexp(std::fabs(a), -11),
                                                 std::ldexp(1.0f, -25)));
          }
        } else {
          // bfloat16 by truncation: toward zero, 8 significant bits.
          EXPECT_EQ(std::signbit(a), std::signbit(b));
          EXPECT_LE(std::fabs(b), std::fabs(a));
          EXPECT_LT(std::fabs(a - b), std::ldexp(std::fabs(a), -7) + 1e-38f);
        }
      }
      // Counted where y -> z crosses.
      EXPECT_EQ(metadata.wire_fp16_saturated(), wire == WIRE_ENCODING_FP16 ? beyond : 0);
    }
  }
  // Values of other dtypes never change.
  auto g = testing::LoopGraphDef(
      "node { name: 'x' op: 'Placeholder' device: '/job:worker/task:0' "
      "attr { key: 'dtype' value { type: DT_INT32 } } }\n"
      "node { name: 'y' op: 'Identity' input: 'x' device: '/job:worker/task:1' "
      "attr { key: 'T' value { type: DT_INT32 } } }\n");
  ASSERT_TRUE(g.ok());
  auto session = cluster.NewSession(*g, WIRE_ENCODING_FP16);
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"x", Tensor::FromVector<int32_t>({70000, -1, 123456789})}},
                              {"y"}, {}, &out)
                  .ok());
  EXPECT_EQ(out[0].flat<int32_t>()[0], 70000);
  EXPECT_EQ(out[0].flat<int32_t>()[2], 123456789);
}

// A loop on task 1 whose count task 0 fetches: task 0 waits on task 1.
GraphDef LoopOnTask1() {
  std::string text = testing::IntConst("start", 0) + testing::Placeholder("n", "DT_INT32") +
                     testing::CountingLoop("loop", "start", "n", 1) +
                     "node { name: 'count' op: 'Identity' input: 'loop/exit_i' "
                     "attr { key: 'T' value { type: DT_INT32 } } }\n";
  auto g = testing::LoopGraphDef(text);
  EXPECT_TRUE(g.ok()) << g.status();
  for (NodeDef& node : *g->mutable_node()) {
    node.set_device(node.name() == "count" ? "/job:worker/task:0" : "/job:worker/task:1");
  }
  return *g;
}

TEST(DistributedTest, AFailedWorkerFailsTheStepNamingItsTask) {
  Cluster cluster(2);
  auto session = cluster.NewSession(LoopOnTask1());
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"n", Tensor::Scalar<int32_t>(100)}}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<int32_t>()[0], 100);

  // Task 1 is gone: task 0, which waits for the count, must not hang.
  cluster.front(1).fail_run_graph = true;
  absl::Status s = (*session)->Run({{"n", Tensor::Scalar<int32_t>(100)}}, {"count"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("/job:worker/replica:0/task:1"), std::string::npos) << s;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(cluster.worker(i).NumSteps(), 0) << i;

  // Back again: the next step runs.
  cluster.front(1).fail_run_graph = false;
  ASSERT_TRUE((*session)->Run({{"n", Tensor::Scalar<int32_t>(7)}}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<int32_t>()[0], 7);
}

TEST(DistributedTest, AKernelErrorOnOneWorkerAbortsTheOthers) {
  Cluster cluster(2);
  // Task 1 fails (a bad reshape) while task 0 waits for its result.
  auto g = testing::LoopGraphDef(
      "node { name: 'x' op: 'Placeholder' device: '/job:worker/task:0' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'shape' op: 'Const' device: '/job:worker/task:1' "
      "attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
      "int_val: 5 } } } }\n"
      "node { name: 'r' op: 'Reshape' input: 'x' input: 'shape' device: '/job:worker/task:1' "
      "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tshape' value { type: DT_INT32 } } }\n"
      "node { name: 'out' op: 'Identity' input: 'r' device: '/job:worker/task:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n");
  ASSERT_TRUE(g.ok()) << g.status();
  auto session = cluster.NewSession(*g);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{"x", Tensor::FromVector<float>({1, 2, 3})}}, {"out"}, {},
                                   &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'r'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("task:1"), std::string::npos) << s;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(cluster.worker(i).NumSteps(), 0) << i;
}

TEST(DistributedTest, ARecvTensorForAnEndedStepIsRefusedAtOnce) {
  Cluster cluster(1);
  Worker& w = cluster.worker(0);
  CleanupStepRequest cleanup;
  cleanup.set_step_id(77);
  CleanupStepResponse cleanup_response;
  absl::Status cs;
  w.CleanupStepAsync(&cleanup, &cleanup_response, nullptr, [&](const absl::Status& s) { cs = s; });
  ASSERT_TRUE(cs.ok());
  RecvTensorRequest req;
  req.set_step_id(77);
  req.set_rendezvous_key("/job:worker/replica:0/task:0/device:CPU:0;0000000000000001;"
                         "/job:worker/replica:0/task:1/device:CPU:0;edge_1_x;0:0");
  RecvTensorReply resp;
  absl::Notification done;
  absl::Status status;
  w.RecvTensorAsync(&req, &resp, nullptr, [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_EQ(w.NumSteps(), 0);
}

TEST(DistributedTest, ARestartedWorkerJoinsANewSession) {
  Cluster cluster(2);
  const GraphDef graph = LoopOnTask1();
  auto old_session = cluster.NewSession(graph);
  ASSERT_TRUE(old_session.ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*old_session)->Run({{"n", Tensor::Scalar<int32_t>(3)}}, {"count"}, {}, &out).ok());
  cluster.Restart(1);
  // The old session's partitions are gone with the old process.
  absl::Status s = (*old_session)->Run({{"n", Tensor::Scalar<int32_t>(3)}}, {"count"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("task:1"), std::string::npos) << s;
  auto new_session = cluster.NewSession(graph);
  ASSERT_TRUE(new_session.ok()) << new_session.status();
  ASSERT_TRUE((*new_session)->Run({{"n", Tensor::Scalar<int32_t>(5)}}, {"count"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<int32_t>()[0], 5);
}

TEST(DistributedTest, SessionCreationNamesTheTasksThatDoNotAnswer) {
  Cluster cluster(3);
  cluster.front(2).fail_get_status = true;
  auto session = cluster.NewSession(LoopOnTask1());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kDeadlineExceeded) << session.status();
  EXPECT_NE(session.status().message().find("/job:worker/replica:0/task:2 at in-process:2"),
            std::string::npos)
      << session.status();
  EXPECT_EQ(session.status().message().find("task:1 at"), std::string::npos) << session.status();
}

TEST(DistributedTest, ASessionWhoseMasterStopsCallingIsDropped) {
  // A clock the test moves.
  auto now = std::make_shared<std::atomic<int64_t>>(1000);
  WorkerOptions o;
  o.session_timeout = absl::Seconds(30);
  o.clock = [now] { return absl::FromUnixSeconds(now->load()); };
  auto worker = Worker::Create(o);
  ASSERT_TRUE(worker.ok());
  Worker& w = **worker;
  auto register_graph = [&](const std::string& session) {
    auto g = testing::LoopGraphDef(testing::IntConst("c", 1));
    EXPECT_TRUE(g.ok());
    RegisterGraphRequest req;
    req.set_session_handle(session);
    GraphPartition* p = req.add_partitions();
    p->set_device("/job:worker/replica:0/task:0/device:CPU:0");
    *p->mutable_graph() = *g;
    RegisterGraphResponse resp;
    absl::Status status;
    w.RegisterGraphAsync(&req, &resp, nullptr, [&](const absl::Status& s) { status = s; });
    EXPECT_TRUE(status.ok()) << status;
  };
  register_graph("alive");
  register_graph("gone");
  ASSERT_EQ(w.NumGraphs(), 2);
  *now += 20;
  EXPECT_EQ(w.DropIdleSessions(), 0);
  // The live master says so; the other never calls again.
  HealthRequest ping;
  ping.set_session_handle("alive");
  HealthResponse pong;
  w.HealthAsync(&ping, &pong, nullptr, [](const absl::Status&) {});
  *now += 11;  // 31 s after "gone" last called, 11 s after "alive" did
  EXPECT_EQ(w.DropIdleSessions(), 1);
  EXPECT_EQ(w.NumGraphs(), 1);
  *now += 30;
  EXPECT_EQ(w.DropIdleSessions(), 1);
  EXPECT_EQ(w.NumGraphs(), 0);
}

TEST(DistributedTest, PlacementNamesJobAndTask) {
  Cluster cluster(2);
  auto session = cluster.NewSession(LoopOnTask1());
  ASSERT_TRUE(session.ok());
  std::vector<Tensor> out;
  RunMetadata metadata;
  RunOptions options;
  options.set_output_partition_graphs(true);
  options.set_trace_level(RunOptions::FULL_TRACE);
  ASSERT_TRUE(
      (*session)->Run(options, {{"n", Tensor::Scalar<int32_t>(2)}}, {"count"}, {}, &out, &metadata)
          .ok());
  // Traced: each worker's partitions report their nodes.
  std::map<std::string, int> traced;
  for (const DeviceStepStats& d : metadata.step_stats().dev_stats()) {
    traced[d.device()] += d.node_stats_size();
  }
  EXPECT_GT(traced["/job:worker/replica:0/task:0/device:CPU:0"], 0);
  EXPECT_GT(traced["/job:worker/replica:0/task:1/device:CPU:0"], 0);
  bool saw_task1_loop = false;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      if (n.name() == "loop/add_i") {
        EXPECT_EQ(n.device(), "/job:worker/replica:0/task:1/device:CPU:0");
        saw_task1_loop = true;
      }
    }
  }
  EXPECT_TRUE(saw_task1_loop);
}

}  // namespace
}  // namespace graphrun
