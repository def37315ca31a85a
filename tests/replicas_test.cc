// Data-parallel replicas in one process (graph/replicate.h,
// runtime/replicated_session.h) on TensorFlow's v1 training graphs
// (tests/fixtures/training): 2 and 4 replicas on CPU devices, each fed a
// slice of TensorFlow's batch, give TensorFlow's full-batch losses and final
// variables (rtol 1e-5), and every replica's variables are bit-identical
// after every step. Bad input fails naming what is wrong.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "tests/fixture_tensors.h"
#include "graph/replicate.h"
#include "gtest/gtest.h"
#include "runtime/replicated_session.h"
#include "runtime/saver.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/training/";

Tensor Npy(const std::string& name) { return FixtureNpy(absl::StrCat(kDir, name)); }

Tensor Row(const Tensor& t, int64_t step) { return StepRow(t, step); }

void ExpectClose(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.NumElements(), want.NumElements()) << what;
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    const double g = got.flat<float>()[i], w = want.flat<float>()[i];
    ASSERT_LE(std::abs(g - w), 1e-6 + rtol * std::abs(w)) << what << " element " << i;
  }
}

std::unique_ptr<ReplicatedSession> MakeSession(const std::string& c, int replicas,
                                               int64_t bucket_bytes) {
  absl::StatusOr<GraphDef> graph = ReadGraphDefFile(absl::StrCat(kDir, c, ".pbtxt"));
  EXPECT_TRUE(graph.ok()) << graph.status();
  ReplicateOptions options;
  for (int r = 0; r < replicas; ++r) options.devices.push_back(absl::StrCat("/device:CPU:", r));
  options.bucket_bytes = bucket_bytes;
  absl::StatusOr<ReplicatedGraph> rg = ReplicateForDataParallel(*graph, options);
  EXPECT_TRUE(rg.ok()) << rg.status();
  if (!rg.ok()) return nullptr;
  SessionOptions so;
  so.cpu_devices = replicas;
  absl::StatusOr<std::unique_ptr<Session>> inner = Session::Create(rg->graph, so);
  EXPECT_TRUE(inner.ok()) << inner.status();
  if (!inner.ok()) return nullptr;
  return std::make_unique<ReplicatedSession>(*std::move(rg), *std::move(inner));
}

// 20 steps from TensorFlow's initial checkpoint on `replicas` replicas.
void TrainMatchesTensorFlow(const std::string& c, int replicas, int64_t bucket_bytes,
                            size_t want_buckets) {
  SCOPED_TRACE(absl::StrCat(c, " on ", replicas, " replicas"));
  std::unique_ptr<ReplicatedSession> session = MakeSession(c, replicas, bucket_bytes);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->graph().buckets.size(), want_buckets);
  absl::StatusOr<int> restored =
      RestoreVariables(session->graph().replica0, session.get(), absl::StrCat(kDir, c, "_init.ckpt"));
  ASSERT_TRUE(restored.ok()) << restored.status();
  ASSERT_TRUE(session->Broadcast().ok());
  ASSERT_TRUE(session->CheckReplicasEqual().ok());
  const Tensor xs = Npy(c + "_x.npy"), ys = Npy(c + "_y.npy"), losses = Npy(c + "_loss.npy");
  for (int step = 0; step < 20; ++step) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"x", Row(xs, step)}, {"y", Row(ys, step)}}, {"loss"},
                                  {"train"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectClose(out[0], Row(losses, step), 1e-5, absl::StrCat("loss at step ", step));
    s = session->CheckReplicasEqual();
    ASSERT_TRUE(s.ok()) << "after step " << step << ": " << s;
  }
  // Replica 0's final variables are TensorFlow's.
  int compared = 0;
  for (const ReplicatedVariable& v : session->graph().variables) {
    std::string key;
    for (char ch : v.name) key += ch == '/' ? std::string("__") : std::string(1, ch);
    absl::StatusOr<Tensor> want = ReadNpyFile(absl::StrCat(kDir, c, "_final__", key, ".npy"));
    if (!want.ok()) continue;  // not every variable was recorded
    ++compared;
    std::vector<Tensor> got;
    ASSERT_TRUE(session->Run({}, {v.reads.back()}, {}, &got).ok());
    ExpectClose(got[0], *want, 1e-5, v.name);
  }
  EXPECT_GE(compared, 4);
}

TEST(ReplicasTest, MlpSgdOnTwoReplicas) { TrainMatchesTensorFlow("mlp_sgd", 2, 25 << 20, 1); }
TEST(ReplicasTest, MlpAdamOnFourReplicas) { TrainMatchesTensorFlow("mlp_adam", 4, 25 << 20, 1); }
TEST(ReplicasTest, MlpMomentumResourceOnTwo) {
  TrainMatchesTensorFlow("mlp_momentum_resource", 2, 25 << 20, 1);
}
// One bucket per gradient: four exchanges that overlap the backward pass.
TEST(ReplicasTest, CnnAdamInSmallBuckets) { TrainMatchesTensorFlow("cnn_adam", 2, 1, 4); }
TEST(ReplicasTest, CnnSgdResourceOnFour) {
  TrainMatchesTensorFlow("cnn_sgd_resource", 4, 25 << 20, 1);
}

