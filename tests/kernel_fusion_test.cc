// The optimizer's kernel fusion in a session: Conv2D chains (BiasAdd or an
// Add of a per-channel constant, then each activation; SAME and VALID,
// strides 1 and 2) run as _FusedConv2D, depthwise ones as
// _FusedDepthwiseConv2dNative, fetched nodes inside a chain keep their
// values, and every fetch equals the unoptimized graph's within float
// rounding.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/protos/graph.pb.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
             const std::vector<std::string>& inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  if (op != "Const" && op != "Placeholder") (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  return n;
}

void AddConst(GraphDef* g, const std::string& name, const std::vector<int64_t>& dims, int seed) {
  NodeDef* n = Add(g, name, "Const", {});
  (*n->mutable_attr())["dtype"].set_type(DT_FLOAT);
  testing::MakeTensor<float>(testing::RandomDoubles(testing::NumElementsOf(dims), -1, 1, seed),
                             dims)
      .AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
}

struct Layer {
  std::string activation;  // "": none
  std::string padding;
  int64_t stride;
  bool add_bias = false;  // AddV2 of a [out_depth] constant, not BiasAdd
};

// Runs `g` (fed `feed` as "x") optimized and as written: the nodes named
// in `fused` run as `fused_op` only when optimized, and every fetch agrees
// within float rounding. `ops`: the op of each node of the optimized run.
void RunBothWays(const GraphDef& g, const Tensor& feed, const std::vector<std::string>& fetches,
                 const std::vector<std::string>& fused, const std::string& fused_op,
                 std::map<std::string, std::string>* ops) {
  std::vector<Tensor> results[2];
  for (auto level : {SessionOptions::Optimize::kDefault, SessionOptions::Optimize::kNone}) {
    const bool optimized = level == SessionOptions::Optimize::kDefault;
    SCOPED_TRACE(optimized ? "optimized" : "as written");
    SessionOptions options;
    options.optimize = level;
    auto session = Session::Create(g, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunOptions run;
    run.set_output_partition_graphs(true);
    RunMetadata metadata;
    absl::Status s = (*session)->Run(run, {{"x", feed}}, fetches, {}, &results[optimized ? 0 : 1],
                                     &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(metadata.partition_graphs_size(), 1);
    std::map<std::string, std::string> run_ops;
    for (const NodeDef& n : metadata.partition_graphs(0).node()) run_ops[n.name()] = n.op();
    for (const std::string& name : fused) {
      if (optimized) {
        EXPECT_EQ(run_ops[name], fused_op) << name;
      } else {
        EXPECT_NE(run_ops[name], fused_op) << name;
      }
    }
    if (optimized) *ops = std::move(run_ops);
  }
  ASSERT_EQ(results[0].size(), fetches.size());
  ASSERT_EQ(results[1].size(), fetches.size());
  for (size_t k = 0; k < fetches.size(); ++k) {
    SCOPED_TRACE(fetches[k]);
    const Tensor& a = results[0][k];
    const Tensor& b = results[1][k];
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.NumElements(); ++i) {
      const float want = b.flat<float>()[i];
      ASSERT_NEAR(a.flat<float>()[i], want, 1e-5 * (1 + std::abs(want))) << "at " << i;
    }
  }
}

TEST(KernelFusionTest, FusedConvolutionsMatchTheGraphAsWritten) {
  const Layer layers[] = {
      {"", "SAME", 1},          {"Relu", "VALID", 2},        {"Relu6", "SAME", 2},
      {"Elu", "VALID", 1},      {"LeakyRelu", "SAME", 1},    {"Tanh", "VALID", 2},
      {"Sigmoid", "SAME", 2},   {"Relu", "SAME", 1, true},
  };
  GraphDef g;
  NodeDef* x = Add(&g, "x", "Placeholder", {});
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  std::vector<std::string> fetches, fused;
  int seed = 1;
  for (size_t i = 0; i < std::size(layers); ++i) {
    const Layer& l = layers[i];
    const std::string p = "l" + std::to_string(i) + "/";
    AddConst(&g, p + "w", {3, 3, 3, 8}, seed++);
    AddConst(&g, p + "b", {8}, seed++);
    NodeDef* conv = Add(&g, p + "conv", "Conv2D", {"x", p + "w"});
    (*conv->mutable_attr())["padding"].set_s(l.padding);
    for (int64_t s : {int64_t{1}, l.stride, l.stride, int64_t{1}}) {
      (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
    }
    if (l.add_bias) {
      Add(&g, p + "bias", "AddV2", {p + "b", p + "conv"});
    } else {
      Add(&g, p + "bias", "BiasAdd", {p + "conv", p + "b"});
    }
    std::string last = p + "bias";
    if (!l.activation.empty()) {
      NodeDef* act = Add(&g, p + "act", l.activation, {last});
      if (l.activation == "LeakyRelu") (*act->mutable_attr())["alpha"].set_f(0.3f);
      last = p + "act";
    }
    fetches.push_back(last);
    fused.push_back(last);
  }
  // A chain whose BiasAdd is fetched too: the BiasAdd becomes the fused
  // node (its value still fetched), the activation stays after it.
  AddConst(&g, "f/w", {1, 1, 3, 4}, seed++);
  AddConst(&g, "f/b", {4}, seed++);
  NodeDef* conv = Add(&g, "f/conv", "Conv2D", {"x", "f/w"});
  (*conv->mutable_attr())["padding"].set_s("VALID");
  for (int k = 0; k < 4; ++k) (*conv->mutable_attr())["strides"].mutable_list()->add_i(1);
  Add(&g, "f/bias", "BiasAdd", {"f/conv", "f/b"});
  Add(&g, "f/act", "Tanh", {"f/bias"});
  fetches.push_back("f/bias");
  fetches.push_back("f/act");
  fused.push_back("f/bias");

  const Tensor feed = testing::MakeTensor<float>(
      testing::RandomDoubles(2 * 9 * 8 * 3, -2, 2, 99), {2, 9, 8, 3});
  std::map<std::string, std::string> ops;
  ASSERT_NO_FATAL_FAILURE(RunBothWays(g, feed, fetches, fused, "_FusedConv2D", &ops));
  EXPECT_EQ(ops.count("l1/conv"), 0u);
  EXPECT_EQ(ops.count("l1/bias"), 0u);
  EXPECT_EQ(ops["f/act"], "Tanh");
}

TEST(KernelFusionTest, FusedDepthwiseConvolutionsMatchTheGraphAsWritten) {
  // Multiplier 2 over 3 channels: 6 outputs, so the bias is [6]; the last
  // layer has no bias (a zero one is made).
  const Layer layers[] = {
      {"Relu6", "SAME", 1}, {"", "VALID", 2}, {"Relu", "SAME", 2, true}, {"LeakyRelu", "SAME", 1},
      {"Relu6", "SAME", 1},
  };
  GraphDef g;
  NodeDef* x = Add(&g, "x", "Placeholder", {});
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  std::vector<std::string> fetches;
  int seed = 50;
  for (size_t i = 0; i < std::size(layers); ++i) {
    const Layer& l = layers[i];
    const std::string p = "d" + std::to_string(i) + "/";
    const bool biasless = i + 1 == std::size(layers);
    AddConst(&g, p + "w", {3, 3, 3, 2}, seed++);
    AddConst(&g, p + "b", {6}, seed++);
    NodeDef* conv = Add(&g, p + "conv", "DepthwiseConv2dNative", {"x", p + "w"});
    (*conv->mutable_attr())["padding"].set_s(l.padding);
    for (int64_t s : {int64_t{1}, l.stride, l.stride, int64_t{1}}) {
      (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
    }
    std::string last = p + "conv";
    if (!biasless) {
      if (l.add_bias) {
        Add(&g, p + "bias", "AddV2", {p + "conv", p + "b"});
      } else {
        Add(&g, p + "bias", "BiasAdd", {p + "conv", p + "b"});
      }
      last = p + "bias";
    }
    if (!l.activation.empty()) {
      NodeDef* act = Add(&g, p + "act", l.activation, {last});
      if (l.activation == "LeakyRelu") (*act->mutable_attr())["alpha"].set_f(0.1f);
      last = p + "act";
    }
    fetches.push_back(last);
  }
  const Tensor feed = testing::MakeTensor<float>(
      testing::RandomDoubles(2 * 9 * 8 * 3, -2, 2, 98), {2, 9, 8, 3});
  std::map<std::string, std::string> ops;
  ASSERT_NO_FATAL_FAILURE(
      RunBothWays(g, feed, fetches, fetches, "_FusedDepthwiseConv2dNative", &ops));
}

}  // namespace
}  // namespace graphrun
