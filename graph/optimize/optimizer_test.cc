#include "graph/optimize/optimizer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "graph/testing/graphdef_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::ConstValue;
using testing::FindNode;
using testing::NodeInputs;
using testing::ParseTextGraph;

float ConstFloat(const GraphDef& g, const std::string& name) {
  const Tensor t = ConstValue(g, name);
  return t.IsInitialized() && t.NumElements() == 1 ? t.flat<float>()[0] : -1;
}

std::string ScalarConst(const std::string& name, float v, const std::string& extra = "") {
  return "node { name: '" + name + "' op: 'Const' " + extra +
         " attr { key: 'dtype' value { type: DT_FLOAT } }"
         " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: " +
         std::to_string(v) + " } } } }\n";
}

std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& extra = "") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b + "' " +
         extra + " attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

std::string Unary(const std::string& name, const std::string& op, const std::string& x,
                  const std::string& extra = "") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + x + "' " + extra +
         " attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

const char kPlaceholder[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";

// A stand-in for the kernels: float scalar Add and Mul, counting calls.
struct FakeEvaluator {
  int calls = 0;
  NodeEvaluator Get() {
    return [this](const NodeDef& node, const OpDef&,
                  std::vector<Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
      ++calls;
      if (in.size() != 2 || in[0].NumElements() != 1 || in[1].NumElements() != 1) {
        return absl::UnimplementedError("fake evaluator: scalars only");
      }
      const float a = in[0].flat<float>()[0], b = in[1].flat<float>()[0];
      float r;
      if (node.op() == "AddV2") {
        r = a + b;
      } else if (node.op() == "Mul") {
        r = a * b;
      } else {
        return absl::UnimplementedError(node.op());
      }
      return std::vector<Tensor>{Tensor::FromVector<float>({r}, TensorShape({}))};
    };
  }
};

TEST(ConstantFoldingTest, FoldsChainsKeepsNamesAndPrunesInputs) {
  GraphDef g = ParseTextGraph(ScalarConst("a", 2) + ScalarConst("b", 3) + Binary("s", "AddV2", "a", "b") +
                     Binary("p", "Mul", "s", "s") + kPlaceholder + Binary("y", "Mul", "x", "p"));
  FakeEvaluator eval;
  OptimizerOptions options;
  options.evaluate = eval.Get();
  options.preserve = {"y", "x"};
  OptimizationReport report;
  ASSERT_TRUE(OptimizeGraph(&g, options, &report).ok());
  EXPECT_EQ(ConstFloat(g, "p"), 25.f);
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"x", "p"}));
  // a, b and s fed only what was folded: gone.
  EXPECT_EQ(FindNode(g, "a"), nullptr);
  EXPECT_EQ(FindNode(g, "s"), nullptr);
  EXPECT_EQ(g.node_size(), 3);
  EXPECT_EQ(eval.calls, 2);
  const std::string log = report.ToString();
  EXPECT_NE(log.find("constant folding: 2 changes"), std::string::npos) << log;
  EXPECT_NE(log.find("folded 'p' (Mul)"), std::string::npos) << log;
  EXPECT_NE(log.find("pruning: 3 changes, 6 -> 3 nodes"), std::string::npos) << log;
}

TEST(ConstantFoldingTest, FoldedNodeKeepsTheControlInputsOfItsInputs) {
  // c1 lives in a cond branch (control input from the branch pivot);
  // the folded sum must stay there: dead when the branch is not taken.
  GraphDef g = ParseTextGraph(kPlaceholder + Unary("pivot", "Identity", "x") +
                     ScalarConst("c1", 1, "input: '^pivot'") + ScalarConst("c2", 4) +
                     "node { name: 'gate' op: 'NoOp' }\n" +
                     Binary("sum", "AddV2", "c1", "c2", "input: '^gate'"));
  FakeEvaluator eval;
  OptimizerOptions options;
  options.evaluate = eval.Get();
  options.preserve = {"sum"};
  ASSERT_TRUE(FoldConstants(&g, options, nullptr).ok());
  EXPECT_EQ(ConstFloat(g, "sum"), 5.f);
  std::vector<std::string> in = NodeInputs(g, "sum");
  std::sort(in.begin(), in.end());
  EXPECT_EQ(in, (std::vector<std::string>{"^gate", "^pivot"}));
}

TEST(ConstantFoldingTest, ShapeOfAKnownShapeBecomesAConstThatStillWaitsForItsInput) {
  GraphDef g = ParseTextGraph(std::string(kPlaceholder) +
                     "node { name: 'sh' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }"
                     " attr { key: 'out_type' value { type: DT_INT32 } } }\n"
                     "node { name: 'n' op: 'Size' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }"
                     " attr { key: 'out_type' value { type: DT_INT64 } } }\n");
  OptimizerOptions options;  // no evaluator: shape folding still runs
  options.shapes["x"] = {PartialShape({2, 3})};
  ASSERT_TRUE(FoldConstants(&g, options, nullptr).ok());
  const NodeDef* sh = FindNode(g, "sh");
  ASSERT_EQ(sh->op(), "Const");
  auto t = Tensor::FromProto(sh->attr().at("value").tensor());
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->dtype(), DT_INT32);
  ASSERT_EQ(t->NumElements(), 2);
  EXPECT_EQ(t->flat<int32_t>()[0], 2);
  EXPECT_EQ(t->flat<int32_t>()[1], 3);
  EXPECT_EQ(NodeInputs(g, "sh"), (std::vector<std::string>{"^x"}));
  auto n = Tensor::FromProto(FindNode(g, "n")->attr().at("value").tensor());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->flat<int64_t>()[0], 6);
  // Unknown dimension: left alone.
  GraphDef g2 = ParseTextGraph(std::string(kPlaceholder) +
                      "node { name: 'sh' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n");
  options.shapes["x"] = {PartialShape({-1, 3})};
  ASSERT_TRUE(FoldConstants(&g2, options, nullptr).ok());
  EXPECT_EQ(FindNode(g2, "sh")->op(), "Shape");
}

