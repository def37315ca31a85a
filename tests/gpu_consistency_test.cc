// On a real GPU: every op with a GPU kernel, run on random inputs on the
// CPU and on the GPU, must agree within its dtype's tolerance; and
// TensorFlow's MLP, its nodes asked onto the GPU (soft placement keeps the
// ones without a GPU kernel on the CPU), matches TensorFlow's outputs.
// Skips, saying why, where no GPU is visible.
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "runtime/gpu/cuda_probe.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_platform.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// Skips the test unless GPU 0 can be used.
#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    const GpuInventory inventory = QueryGpus();                                \
    if (inventory.gpus.empty()) {                                              \
      GTEST_SKIP() << "no GPU visible (" << inventory.why_none                 \
                   << "): the GPU consistency checks run on a GPU machine "    \
                      "(tools/gpu_check.sh)";                                  \
    }                                                                          \
  } while (0)

SessionOptions WithGpu(bool soft) {
  SessionOptions options;
  options.allow_soft_placement = soft;
  options.optimize = SessionOptions::Optimize::kNone;
  absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(0);
  EXPECT_TRUE(platform.ok()) << platform.status();
  if (platform.ok()) {
    GpuDeviceOptions o;
    o.memory_limit = int64_t{2} << 30;
    options.make_gpu_devices =
        GpuDevicesOn({std::shared_ptr<GpuPlatform>(*std::move(platform))}, o);
  }
  return options;
}

Tensor Random(const TensorShape& shape, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = u(rng);
  return t;
}

struct Case {
  std::string op;
  std::vector<TensorShape> inputs;
  float lo = -2, hi = 2;
  std::string attrs;  // extra NodeDef attrs, text format
  double tol = 1e-5;
};

GraphDef OneOp(const Case& c, const std::string& device) {
  std::string text;
  std::string inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    absl::StrAppend(&text, "node { name: 'in", i,
                    "' op: 'Placeholder' device: '/device:CPU:0' attr { key: 'dtype' value { "
                    "type: DT_FLOAT } } }\n");
    absl::StrAppend(&inputs, " input: 'in", i, "'");
  }
  absl::StrAppend(&text, "node { name: 'op' op: '", c.op, "'", inputs, " device: '", device,
                  "' attr { key: 'T' value { type: DT_FLOAT } } ", c.attrs, " }\n");
  for (char& ch : text) {
    if (ch == '\'') ch = '"';
  }
  absl::StatusOr<GraphDef> g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  return *g;
}

absl::StatusOr<Tensor> RunOn(const Case& c, const std::string& device,
                             const std::vector<Tensor>& inputs) {
  SessionOptions options = device == "/device:GPU:0" ? WithGpu(false) : SessionOptions();
  options.optimize = SessionOptions::Optimize::kNone;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(OneOp(c, device), options);
  if (!s.ok()) return s.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.push_back({absl::StrCat("in", i), inputs[i]});
  std::vector<Tensor> out;
  absl::Status status = (*s)->Run(feeds, {"op"}, {}, &out);
  if (!status.ok()) return status;
  return out[0];
}