TEST(ReplicasTest, FeedTheReplicasCannotSplit) {
  std::unique_ptr<ReplicatedSession> session = MakeSession("mlp_sgd", 3, 25 << 20);
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", Row(Npy("mlp_sgd_x.npy"), 0)}}, {"loss"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("feed x has 16 rows"), std::string::npos) << s;
  EXPECT_NE(s.message().find("3 replicas"), std::string::npos) << s;
}

TEST(ReplicasTest, ReplicasThatDifferAreNamed) {
  std::unique_ptr<ReplicatedSession> session = MakeSession("mlp_sgd", 2, 25 << 20);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(RestoreVariables(session->graph().replica0, session.get(),
                               absl::StrCat(kDir, "mlp_sgd_init.ckpt"))
                  .ok());
  // Without the broadcast, replica 1's variables were never set.
  ASSERT_FALSE(session->CheckReplicasEqual().ok());
  ASSERT_TRUE(session->Broadcast().ok());
  // Replica 1's first weight changed behind the replicas' back.
  GraphDef poke;
  NodeDef* c = poke.add_node();
  c->set_name("poke/value");
  c->set_op("Const");
  c->set_device("/device:CPU:1");
  Tensor seven(DT_FLOAT, TensorShape({8, 16}));
  for (int64_t i = 0; i < seven.NumElements(); ++i) seven.flat<float>()[i] = 7;
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  seven.AsProtoTensorContent((*c->mutable_attr())["value"].mutable_tensor());
  NodeDef* a = poke.add_node();
  a->set_name("poke");
  a->set_op("Assign");
  a->set_device("/device:CPU:1");
  a->add_input("replica_1/mlp/w1");
  a->add_input("poke/value");
  (*a->mutable_attr())["T"].set_type(DT_FLOAT);
  ASSERT_TRUE(session->Extend(poke).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"poke"}, &out).ok());
  absl::Status s = session->CheckReplicasEqual();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("variable mlp/w1 differs between replica 0 and replica 1"),
            std::string::npos)
      << s;
}

// fetch_all_replicas: each replica's loss on its half of the batch, whose
// mean is TensorFlow's full-batch loss.
TEST(ReplicasTest, FetchAllReplicasStacksThem) {
  absl::StatusOr<GraphDef> graph = ReadGraphDefFile(absl::StrCat(kDir, "mlp_sgd.pbtxt"));
  ASSERT_TRUE(graph.ok());
  ReplicateOptions options;
  options.devices = {"/device:CPU:0", "/device:CPU:1"};
  absl::StatusOr<ReplicatedGraph> rg = ReplicateForDataParallel(*graph, options);
  ASSERT_TRUE(rg.ok()) << rg.status();
  SessionOptions so;
  so.cpu_devices = 2;
  absl::StatusOr<std::unique_ptr<Session>> inner = Session::Create(rg->graph, so);
  ASSERT_TRUE(inner.ok()) << inner.status();
  ReplicatedSession session(*std::move(rg), *std::move(inner), /*fetch_all_replicas=*/true);
  ASSERT_TRUE(RestoreVariables(session.graph().replica0, &session,
                               absl::StrCat(kDir, "mlp_sgd_init.ckpt"))
                  .ok());
  ASSERT_TRUE(session.Broadcast().ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({{"x", Row(Npy("mlp_sgd_x.npy"), 0)}, {"y", Row(Npy("mlp_sgd_y.npy"), 0)}},
                          {"loss"}, {}, &out)
                  .ok());
  ASSERT_EQ(out[0].shape(), TensorShape({2}));
  EXPECT_NE(out[0].flat<float>()[0], out[0].flat<float>()[1]);
  Tensor mean = Tensor::Scalar<float>((out[0].flat<float>()[0] + out[0].flat<float>()[1]) / 2);
  ExpectClose(mean, Row(Npy("mlp_sgd_loss.npy"), 0), 1e-5, "mean of the replicas' losses");
}

TEST(ReplicasTest, GraphWithoutUpdatesIsRefused) {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  ReplicateOptions options;
  options.devices = {"/device:CPU:0", "/device:CPU:1"};
  absl::StatusOr<ReplicatedGraph> rg = ReplicateForDataParallel(g, options);
  EXPECT_EQ(rg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(rg.status().message().find("no optimizer update"), std::string::npos);
}

}  // namespace
}  // namespace graphrun
