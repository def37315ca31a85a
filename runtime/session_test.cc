#include "runtime/session.h"

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "runtime/testing/test_ops.h"

namespace graphrun {
namespace {

// TestWaitForCancel comes from runtime/testing/test_ops.cc.

// y = relu(x W + b), with W = [[1,2],[3,4],[5,6]], b = [0.5,-100]; and an
// unrelated branch that must be pruned when not fetched.
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
  node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } }
                float_val: [1, 2, 3, 4, 5, 6] } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                float_val: [0.5, -100] } } } }
  node { name: "mm" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "ba" op: "BiasAdd" input: "mm" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Relu" input: "ba" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "other" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "other_neg" op: "Neg" input: "other" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "free" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { unknown_rank: true } } } }
  node { name: "mm_free" op: "MatMul" input: "free" input: "free" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

std::unique_ptr<Session> MakeSession(const SessionOptions& options = {}) {
  auto def = ParseGraphDef(kGraph, GraphFormat::kText);
  EXPECT_TRUE(def.ok()) << def.status();
  auto s = Session::Create(*def, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

Tensor X(std::vector<float> v, int64_t rows) {
  return Tensor::FromVector<float>(v, TensorShape({rows, 3}));
}

TEST(SessionTest, RunsAndPrunes) {
  auto session = MakeSession();
  std::vector<Tensor> out;
  // 'other' is not fed: the Neg branch must be pruned or this would fail.
  absl::Status s = session->Run({{"x", X({1, 1, 1, 0, 0, -1}, 2)}}, {"y:0", "mm"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  // Row 0: [9, 12] + [0.5, -100] -> relu -> [9.5, 0]; row 1: [-5,-6]+b -> [0, 0].
  EXPECT_EQ(out[0].flat<float>()[0], 9.5f);
  EXPECT_EQ(out[0].flat<float>()[1], 0.f);
  EXPECT_EQ(out[0].flat<float>()[2], 0.f);
  EXPECT_EQ(out[1].flat<float>()[1], 12.f);
}

TEST(SessionTest, FeedingAnInnerTensorCutsItsProducers) {
  auto session = MakeSession();
  std::vector<Tensor> out;
  // Feed mm directly: x need not be fed.
  Tensor mm = Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}));
  ASSERT_TRUE(session->Run({{"mm:0", mm}}, {"y"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 1.5f);
  // Fetching a fed tensor returns the fed value.
  ASSERT_TRUE(session->Run({{"mm:0", mm}}, {"mm:0"}, {}, &out).ok());
  EXPECT_TRUE(out[0].SharesBufferWith(mm));
}

// The TF1 PlaceholderV2 (older frozen graphs) is a placeholder: fed, it is
// the fed value; unfed, it fails naming itself.
TEST(SessionTest, PlaceholderV2IsAPlaceholder) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "PlaceholderV2" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto session = Session::Create(*def);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{"x", Tensor::FromVector<float>({1.5f, -3})}}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], -1.5f);
  EXPECT_EQ(out[0].flat<float>()[1], 3.f);
  s = (*session)->Run({}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("You must feed a value for placeholder tensor 'x' with dtype float "
                             "and shape [2]"),
            std::string::npos)
      << s;
}

// TensorFlow-exported graphs order nodes after a Placeholder by control
// edge (`^x`); feeding x satisfies them, as in TensorFlow.
TEST(SessionTest, FedPlaceholderHandsOverItsControlEdges) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "c" op: "Const" input: "^x" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "y" op: "Mul" input: "x" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto session = Session::Create(*def);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{"x", Tensor::FromVector<float>({1.5f, -3}, TensorShape({2}))}},
                                   {"y", "c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], 3.f);
  EXPECT_EQ(out[0].flat<float>()[1], -6.f);
  EXPECT_EQ(out[1].flat<float>()[0], 2.f);
  // Not fed, the Placeholder still reports the missing feed.
  s = (*session)->Run({}, {"c"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("You must feed a value for placeholder tensor 'x'"), std::string::npos)
      << s;
}

// The optimizer runs on each step's graph: a constant subexpression is
// folded, a shape of a fed tensor is not (the feed's shape may change),
// fetched nodes keep their names, and both ways give the same answer.
TEST(SessionTest, OptimizerFoldsConstantsAndKeepsFeedsAndFetches) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "four" op: "Mul" input: "two" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "four_id" op: "Identity" input: "four" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "four_id" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y2" op: "Mul" input: "four_id" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "AddV2" input: "y" input: "y2" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  std::vector<Tensor> results[2];
  for (auto level : {SessionOptions::Optimize::kDefault, SessionOptions::Optimize::kNone}) {
    SessionOptions options;
    options.optimize = level;
    auto session = Session::Create(*def, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunOptions run;
    run.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor>& out = results[level == SessionOptions::Optimize::kNone];
    absl::Status s = (*session)->Run(run, {{"x", Tensor::FromVector<float>({1, -2}, TensorShape({2}))}},
                                     {"z", "four"}, {}, &out, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(metadata.partition_graphs_size(), 1);
    std::map<std::string, std::string> ops;
    for (const NodeDef& n : metadata.partition_graphs(0).node()) ops[n.name()] = n.op();
    if (level == SessionOptions::Optimize::kDefault) {
      EXPECT_EQ(ops["four"], "Const");       // folded, name kept (it is fetched)
      EXPECT_EQ(ops.count("two"), 0u);       // only fed the folded node
      EXPECT_EQ(ops.count("four_id"), 0u);   // identity bypassed
      EXPECT_EQ(ops.count("y") + ops.count("y2"), 1u);  // x*4 and 4*x merged
      EXPECT_EQ(ops["z"], "AddV2");
    } else {
      EXPECT_EQ(ops["four"], "Mul");
      EXPECT_EQ(ops.count("four_id"), 1u);
    }
  }
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(results[0][k].NumElements(), results[1][k].NumElements());
    for (int64_t i = 0; i < results[0][k].NumElements(); ++i) {
      EXPECT_EQ(results[0][k].flat<float>()[i], results[1][k].flat<float>()[i]);
    }
  }
  EXPECT_EQ(results[0][0].flat<float>()[0], 8.f);
  EXPECT_EQ(results[0][0].flat<float>()[1], -16.f);
  EXPECT_EQ(results[0][1].flat<float>()[0], 4.f);
}

TEST(SessionTest, ClearErrors) {
  auto session = MakeSession();
  std::vector<Tensor> out;
  auto expect = [&](absl::Status s, absl::StatusCode code, const std::string& fragment) {
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s;
  };
  expect(session->Run({}, {"y"}, {}, &out), absl::StatusCode::kInvalidArgument,
         "You must feed a value for placeholder tensor 'x'");
  expect(session->Run({{"x", Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({1, 3}))}}, {"y"}, {}, &out),
         absl::StatusCode::kInvalidArgument,
         "feed 'x' is a int32 tensor, but node 'x' (Placeholder) produces float");
  expect(session->Run({{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}}, {"y"}, {}, &out),
         absl::StatusCode::kInvalidArgument,
         "feed 'x' has shape [1,2], but node 'x' (Placeholder) has shape [?,3]");
  expect(session->Run({{"x", X({1, 2, 3}, 1)}}, {"nope"}, {}, &out), absl::StatusCode::kNotFound,
         "fetch 'nope': there is no node 'nope' in the graph");
  expect(session->Run({{"x", X({1, 2, 3}, 1)}}, {"y:1"}, {}, &out),
         absl::StatusCode::kInvalidArgument, "fetch 'y:1': node 'y' (Relu) has 1 outputs");
  expect(session->Run({{"x", X({1, 2, 3}, 1)}}, {"y"}, {"ghost"}, &out),
         absl::StatusCode::kNotFound, "target 'ghost'");
  expect(session->Run({{"x", X({1, 2, 3}, 1)}, {"x:0", X({1, 2, 3}, 1)}}, {"y"}, {}, &out),
         absl::StatusCode::kInvalidArgument, "fed twice");
  // A kernel error names the node and device.
  expect(session->Run({{"free", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))}},
                      {"mm_free"}, {}, &out),
         absl::StatusCode::kInvalidArgument,
         "node 'mm_free' (MatMul) on /job:localhost/replica:0/task:0/device:CPU:0: "
         "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
}

