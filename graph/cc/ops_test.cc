// The generated op builders and Const on the real op set (//graph:ops):
// an MLP built with names, sub-scopes, devices and control dependencies,
// checked in the GraphDef and after re-import; errors; Const overloads.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/cc/cc.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace cc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const NodeDef& Def(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  static const NodeDef* const kEmpty = new NodeDef();
  return *kEmpty;
}

const AttrValue& AttrOf(const NodeDef& def, const std::string& name) {
  static const AttrValue* const kEmpty = new AttrValue();
  auto it = def.attr().find(name);
  return it == def.attr().end() ? *kEmpty : it->second;
}

std::vector<std::string> Inputs(const NodeDef& def) {
  return std::vector<std::string>(def.input().begin(), def.input().end());
}

// The value a Const node holds.
Tensor ConstValue(const Output& c) {
  EXPECT_EQ(c.node()->op(), "Const");
  absl::StatusOr<Tensor> t =
      Tensor::FromProto(AttrOf(c.node()->def(), "value").tensor());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// x -> layer1 (MatMul, BiasAdd, Relu on GPU 0) -> layer2 (MatMul with
// transpose_b, after "init") -> probs (Softmax).
struct Mlp {
  Scope root = Scope::NewRootScope();
  Output x, w1, b1, h, w2, logits, probs, gram;
  Operation init;

  Mlp() {
    x = Placeholder(root.WithOpName("x"), DT_FLOAT,
                    PlaceholderAttrs().Shape(PartialShape({-1, 784})));
    init = NoOp(root.WithOpName("init"));
    Scope l1 = root.NewSubScope("layer1").WithDevice("/device:GPU:0");
    w1 = Const(l1.WithOpName("w"), {0.01f}, TensorShape({784, 32}));
    b1 = Const(l1.WithOpName("b"), std::vector<float>(32, 0.1f));
    h = Relu(l1, BiasAdd(l1, MatMul(l1, x, w1), b1));
    Scope l2 = root.NewSubScope("layer2").WithControlDependencies(init);
    w2 = Const(l2.WithOpName("w"), {0.5f}, TensorShape({10, 32}));
    logits =
        MatMul(l2.WithOpName("logits"), h, w2, MatMulAttrs().TransposeB(true));
    probs = Softmax(root.WithOpName("probs"), logits);
    gram =
        MatMul(root.WithOpName("gram"), h, h, MatMulAttrs().TransposeA(true));
  }
};

TEST(OpsTest, MlpGraphDef) {
  Mlp m;
  absl::StatusOr<GraphDef> def = m.root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();

  std::vector<std::string> names, ops;
  for (const NodeDef& n : def->node()) {
    names.push_back(n.name());
    ops.push_back(n.op());
  }
  EXPECT_THAT(names,
              ElementsAre("x", "init", "layer1/w", "layer1/b", "layer1/MatMul",
                          "layer1/BiasAdd", "layer1/Relu", "layer2/w",
                          "layer2/logits", "probs", "gram"));
  EXPECT_THAT(ops, ElementsAre("Placeholder", "NoOp", "Const", "Const",
                               "MatMul", "BiasAdd", "Relu", "Const", "MatMul",
                               "Softmax", "MatMul"));

  EXPECT_THAT(Inputs(Def(*def, "layer1/MatMul")), ElementsAre("x", "layer1/w"));
  EXPECT_THAT(Inputs(Def(*def, "layer1/BiasAdd")),
              ElementsAre("layer1/MatMul", "layer1/b"));
  EXPECT_THAT(Inputs(Def(*def, "layer2/logits")),
              ElementsAre("layer1/Relu", "layer2/w", "^init"));
  // The control dependency applies to every op of layer2's scope.
  EXPECT_THAT(Inputs(Def(*def, "layer2/w")), ElementsAre("^init"));
  EXPECT_THAT(Inputs(Def(*def, "probs")), ElementsAre("layer2/logits"));

  for (const char* n : {"layer1/w", "layer1/MatMul", "layer1/Relu"}) {
    EXPECT_EQ(Def(*def, n).device(), "/device:GPU:0") << n;
  }
  EXPECT_EQ(Def(*def, "layer2/logits").device(), "");
  EXPECT_EQ(Def(*def, "x").device(), "");

  const NodeDef& mm1 = Def(*def, "layer1/MatMul");
  EXPECT_EQ(AttrOf(mm1, "T").type(), DT_FLOAT);
  EXPECT_FALSE(AttrOf(mm1, "transpose_a").b());
  EXPECT_TRUE(AttrOf(Def(*def, "layer2/logits"), "transpose_b").b());
  EXPECT_TRUE(AttrOf(Def(*def, "gram"), "transpose_a").b());
  EXPECT_EQ(AttrOf(Def(*def, "layer1/BiasAdd"), "data_format").s(), "NHWC");
  EXPECT_EQ(AttrOf(Def(*def, "x"), "dtype").type(), DT_FLOAT);
  EXPECT_EQ(AttrOf(Def(*def, "layer1/b"), "dtype").type(), DT_FLOAT);

  EXPECT_EQ(m.probs.name(), "probs:0");
  EXPECT_EQ(m.probs.dtype(), DT_FLOAT);
  EXPECT_EQ(m.probs.shape(), PartialShape({-1, 10}));
}

TEST(OpsTest, MlpReimportsWithSameNodesAndShapes) {
  Mlp m;
  absl::StatusOr<GraphDef> def = m.root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportGraphDef(*def);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->num_nodes(), m.root.graph()->num_nodes());
  EXPECT_EQ((*g)->num_edges(), m.root.graph()->num_edges());
  for (const auto& node : m.root.graph()->nodes()) {
    Node* other = (*g)->FindNode(node->name());
    ASSERT_NE(other, nullptr) << node->name();
    EXPECT_EQ(other->op(), node->op());
    EXPECT_EQ(other->requested_device(), node->requested_device());
    EXPECT_EQ(other->output_types(), node->output_types());
    for (int i = 0; i < node->num_outputs(); ++i) {
      EXPECT_EQ(other->output_shape(i), node->output_shape(i)) << node->name();
    }
  }
  auto shape = [&](const char* name) {
    return (*g)->FindNode(name)->output_shape(0).DebugString();
  };
  EXPECT_EQ(shape("x"), "[?,784]");
  EXPECT_EQ(shape("layer1/MatMul"), "[?,32]");
  EXPECT_EQ(shape("layer1/Relu"), "[?,32]");
  EXPECT_EQ(shape("layer2/logits"), "[?,10]");
  EXPECT_EQ(shape("probs"), "[?,10]");
  EXPECT_EQ(shape("gram"), "[32,32]");
}

