// Scope and NodeBuilder on test-local ops (this test does not link
// //graph:ops), so it checks naming, attr inference, NodeDef writing and
// error recording without depending on the real op set.
#include "graph/cc/scope.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/cc/node_builder.h"
#include "graph/import.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace cc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::Status TestPlaceholderShape(InferenceContext* c) {
  PartialShape shape;
  absl::Status s = c->GetAttr("shape", &shape);
  if (!s.ok()) return s;
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status TestMatMulShape(InferenceContext* c) {
  auto a = c->WithRank(c->input(0), 2, "a");
  if (!a.ok()) return a.status();
  auto b = c->WithRank(c->input(1), 2, "b");
  if (!b.ok()) return b.status();
  bool ta = false, tb = false;
  c->GetAttr("transpose_a", &ta).IgnoreError();
  c->GetAttr("transpose_b", &tb).IgnoreError();
  auto inner =
      InferenceContext::MergeDim(a->dim(ta ? 0 : 1), b->dim(tb ? 1 : 0));
  if (!inner.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner dimensions differ: ", inner.status().message()));
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{a->dim(ta ? 1 : 0),
                                                     b->dim(tb ? 0 : 1)}));
  return absl::OkStatus();
}

REGISTER_OP("TestPlaceholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn(TestPlaceholderShape);

REGISTER_OP("TestMatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {float, double, int32}")
    .SetShapeFn(TestMatMulShape);

REGISTER_OP("TestAddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: type");

REGISTER_OP("TestIdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type)");

REGISTER_OP("TestTwoOutputs")
    .Input("x: float")
    .Output("y: float")
    .Output("z: int32");

REGISTER_OP("TestNoOp");

// A TestPlaceholder built through the scope.
Output Placeholder(const Scope& scope, DataType dtype,
                   PartialShape shape = PartialShape()) {
  return NodeBuilder(scope.GetUniqueNameForOp("TestPlaceholder"),
                     "TestPlaceholder")
      .Attr("dtype", dtype)
      .Attr("shape", shape)
      .Finalize(scope)
      .output(0);
}

Output MatMul(const Scope& scope, Output a, Output b,
              bool transpose_a = false) {
  return NodeBuilder(scope.GetUniqueNameForOp("TestMatMul"), "TestMatMul")
      .Input(a)
      .Input(b)
      .Attr("transpose_a", transpose_a)
      .Finalize(scope)
      .output(0);
}

const AttrValue& AttrOf(const NodeDef& def, const std::string& name) {
  static const AttrValue* const kEmpty = new AttrValue();
  auto it = def.attr().find(name);
  return it == def.attr().end() ? *kEmpty : it->second;
}

const NodeDef* FindDef(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> Inputs(const NodeDef& def) {
  return std::vector<std::string>(def.input().begin(), def.input().end());
}

TEST(ScopeTest, UniqueNamesFollowTensorFlow) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(root.GetUniqueNameForOp("MatMul"), "MatMul");
  EXPECT_EQ(root.GetUniqueNameForOp("MatMul"), "MatMul_1");
  EXPECT_EQ(root.GetUniqueNameForOp("MatMul"), "MatMul_2");

  Scope layer = root.NewSubScope("layer1");
  EXPECT_EQ(layer.name_prefix(), "layer1");
  EXPECT_EQ(layer.GetUniqueNameForOp("MatMul"), "layer1/MatMul");
  EXPECT_EQ(layer.GetUniqueNameForOp("MatMul"), "layer1/MatMul_1");
  EXPECT_EQ(layer.NewSubScope("inner").GetUniqueNameForOp("Relu"),
            "layer1/inner/Relu");
  // The same sub-scope name again gets a suffix, as in TensorFlow.
  EXPECT_EQ(root.NewSubScope("layer1").name_prefix(), "layer1_1");
  EXPECT_EQ(root.NewSubScope("").name_prefix(), "");

  Scope named = root.WithOpName("x");
  EXPECT_EQ(named.GetUniqueNameForOp("MatMul"), "x");
  EXPECT_EQ(named.GetUniqueNameForOp("MatMul"), "x_1");
  EXPECT_EQ(layer.WithOpName("w").GetUniqueNameForOp("Const"), "layer1/w");
  // WithOpName does not stick to sub-scopes made from it.
  EXPECT_EQ(named.NewSubScope("s").GetUniqueNameForOp("Relu"), "s/Relu");
}

TEST(ScopeTest, UniqueNamesAvoidNodesAddedDirectly) {
  Scope root = Scope::NewRootScope();
  ASSERT_TRUE(NodeBuilder("TestNoOp", "TestNoOp").Finalize(root.graph()).ok());
  EXPECT_EQ(root.GetUniqueNameForOp("TestNoOp"), "TestNoOp_1");
}

TEST(ScopeTest, BuildsNamedOpsWithDevicesAndControlDeps) {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT,
                         PartialShape(std::vector<int64_t>{-1, 784}));
  Output w = Placeholder(root.WithOpName("w"), DT_FLOAT,
                         PartialShape(std::vector<int64_t>{784, 10}));
  Operation init = NodeBuilder("init", "TestNoOp").Finalize(root);
  ASSERT_FALSE(init.empty());
  EXPECT_EQ(init.num_outputs(), 0);

  Scope layer = root.NewSubScope("layer1")
                    .WithDevice("/device:GPU:0")
                    .WithControlDependencies(init);
  Output y = MatMul(layer, x, w);
  Output y2 = MatMul(layer.WithNoControlDependencies().WithDevice(""), x, w);
  ASSERT_TRUE(root.ok()) << root.status();

  EXPECT_EQ(x.name(), "x:0");
  EXPECT_EQ(x.dtype(), DT_FLOAT);
  EXPECT_EQ(y.node()->name(), "layer1/TestMatMul");
  EXPECT_EQ(y2.node()->name(), "layer1/TestMatMul_1");
  Operation as_op = y;  // an Output converts to its Operation
  EXPECT_EQ(as_op.node(), y.node());

  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->node_size(), 5);
  const NodeDef* mm = FindDef(*def, "layer1/TestMatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->op(), "TestMatMul");
  EXPECT_EQ(mm->device(), "/device:GPU:0");
  EXPECT_THAT(Inputs(*mm), ElementsAre("x", "w", "^init"));
  EXPECT_EQ(AttrOf(*mm, "T").type(), DT_FLOAT);
  // Defaults are written into the NodeDef, as TensorFlow does.
  EXPECT_EQ(AttrOf(*mm, "transpose_a").value_case(), AttrValue::kB);
  EXPECT_FALSE(AttrOf(*mm, "transpose_a").b());

  const NodeDef* mm2 = FindDef(*def, "layer1/TestMatMul_1");
  ASSERT_NE(mm2, nullptr);
  EXPECT_EQ(mm2->device(), "");
  EXPECT_THAT(Inputs(*mm2), ElementsAre("x", "w"));

  // Shapes were inferred by ToGraphDef.
  EXPECT_EQ(y.shape().DebugString(), "[?,10]");

  // The GraphDef imports back to the same nodes and shapes.
  absl::StatusOr<std::unique_ptr<Graph>> back = ImportGraphDef(*def);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ((*back)->num_nodes(), 5);
  for (const auto& node : root.graph()->nodes()) {
    Node* other = (*back)->FindNode(node->name());
    ASSERT_NE(other, nullptr) << node->name();
    EXPECT_EQ(other->op(), node->op());
    EXPECT_EQ(other->output_types(), node->output_types());
    for (int i = 0; i < node->num_outputs(); ++i) {
      EXPECT_EQ(other->output_shape(i), node->output_shape(i));
    }
  }
  EXPECT_EQ((*back)->FindNode("layer1/TestMatMul")->output_shape(0),
            PartialShape(std::vector<int64_t>{-1, 10}));
}