TEST(ConstantFoldingTest, LeavesStatefulFailingAndOversizedNodes) {
  GraphDef g = ParseTextGraph(ScalarConst("a", 2) + ScalarConst("b", 3) + Binary("big", "AddV2", "a", "b") +
                     Binary("bad", "Sub", "a", "b") +
                     "node { name: 'ok' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } }"
                     " attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
                     "node { name: 'assert' op: 'Assert' input: 'ok' input: 'a'"
                     " attr { key: 'T' value { list { type: DT_FLOAT } } } }\n");
  FakeEvaluator eval;
  OptimizerOptions options;
  options.evaluate = eval.Get();
  options.max_constant_bytes = 2;  // smaller than one float
  ASSERT_TRUE(FoldConstants(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "big")->op(), "AddV2");  // too large
  EXPECT_EQ(FindNode(g, "bad")->op(), "Sub");    // the evaluator fails: left to run time
  EXPECT_EQ(FindNode(g, "assert")->op(), "Assert");
  EXPECT_EQ(eval.calls, 2);  // never asked about the stateful Assert
}

std::string FloatConst(const std::string& name, const std::vector<int64_t>& shape,
                       const std::vector<float>& v) {
  std::string dims, vals;
  for (int64_t d : shape) dims += " dim { size: " + std::to_string(d) + " }";
  for (float x : v) vals += " float_val: " + std::to_string(x);
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
         " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {" + dims + " }" +
         vals + " } } } }\n";
}

std::vector<float> ConstValues(const GraphDef& g, const std::string& name) {
  const NodeDef* n = FindNode(g, name);
  if (n == nullptr || n->op() != "Const") return {-999};
  auto t = Tensor::FromProto(n->attr().at("value").tensor());
  if (!t.ok()) return {-998};
  return std::vector<float>(t->flat<float>().begin(), t->flat<float>().end());
}

// x -> Conv2D(1x1, 2 in, 2 out) -> BiasAdd -> Mul(m) -> AddV2(a) -> Relu,
// as Keras freezes Conv2D + BatchNormalization.
std::string ConvBnGraph(const std::string& m_shape_and_values) {
  return std::string(kPlaceholder) +
         FloatConst("w", {1, 1, 2, 2}, {1, 2, 3, 4}) + FloatConst("b", {2}, {10, 20}) +
         m_shape_and_values + FloatConst("a", {2}, {0.5, -1}) +
         "node { name: 'conv' op: 'Conv2D' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } }"
         " attr { key: 'strides' value { list { i: [1, 1, 1, 1] } } }"
         " attr { key: 'padding' value { s: 'VALID' } } }\n" +
         Binary("bias", "BiasAdd", "conv", "b") + Binary("scale", "Mul", "bias", "m") +
         Binary("shift", "AddV2", "scale", "a") + Unary("y", "Relu", "shift");
}

TEST(BatchNormFoldingTest, ScaleAndShiftMoveIntoTheConvolution) {
  GraphDef g = ParseTextGraph(ConvBnGraph(FloatConst("m", {2}, {2, 0.5})));
  OptimizerOptions options;
  options.preserve = {"x", "y"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FoldBatchNorms(&g, options, &pass).ok());
  ASSERT_TRUE(PruneUnused(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "scale"), nullptr);
  EXPECT_EQ(FindNode(g, "shift"), nullptr);
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"bias"}));
  // W[.., out] scaled by m[out]: [[1*2, 2*0.5], [3*2, 4*0.5]].
  const std::string w = NodeInputs(g, "conv")[1];
  EXPECT_EQ(ConstValues(g, w), (std::vector<float>{2, 1, 6, 2}));
  // bias * m + a.
  EXPECT_EQ(ConstValues(g, NodeInputs(g, "bias")[1]), (std::vector<float>{20.5, 9}));
  EXPECT_EQ(pass.changes.size(), 2u);
}

TEST(BatchNormFoldingTest, NewWeightsStayInTheFrameOfTheirConstants) {
  // m runs in a loop body (a control input from the body's pivot), so the
  // scaled weights must too.
  std::string m = FloatConst("m", {2}, {2, 0.5});
  m.insert(m.find(" attr"), " input: '^pivot'");
  GraphDef g = ParseTextGraph(Unary("pivot", "Identity", "x") + ConvBnGraph(m));
  OptimizerOptions options;
  options.preserve = {"x", "y"};
  ASSERT_TRUE(FoldBatchNorms(&g, options, nullptr).ok());
  const std::string w = NodeInputs(g, "conv")[1];
  EXPECT_NE(w, "w");
  EXPECT_EQ(NodeInputs(g, w), (std::vector<std::string>{"^pivot"}));
  EXPECT_EQ(NodeInputs(g, NodeInputs(g, "bias")[1]), (std::vector<std::string>{"^pivot"}));
}