TEST(OpsTest, UniqueNamesAndListInputs) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root, DT_FLOAT);
  Output b = Placeholder(root, DT_FLOAT);
  Output m0 = MatMul(root, a, b);
  Output m1 = MatMul(root, a, b);
  Output sum = AddN(root, {m0, m1, a});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(a.node()->name(), "Placeholder");
  EXPECT_EQ(b.node()->name(), "Placeholder_1");
  EXPECT_EQ(m0.node()->name(), "MatMul");
  EXPECT_EQ(m1.node()->name(), "MatMul_1");
  EXPECT_EQ(AttrOf(sum.node()->def(), "N").i(), 3);
  EXPECT_EQ(AttrOf(sum.node()->def(), "T").type(), DT_FLOAT);
  EXPECT_THAT(Inputs(sum.node()->def()),
              ElementsAre("MatMul", "MatMul_1", "Placeholder"));
}

TEST(OpsTest, ListOutputsAndPositionalAttrs) {
  Scope root = Scope::NewRootScope();
  Output v = Placeholder(root.WithOpName("v"), DT_FLOAT,
                         PlaceholderAttrs().Shape(PartialShape({6, 4})));
  std::vector<Output> parts =
      Split(root.WithOpName("split"), Const(root, 0), v, /*num_split=*/3);
  Output c = Cast(root.WithOpName("c"), parts[0], DT_INT32);
  Output s = Shape(root, c, ShapeAttrs().OutType(DT_INT64));
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].name(), "split:2");
  EXPECT_EQ(parts[2].shape(), PartialShape({2, 4}));
  EXPECT_EQ(AttrOf(Def(*def, "split"), "num_split").i(), 3);
  EXPECT_EQ(c.dtype(), DT_INT32);
  EXPECT_EQ(AttrOf(Def(*def, "c"), "SrcT").type(), DT_FLOAT);
  EXPECT_EQ(AttrOf(Def(*def, "c"), "DstT").type(), DT_INT32);
  EXPECT_THAT(Inputs(Def(*def, "c")), ElementsAre("split"));
  EXPECT_EQ(s.dtype(), DT_INT64);
  EXPECT_EQ(s.shape(), PartialShape({2}));
}