// Constant inputs stay bound in the executor's slots from step to step
// (the Const nodes run once): they must survive steps that fail part way,
// and everything else must be gone before the next step.
TEST(SessionTest, ConstantInputsSurviveFailedStepsAndNothingElseLingers) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 12 } } } }
    node { name: "sum" op: "AddV2" input: "x" input: "c" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "q" op: "FloorDiv" input: "c" input: "x" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "y" op: "Mul" input: "sum" input: "q" attr { key: "T" value { type: DT_INT32 } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  SessionOptions options;
  options.optimize = SessionOptions::Optimize::kNone;  // keep every node
  auto session = Session::Create(*def, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto run = [&](int32_t x) -> absl::StatusOr<int32_t> {
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({{"x", Tensor::Scalar<int32_t>(x)}}, {"y"}, {}, &out);
    if (!s.ok()) return s;
    return out[0].scalar<int32_t>();
  };
  // (x + 12) * floor(12 / x), and x = 0 fails the step after 'sum' ran.
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(round);
    auto a = run(1);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(*a, 13 * 12);
    auto failed = run(0);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.status().message().find("Integer division by zero"), std::string::npos)
        << failed.status();
    auto b = run(5);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(*b, 17 * 2);
  }
}

TEST(SessionTest, BadGraphIsRejectedAtCreate) {
  auto def = ParseGraphDef(R"pb(node { name: "a" op: "Relu" input: "b" attr { key: "T" value { type: DT_FLOAT } } })pb",
                           GraphFormat::kText);
  auto s = Session::Create(*def);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("node 'a' (Relu): input \"b\" names node 'b'"),
            std::string::npos) << s.status();
}