TEST(BatchNormFoldingTest, LeavesWhatIsNotPerChannel) {
  for (const std::string& m : {FloatConst("m", {3}, {1, 2, 3}),            // wrong width
                               FloatConst("m", {2, 1}, {1, 2})}) {        // not the channel dim
    GraphDef g = ParseTextGraph(ConvBnGraph(m));
    OptimizerOptions options;
    options.preserve = {"x", "y"};
    OptimizationReport::Pass pass;
    ASSERT_TRUE(FoldBatchNorms(&g, options, &pass).ok());
    EXPECT_NE(FindNode(g, "scale"), nullptr) << m;
    // The shift still becomes part of the bias? Not through the Mul.
    EXPECT_NE(FindNode(g, "shift"), nullptr) << m;
  }
  // A convolution whose output is also used elsewhere keeps its weights.
  GraphDef g = ParseTextGraph(ConvBnGraph(FloatConst("m", {2}, {2, 0.5})) + Unary("other", "Relu", "conv"));
  OptimizerOptions options;
  options.preserve = {"x", "y", "other"};
  ASSERT_TRUE(FoldBatchNorms(&g, options, nullptr).ok());
  EXPECT_NE(FindNode(g, "scale"), nullptr);
  EXPECT_EQ(NodeInputs(g, "conv")[1], "w");
}

TEST(KernelFusionTest, MatMulBiasAddActivationBecomeOneFusedMatMul) {
  GraphDef g = ParseTextGraph(std::string(kPlaceholder) + FloatConst("w", {2, 2}, {1, 2, 3, 4}) +
                     FloatConst("b", {2}, {1, -1}) +
                     "node { name: 'gate' op: 'NoOp' }\n"
                     "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' input: '^gate'"
                     " attr { key: 'T' value { type: DT_FLOAT } }"
                     " attr { key: 'transpose_b' value { b: true } } }\n" +
                     Binary("ba", "BiasAdd", "mm", "b") + Unary("act", "Relu", "ba") +
                     Unary("y", "Softmax", "act") +
                     // Not fused: the MatMul's output is used twice.
                     Binary("mm2", "MatMul", "x", "w") + Binary("ba2", "BiasAdd", "mm2", "b") +
                     Unary("other", "Neg", "mm2"));
  OptimizerOptions options;
  options.preserve = {"x", "y", "ba2", "other"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseKernels(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "mm"), nullptr);
  EXPECT_EQ(FindNode(g, "ba"), nullptr);
  const NodeDef* act = FindNode(g, "act");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->op(), "_FusedMatMul");
  EXPECT_EQ(NodeInputs(g, "act"), (std::vector<std::string>{"x", "w", "b", "^gate"}));
  EXPECT_TRUE(act->attr().at("transpose_b").b());
  ASSERT_EQ(act->attr().at("fused_ops").list().s_size(), 2);
  EXPECT_EQ(act->attr().at("fused_ops").list().s(0), "BiasAdd");
  EXPECT_EQ(act->attr().at("fused_ops").list().s(1), "Relu");
  EXPECT_EQ(act->attr().at("num_args").i(), 1);
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"act"}));
  EXPECT_EQ(FindNode(g, "mm2")->op(), "MatMul");
  EXPECT_EQ(FindNode(g, "ba2")->op(), "BiasAdd");
  EXPECT_EQ(pass.changes.size(), 1u);
}

// A float Conv2D (strides 2, SAME) with `extra` attrs or device.
std::string Conv(const std::string& name, const std::string& x, const std::string& w,
                 const std::string& extra = "") {
  return "node { name: '" + name + "' op: 'Conv2D' input: '" + x + "' input: '" + w + "' " +
         extra + " attr { key: 'T' value { type: DT_FLOAT } }"
                 " attr { key: 'strides' value { list { i: [1, 2, 2, 1] } } }"
                 " attr { key: 'padding' value { s: 'SAME' } } }\n";
}

TEST(KernelFusionTest, ConvBiasAddActivationBecomeOneFusedConv2D) {
  GraphDef g = ParseTextGraph(std::string(kPlaceholder) + FloatConst("w", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}) +
                     FloatConst("b", {3}, {1, -1, 0}) + "node { name: 'gate' op: 'NoOp' }\n" +
                     Conv("conv", "x", "w", "input: '^gate'") +
                     Binary("ba", "BiasAdd", "conv", "b") +
                     Unary("act", "LeakyRelu", "ba", "attr { key: 'alpha' value { f: 0.1 } }") +
                     Unary("y", "Softmax", "act"));
  OptimizerOptions options;
  options.preserve = {"x", "y"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseKernels(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "conv"), nullptr);
  EXPECT_EQ(FindNode(g, "ba"), nullptr);
  const NodeDef* act = FindNode(g, "act");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->op(), "_FusedConv2D");
  EXPECT_EQ(NodeInputs(g, "act"), (std::vector<std::string>{"x", "w", "b", "^gate"}));
  // The convolution's attrs come along.
  EXPECT_EQ(act->attr().at("padding").s(), "SAME");
  ASSERT_EQ(act->attr().at("strides").list().i_size(), 4);
  EXPECT_EQ(act->attr().at("strides").list().i(1), 2);
  ASSERT_EQ(act->attr().at("fused_ops").list().s_size(), 2);
  EXPECT_EQ(act->attr().at("fused_ops").list().s(0), "BiasAdd");
  EXPECT_EQ(act->attr().at("fused_ops").list().s(1), "LeakyRelu");
  EXPECT_EQ(act->attr().at("num_args").i(), 1);
  EXPECT_FLOAT_EQ(act->attr().at("leakyrelu_alpha").f(), 0.1f);
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"act"}));
  ASSERT_EQ(pass.changes.size(), 1u);
  EXPECT_EQ(pass.changes[0],
            "fused 'conv' (Conv2D) + 'ba' (BiasAdd) + 'act' (LeakyRelu) into _FusedConv2D 'act'");
  EXPECT_EQ(pass.merged_into.at("conv"), "act");
  EXPECT_EQ(pass.merged_into.at("ba"), "act");
}

