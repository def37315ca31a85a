// Kernel fusion in training graphs: the bias is a variable's value, not a
// constant, and TensorFlow's gradient of the bias Add reads the product's
// shape (graph/optimize/fuse.cc); a max pooling's gradient and the Relu's
// before it (graph/optimize/fuse_pool_grad.cc).
#include <string>
#include <vector>

#include "graph/optimize/optimizer.h"
#include "graph/testing/graphdef_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::FindNode;
using testing::NodeInputs;
using testing::ParseTextGraph;

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& type = "T") {
  std::string text = "node { name: '" + name + "' op: '" + op + "'";
  for (const std::string& in : inputs) text += " input: '" + in + "'";
  return text + " attr { key: '" + type + "' value { type: DT_FLOAT } } }\n";
}

// x [?, 2] times w [2, 3] plus b (a variable's value, [3]) through a Relu,
// with the gradient's Shape of the product, as TensorFlow's v1 MLP has
// them; `extra` adds nodes.
GraphDef Layer(const std::string& extra) {
  return ParseTextGraph(Node("x", "Placeholder", {}, "dtype") + Node("w", "Placeholder", {}, "dtype") +
                        Node("b", "VariableV2", {}, "dtype") + Node("b/read", "Identity", {"b"}) +
                        Node("mm", "MatMul", {"x", "w"}) + Node("add", "AddV2", {"mm", "b/read"}) +
                        Node("act", "Relu", {"add"}) +
                        "node { name: 'grad_shape' op: 'Shape' input: 'mm'"
                        " attr { key: 'T' value { type: DT_FLOAT } }"
                        " attr { key: 'out_type' value { type: DT_INT32 } } }\n" +
                        extra);
}

OptimizerOptions LayerOptions(std::vector<int64_t> bias_dims) {
  OptimizerOptions options;
  options.preserve = {"x", "w", "act", "grad_shape"};
  options.shapes["mm"] = {PartialShape({-1, 3})};
  options.shapes["b/read"] = {PartialShape(std::move(bias_dims))};
  return options;
}

TEST(TrainingGraphFusionTest, AVariableBiasFusesAndTheGradientsShapeReadsTheFusedNode) {
  GraphDef g = Layer("");
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseKernels(&g, LayerOptions({3}), &pass).ok());
  EXPECT_EQ(FindNode(g, "mm"), nullptr);
  EXPECT_EQ(FindNode(g, "add"), nullptr);
  ASSERT_NE(FindNode(g, "act"), nullptr);
  EXPECT_EQ(FindNode(g, "act")->op(), "_FusedMatMul");
  EXPECT_EQ(NodeInputs(g, "act"), (std::vector<std::string>{"x", "w", "b/read"}));
  EXPECT_EQ(FindNode(g, "act")->attr().at("fused_ops").list().s(1), "Relu");
  // The bias and the activation keep the product's shape.
  EXPECT_EQ(NodeInputs(g, "grad_shape"), (std::vector<std::string>{"act"}));
  ASSERT_EQ(pass.changes.size(), 1u);
  EXPECT_EQ(pass.changes[0],
            "fused 'mm' (MatMul) + 'add' (AddV2) + 'act' (Relu) into _FusedMatMul 'act'");
}

TEST(TrainingGraphFusionTest, ABiasOfUnknownOrWrongShapeStays) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{2}, std::vector<int64_t>{1, 3}, std::vector<int64_t>{-1}}) {
    GraphDef g = Layer("");
    ASSERT_TRUE(FuseKernels(&g, LayerOptions(dims), nullptr).ok());
    EXPECT_EQ(FindNode(g, "add")->op(), "AddV2") << dims.size();
    EXPECT_EQ(NodeInputs(g, "grad_shape"), (std::vector<std::string>{"mm"}));
  }
  GraphDef g = Layer("");
  OptimizerOptions no_shape = LayerOptions({3});
  no_shape.shapes.erase("b/read");
  ASSERT_TRUE(FuseKernels(&g, no_shape, nullptr).ok());
  EXPECT_EQ(FindNode(g, "add")->op(), "AddV2");
}