TEST(SessionTest, ExtendAddsNodes) {
  auto session = MakeSession();
  auto more = ParseGraphDef(R"pb(node { name: "y2" op: "Square" input: "y" attr { key: "T" value { type: DT_FLOAT } } })pb",
                            GraphFormat::kText);
  ASSERT_TRUE(session->Extend(*more).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", X({1, 0, 0}, 1)}}, {"y2"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 1.5f * 1.5f);
  EXPECT_FALSE(session->Extend(*more).ok());  // duplicate name
}

TEST(SessionTest, ConcurrentRunsAreIndependent) {
  auto session = MakeSession();
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        absl::Status s = session->Run({{"x", X({v, 0, 0}, 1)}}, {"y"}, {}, &out);
        if (s.ok() && out[0].flat<float>()[0] == v + 0.5f && out[0].flat<float>()[1] == std::max(0.f, 2 * v - 100)) {
          ++good;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 400);
}

// y and ba for one row [v, 0, 0] of x (W's first row is [1, 2], b is
// [0.5, -100]); and Neg of an int32.
float ExpectedY(float v, int k) { return std::max(0.f, k == 0 ? v + 0.5f : 2 * v - 100); }

// The same feeds and fetches in another order share one plan (its
// placement log is printed once) and return values in the caller's order,
// through the call frame and through the rendezvous.
TEST(SessionTest, ReorderedFeedsAndFetchesShareAPlan) {
  for (bool rendezvous : {false, true}) {
    SessionOptions options;
    options.log_device_placement = true;
    options.feeds_through_rendezvous = rendezvous;
    auto session = MakeSession(options);
    const Tensor x = X({7, 0, 0}, 1);
    const Tensor other = Tensor::FromVector<int32_t>({3, -4}, TensorShape({2}));
    std::vector<Tensor> out;
    testing::internal::CaptureStdout();
    ASSERT_TRUE(session->Run({{"x", x}, {"other", other}}, {"y", "other_neg", "mm"},
                             {"other_neg"}, &out).ok());
    const std::string first = testing::internal::GetCapturedStdout();
    EXPECT_NE(first.find("other_neg: (Neg)"), std::string::npos) << first;
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].flat<float>()[0], ExpectedY(7, 0));
    EXPECT_EQ(out[1].flat<int32_t>()[1], 4);
    EXPECT_EQ(out[2].flat<float>()[1], 14.f);  // mm = [7, 14]

    // Reordered feeds, fetches (one named twice) and targets.
    const std::vector<std::vector<std::string>> fetch_orders = {
        {"mm", "y", "other_neg"}, {"other_neg", "mm", "y"}, {"y", "other_neg", "mm"}};
    for (const auto& fetches : fetch_orders) {
      testing::internal::CaptureStdout();
      ASSERT_TRUE(session->Run({{"other", other}, {"x", x}}, fetches,
                               {"other_neg", "other_neg"}, &out).ok());
      EXPECT_EQ(testing::internal::GetCapturedStdout(), "") << "a new plan was built";
      ASSERT_EQ(out.size(), 3u);
      for (size_t i = 0; i < fetches.size(); ++i) {
        if (fetches[i] == "y") EXPECT_EQ(out[i].flat<float>()[0], ExpectedY(7, 0));
        if (fetches[i] == "mm") EXPECT_EQ(out[i].flat<float>()[1], 14.f);
        if (fetches[i] == "other_neg") EXPECT_EQ(out[i].flat<int32_t>()[0], -3);
      }
    }
    // A fetch named twice: each position gets the value.
    ASSERT_TRUE(session->Run({{"x", x}}, {"y", "mm", "y"}, {}, &out).ok());
    testing::internal::CaptureStdout();
    ASSERT_TRUE(session->Run({{"x", X({60, 0, 0}, 1)}}, {"mm", "y", "y"}, {}, &out).ok());
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
    EXPECT_EQ(out[0].flat<float>()[1], 120.f);
    EXPECT_EQ(out[1].flat<float>()[1], ExpectedY(60, 1));
    EXPECT_EQ(out[2].flat<float>()[1], ExpectedY(60, 1));
    // Errors still name the caller's feed.
    absl::Status s = session->Run(
        {{"other", other}, {"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}},
        {"other_neg", "y"}, {}, &out);
    EXPECT_NE(s.message().find("feed 'x' has shape [1,2]"), std::string::npos) << s;
  }
}

// Threads running different signatures (plans built concurrently, and
// the same signatures in different orders) each get their own values.
TEST(SessionTest, ConcurrentRunsOfDifferentSignatures) {
  for (int cpu_devices : {1, 2}) {
    SessionOptions options;
    options.cpu_devices = cpu_devices;
    auto session = MakeSession(options);
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 40; ++i) {
          const float v = static_cast<float>(t * 100 + i);
          const int32_t o = t * 1000 + i;
          const Tensor x = X({v, 0, 0}, 1);
          const Tensor other = Tensor::FromVector<int32_t>({o}, TensorShape({1}));
          std::vector<Tensor> out;
          bool ok = false;
          switch ((t + i) % 5) {
            case 0:
              ok = session->Run({{"x", x}, {"other", other}}, {"y", "other_neg"}, {}, &out).ok() &&
                   out[0].flat<float>()[0] == ExpectedY(v, 0) && out[1].flat<int32_t>()[0] == -o;
              break;
            case 1:
              ok = session->Run({{"other", other}, {"x", x}}, {"other_neg", "y"}, {}, &out).ok() &&
                   out[1].flat<float>()[1] == ExpectedY(v, 1) && out[0].flat<int32_t>()[0] == -o;
              break;
            case 2:
              ok = session->Run({{"x", x}}, {"mm", "y"}, {}, &out).ok() &&
                   out[0].flat<float>()[1] == 2 * v && out[1].flat<float>()[0] == ExpectedY(v, 0);
              break;
            case 3:
              ok = session->Run({{"other", other}}, {"other_neg"}, {}, &out).ok() &&
                   out[0].flat<int32_t>()[0] == -o;
              break;
            case 4: {
              const Tensor mm = Tensor::FromVector<float>({v, -v}, TensorShape({1, 2}));
              ok = session->Run({{"mm:0", mm}}, {"ba", "y"}, {}, &out).ok() &&
                   out[0].flat<float>()[1] == -v - 100 && out[1].flat<float>()[0] == std::max(0.f, v + 0.5f);
              break;
            }
          }
          if (ok) ++good;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(good.load(), 320) << cpu_devices << " CPU devices";
  }
}

// A plan is built without holding up Runs of other signatures: while one
// build waits (in a kernel's constructor), another signature builds and runs.
TEST(SessionTest, APlanBuildDoesNotHoldUpOtherSignatures) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "held" op: "TestBlockedConstruction" input: "x" }
    node { name: "neg" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto session = Session::Create(*def);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status held_status;
  std::vector<Tensor> held_out;
  std::thread held([&] {
    held_status = (*session)->Run({{"x", Tensor::Scalar<float>(1)}}, {"held"}, {}, &held_out);
  });
  test_ops::AwaitBlockedConstruction();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{"x", Tensor::Scalar<float>(2)}}, {"neg"}, {}, &out);
  test_ops::ReleaseConstruction();
  held.join();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), -2.f);
  ASSERT_TRUE(held_status.ok()) << held_status;
  EXPECT_EQ(held_out[0].scalar<float>(), 1.f);
}