TEST(KernelFusionTest, AddOfAPerChannelConstantIsTheBias) {
  const std::string base = std::string(kPlaceholder) +
                           FloatConst("w", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}) +
                           FloatConst("c3", {3}, {1, 2, 3}) + FloatConst("c2", {2}, {1, 2}) +
                           FloatConst("c13", {1, 3}, {1, 2, 3});
  // Either operand order; the constant must be [out_depth].
  GraphDef g = ParseTextGraph(base + Conv("conv", "x", "w") + Binary("y", "AddV2", "c3", "conv") +
                     Conv("conv2", "x", "w") + Binary("y2", "Add", "conv2", "c3") +
                     Unary("y2_act", "Tanh", "y2") + Conv("conv3", "x", "w") +
                     Binary("y3", "AddV2", "conv3", "c13") + Conv("conv4", "x", "w") +
                     Binary("y4", "AddV2", "conv4", "c2") +
                     FloatConst("wm", {2, 3}, {1, 2, 3, 4, 5, 6}) + Binary("mm", "MatMul", "x", "wm") +
                     Binary("y5", "AddV2", "mm", "c3"));
  OptimizerOptions options;
  options.preserve = {"x", "y", "y2_act", "y3", "y4", "y5"};
  ASSERT_TRUE(FuseKernels(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "y")->op(), "_FusedConv2D");
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"x", "w", "c3"}));
  EXPECT_EQ(FindNode(g, "y2"), nullptr);
  EXPECT_EQ(FindNode(g, "y2_act")->op(), "_FusedConv2D");
  EXPECT_EQ(NodeInputs(g, "y2_act"), (std::vector<std::string>{"x", "w", "c3"}));
  EXPECT_EQ(FindNode(g, "y2_act")->attr().at("fused_ops").list().s(1), "Tanh");
  EXPECT_EQ(FindNode(g, "y3")->op(), "AddV2");  // [1, 3]: not a bias vector
  EXPECT_EQ(FindNode(g, "y4")->op(), "AddV2");  // 2 values for 3 channels
  EXPECT_EQ(FindNode(g, "y5")->op(), "_FusedMatMul");
  EXPECT_EQ(NodeInputs(g, "y5"), (std::vector<std::string>{"x", "wm", "c3"}));
}

TEST(KernelFusionTest, PreservedNodesAndOtherLayoutsDevicesAndTypesStay) {
  const std::string base = std::string(kPlaceholder) +
                           FloatConst("w", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}) +
                           FloatConst("b", {3}, {1, -1, 0});
  {
    // A fetched convolution is not fused away; a fetched BiasAdd keeps its
    // name and takes the convolution in, the activation after it stays.
    GraphDef g = ParseTextGraph(base + Conv("conv", "x", "w") + Binary("ba", "BiasAdd", "conv", "b") +
                       Unary("y", "Relu", "ba") + Conv("conv2", "x", "w") +
                       Binary("ba2", "BiasAdd", "conv2", "b") + Unary("y2", "Relu", "ba2"));
    OptimizerOptions options;
    options.preserve = {"x", "y", "conv", "y2", "ba2"};
    ASSERT_TRUE(FuseKernels(&g, options, nullptr).ok());
    EXPECT_EQ(FindNode(g, "conv")->op(), "Conv2D");
    EXPECT_EQ(FindNode(g, "ba")->op(), "BiasAdd");
    EXPECT_EQ(FindNode(g, "y")->op(), "Relu");
    EXPECT_EQ(FindNode(g, "conv2"), nullptr);
    EXPECT_EQ(FindNode(g, "ba2")->op(), "_FusedConv2D");
    EXPECT_EQ(FindNode(g, "ba2")->attr().at("fused_ops").list().s_size(), 1);
    EXPECT_EQ(FindNode(g, "y2")->op(), "Relu");
    EXPECT_EQ(NodeInputs(g, "y2"), (std::vector<std::string>{"ba2"}));
  }
  // NCHW, on a GPU, in double: no fused kernel for those.
  const std::string gpu = "device: '/device:GPU:0'";
  std::string as_double = Conv("conv", "x", "w") + Binary("y", "BiasAdd", "conv", "b");
  for (size_t at; (at = as_double.find("DT_FLOAT")) != std::string::npos;) {
    as_double.replace(at, 8, "DT_DOUBLE");
  }
  for (const std::string& layer :
       {Conv("conv", "x", "w", "attr { key: 'data_format' value { s: 'NCHW' } }") +
            Binary("y", "BiasAdd", "conv", "b",
                   "attr { key: 'data_format' value { s: 'NCHW' } }"),
        Conv("conv", "x", "w", gpu) + Binary("y", "BiasAdd", "conv", "b", gpu), as_double}) {
    GraphDef g = ParseTextGraph(base + layer);
    OptimizerOptions options;
    options.preserve = {"x", "y"};
    ASSERT_TRUE(FuseKernels(&g, options, nullptr).ok());
    EXPECT_EQ(FindNode(g, "conv")->op(), "Conv2D") << layer;
    EXPECT_EQ(FindNode(g, "y")->op(), "BiasAdd") << layer;
  }
}