TEST(NodeBuilderTest, WritesInputsAndInfersListAttrs) {
  Graph graph;
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output b = Placeholder(root.WithOpName("b"), DT_INT32);
  Operation two = NodeBuilder("two", "TestTwoOutputs").Input(a).Finalize(root);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(two.output(1).name(), "two:1");
  EXPECT_EQ(two.output(1).dtype(), DT_INT32);
  EXPECT_EQ(two.outputs().size(), 2u);

  // A list input sets N; T comes from the list's elements.
  Output sum = NodeBuilder("sum", "TestAddN")
                   .Input({a, two.output(0), a})
                   .Finalize(root)
                   .output(0);
  // A type-list input sets the list of types.
  Operation idn = NodeBuilder("idn", "TestIdentityN")
                      .Input({a, two.output(1), b})
                      .Finalize(root);
  ASSERT_TRUE(root.ok()) << root.status();
  const NodeDef& sum_def = sum.node()->def();
  EXPECT_EQ(AttrOf(sum_def, "N").i(), 3);
  EXPECT_EQ(AttrOf(sum_def, "T").type(), DT_FLOAT);
  EXPECT_THAT(Inputs(sum_def), ElementsAre("a", "two", "a"));
  const NodeDef& idn_def = idn.node()->def();
  EXPECT_THAT(AttrOf(idn_def, "T").list().type(),
              ElementsAre(DT_FLOAT, DT_INT32, DT_INT32));
  EXPECT_THAT(Inputs(idn_def), ElementsAre("a", "two:1", "b"));
  EXPECT_EQ(idn.num_outputs(), 3);
  EXPECT_EQ(idn.output(2).dtype(), DT_INT32);
  // Edges are in the graph too.
  ASSERT_NE(idn.node()->input_edge(1), nullptr);
  EXPECT_EQ(idn.node()->input_edge(1)->src_output, 1);
}