// Runs of one new signature at once build its plan once: the others wait
// for that build (its placement log is printed once).
TEST(SessionTest, ConcurrentRunsOfOneNewSignatureBuildOnePlan) {
  SessionOptions options;
  options.log_device_placement = true;
  auto session = MakeSession(options);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  testing::internal::CaptureStdout();
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const float v = static_cast<float>(t);
      std::vector<Tensor> out;
      if (session->Run({{"x", X({v, 0, 0}, 1)}}, {"y"}, {}, &out).ok() &&
          out[0].flat<float>()[0] == ExpectedY(v, 0)) {
        ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::string log = testing::internal::GetCapturedStdout();
  EXPECT_EQ(good.load(), 8);
  size_t builds = 0;
  for (size_t at = log.find("fetch of 'y'"); at != std::string::npos;
       at = log.find("fetch of 'y'", at + 1)) {
    ++builds;
  }
  EXPECT_EQ(builds, 1u) << log;
}

TEST(SessionTest, StepStatsAndPartitionGraphs) {
  // Stats per node of the graph as written (the optimizer would fuse
  // mm, ba and y into one _FusedMatMul).
  SessionOptions unoptimized;
  unoptimized.optimize = SessionOptions::Optimize::kNone;
  auto session = MakeSession(unoptimized);
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(options, {{"x", X({1, 1, 1}, 1)}}, {"y"}, {}, &out, &metadata).ok());
  ASSERT_EQ(metadata.step_stats().dev_stats_size(), 1);
  const DeviceStepStats& dev = metadata.step_stats().dev_stats(0);
  EXPECT_EQ(dev.device(), "/job:localhost/replica:0/task:0/device:CPU:0");
  std::set<std::string> names;
  for (const auto& n : dev.node_stats()) names.insert(n.node_name());
  for (const char* want : {"w", "b", "mm", "ba", "y"}) EXPECT_TRUE(names.count(want)) << want;
  EXPECT_FALSE(names.count("other_neg"));
  ASSERT_EQ(metadata.partition_graphs_size(), 1);
  EXPECT_GT(metadata.partition_graphs(0).node_size(), 5);
}