TEST(KernelFusionTest, AnActivationRightAfterTheProductFusesWithAZeroBias) {
  // A bias-free convolution or dense layer (or one whose batch norm folded
  // to a zero shift) read only by its activation.
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + FloatConst("w", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}) +
      FloatConst("wm", {2, 3}, {1, 2, 3, 4, 5, 6}) + Conv("conv", "x", "w") +
      Unary("y", "Relu", "conv") + Binary("mm", "MatMul", "x", "wm") + Unary("y2", "Tanh", "mm") +
      Conv("conv3", "x", "w") + Unary("y3", "Relu", "conv3") + Unary("y3b", "Sigmoid", "conv3"));
  OptimizerOptions options;
  options.preserve = {"x", "y", "y2", "y3", "y3b"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseKernels(&g, options, &pass).ok());
  const NodeDef* y = FindNode(g, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op(), "_FusedConv2D");
  EXPECT_EQ(FindNode(g, "conv"), nullptr);
  ASSERT_EQ(NodeInputs(g, "y").size(), 3u);
  EXPECT_EQ(NodeInputs(g, "y")[0], "x");
  EXPECT_EQ(NodeInputs(g, "y")[1], "w");
  EXPECT_EQ(ConstValues(g, NodeInputs(g, "y")[2]), (std::vector<float>{0, 0, 0}));
  ASSERT_EQ(y->attr().at("fused_ops").list().s_size(), 2);
  EXPECT_EQ(y->attr().at("fused_ops").list().s(0), "BiasAdd");
  EXPECT_EQ(y->attr().at("fused_ops").list().s(1), "Relu");
  EXPECT_EQ(FindNode(g, "y2")->op(), "_FusedMatMul");
  EXPECT_EQ(ConstValues(g, NodeInputs(g, "y2")[2]), (std::vector<float>{0, 0, 0}));
  // Two readers: the product stays.
  EXPECT_EQ(FindNode(g, "conv3")->op(), "Conv2D");
  EXPECT_EQ(FindNode(g, "y3")->op(), "Relu");
  ASSERT_EQ(pass.changes.size(), 2u);
  EXPECT_EQ(pass.changes[0],
            "fused 'conv' (Conv2D) + a zero bias + 'y' (Relu) into _FusedConv2D 'y'");
}

TEST(KernelFusionTest, AZeroBiasInALoopRunsInTheLoop) {
  // The weights enter the loop through an Enter: the zero bias must wait on
  // it (else it would be a root-frame Const feeding a loop node).
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + FloatConst("w", {2, 3}, {1, 2, 3, 4, 5, 6}) +
      "node { name: 'hx' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }"
      " attr { key: 'frame_name' value { s: 'loop' } } }\n"
      "node { name: 'hw' op: 'Enter' input: 'w' attr { key: 'T' value { type: DT_FLOAT } }"
      " attr { key: 'frame_name' value { s: 'loop' } }"
      " attr { key: 'is_constant' value { b: true } } }\n" +
      Binary("mm", "MatMul", "hx", "hw") + Unary("y", "Tanh", "mm"));
  OptimizerOptions options;
  options.preserve = {"x", "y"};
  options.shapes["mm"] = {PartialShape({-1, 3})};
  ASSERT_TRUE(FuseKernels(&g, options, nullptr).ok());
  ASSERT_EQ(FindNode(g, "y")->op(), "_FusedMatMul");
  const std::string bias = NodeInputs(g, "y")[2];
  EXPECT_EQ(NodeInputs(g, bias), (std::vector<std::string>{"^hw"}));
  EXPECT_EQ(ConstValues(g, bias), (std::vector<float>{0, 0, 0}));
}

// Pad(x, p) for x NHWC, with p a [4, 2] int32 Const named `name`_p.
std::string PadNode(const std::string& name, const std::vector<int>& p, const std::string& op = "Pad",
                    const std::string& value = "") {
  std::string vals;
  for (int v : p) vals += " int_val: " + std::to_string(v);
  std::string out = "node { name: '" + name + "_p' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
                    " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } "
                    "dim { size: 2 } }" + vals + " } } } }\n";
  out += "node { name: '" + name + "' op: '" + op + "' input: 'x' input: '" + name + "_p' " +
         (value.empty() ? "" : "input: '" + value + "' ") +
         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n";
  return out;
}

// A float NHWC convolution (VALID unless `padding` says otherwise).
std::string ConvOn(const std::string& name, const std::string& op, const std::string& in,
                   const std::string& padding = "'VALID'", const std::string& extra = "") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + in + "' input: 'w' " + extra +
         " attr { key: 'T' value { type: DT_FLOAT } }"
         " attr { key: 'strides' value { list { i: [1, 1, 1, 1] } } }"
         " attr { key: 'padding' value { s: " + padding + " } } }\n";
}

std::vector<int64_t> ExplicitPaddings(const GraphDef& g, const std::string& name) {
  const NodeDef* n = FindNode(g, name);
  if (n == nullptr || n->attr().count("explicit_paddings") == 0) return {};
  const auto& l = n->attr().at("explicit_paddings").list();
  return std::vector<int64_t>(l.i().begin(), l.i().end());
}