TEST(OpsErrorTest, DtypeMismatchIsRecordedWithNodeName) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output b = Placeholder(root.WithOpName("b"), DT_INT32);
  Output mm = MatMul(root.WithOpName("mm"), a, b);
  EXPECT_TRUE(mm.empty());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root.status().message(),
            "MatMul 'mm': inputs a and b must have the same type T, got float "
            "and int32");
  // Later builders are no-ops.
  Output r = Relu(root, a);
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(AddN(root, {a, a}).empty());
  EXPECT_TRUE(Split(root, a, a, 2).empty());
  EXPECT_TRUE(NoOp(root).empty());
  EXPECT_EQ(root.graph()->num_nodes(), 2);
  EXPECT_FALSE(root.ToGraphDef().ok());
}

TEST(OpsErrorTest, MatMulInnerDimsFailInToGraphDef) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root, DT_FLOAT,
                         PlaceholderAttrs().Shape(PartialShape({2, 3})));
  Output b = Placeholder(root, DT_FLOAT,
                         PlaceholderAttrs().Shape(PartialShape({4, 5})));
  MatMul(root.WithOpName("mm"), a, b);
  ASSERT_TRUE(root.ok());
  absl::StatusOr<GraphDef> def = root.ToGraphDef();
  ASSERT_FALSE(def.ok());
  EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(def.status().message(), HasSubstr("node 'mm' (MatMul)"));
  EXPECT_THAT(def.status().message(), HasSubstr("[2,3], [4,5]"));
  EXPECT_EQ(root.status(), def.status());
}

TEST(OpsErrorTest, UnknownOpAndBadAttrThroughNodeBuilder) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Operation op = NodeBuilder("frob", "Frobnicate").Input(a).Finalize(root);
  EXPECT_TRUE(op.empty());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(root.status().message(), HasSubstr("Frobnicate 'frob'"));

  Scope root2 = Scope::NewRootScope();
  Output x = Placeholder(root2.WithOpName("x"), DT_FLOAT);
  Output pool = NodeBuilder("pool", "MaxPool")
                    .Input(x)
                    .Attr("ksize", {1, 2, 2, 1})
                    .Attr("strides", {1, 2, 2, 1})
                    .Attr("padding", "SIDEWAYS")
                    .Finalize(root2)
                    .output(0);
  EXPECT_TRUE(pool.empty());
  EXPECT_THAT(root2.status().message(), HasSubstr("MaxPool 'pool'"));
  EXPECT_THAT(root2.status().message(), HasSubstr("SIDEWAYS"));
}