TEST(GpuConsistencyTest, EveryGpuKernelAgreesWithTheCpu) {
  REQUIRE_GPU();
  const TensorShape m({33, 70}), v({70}), scalar({});
  std::vector<Case> cases = {
      {"MatMul", {TensorShape({64, 96}), TensorShape({96, 80})}, -1, 1,
       "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: false } }",
       3e-3},
      {"MatMul", {TensorShape({96, 64}), TensorShape({80, 96})}, -1, 1,
       "attr { key: 'transpose_a' value { b: true } } attr { key: 'transpose_b' value { b: true } }",
       3e-3},
      {"BatchMatMulV2", {TensorShape({3, 20, 30}), TensorShape({3, 30, 10})}, -1, 1,
       "attr { key: 'adj_x' value { b: false } } attr { key: 'adj_y' value { b: false } }", 3e-3},
      {"_FusedMatMul", {TensorShape({64, 96}), TensorShape({96, 80}), TensorShape({80})}, -1, 1,
       "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: "
       "false } } attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' value { list "
       "{ s: 'BiasAdd' s: 'Relu' } } } attr { key: 'epsilon' value { f: 0.0001 } }",
       3e-3},
      {"BiasAdd", {m, v}},
      {"Softmax", {m}},
      {"LogSoftmax", {m}},
  };
  for (const char* op : {"Neg", "Abs", "Square", "Tanh", "Sigmoid", "Relu", "Relu6", "Elu",
                         "Softplus", "Exp"}) {
    cases.push_back({op, {m}});
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) {
    Case c{op, {m}};
    c.lo = 0.1f;
    c.hi = 4;
    cases.push_back(c);
  }
  for (const char* op : {"AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
                         "SquaredDifference"}) {
    cases.push_back({op, {m, m}});
    cases.push_back({op, {m, v}});
    cases.push_back({op, {TensorShape({33, 1}), v}});
    cases.push_back({op, {scalar, m}});
  }
  Case pow{"Pow", {m, m}};
  pow.lo = 0.5f;
  pow.hi = 2;
  cases.push_back(pow);

  uint32_t seed = 1;
  for (Case& c : cases) {
    // Keep the ops' attrs in TensorFlow's spelling.
    for (char& ch : c.attrs) {
      if (ch == '\'') ch = '"';
    }
    std::vector<Tensor> inputs;
    for (const TensorShape& s : c.inputs) inputs.push_back(Random(s, c.lo, c.hi, seed++));
    if (c.op == "RealDiv") inputs[1] = Random(c.inputs[1], 0.5f, 2, seed++);
    absl::StatusOr<Tensor> cpu = RunOn(c, "/device:CPU:0", inputs);
    absl::StatusOr<Tensor> gpu = RunOn(c, "/device:GPU:0", inputs);
    ASSERT_TRUE(cpu.ok()) << c.op << ": " << cpu.status();
    ASSERT_TRUE(gpu.ok()) << c.op << ": " << gpu.status();
    ASSERT_EQ(cpu->shape(), gpu->shape()) << c.op;
    double worst = 0;
    for (int64_t i = 0; i < cpu->NumElements(); ++i) {
      const double a = cpu->flat<float>()[i], b = gpu->flat<float>()[i];
      worst = std::max(worst, std::fabs(a - b) / std::max(1.0, std::fabs(a)));
    }
    EXPECT_LE(worst, c.tol) << c.op << " " << c.inputs[0].DebugString();
  }
}

// `graph` (a TensorFlow fixture) with every node asked onto the GPU; soft
// placement keeps the nodes without a GPU kernel on the CPU.
void ExpectMatchesTensorFlowOnGpu(const std::string& name, const std::string& feed,
                                  const std::string& fetch, double tol, bool optimize = false) {
  absl::StatusOr<GraphDef> graph = ReadGraphDefFile("tests/fixtures/" + name + ".pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (NodeDef& n : *graph->mutable_node()) n.set_device("/device:GPU:0");
  SessionOptions options = WithGpu(true);
  // With the optimizer, MatMul + BiasAdd + Relu run as _FusedMatMul.
  if (optimize) options.optimize = SessionOptions::Optimize::kDefault;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(*graph, options);
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string stem = "tests/fixtures/" + name + ".";
  absl::StatusOr<Tensor> x = ReadNpyFile(stem + feed + "_0.npy");
  absl::StatusOr<Tensor> want = ReadNpyFile(stem + fetch + "_0.npy");
  ASSERT_TRUE(x.ok() && want.ok()) << name;
  std::vector<Tensor> out;
  RunOptions run_options;
  RunMetadata metadata;
  absl::Status status = (*s)->Run(run_options, {{feed + ":0", *x}}, {fetch + ":0"}, {}, &out,
                                  &metadata);
  ASSERT_TRUE(status.ok()) << name << ": " << status;
  bool used_gpu = false;
  for (const std::string& d : metadata.placement().devices()) {
    used_gpu |= absl::EndsWith(d, "GPU:0");
  }
  EXPECT_TRUE(used_gpu) << name << ": nothing ran on the GPU";
  ASSERT_EQ(out[0].NumElements(), want->NumElements());
  for (int64_t i = 0; i < want->NumElements(); ++i) {
    EXPECT_NEAR(out[0].flat<float>()[i], want->flat<float>()[i], tol) << name << " " << i;
  }
}

TEST(GpuConsistencyTest, TensorFlowsModelsOnTheGpuMatchTensorFlow) {
  REQUIRE_GPU();
  ExpectMatchesTensorFlowOnGpu("mlp", "x", "probs", 2e-3);  // TF32 GEMMs
  ExpectMatchesTensorFlowOnGpu("mlp", "x", "probs", 2e-3, /*optimize=*/true);
  ExpectMatchesTensorFlowOnGpu("cnn", "images", "log_probs", 5e-3);
}

}  // namespace
}  // namespace graphrun
