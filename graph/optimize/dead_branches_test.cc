#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/optimizer.h"
#include "graph/testing/graphdef_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::CountOp;
using testing::FindNode;
using testing::NodeInputs;
using testing::ParseTextGraph;

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs,
                 const std::string& attrs = " attr { key: 'T' value { type: DT_FLOAT } }") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& in : inputs) absl::StrAppend(&s, " input: '", in, "'");
  return absl::StrCat(s, attrs, " }\n");
}

std::string BoolConst(const std::string& name, bool v, const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ", extra,
                      " attr { key: 'dtype' value { type: DT_BOOL } }"
                      " attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {}"
                      " bool_val: ",
                      v ? "true" : "false", " } } } }\n");
}

std::string FloatConst(const std::string& name, float v, const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ", extra,
                      " attr { key: 'dtype' value { type: DT_FLOAT } }"
                      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {}"
                      " float_val: ",
                      v, " } } } }\n");
}

const char kBoolType[] = " attr { key: 'T' value { type: DT_BOOL } }";
const char kMergeAttrs[] =
    " attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 2 } }";

// tf.cond(pred, lambda: x * 2, lambda: x - 1) as TensorFlow v1 writes it
// (control flow v1): a Switch of the predicate gives the branch pivots,
// each branch reads x through its own Switch, its constants wait for its
// pivot, and a Merge takes the false branch first.
std::string V1Cond(const std::string& pred) {
  return "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n" +
         pred + Node("cond/Switch", "Switch", {"pred", "pred"}, kBoolType) +
         Node("cond/switch_t", "Identity", {"cond/Switch:1"}, kBoolType) +
         Node("cond/switch_f", "Identity", {"cond/Switch"}, kBoolType) +
         Node("cond/pred_id", "Identity", {"pred"}, kBoolType) +
         Node("cond/mul/Switch", "Switch", {"x", "cond/pred_id"}) +
         FloatConst("cond/mul/y", 2, "input: '^cond/switch_t'") +
         Node("cond/mul", "Mul", {"cond/mul/Switch:1", "cond/mul/y"}) +
         Node("cond/sub/Switch", "Switch", {"x", "cond/pred_id"}) +
         FloatConst("cond/sub/y", 1, "input: '^cond/switch_f'") +
         Node("cond/sub", "Sub", {"cond/sub/Switch", "cond/sub/y"}) +
         Node("cond/Merge", "Merge", {"cond/sub", "cond/mul"}, kMergeAttrs) +
         Node("out", "Identity", {"cond/Merge"});
}

struct Result {
  GraphDef graph;
  OptimizationReport::Pass pass;
};

Result Prune(const std::string& text, const std::vector<std::string>& preserve) {
  Result r{ParseTextGraph(text), {}};
  OptimizerOptions options;
  options.preserve.insert(preserve.begin(), preserve.end());
  absl::Status s = PruneDeadBranches(&r.graph, options, &r.pass);
  EXPECT_TRUE(s.ok()) << s;
  return r;
}

TEST(DeadBranchesTest, TrueConstantKeepsTheTrueBranchOnly) {
  Result r = Prune(V1Cond(BoolConst("pred", true)), {"x", "out"});
  for (const char* gone : {"cond/sub", "cond/sub/y", "cond/switch_f", "cond/Merge", "cond/Switch",
                           "cond/mul/Switch", "cond/sub/Switch"}) {
    EXPECT_EQ(FindNode(r.graph, gone), nullptr) << gone;
  }
  EXPECT_EQ(NodeInputs(r.graph, "out"), (std::vector<std::string>{"cond/mul"}));
  EXPECT_EQ(NodeInputs(r.graph, "cond/mul"), (std::vector<std::string>{"x", "cond/mul/y"}));
  EXPECT_EQ(NodeInputs(r.graph, "cond/switch_t"), (std::vector<std::string>{"pred"}));
  EXPECT_EQ(CountOp(r.graph, "Switch") + CountOp(r.graph, "Merge"), 0);
  EXPECT_EQ(r.graph.node_size(), 14 - 7);
  EXPECT_EQ(r.pass.merged_into.at("cond/Merge"), "cond/mul");
  EXPECT_EQ(r.pass.merged_into.at("cond/mul/Switch"), "x");
  ASSERT_FALSE(r.pass.changes.empty());
  EXPECT_NE(r.pass.changes[0].find("'cond/Switch' (Switch) has a constant predicate: output 0"),
            std::string::npos)
      << r.pass.changes[0];
}

TEST(DeadBranchesTest, FalseConstantSeenThroughAnIdentity) {
  Result r = Prune(BoolConst("c", false) + Node("pred", "Identity", {"c"}, kBoolType) + V1Cond(""),
                   {"x", "out"});
  EXPECT_EQ(FindNode(r.graph, "cond/mul"), nullptr);
  EXPECT_EQ(FindNode(r.graph, "cond/mul/y"), nullptr);
  EXPECT_EQ(NodeInputs(r.graph, "out"), (std::vector<std::string>{"cond/sub"}));
  EXPECT_EQ(NodeInputs(r.graph, "cond/sub"), (std::vector<std::string>{"x", "cond/sub/y"}));
}