TEST(SessionTest, RegistryKnowsWhichDeviceTypesThisBuildHas) {
  EXPECT_TRUE(KernelRegistry::Global()->HasKernelsForDeviceType("CPU"));
  EXPECT_FALSE(KernelRegistry::Global()->HasKernelsForDeviceType("GPU"));
}

TEST(SessionTest, NoCpuDeviceIsAnError) {
  SessionOptions options;
  options.cpu_devices = 0;
  auto def = ParseGraphDef(kGraph, GraphFormat::kText);
  ASSERT_TRUE(def.ok());
  auto s = Session::Create(*def, options);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("cpu_devices must be at least 1"), std::string::npos);
}

TEST(SessionTest, BadDevicePrefixIsAnError) {
  auto def = ParseGraphDef(kGraph, GraphFormat::kText);
  ASSERT_TRUE(def.ok());
  // Each used to abort the process; now each is a Status naming the prefix.
  for (const char* prefix : {"garbage", "/job:a/job:b", "/job:localhost/replica:x",
                             "/job:localhost", "/job:w/task:0/replica:0",
                             "/job:w/replica:0/task:0/device:GPU:0", ""}) {
    SessionOptions options;
    options.device_prefix = prefix;
    auto s = Session::Create(*def, options);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << prefix;
    EXPECT_NE(s.status().message().find(
                  absl::StrCat("SessionOptions.device_prefix '", prefix, "'")),
              std::string::npos)
        << s.status();
  }
  SessionOptions options;
  options.device_prefix = "/job:worker/replica:0/task:3";
  auto session = MakeSession(options);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->devices()[0]->name(), "/job:worker/replica:0/task:3/device:CPU:0");
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", X({1, 1, 1}, 1)}}, {"y"}, {}, &out).ok());
}