TEST(NodeBuilderTest, AttrOverloadsStoreTheRightKinds) {
  Graph graph;
  Tensor scalar = Tensor::Scalar(2.5f);
  Tensor vec = Tensor::FromVector(std::vector<int32_t>{1, 2, 3});
  absl::StatusOr<Node*> n =
      NodeBuilder("n", "TestNoOp")
          .Attr("_i", 3)
          .Attr("_i64", int64_t{1} << 40)
          .Attr("_f", 0.5f)
          .Attr("_d", 0.25)
          .Attr("_b", true)
          .Attr("_s", "SAME")
          .Attr("_str", std::string("x"))
          .Attr("_t", DT_HALF)
          .Attr("_shape", TensorShape({2, 3}))
          .Attr("_pshape", PartialShape(std::vector<int64_t>{-1, 3}))
          .Attr("_scalar", scalar)
          .Attr("_vec", vec)
          .Attr("_ints", {1, 2, 2, 1})
          .Attr("_floats", {1.f, 2.f})
          .Attr("_types", {DT_FLOAT, DT_INT32})
          .Attr("_strings", {"a", "b"})
          .Attr("_empty", std::vector<int64_t>{})
          .Device("/device:CPU:0")
          .Finalize(&graph);
  ASSERT_TRUE(n.ok()) << n.status();
  const NodeDef& d = (*n)->def();
  EXPECT_EQ(d.device(), "/device:CPU:0");
  EXPECT_EQ(AttrOf(d, "_i").i(), 3);
  EXPECT_EQ(AttrOf(d, "_i64").i(), int64_t{1} << 40);
  EXPECT_EQ(AttrOf(d, "_f").f(), 0.5f);
  EXPECT_EQ(AttrOf(d, "_d").f(), 0.25f);
  EXPECT_TRUE(AttrOf(d, "_b").b());
  EXPECT_EQ(AttrOf(d, "_s").s(), "SAME");
  EXPECT_EQ(AttrOf(d, "_str").s(), "x");
  EXPECT_EQ(AttrOf(d, "_t").type(), DT_HALF);
  EXPECT_EQ(AttrOf(d, "_shape").shape().dim_size(), 2);
  EXPECT_EQ(AttrOf(d, "_pshape").shape().dim(0).size(), -1);
  // Scalars go in the typed field, larger tensors in tensor_content.
  EXPECT_THAT(AttrOf(d, "_scalar").tensor().float_val(), ElementsAre(2.5f));
  EXPECT_TRUE(AttrOf(d, "_scalar").tensor().tensor_content().empty());
  EXPECT_EQ(AttrOf(d, "_vec").tensor().tensor_content().size(), 12u);
  EXPECT_THAT(AttrOf(d, "_ints").list().i(), ElementsAre(1, 2, 2, 1));
  EXPECT_THAT(AttrOf(d, "_floats").list().f(), ElementsAre(1.f, 2.f));
  EXPECT_THAT(AttrOf(d, "_types").list().type(),
              ElementsAre(DT_FLOAT, DT_INT32));
  EXPECT_THAT(AttrOf(d, "_strings").list().s(), ElementsAre("a", "b"));
  EXPECT_EQ(AttrOf(d, "_empty").value_case(), AttrValue::kList);
}