TEST(DeadBranchesTest, PreservedMergeBecomesAnIdentityAndValueIndexAConst) {
  Result r =
      Prune(V1Cond(BoolConst("pred", true)) + Node("index", "Identity", {"cond/Merge:1"},
                                                   " attr { key: 'T' value { type: DT_INT32 } }"),
            {"x", "cond/Merge", "index"});
  const NodeDef* merge = FindNode(r.graph, "cond/Merge");
  ASSERT_NE(merge, nullptr);
  EXPECT_EQ(merge->op(), "Identity");
  EXPECT_EQ(merge->attr().at("T").type(), DT_FLOAT);
  EXPECT_EQ(NodeInputs(r.graph, "cond/Merge"), (std::vector<std::string>{"cond/mul"}));
  const std::vector<std::string> in = NodeInputs(r.graph, "index");
  ASSERT_EQ(in.size(), 1u);
  const NodeDef* c = FindNode(r.graph, in[0]);
  ASSERT_NE(c, nullptr) << in[0];
  EXPECT_EQ(c->op(), "Const");
  EXPECT_EQ(NodeInputs(r.graph, in[0]), (std::vector<std::string>{"^cond/mul"}));
  auto t = Tensor::FromProto(c->attr().at("value").tensor());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dtype(), DT_INT32);
  EXPECT_EQ(t->flat<int32_t>()[0], 1);  // the true branch is input 1
}

TEST(DeadBranchesTest, FedPredicateIsLeftAlone) {
  Result r = Prune(V1Cond("node { name: 'pred' op: 'Placeholder' attr { key: 'dtype' value {"
                          " type: DT_BOOL } } }\n"),
                   {"x", "pred", "out"});
  EXPECT_TRUE(r.pass.changes.empty());
  EXPECT_EQ(r.graph.node_size(), 14);
}

TEST(DeadBranchesTest, ABranchReachingAPreservedNodeIsLeftAlone) {
  // cond/sub must stay: the Switches it hangs on keep their form, and so
  // does the Merge. The Switch before cond/mul feeds nothing on its untaken
  // output: cond/mul reads x directly.
  Result r = Prune(V1Cond(BoolConst("pred", true)), {"x", "out", "cond/sub"});
  for (const char* kept :
       {"cond/sub", "cond/sub/y", "cond/switch_f", "cond/Switch", "cond/sub/Switch"}) {
    EXPECT_NE(FindNode(r.graph, kept), nullptr) << kept;
  }
  EXPECT_EQ(NodeInputs(r.graph, "cond/Merge"), (std::vector<std::string>{"cond/sub", "cond/mul"}));
  EXPECT_EQ(FindNode(r.graph, "cond/Merge")->op(), "Merge");
  EXPECT_EQ(NodeInputs(r.graph, "cond/mul"), (std::vector<std::string>{"x", "cond/mul/y"}));
  EXPECT_EQ(r.graph.node_size(), 13);
}

TEST(DeadBranchesTest, SwitchesInsideWhileLoopsAreLeftAlone) {
  // A loop whose body holds a cond on a constant (the constant waits for
  // the body's pivot, as TensorFlow puts constants in frames).
  const std::string frame = " attr { key: 'frame_name' value { s: 'loop' } }";
  GraphDef g = ParseTextGraph(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'limit' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n" +
      Node("enter", "Enter", {"x"},
           absl::StrCat(" attr { key: 'T' value { type: DT_FLOAT } }", frame)) +
      Node("merge", "Merge", {"enter", "next"}, kMergeAttrs) +
      Node("limit_enter", "Enter", {"limit"},
           absl::StrCat(kBoolType, frame, " attr { key: 'is_constant' value { b: true } }")) +
      Node("cond", "LoopCond", {"limit_enter"}, "") + Node("switch", "Switch", {"merge", "cond"}) +
      Node("pivot", "Identity", {"switch:1"}) + BoolConst("p", true, "input: '^pivot'") +
      Node("inner", "Switch", {"pivot", "p"}) + Node("t", "Neg", {"inner:1"}) +
      Node("f", "Exp", {"inner"}) + Node("inner_merge", "Merge", {"f", "t"}, kMergeAttrs) +
      Node("next", "NextIteration", {"inner_merge"}) + Node("exit", "Exit", {"switch"}) +
      Node("out", "Identity", {"exit"}));
  OptimizerOptions options;
  options.preserve = {"x", "limit", "out"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(PruneDeadBranches(&g, options, &pass).ok());
  EXPECT_TRUE(pass.changes.empty());
  EXPECT_EQ(g.node_size(), 16);
}

TEST(DeadBranchesTest, ChangesAreLoggedByTheOptimizer) {
  GraphDef g = ParseTextGraph(V1Cond(BoolConst("pred", false)));
  OptimizerOptions options;
  options.preserve = {"x", "out"};
  OptimizationReport report;
  ASSERT_TRUE(OptimizeGraph(&g, options, &report).ok());
  const std::string log = report.ToString();
  EXPECT_NE(log.find("dead branches: "), std::string::npos) << log;
  EXPECT_NE(log.find("bypassed 'cond/Merge' (Merge): only 'cond/sub' is live"), std::string::npos)
      << log;
  // x, the Sub, its constant, the predicate that constant waits for (once
  // the branch pivot is gone) and the fetch.
  EXPECT_EQ(g.node_size(), 5) << log;
  EXPECT_EQ(NodeInputs(g, "cond/sub/y"), (std::vector<std::string>{"^pred"}));
  EXPECT_EQ(report.merged_into.at("cond/Merge"), "cond/sub");
}

}  // namespace
}  // namespace graphrun
