// On a real GPU: every op with a GPU kernel, run on random inputs on the
// CPU and on the GPU, must agree within its dtype's tolerance (the cases of
// gpu_cases.h); and
// TensorFlow's MLP, its nodes asked onto the GPU (soft placement keeps the
// ones without a GPU kernel on the CPU), matches TensorFlow's outputs.
// Skips, saying why, where no GPU is visible.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/gpu_cases.h"
#include "tests/gpu_test_util.h"

namespace graphrun {
namespace {

using testing::WithGpu;

// Without a GPU: every case's graph is well formed and runs on the CPU, so
// the GPU check fails only for what the GPU does.
TEST(GpuConsistencyTest, EveryCaseRunsOnTheCpu) {
  uint32_t seed = 1;
  for (const testing::GpuOpCase& c : testing::AllGpuOpCases()) {
    const std::vector<Tensor> inputs = testing::InputsOf(c, &seed);
    // NCHW cases of ops whose CPU kernels take NHWC run transposed there.
    absl::StatusOr<std::vector<Tensor>> cpu =
        c.cpu_in_nhwc ? testing::RunNhwcOnCpu(c, inputs)
                      : testing::RunCase(c, "/device:CPU:0", SessionOptions(), inputs);
    EXPECT_TRUE(cpu.ok()) << testing::Describe(c) << ": " << cpu.status();
  }
}

TEST(GpuConsistencyTest, EveryGpuKernelAgreesWithTheCpu) {
  GR_REQUIRE_GPU();
  testing::ExpectEveryCaseAgrees([] { return WithGpu(/*soft=*/false); });
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
  std::string why;
  EXPECT_TRUE(testing::FloatsAgree(*want, out[0], tol, &why)) << name << ": " << why;
}

TEST(GpuConsistencyTest, TensorFlowsModelsOnTheGpuMatchTensorFlow) {
  GR_REQUIRE_GPU();
  // Float GEMMs and convolutions (TF32 off): TensorFlow's CPU results up to
  // summation order.
  ExpectMatchesTensorFlowOnGpu("mlp", "x", "probs", 1e-4);
  ExpectMatchesTensorFlowOnGpu("mlp", "x", "probs", 1e-4, /*optimize=*/true);
  ExpectMatchesTensorFlowOnGpu("cnn", "images", "log_probs", 1e-4);
  ExpectMatchesTensorFlowOnGpu("cnn", "images", "log_probs", 1e-4, /*optimize=*/true);
}

}  // namespace
}  // namespace graphrun