TEST(PadFoldingTest, AZeroSpatialPadBecomesTheConvolutionsExplicitPadding) {
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + FloatConst("w", {3, 3, 2, 2}, std::vector<float>(36, 1.f)) +
      "node { name: 'gate' op: 'NoOp' }\n" +
      PadNode("pad", {0, 0, 1, 2, 3, 0, 0, 0}) + ConvOn("conv", "Conv2D", "pad") +
      ConvOn("dw", "DepthwiseConv2dNative", "pad") +
      ConvOn("both", "Conv2D", "pad", "'EXPLICIT'",
             "attr { key: 'explicit_paddings' value { list { i: [0, 0, 1, 1, 0, 1, 0, 0] } } }") +
      Unary("pool", "MaxPool", "pad") +
      ScalarConst("zero", 0) + PadNode("pad2", {0, 0, 1, 1, 1, 1, 0, 0}, "PadV2", "zero") +
      ConvOn("conv2", "Conv2D", "pad2") + "node { name: 'gated' op: 'Pad' input: 'x' input: "
      "'pad_p' input: '^gate' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      ConvOn("conv3", "Conv2D", "gated"));
  OptimizerOptions options;
  options.preserve = {"x", "conv", "dw", "both", "pool", "conv2", "conv3"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FoldPads(&g, options, &pass).ok());
  EXPECT_EQ(NodeInputs(g, "conv"), (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(FindNode(g, "conv")->attr().at("padding").s(), "EXPLICIT");
  EXPECT_EQ(ExplicitPaddings(g, "conv"), (std::vector<int64_t>{0, 0, 1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(NodeInputs(g, "dw"), (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(ExplicitPaddings(g, "dw"), (std::vector<int64_t>{0, 0, 1, 2, 3, 0, 0, 0}));
  // Explicit padding of its own adds up.
  EXPECT_EQ(ExplicitPaddings(g, "both"), (std::vector<int64_t>{0, 0, 2, 3, 3, 1, 0, 0}));
  // MaxPool pads with -inf, not zeros: it keeps reading the Pad.
  EXPECT_EQ(NodeInputs(g, "pool"), (std::vector<std::string>{"pad"}));
  EXPECT_EQ(NodeInputs(g, "conv2"), (std::vector<std::string>{"x", "w"}));
  // The Pad's control inputs move to the convolution.
  EXPECT_EQ(NodeInputs(g, "conv3"), (std::vector<std::string>{"x", "w", "^gate"}));
  EXPECT_EQ(pass.changes.size(), 5u);
  EXPECT_EQ(pass.changes[0],
            "folded 'pad' (Pad) into 'conv' (Conv2D) as explicit padding");
  // Every reader of pad2 took it: it lives on in conv2.
  EXPECT_EQ(pass.merged_into.at("pad2"), "conv2");
  EXPECT_EQ(pass.merged_into.count("pad"), 0u);
}

TEST(PadFoldingTest, LeavesPadsThatAreNotZeroSpatialPaddingOfAConvolution) {
  const std::string base = std::string(kPlaceholder) +
                           FloatConst("w", {3, 3, 2, 2}, std::vector<float>(36, 1.f)) +
                           ScalarConst("one", 1);
  for (const std::string& graph : {
           // pads the channels or the batch
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 1}) + ConvOn("conv", "Conv2D", "pad"),
           PadNode("pad", {1, 0, 1, 1, 1, 1, 0, 0}) + ConvOn("conv", "Conv2D", "pad"),
           // pads with ones
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 0}, "PadV2", "one") + ConvOn("conv", "Conv2D", "pad"),
           // SAME padding computes its own pads; NCHW pads other dims
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 0}) + ConvOn("conv", "Conv2D", "pad", "'SAME'"),
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 0}) +
               ConvOn("conv", "Conv2D", "pad", "'VALID'",
                      "attr { key: 'data_format' value { s: 'NCHW' } }"),
           // on a GPU; the padded tensor is the filter
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 0}) +
               ConvOn("conv", "Conv2D", "pad", "'VALID'", "device: '/device:GPU:0'"),
           PadNode("pad", {0, 0, 1, 1, 1, 1, 0, 0}) +
               "node { name: 'conv' op: 'Conv2D' input: 'w' input: 'pad' attr { key: 'T' value "
               "{ type: DT_FLOAT } } attr { key: 'strides' value { list { i: [1, 1, 1, 1] } } } "
               "attr { key: 'padding' value { s: 'VALID' } } }\n",
       }) {
    GraphDef g = ParseTextGraph(base + graph);
    const GraphDef before = g;
    OptimizerOptions options;
    options.preserve = {"x", "conv"};
    OptimizationReport::Pass pass;
    ASSERT_TRUE(FoldPads(&g, options, &pass).ok());
    EXPECT_TRUE(pass.changes.empty()) << graph;
    EXPECT_EQ(g.DebugString(), before.DebugString()) << graph;
  }
}

TEST(PadFoldingTest, TheConvolutionWaitsForWhatThePadsConstantsWaitedFor) {
  // A folded constant keeps control inputs that place it (a branch's
  // pivot, a stateful op); the convolution inherits them with the Pad's.
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + FloatConst("w", {3, 3, 2, 2}, std::vector<float>(36, 1.f)) +
      "node { name: 'pivot' op: 'NoOp' }\n"
      "node { name: 'pad_p' op: 'Const' input: '^pivot' attr { key: 'dtype' value { type: DT_INT32 } }"
      " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } "
      "dim { size: 2 } } int_val: [0, 0, 1, 1, 1, 1, 0, 0] } } } }\n"
      "node { name: 'pad' op: 'Pad' input: 'x' input: 'pad_p' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      ConvOn("conv", "Conv2D", "pad") +
      "node { name: 'zero' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } }"
      " float_val: 0 } } } }\n"
      "node { name: 'pad2' op: 'PadV2' input: 'x' input: 'pad_p' input: 'zero'"
      " attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      ConvOn("conv2", "Conv2D", "pad2"));
  OptimizerOptions options;
  options.preserve = {"x", "conv", "conv2"};
  ASSERT_TRUE(FoldPads(&g, options, nullptr).ok());
  EXPECT_EQ(NodeInputs(g, "conv"), (std::vector<std::string>{"x", "w", "^pivot"}));
  // PadV2's value must be a scalar (TensorFlow refuses [1]): left alone.
  EXPECT_EQ(NodeInputs(g, "conv2"), (std::vector<std::string>{"pad2", "w"}));
}