TEST(ScopeErrorTest, DtypeMismatchIsRecordedAndNamesNodeAndInputs) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output b = Placeholder(root.WithOpName("b"), DT_INT32);
  Output mm = MatMul(root.WithOpName("mm"), a, b);
  EXPECT_TRUE(mm.empty());
  EXPECT_FALSE(root.ok());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root.status().message(),
            "TestMatMul 'mm': inputs a and b must have the same type T, got "
            "float and int32");
  EXPECT_EQ(root.graph()->FindNode("mm"), nullptr);

  // Later builders are no-ops; the first error stays.
  const int nodes = root.graph()->num_nodes();
  Output c = Placeholder(root.WithOpName("c"), DT_FLOAT);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.dtype(), DT_INVALID);
  EXPECT_EQ(c.name(), "");
  EXPECT_EQ(root.graph()->num_nodes(), nodes);
  root.UpdateStatus(absl::InternalError("later"));
  EXPECT_THAT(root.status().message(), HasSubstr("'mm'"));
  // Every scope of the root sees it, and ToGraphDef returns it.
  EXPECT_FALSE(root.NewSubScope("s").ok());
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(def.status(), root.status());
}

TEST(ScopeErrorTest, ShapeErrorSurfacesInToGraphDef) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT,
                         PartialShape(std::vector<int64_t>{2, 3}));
  Output b = Placeholder(root.WithOpName("b"), DT_FLOAT,
                         PartialShape(std::vector<int64_t>{4, 5}));
  MatMul(root.WithOpName("bad_mm"), a, b);
  ASSERT_TRUE(root.ok());  // types fit; shapes are checked by ToGraphDef
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_FALSE(def.ok());
  EXPECT_THAT(def.status().message(), HasSubstr("node 'bad_mm' (TestMatMul)"));
  EXPECT_THAT(def.status().message(), HasSubstr("inner dimensions differ"));
  EXPECT_THAT(def.status().message(), HasSubstr("[2,3], [4,5]"));
  EXPECT_EQ(root.status(), def.status());

  // Transposing a makes the inner dims agree... in a fresh graph.
  Scope ok_root = Scope::NewRootScope();
  Output a2 =
      Placeholder(ok_root, DT_FLOAT, PartialShape(std::vector<int64_t>{3, 2}));
  Output b2 =
      Placeholder(ok_root, DT_FLOAT, PartialShape(std::vector<int64_t>{3, 5}));
  Output p = MatMul(ok_root, a2, b2, /*transpose_a=*/true);
  ASSERT_TRUE(ok_root.ToGraphDef().ok()) << ok_root.status();
  EXPECT_EQ(p.shape().DebugString(), "[2,5]");
}

TEST(NodeBuilderTest, UnknownOpIsNotFoundAndNamesNode) {
  Scope root = Scope::NewRootScope();
  Operation op = NodeBuilder("weird", "NoSuchOp").Finalize(root);
  EXPECT_TRUE(op.empty());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(root.status().message(), HasSubstr("NoSuchOp 'weird'"));
  EXPECT_THAT(root.status().message(), HasSubstr("not registered"));
}

