#include "placer/variable_split.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "placer/ps_placement.h"

namespace graphrun {
namespace placer {
namespace {

std::string Var(const std::string& name, int rows, int cols, const std::string& device,
                const std::string& colocate = "") {
  std::string shape = absl::StrCat("dim { size: ", rows, " }");
  if (cols > 0) absl::StrAppend(&shape, " dim { size: ", cols, " }");
  return absl::StrCat(
      "node { name: '", name, "' op: 'VarHandleOp' device: '", device, "'",
      " attr { key: 'dtype' value { type: DT_FLOAT } }",
      " attr { key: 'shape' value { shape { ", shape, " } } }",
      " attr { key: 'shared_name' value { s: '", name, "' } }",
      colocate.empty() ? ""
                       : absl::StrCat(" attr { key: '_class' value { list { s: 'loc:@", colocate,
                                      "' } } }"),
      " }\n");
}

std::string Const(const std::string& name, int rows, int cols) {
  std::string shape;
  if (rows > 0) absl::StrAppend(&shape, "dim { size: ", rows, " }");
  if (cols > 0) absl::StrAppend(&shape, " dim { size: ", cols, " }");
  return absl::StrCat("node { name: '", name,
                      "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
                      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { ",
                      shape, " } float_val: 0.5 } } } }\n");
}

// w [5, 3] with a momentum slot, its initializer, a read feeding a MatMul,
// an update, an initialized check and a scalar colocated with w.
std::string MomentumGraph(const std::string& extra = "") {
  return absl::StrCat(
      Var("w", 5, 3, "/job:ps/task:0"), Var("w/m", 5, 3, "/job:ps/task:0", "w"),
      Var("step", 0, 0, "/job:ps/task:0", "w"), Const("init", 5, 3), Const("grad", 5, 3),
      Const("lr", 0, 0), Const("mom", 0, 0), Const("x", 2, 5),
      "node { name: 'w/Assign' op: 'AssignVariableOp' input: 'w' input: 'init' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'w/read' op: 'ReadVariableOp' input: 'w' input: '^w/Assign' "
      "device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: '_class' value { list { s: 'loc:@w' } } } }\n"
      "node { name: 'y' op: 'MatMul' input: 'x' input: 'w/read' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'update' op: 'ResourceApplyMomentum' input: 'w' input: 'w/m' input: 'lr' "
      "input: 'grad' input: 'mom' input: '^y' attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'ready' op: 'VarIsInitializedOp' input: 'w' }\n"
      "node { name: 'train' op: 'NoOp' input: '^update' input: '^w' }\n",
      extra);
}

GraphDef Parse(const std::string& text) {
  absl::StatusOr<GraphDef> g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> Inputs(const NodeDef& n) {
  return std::vector<std::string>(n.input().begin(), n.input().end());
}

TEST(VariableSplitTest, CutsAVariableAndItsSlotIntoPartsAndRewritesTheirUses) {
  GraphDef g = Parse(MomentumGraph());
  absl::StatusOr<SplitResult> r = SplitVariables(&g, {"w", "w/m"}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->split) << r->why_not;
  EXPECT_EQ(r->rows, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Find(g, "w"), nullptr);
  const NodeDef* p1 = Find(g, "w/m/part_1");
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->op(), "VarHandleOp");
  EXPECT_EQ(p1->attr().at("shape").shape().dim(0).size(), 2);
  EXPECT_EQ(p1->attr().at("shape").shape().dim(1).size(), 3);
  EXPECT_EQ(p1->attr().at("shared_name").s(), "w/m/part_1");
  EXPECT_EQ(p1->attr().at(kPartOfAttr).s(), "w/m");
  // A slot's part K goes with the variable's part K; the scalar with part 0.
  EXPECT_EQ(p1->attr().at("_class").list().s(0), "loc:@w/part_1");
  EXPECT_EQ(Find(g, "step")->attr().at("_class").list().s(0), "loc:@w/part_0");
  // The read: the parts' reads (waiting as the read did), concatenated
  // under its name, no longer pinned beside the variable.
  const NodeDef* read = Find(g, "w/read");
  EXPECT_EQ(read->op(), "ConcatV2");
  EXPECT_EQ(Inputs(*read), (std::vector<std::string>{"w/read/part_0", "w/read/part_1",
                                                     "w/read/axis"}));
  EXPECT_TRUE(read->device().empty());
  EXPECT_EQ(read->attr().count("_class"), 0u);
  EXPECT_EQ(Inputs(*Find(g, "w/read/part_1")),
            (std::vector<std::string>{"w/part_1", "^w/Assign"}));
  // The initializer: each part its rows.
  EXPECT_EQ(Find(g, "w/Assign")->op(), "NoOp");
  EXPECT_EQ(Find(g, "w/Assign/split")->op(), "SplitV");
  EXPECT_EQ(Inputs(*Find(g, "w/Assign/part_0")),
            (std::vector<std::string>{"w/part_0", "w/Assign/split:0"}));
  // The update: per part, hyperparameters shared, the gradient's rows.
  EXPECT_EQ(Find(g, "update")->op(), "NoOp");
  EXPECT_EQ(Inputs(*Find(g, "update/part_1")),
            (std::vector<std::string>{"w/part_1", "w/m/part_1", "lr", "update/split:1", "mom",
                                      "^y"}));
  EXPECT_EQ(Inputs(*Find(g, "ready")), (std::vector<std::string>{"w/part_0"}));
  // A control input on the variable waits for every part.
  EXPECT_EQ(Inputs(*Find(g, "train")),
            (std::vector<std::string>{"^update", "^w/part_0", "^w/part_1"}));
  // What comes out is a valid graph.
  EXPECT_TRUE(ImportGraphDef(g).ok());
}

TEST(VariableSplitTest, OtherUsesKeepTheVariableWholeAndSayWhich) {
  const std::string gather =
      "node { name: 'idx' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
      "int_val: 0 } } } }\n"
      "node { name: 'rows' op: 'ResourceGather' input: 'w' input: 'idx' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'Tindices' value { type: DT_INT32 } } }\n";
  GraphDef g = Parse(MomentumGraph(gather));
  const std::string before = g.SerializeAsString();
  absl::StatusOr<SplitResult> r = SplitVariables(&g, {"w", "w/m"}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->split);
  EXPECT_EQ(r->why_not, "rows (ResourceGather) uses w as its input 0");
  EXPECT_EQ(g.SerializeAsString(), before);

  // An update of the variable with a slot that is not split with it.
  GraphDef g2 = Parse(MomentumGraph());
  r = SplitVariables(&g2, {"w"}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->split);
  EXPECT_EQ(r->why_not, "update (ResourceApplyMomentum) uses w as its input 0");

  GraphDef g3 = Parse(MomentumGraph());
  r = SplitVariables(&g3, {"w", "w/m"}, 6);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->split);
  EXPECT_EQ(r->why_not, "its first dimension has fewer than 6 rows");

  EXPECT_FALSE(SplitVariables(&g3, {"w"}, 1).ok());
  EXPECT_FALSE(SplitVariables(&g3, {"y"}, 2).ok());
}

// A ref variable (VariableV2): its Identity read, a direct read of its
// value, an Assign, an Apply* and an initialized check.
TEST(VariableSplitTest, SplitsRefVariablesToo) {
  const std::string text = absl::StrCat(
      "node { name: 'w' op: 'VariableV2' device: '/job:ps/task:0' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 3 } } } } }\n",
      Const("init", 4, 3), Const("grad", 4, 3), Const("lr", 0, 0), Const("x", 2, 4),
      "node { name: 'w/Assign' op: 'Assign' input: 'w' input: 'init' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'w/read' op: 'Identity' input: 'w' device: '/job:ps/task:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: '_class' value { list { s: 'loc:@w' } } } }\n"
      "node { name: 'y' op: 'MatMul' input: 'x' input: 'w/read' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'twice' op: 'AddV2' input: 'w' input: 'w' input: '^y' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'update' op: 'ApplyGradientDescent' input: 'w' input: 'lr' input: 'grad' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'ready' op: 'IsVariableInitialized' input: 'w' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
  GraphDef g = Parse(text);
  absl::StatusOr<SplitResult> r = SplitVariables(&g, {"w"}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->split) << r->why_not;
  EXPECT_EQ(Find(g, "w/part_1")->op(), "VariableV2");
  EXPECT_EQ(Find(g, "w/read")->op(), "ConcatV2");
  EXPECT_EQ(Find(g, "w/read/part_0")->op(), "Identity");
  EXPECT_EQ(Find(g, "w/Assign/part_1")->op(), "Assign");
  EXPECT_EQ(Inputs(*Find(g, "update/part_1")),
            (std::vector<std::string>{"w/part_1", "lr", "update/split:1"}));
  // Each direct read of the value gets its own concatenation, waiting as
  // the reader does.
  EXPECT_EQ(Inputs(*Find(g, "twice")),
            (std::vector<std::string>{"twice/graphrun_value_0", "twice/graphrun_value_1", "^y"}));
  EXPECT_EQ(Inputs(*Find(g, "twice/graphrun_value_1")),
            (std::vector<std::string>{"w/part_0", "w/part_1", "twice/graphrun_value_1/axis",
                                      "^y"}));
  EXPECT_EQ(Inputs(*Find(g, "ready")), (std::vector<std::string>{"w/part_0"}));
  EXPECT_TRUE(ImportGraphDef(g).ok());

  // An update whose ref is read on keeps the variable whole.
  GraphDef g2 = Parse(text +
                      "node { name: 'after' op: 'Identity' input: 'update' "
                      "attr { key: 'T' value { type: DT_FLOAT } } }\n");
  r = SplitVariables(&g2, {"w"}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->split);
  EXPECT_EQ(r->why_not, "update (ApplyGradientDescent) passes the ref of w on to another node");
}

// The MLP 784-256-256-10 with one Adam-like slot per variable: W0 and its
// slot are 75 % of the bytes, so whole variables cannot balance two ps
// tasks; split, they can.
TEST(VariableSplitTest, PsPlacementSplitsAGroupOverHalfAnEvenShare) {
  std::string text;
  const struct {
    const char* name;
    int rows, cols;
  } vars[] = {{"W0", 784, 256}, {"b0", 256, 0}, {"W1", 256, 256},
              {"b1", 256, 0},   {"W2", 256, 10}, {"b2", 10, 0}};
  for (const auto& v : vars) {
    const std::string n = v.name;
    absl::StrAppend(&text, Var(n, v.rows, v.cols, ""), Var(n + "/m", v.rows, v.cols, "", n),
                    Const(n + "/g", v.rows, v.cols),
                    "node { name: '", n, "/update' op: 'ResourceApplyMomentum' input: '", n,
                    "' input: '", n, "/m' input: 'lr' input: '", n,
                    "/g' input: 'mom' attr { key: 'T' value { type: DT_FLOAT } } }\n");
  }
  absl::StrAppend(&text, Const("lr", 0, 0), Const("mom", 0, 0));
  GraphDef whole = Parse(text);
  GraphDef g = whole;
  PsPlacementOptions options;
  options.num_ps_tasks = 2;
  absl::StatusOr<PsPlacement> kept = PlaceVariablesOnPs(&whole, options);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_GT(kept->max_over_mean, 1.4);

  options.min_part_bytes = 256 << 10;
  absl::StatusOr<PsPlacement> p = PlaceVariablesOnPs(&g, options);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->splits.size(), 1u);
  EXPECT_EQ(p->splits[0].variable, "W0");
  EXPECT_EQ(p->splits[0].variables, 2);
  // 2.4 MB against a half share of 0.8 MB: 3 parts.
  EXPECT_EQ(p->splits[0].rows, (std::vector<int64_t>{262, 261, 261}));
  EXPECT_LE(p->max_over_mean, 1.2);
  // Each part goes with its slot's part and its update.
  for (int k = 0; k < 3; ++k) {
    const std::string part = absl::StrCat("/part_", k);
    EXPECT_EQ(Find(g, "W0" + part)->device(), Find(g, "W0/m" + part)->device());
    EXPECT_EQ(Find(g, "W0" + part)->device(), Find(g, "W0/update" + part)->device());
  }
  EXPECT_TRUE(ImportGraphDef(g).ok());
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