TEST(IdentityRemovalTest, BypassesPlainIdentitiesOnly) {
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + Unary("id", "Identity", "x") + Unary("y", "Relu", "id") +
      "node { name: 'after' op: 'NoOp' input: '^id' }\n" +
      Unary("kept_fetch", "Identity", "y") +
      Unary("pinned", "Identity", "y", "device: '/device:CPU:1'") +
      "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
      "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      Unary("pivot", "Identity", "sw:1") +
      "node { name: 'in_branch' op: 'Const' input: '^pivot' attr { key: 'dtype' value { type: DT_FLOAT } }"
      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n" +
      Unary("passed_on", "Identity", "sw:0") + Unary("neg", "Neg", "passed_on") +
      Unary("sg", "StopGradient", "pinned", "device: '/device:CPU:1'"));
  OptimizerOptions options;
  options.preserve = {"kept_fetch"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(RemoveIdentities(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "id"), nullptr);
  EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(NodeInputs(g, "after"), (std::vector<std::string>{"^x"}));
  EXPECT_NE(FindNode(g, "kept_fetch"), nullptr);  // preserved
  EXPECT_NE(FindNode(g, "pinned"), nullptr);      // another device: a transfer
  EXPECT_NE(FindNode(g, "pivot"), nullptr);       // a branch pivot: 'in_branch' waits on it
  // After a Switch but waited on by nothing: the value is passed on as is.
  EXPECT_EQ(FindNode(g, "passed_on"), nullptr);
  EXPECT_EQ(NodeInputs(g, "neg"), (std::vector<std::string>{"sw"}));
  EXPECT_EQ(FindNode(g, "sg"), nullptr);          // StopGradient, same device as its input
  EXPECT_EQ(pass.changes.size(), 3u);
}

TEST(IdentityRemovalTest, AnIdentitysControlInputsPassToItsConsumers) {
  // 'in' (after a Switch, waiting on the pivot) feeds 'neg' and 'out':
  // both wait on the pivot instead. 'to_merge' feeds a Merge, which would
  // wait on the pivot for ever: it stays.
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) +
      "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
      "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      Unary("pivot", "Identity", "sw:1") +
      Unary("in", "Identity", "sw:1", "input: '^pivot'") + Unary("neg", "Neg", "in") +
      Unary("out", "Identity", "in") +
      Unary("to_merge", "Identity", "sw:1", "input: '^pivot'") +
      "node { name: 'm' op: 'Merge' input: 'to_merge' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }"
      " attr { key: 'N' value { i: 2 } } }\n");
  OptimizerOptions options;
  options.preserve = {"neg", "out", "m"};
  ASSERT_TRUE(RemoveIdentities(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "in"), nullptr);
  EXPECT_EQ(NodeInputs(g, "neg"), (std::vector<std::string>{"sw:1", "^pivot"}));
  EXPECT_EQ(NodeInputs(g, "out"), (std::vector<std::string>{"sw:1", "^pivot"}));
  EXPECT_NE(FindNode(g, "to_merge"), nullptr);
  EXPECT_NE(FindNode(g, "pivot"), nullptr);
}

TEST(IdentityRemovalTest, AnIdentityWaitingOnOthersStaysBeforeAnotherTask) {
  // A gradient's `tuple` Identity: on the worker, waiting on group_deps,
  // read by an update on a ps task. Removed, the update would get the
  // gradient and the wait as two transfers between tasks: it stays. The
  // same Identity read on its own task goes, its wait passed on.
  const std::string worker = "device: '/job:worker/task:0'";
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) +
      "node { name: 'group_deps' op: 'NoOp' input: '^x' " + worker + " }\n" +
      Unary("g", "Neg", "x", worker) +
      Unary("to_ps", "Identity", "g", "input: '^group_deps' " + worker) +
      Unary("update", "Neg", "to_ps", "device: '/job:ps/replica:0/task:1/device:CPU:0'") +
      Unary("local", "Identity", "g", "input: '^group_deps' " + worker) +
      Unary("use", "Neg", "local", "device: '/job:worker/replica:0/task:0/device:CPU:0'"));
  OptimizerOptions options;
  options.preserve = {"update", "use"};
  ASSERT_TRUE(RemoveIdentities(&g, options, nullptr).ok());
  EXPECT_NE(FindNode(g, "to_ps"), nullptr);
  EXPECT_EQ(NodeInputs(g, "update"), (std::vector<std::string>{"to_ps"}));
  EXPECT_EQ(FindNode(g, "local"), nullptr);
  EXPECT_EQ(NodeInputs(g, "use"), (std::vector<std::string>{"g", "^group_deps"}));
}