TEST(NodeBuilderTest, RejectsBadBuildsWithoutTouchingTheGraph) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output i = Placeholder(root.WithOpName("i"), DT_INT32);
  ASSERT_TRUE(root.ok());
  Graph* g = root.graph();
  auto error = [&](const NodeBuilder& b) {
    absl::StatusOr<Node*> n = b.Finalize(g);
    EXPECT_EQ(g->num_nodes(), 2);
    return n.ok() ? std::string("OK") : std::string(n.status().message());
  };
  EXPECT_EQ(error(NodeBuilder("m", "TestMatMul").Input(a)),
            "TestMatMul 'm': the op takes 2 inputs (a, b) but 1 were given");
  EXPECT_THAT(error(NodeBuilder("m", "TestMatMul")
                        .Input(a)
                        .Input(a)
                        .Attr("transpose_a", 1)),
              HasSubstr("attr 'transpose_a' must be bool but is int"));
  EXPECT_THAT(error(NodeBuilder("m", "TestMatMul")
                        .Input(a)
                        .Input(a)
                        .Attr("tranpose_a", true)),
              HasSubstr("the op has no attr 'tranpose_a'"));
  EXPECT_THAT(
      error(
          NodeBuilder("m", "TestMatMul").Input(i).Input(i).Attr("T", DT_FLOAT)),
      HasSubstr("input 'a' must have type T = float (set as an attr), "
                "got int32"));
  EXPECT_THAT(error(NodeBuilder("m", "TestMatMul").Input(a).Input(Output())),
              HasSubstr("input 'b' is empty"));
  EXPECT_THAT(error(NodeBuilder("m", "TestMatMul").Input({a, a}).Input(a)),
              HasSubstr("input 'a' takes one tensor, not a list of 2"));
  EXPECT_THAT(error(NodeBuilder("m", "TestTwoOutputs").Input(i)),
              HasSubstr("input 'x' expects float but 'i:0' "
                        "(TestPlaceholder) is int32"));
  EXPECT_THAT(error(NodeBuilder("s", "TestAddN").Input({a, i})),
              HasSubstr("inputs inputs[0] and inputs[1] must have the same "
                        "type T, got float and int32"));
  EXPECT_THAT(error(NodeBuilder("s", "TestAddN").Input({a}).Attr("N", 2)),
              HasSubstr("attr 'N' is 2 but input 'inputs' has 1 tensors"));
  EXPECT_THAT(error(NodeBuilder("s", "TestAddN").Input(std::vector<Output>{})),
              HasSubstr("'N'"));
  EXPECT_THAT(error(NodeBuilder("a", "TestNoOp")),
              HasSubstr("already has a node with this name"));
  EXPECT_THAT(error(NodeBuilder("bad name", "TestNoOp")),
              HasSubstr("invalid node name"));
  EXPECT_THAT(error(NodeBuilder("p", "TestPlaceholder")),
              HasSubstr("missing attr 'dtype'"));

  Scope other = Scope::NewRootScope();
  Output foreign = Placeholder(other.WithOpName("f"), DT_FLOAT);
  EXPECT_THAT(error(NodeBuilder("m", "TestMatMul").Input(a).Input(foreign)),
              HasSubstr("input 'b' ('f:0') belongs to another graph"));
  EXPECT_THAT(error(NodeBuilder("n", "TestNoOp").ControlInput(foreign)),
              HasSubstr("control input 'f' belongs to another graph"));
}

TEST(ScopeTest, ControlDependenciesAccumulateAndDeduplicate) {
  Scope root = Scope::NewRootScope();
  Operation c1 = NodeBuilder("c1", "TestNoOp").Finalize(root);
  Operation c2 = NodeBuilder("c2", "TestNoOp").Finalize(root);
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Scope deps = root.WithControlDependencies({c1, x})
                   .WithControlDependencies(c2)
                   .WithControlDependencies(x);
  EXPECT_EQ(deps.control_deps().size(), 4u);
  Operation n = NodeBuilder("n", "TestNoOp").ControlInput(c1).Finalize(deps);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(Inputs(n.node()->def()), ElementsAre("^c1", "^x", "^c2"));
  int control_edges = 0;
  for (const Edge* e : n.node()->in_edges()) control_edges += e->IsControl();
  EXPECT_EQ(control_edges, 3);
}

}  // namespace
}  // namespace cc
}  // namespace graphrun