TEST(TrainingGraphFusionTest, AProductReadByMoreThanShapesOrABiasMadeFromItStays) {
  // The product read by another op too.
  GraphDef g = Layer(Node("other", "Neg", {"mm"}));
  OptimizerOptions options = LayerOptions({3});
  options.preserve.insert("other");
  ASSERT_TRUE(FuseKernels(&g, options, nullptr).ok());
  EXPECT_EQ(FindNode(g, "mm")->op(), "MatMul");
  EXPECT_EQ(FindNode(g, "act")->op(), "Relu");

  // A bias computed from the product's shape: fusing would make a cycle.
  GraphDef h = ParseTextGraph(
      Node("x", "Placeholder", {}, "dtype") + Node("w", "Placeholder", {}, "dtype") +
      Node("mm", "MatMul", {"x", "w"}) +
      "node { name: 's' op: 'Shape' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } }"
      " attr { key: 'out_type' value { type: DT_INT32 } } }\n"
      "node { name: 'sf' op: 'Cast' input: 's' attr { key: 'SrcT' value { type: DT_INT32 } }"
      " attr { key: 'DstT' value { type: DT_FLOAT } } }\n" +
      Node("add", "AddV2", {"mm", "sf"}));
  OptimizerOptions cyc;
  cyc.preserve = {"x", "w", "add"};
  cyc.shapes["mm"] = {PartialShape({-1, 2})};
  cyc.shapes["sf"] = {PartialShape({2})};
  ASSERT_TRUE(FuseKernels(&h, cyc, nullptr).ok());
  EXPECT_EQ(FindNode(h, "add")->op(), "AddV2");
  EXPECT_EQ(FindNode(h, "mm")->op(), "MatMul");

  // An Add that waits for a check of the product's shape (an assert under
  // tf.control_dependencies): the fused node would wait for itself.
  GraphDef checked = Layer(
      "node { name: 'check' op: 'Identity' input: 'grad_shape'"
      " attr { key: 'T' value { type: DT_INT32 } } }\n");
  for (NodeDef& n : *checked.mutable_node()) {
    if (n.name() == "add") n.add_input("^check");
  }
  OptimizerOptions checked_options = LayerOptions({3});
  checked_options.preserve.insert("check");
  ASSERT_TRUE(FuseKernels(&checked, checked_options, nullptr).ok());
  EXPECT_EQ(FindNode(checked, "mm")->op(), "MatMul");
  EXPECT_EQ(FindNode(checked, "act")->op(), "Relu");
  EXPECT_EQ(NodeInputs(checked, "grad_shape"), (std::vector<std::string>{"mm"}));
}

// ReluGrad(MaxPoolGrad(r, pooled, dy), r): TensorFlow's gradient of a
// relu -> max_pool block.
std::string PoolGradGraph(const std::string& features) {
  return Node("r", "Placeholder", {}, "dtype") + Node("other", "Placeholder", {}, "dtype") +
         Node("pooled", "Placeholder", {}, "dtype") + Node("dy", "Placeholder", {}, "dtype") +
         "node { name: 'gate' op: 'NoOp' }\n"
         "node { name: 'pg' op: 'MaxPoolGrad' input: 'r' input: 'pooled' input: 'dy'"
         " input: '^gate' attr { key: 'T' value { type: DT_FLOAT } }"
         " attr { key: 'ksize' value { list { i: [1, 2, 2, 1] } } }"
         " attr { key: 'strides' value { list { i: [1, 2, 2, 1] } } }"
         " attr { key: 'padding' value { s: 'SAME' } } }\n" +
         Node("rg", "ReluGrad", {"pg", features});
}

