// Runs the graphs of tests/fixtures/optimizer (make_optimizer_fixtures.py:
// TensorFlow v1 conds on constant predicates, arithmetic the optimizer
// simplifies) with the optimizer and without: both must give TensorFlow's
// answers, and the optimized step must run fewer nodes, with no Switch or
// Merge left where every predicate outside loops is a constant.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/optimizer/";

// Op -> how many nodes of it the step's partition graphs hold ("" = all).
std::map<std::string, int> OpCounts(const RunMetadata& metadata) {
  std::map<std::string, int> counts;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) {
      ++counts[n.op()];
      ++counts[""];
    }
  }
  return counts;
}

TEST(OptimizerFixturesTest, MatchTensorFlowWithFewerNodes) {
  const std::vector<testing::FixtureModel> models = testing::ReadFixtureManifest(kDir);
  ASSERT_EQ(models.size(), 6u) << kDir << "MANIFEST is missing";
  std::map<std::string, std::map<std::string, int>> plain, optimized;
  for (const testing::FixtureModel& m : models) {
    SCOPED_TRACE(m.name);
    SessionOptions none;
    none.optimize = SessionOptions::Optimize::kNone;
    RunMetadata metadata;
    absl::Status s = testing::RunFixture(m, none, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    plain[m.name] = OpCounts(metadata);
    metadata.Clear();
    s = testing::RunFixture(m, SessionOptions(), &metadata);
    ASSERT_TRUE(s.ok()) << s;
    optimized[m.name] = OpCounts(metadata);
    if (m.name == "cond_in_loop") {
      EXPECT_LE(optimized[m.name][""], plain[m.name][""]);
    } else {
      EXPECT_LT(optimized[m.name][""], plain[m.name][""]);
    }
  }
  for (const char* name : {"cond_true", "cond_false_folded", "merge_index"}) {
    EXPECT_EQ(optimized[name]["Switch"] + optimized[name]["Merge"], 0) << name;
  }
  // The cond on the fed predicate stays; the constant ones go.
  EXPECT_EQ(plain["cond_nested"]["Merge"], 3);
  EXPECT_EQ(optimized["cond_nested"]["Merge"], 1);
  // In a loop body a cond on a constant keeps its Switches and Merges.
  EXPECT_EQ(optimized["cond_in_loop"]["Switch"], plain["cond_in_loop"]["Switch"]);
  EXPECT_EQ(optimized["cond_in_loop"]["Merge"], plain["cond_in_loop"]["Merge"]);
  // Arithmetic: the Transposes and Reshapes undo each other, the Casts
  // through double and to float go, int32 -> int64 -> float is one Cast,
  // and 20 Adds of 1 are one.
  std::map<std::string, int>& a = optimized["arithmetic"];
  EXPECT_EQ(plain["arithmetic"]["Transpose"], 3);
  EXPECT_EQ(a["Transpose"], 0);
  EXPECT_EQ(a["Reshape"], 0);
  EXPECT_EQ(a["RealDiv"], 0);
  // x - zeros([4]) reads the fed x, whose shape ([4]) the session tells
  // the optimizer.
  EXPECT_EQ(a["Sub"], 0);
  EXPECT_EQ(a["Cast"], 1);
  EXPECT_EQ(plain["arithmetic"]["AddV2"], 23);
  EXPECT_EQ(a["AddV2"], 2);  // k + 20, c + 0.75
  EXPECT_EQ(a["Mul"], 2);    // (k + 20) * 15, (c + 0.75) * 3
}

// TensorFlow's `y = y + 1` 10,000 times on a fed int32 scalar: one AddV2.
TEST(OptimizerFixturesTest, LongIntegerChainRunsAsOneAdd) {
  constexpr int kSteps = 10000;
  GraphDef g;
  NodeDef* y = g.add_node();
  y->set_name("y");
  y->set_op("Placeholder");
  (*y->mutable_attr())["dtype"].set_type(DT_INT32);
  (*y->mutable_attr())["shape"].mutable_shape();  // a scalar
  std::string prev = "y";
  for (int k = 0; k < kSteps; ++k) {
    const std::string name = k == 0 ? "add" : absl::StrCat("add_", k);
    NodeDef* c = g.add_node();
    c->set_name(name + "/y");
    c->set_op("Const");
    (*c->mutable_attr())["dtype"].set_type(DT_INT32);
    Tensor::Scalar<int32_t>(1).AsProtoField((*c->mutable_attr())["value"].mutable_tensor());
    NodeDef* add = g.add_node();
    add->set_name(name);
    add->set_op("AddV2");
    add->add_input(prev);
    add->add_input(name + "/y");
    (*add->mutable_attr())["T"].set_type(DT_INT32);
    prev = name;
  }
  for (auto mode : {SessionOptions::Optimize::kNone, SessionOptions::Optimize::kDefault}) {
    SessionOptions options;
    options.optimize = mode;
    auto session = Session::Create(g, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunOptions run_options;
    run_options.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run(run_options, {{"y", Tensor::Scalar<int32_t>(5)}},
                                     {prev + ":0"}, {}, &out, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].flat<int32_t>()[0], 5 + kSteps);
    EXPECT_EQ(OpCounts(metadata)["AddV2"], mode == SessionOptions::Optimize::kNone ? kSteps : 1);
  }
}

}  // namespace
}  // namespace graphrun