TEST(ConstTest, ScalarOverloadsPickTheirDtype) {
  Scope root = Scope::NewRootScope();
  Output f = Const(root, 1.5f);
  Output d = Const(root, 2.5);
  Output i = Const(root, 7);
  Output l = Const(root, int64_t{1} << 40);
  Output b = Const(root, true);
  Output s = Const(root, "hello");
  Output s2 = Const(root, std::string("world"));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(f.node()->name(), "Const");
  EXPECT_EQ(d.node()->name(), "Const_1");
  EXPECT_EQ(f.dtype(), DT_FLOAT);
  EXPECT_EQ(d.dtype(), DT_DOUBLE);
  EXPECT_EQ(i.dtype(), DT_INT32);
  EXPECT_EQ(l.dtype(), DT_INT64);
  EXPECT_EQ(b.dtype(), DT_BOOL);
  EXPECT_EQ(s.dtype(), DT_STRING);
  EXPECT_EQ(ConstValue(f).scalar<float>(), 1.5f);
  EXPECT_EQ(ConstValue(d).scalar<double>(), 2.5);
  EXPECT_EQ(ConstValue(i).scalar<int32_t>(), 7);
  EXPECT_EQ(ConstValue(l).scalar<int64_t>(), int64_t{1} << 40);
  EXPECT_TRUE(ConstValue(b).scalar<bool>());
  EXPECT_EQ(ConstValue(s).scalar<std::string>(), "hello");
  EXPECT_EQ(ConstValue(s2).scalar<std::string>(), "world");
  EXPECT_EQ(ConstValue(i).dims(), 0);
  // Scalars are stored in the typed field, as TensorFlow does.
  EXPECT_THAT(AttrOf(f.node()->def(), "value").tensor().float_val(),
              ElementsAre(1.5f));
  EXPECT_EQ(AttrOf(i.node()->def(), "dtype").type(), DT_INT32);
}

TEST(ConstTest, ListsAndVectorsWithShapes) {
  Scope root = Scope::NewRootScope();
  Output f = Const(root, {1.f, 2.f}, TensorShape({2}));
  Output m = Const(root, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, TensorShape({2, 3}));
  Output i = Const(root, {1, 2, 3});
  Output l = Const(root, {int64_t{4}, int64_t{5}});
  Output d = Const(root, {0.5, 0.25});
  Output s = Const(root, {"a", "bc"});
  Output vf = Const(root, std::vector<float>{3.f, 4.f});
  Output vi =
      Const(root, std::vector<int32_t>{1, 2, 3, 4}, TensorShape({2, 2}));
  Output vl = Const(root, std::vector<int64_t>{9});
  Output fill = Const(root, {0.f}, TensorShape({3, 3}));
  Output t = Const(root, Tensor::FromVector(std::vector<int32_t>{5, 6}));
  ASSERT_TRUE(root.ok()) << root.status();

  EXPECT_EQ(f.dtype(), DT_FLOAT);
  EXPECT_THAT(ConstValue(f).flat<float>(), ElementsAre(1.f, 2.f));
  EXPECT_EQ(ConstValue(m).shape(), TensorShape({2, 3}));
  EXPECT_THAT(ConstValue(m).flat<float>(),
              ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_EQ(i.dtype(), DT_INT32);
  EXPECT_THAT(ConstValue(i).flat<int32_t>(), ElementsAre(1, 2, 3));
  EXPECT_EQ(l.dtype(), DT_INT64);
  EXPECT_THAT(ConstValue(l).flat<int64_t>(), ElementsAre(4, 5));
  EXPECT_EQ(d.dtype(), DT_DOUBLE);
  EXPECT_EQ(s.dtype(), DT_STRING);
  EXPECT_THAT(ConstValue(s).flat<std::string>(), ElementsAre("a", "bc"));
  EXPECT_THAT(ConstValue(vf).flat<float>(), ElementsAre(3.f, 4.f));
  EXPECT_EQ(ConstValue(vi).shape(), TensorShape({2, 2}));
  EXPECT_EQ(vl.dtype(), DT_INT64);
  EXPECT_EQ(ConstValue(fill).NumElements(), 9);
  EXPECT_THAT(ConstValue(fill).flat<float>(), testing::Each(0.f));
  EXPECT_THAT(ConstValue(t).flat<int32_t>(), ElementsAre(5, 6));

  // Shapes are inferred from the value.
  ASSERT_TRUE(root.ToGraphDef().ok()) << root.status();
  EXPECT_EQ(m.shape(), PartialShape({2, 3}));
  EXPECT_EQ(fill.shape(), PartialShape({3, 3}));
}

TEST(ConstTest, ValueCountThatDoesNotFitIsRecorded) {
  Scope root = Scope::NewRootScope();
  Output c = Const(root.WithOpName("w"), {1.f, 2.f, 3.f}, TensorShape({2, 2}));
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root.status().message(),
              HasSubstr("Const 'w': 3 values do not fill shape [2,2]"));
}

}  // namespace
}  // namespace cc
}  // namespace graphrun