TEST(PoolGradFusionTest, ReluGradOfTheMaxPoolGradOfItsFeaturesIsOneKernel) {
  GraphDef g = ParseTextGraph(PoolGradGraph("r"));
  OptimizerOptions options;
  options.preserve = {"r", "other", "pooled", "dy", "rg"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseMaxPoolReluGrads(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "pg"), nullptr);
  const NodeDef* rg = FindNode(g, "rg");
  ASSERT_NE(rg, nullptr);
  EXPECT_EQ(rg->op(), "_FusedMaxPoolGrad");
  EXPECT_EQ(NodeInputs(g, "rg"), (std::vector<std::string>{"r", "pooled", "dy", "^gate"}));
  EXPECT_EQ(rg->attr().at("padding").s(), "SAME");
  EXPECT_EQ(rg->attr().at("ksize").list().i(1), 2);
  ASSERT_EQ(rg->attr().at("fused_ops").list().s_size(), 1);
  EXPECT_EQ(rg->attr().at("fused_ops").list().s(0), "ReluGrad");
  EXPECT_EQ(pass.merged_into.at("pg"), "rg");

  // Other features than the pooling's input, or a MaxPoolGrad read twice
  // or kept: both stay.
  GraphDef other = ParseTextGraph(PoolGradGraph("other"));
  ASSERT_TRUE(FuseMaxPoolReluGrads(&other, options, nullptr).ok());
  EXPECT_EQ(FindNode(other, "rg")->op(), "ReluGrad");
  GraphDef twice = ParseTextGraph(PoolGradGraph("r") + Node("neg", "Neg", {"pg"}));
  options.preserve.insert("neg");
  ASSERT_TRUE(FuseMaxPoolReluGrads(&twice, options, nullptr).ok());
  EXPECT_EQ(FindNode(twice, "rg")->op(), "ReluGrad");
  GraphDef kept = ParseTextGraph(PoolGradGraph("r"));
  options.preserve.insert("pg");
  ASSERT_TRUE(FuseMaxPoolReluGrads(&kept, options, nullptr).ok());
  EXPECT_EQ(FindNode(kept, "pg")->op(), "MaxPoolGrad");
}

TEST(PoolGradFusionTest, TheBiasGradientOfTheFusedGradientIsItsSecondOutput) {
  // As v1 gradients have it: BiasAddGrad of the masked gradient, read by a
  // tuple's Identity and waited for by the tuple's group_deps.
  const std::string graph = PoolGradGraph("r") + Node("bg", "BiasAddGrad", {"rg"}) +
                            Node("bg_out", "Identity", {"bg"}) +
                            "node { name: 'group' op: 'NoOp' input: '^rg' input: '^bg' }\n";
  GraphDef g = ParseTextGraph(graph);
  OptimizerOptions options;
  options.preserve = {"r", "other", "pooled", "dy", "bg_out", "group"};
  OptimizationReport::Pass pass;
  ASSERT_TRUE(FuseMaxPoolReluGrads(&g, options, &pass).ok());
  EXPECT_EQ(FindNode(g, "bg"), nullptr);
  const NodeDef* rg = FindNode(g, "rg");
  ASSERT_NE(rg, nullptr);
  EXPECT_EQ(rg->op(), "_FusedMaxPoolGrad");
  ASSERT_EQ(rg->attr().at("fused_ops").list().s_size(), 2);
  EXPECT_EQ(rg->attr().at("fused_ops").list().s(1), "BiasAddGrad");
  EXPECT_EQ(NodeInputs(g, "bg_out"), (std::vector<std::string>{"rg:1"}));
  EXPECT_EQ(NodeInputs(g, "group"), (std::vector<std::string>{"^rg", "^rg"}));
  EXPECT_EQ(pass.merged_into.at("bg"), "rg");

  // A fetched BiasAddGrad, or one in NCHW, stays.
  GraphDef kept = ParseTextGraph(graph);
  options.preserve.insert("bg");
  ASSERT_TRUE(FuseMaxPoolReluGrads(&kept, options, nullptr).ok());
  EXPECT_EQ(FindNode(kept, "bg")->op(), "BiasAddGrad");
  EXPECT_EQ(FindNode(kept, "rg")->attr().at("fused_ops").list().s_size(), 1);
  GraphDef nchw = ParseTextGraph(graph);
  for (NodeDef& n : *nchw.mutable_node()) {
    if (n.name() == "bg") (*n.mutable_attr())["data_format"].set_s("NCHW");
  }
  options.preserve.erase("bg");
  ASSERT_TRUE(FuseMaxPoolReluGrads(&nchw, options, nullptr).ok());
  EXPECT_EQ(FindNode(nchw, "bg")->op(), "BiasAddGrad");
}

}  // namespace
}  // namespace graphrun