TEST(SessionTest, ThreadCountsPastTheLimitAreErrors) {
  auto def = ParseGraphDef(kGraph, GraphFormat::kText);
  ASSERT_TRUE(def.ok());
  // Each used to abort (thread creation) or crash (a pool of 2^31 queues).
  struct Case {
    int cpu_devices, inter, intra;
    const char* fragment;
  };
  for (const Case& c : {Case{100000, 1, 1, "the session would start 100001 threads"},
                        Case{1, 2000000000, 1, "at most 4096"},
                        Case{1, 1, 2000000000, "at most 4096"},
                        Case{64, 1, 64, "cpu_devices 64 x intra_op_threads 64"},
                        Case{1, -5, 0, "must be >= 0"},
                        Case{1, 0, -1, "must be >= 0"}}) {
    SessionOptions options;
    options.cpu_devices = c.cpu_devices;
    options.inter_op_threads = c.inter;
    options.intra_op_threads = c.intra;
    auto s = Session::Create(*def, options);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.fragment;
    EXPECT_NE(s.status().message().find(c.fragment), std::string::npos) << s.status();
  }
  SessionOptions options;
  options.cpu_devices = 8;
  options.inter_op_threads = 4000;
  options.intra_op_threads = 13;  // 4000 + 104: just past the limit
  EXPECT_NE(Session::Create(*def, options).status().message().find("4104 threads"),
            std::string::npos);
  options.inter_op_threads = 2;
  options.intra_op_threads = 2;
  EXPECT_NE(MakeSession(options), nullptr);
}

TEST(SessionTest, VirtualCpuDevices) {
  SessionOptions options;
  options.cpu_devices = 3;
  auto session = MakeSession(options);
  ASSERT_EQ(session->devices().size(), 3u);
  EXPECT_EQ(session->devices()[2]->name(), "/job:localhost/replica:0/task:0/device:CPU:2");
}

TEST(SessionTest, TimeoutCancelsAStuckStepAndTheSessionStaysUsable) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "stuck" op: "TestWaitForCancel" input: "x" }
    node { name: "fine" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto session = Session::Create(*def);
  ASSERT_TRUE(session.ok()) << session.status();
  RunOptions options;
  options.set_timeout_in_ms(50);
  std::vector<Tensor> out;
  // TestWaitForCancel only returns when cancelled: the timeout is what
  // cancelled it, as the code and the message say.
  absl::Status s = (*session)->Run(options, {{"x", Tensor::Scalar<float>(1)}},
                                   {"stuck:0"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("50 ms"), std::string::npos) << s;

  // Several stuck steps at once all time out; other signatures still run.
  std::vector<std::thread> threads;
  std::atomic<int> timed_out{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      std::vector<Tensor> o;
      if ((*session)->Run(options, {{"x", Tensor::Scalar<float>(1)}}, {"stuck:0"},
                          {}, &o, nullptr).code() ==
          absl::StatusCode::kDeadlineExceeded) {
        ++timed_out;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(timed_out.load(), 4);
  ASSERT_TRUE((*session)->Run({{"x", Tensor::Scalar<float>(2)}}, {"fine:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), -2.0f);
}

}  // namespace
}  // namespace graphrun