TEST(CommonSubexpressionTest, MergesEqualNodesInAnyOperandOrderOfCommutativeOps) {
  GraphDef g = ParseTextGraph(std::string(kPlaceholder) + ScalarConst("c", 2) + ScalarConst("c_again", 2) +
                     Binary("m1", "Mul", "x", "c") + Binary("m2", "Mul", "c_again", "x") +
                     Binary("d1", "Sub", "x", "c") + Binary("d2", "Sub", "c", "x") +
                     Binary("out", "AddN", "m1", "m2") + Binary("out2", "AddV2", "d1", "d2"));
  // AddN wants N; fine for this pass, which never evaluates.
  OptimizerOptions options;
  options.preserve = {"out", "out2", "x"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(EliminateCommonSubexpressions(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "c_again"), nullptr);
  EXPECT_EQ(FindNode(g, "m2"), nullptr);
  EXPECT_EQ(NodeInputs(g, "out"), (std::vector<std::string>{"m1", "m1"}));
  // Sub is not commutative.
  EXPECT_NE(FindNode(g, "d2"), nullptr);
  EXPECT_EQ(pass.changes.size(), 2u);
}

TEST(PruneTest, KeepsPreservedStatefulAndPlumbing) {
  GraphDef g = ParseTextGraph(std::string(kPlaceholder) + ScalarConst("unused", 1) +
                     Unary("dangling", "Relu", "x") +
                     "node { name: 'ok' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } }"
                     " attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
                     "node { name: 'assert' op: 'Assert' input: 'ok' input: 'x'"
                     " attr { key: 'T' value { list { type: DT_FLOAT } } } }\n" +
                     Unary("fetch", "Relu", "x"));
  OptimizerOptions options;
  options.preserve = {"fetch"};
  ASSERT_TRUE(PruneUnused(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "unused"), nullptr);
  EXPECT_EQ(FindNode(g, "dangling"), nullptr);
  EXPECT_NE(FindNode(g, "assert"), nullptr);
  EXPECT_NE(FindNode(g, "ok"), nullptr);
  EXPECT_NE(FindNode(g, "x"), nullptr);
  EXPECT_NE(FindNode(g, "fetch"), nullptr);
}

// v1 gradient gating: the first layer's input gradient ('gx', from 'pre')
// and its filter gradient ('gw') grouped by a NoOp that the gradient the
// optimizer reads waits for. Nothing reads 'gx' (its tuple Identity is
// pruned), so it and then 'pre' become NoOps keeping the order; 'gw' and
// an Assert (stateful) only waited for stay.
TEST(PruneTest, NodesOnlyWaitedForBecomeNoOps) {
  GraphDef g = ParseTextGraph(
      std::string(kPlaceholder) + Unary("pre", "Sqrt", "x") + Unary("gx", "Relu", "pre") +
      Unary("gw", "Neg", "x") +
      "node { name: 'ok' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } }"
      " attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
      "node { name: 'assert' op: 'Assert' input: 'ok' input: 'x'"
      " attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
      "node { name: 'group' op: 'NoOp' input: '^gx' input: '^gw' input: '^assert' }\n" +
      Unary("tuple_x", "Identity", "gx", "input: '^group'") +
      Unary("tuple_w", "Identity", "gw", "input: '^group'") + Unary("fetch", "Relu", "tuple_w"));
  OptimizerOptions options;
  options.preserve = {"x", "fetch"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(PruneUnused(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "tuple_x"), nullptr);
  ASSERT_NE(FindNode(g, "gx"), nullptr);
  EXPECT_EQ(FindNode(g, "gx")->op(), "NoOp");
  EXPECT_EQ(NodeInputs(g, "gx"), (std::vector<std::string>{"^pre"}));
  EXPECT_EQ(FindNode(g, "gx")->attr_size(), 0);
  ASSERT_NE(FindNode(g, "pre"), nullptr);
  EXPECT_EQ(FindNode(g, "pre")->op(), "NoOp");
  EXPECT_EQ(NodeInputs(g, "pre"), (std::vector<std::string>{"^x"}));
  EXPECT_EQ(FindNode(g, "gw")->op(), "Neg");
  EXPECT_EQ(FindNode(g, "assert")->op(), "Assert");
  EXPECT_EQ(NodeInputs(g, "group"), (std::vector<std::string>{"^gx", "^gw", "^assert"}));
  EXPECT_EQ(pass.changes.size(), 3u);  // tuple_x removed, gx and pre NoOps
}

TEST(OptimizerTest, ColocationWithARemovedNodeFollowsItOrIsDropped) {
  // 'a' was colocated with 'n2' (merged into its twin 'n1'), 'b' with 'gone'
  // (pruned: nothing carries it on) and with 'x' (kept). 'c' is colocated
  // with the Identity 'id', which therefore stays.
  GraphDef g = ParseTextGraph(
      kPlaceholder + Unary("n1", "Neg", "x") + Unary("n2", "Neg", "x") +
      Unary("a", "Relu", "n2", "attr { key: '_class' value { list { s: 'loc:@n2' } } }") +
      Unary("gone", "Sqrt", "x") +
      Unary("b", "Relu", "a",
            "attr { key: '_class' value { list { s: 'loc:@gone' s: 'loc:@x' } } }") +
      Unary("id", "Identity", "n1") +
      Unary("c", "Relu", "id", "attr { key: '_class' value { list { s: 'loc:@id' } } }"));
  OptimizerOptions options;
  options.preserve = {"x", "b", "c"};
  ASSERT_TRUE(OptimizeGraph(&g, options).ok());
  ASSERT_EQ(FindNode(g, "n2"), nullptr);
  ASSERT_EQ(FindNode(g, "gone"), nullptr);
  EXPECT_NE(FindNode(g, "id"), nullptr);
  auto colocation = [&](const std::string& node) {
    std::vector<std::string> out;
    const NodeDef* n = FindNode(g, node);
    auto it = n->attr().find("_class");
    if (it != n->attr().end()) {
      for (const std::string& v : it->second.list().s()) out.push_back(v);
    }
    return out;
  };
  EXPECT_EQ(colocation("a"), (std::vector<std::string>{"loc:@n1"}));
  EXPECT_EQ(colocation("b"), (std::vector<std::string>{"loc:@x"}));
  EXPECT_EQ(colocation("c"), (std::vector<std::string>{"loc:@id"}));
}

TEST(OptimizerTest, ACycleIsAnErrorAndTheGraphIsLeftAsItWas) {
  GraphDef g = ParseTextGraph(Binary("a", "AddV2", "b", "b") + Binary("b", "AddV2", "a", "a"));
  const std::string before = g.SerializeAsString();
  absl::Status s = OptimizeGraph(&g, OptimizerOptions());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s;
  EXPECT_EQ(g.SerializeAsString(), before);
}

}  // namespace
}  // namespace graphrun
