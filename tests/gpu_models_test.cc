// On a real GPU: every Keras model of tests/fixtures/models/MANIFEST, each
// node asked onto GPU 0 (soft placement keeps the nodes without a GPU
// kernel on the CPU, with Send/Recv between), must match TensorFlow's
// outputs, with its float compute ops and loops on the GPU. TF32 is off, so the
// tolerance is the model's, raised to 1e-3 for the GPU's other summation
// orders over deep networks. Skips, saying why, where no GPU is visible.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fixture_manifest.h"
#include "tests/gpu_cases.h"
#include "tests/gpu_test_util.h"

namespace graphrun {
namespace {

using testing::FixtureModel;

class GpuModelsTest : public ::testing::TestWithParam<FixtureModel> {};

void ExpectMatchesOnGpu(SessionOptions::Optimize optimize) {
  FixtureModel model = ::testing::TestWithParam<FixtureModel>::GetParam();
  model.tol = std::max(model.tol, 1e-3);
  SessionOptions options = testing::WithGpu(/*soft=*/true);
  options.optimize = optimize;
  RunMetadata metadata;
  const absl::Status s = testing::RunFixture(model, options, &metadata, [](GraphDef* graph) {
    for (NodeDef& n : *graph->mutable_node()) n.set_device("/device:GPU:0");
  });
  ASSERT_TRUE(s.ok()) << model.name << ": " << s;
  testing::ExpectModelOnGpu(model.name, metadata);
}

TEST_P(GpuModelsTest, MatchesTensorFlowWithItsNodesOnTheGpu) {
  GR_REQUIRE_GPU();
  ExpectMatchesOnGpu(SessionOptions::Optimize::kNone);
}

// With the graph optimizer, as `graphrun run` runs: the fused GPU kernels
// (_FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul) on hardware.
TEST_P(GpuModelsTest, OptimizedMatchesTensorFlowWithItsNodesOnTheGpu) {
  GR_REQUIRE_GPU();
  ExpectMatchesOnGpu(SessionOptions::Optimize::kDefault);
}

// Runs with or without a GPU: the models come from the manifest, and an
// empty or missing one would leave nothing to check.
TEST(GpuModelsManifestTest, ListsEveryModel) {
  EXPECT_EQ(testing::ReadFixtureManifest("tests/fixtures/models/").size(), 26u);
}

INSTANTIATE_TEST_SUITE_P(
    Manifest, GpuModelsTest,
    ::testing::ValuesIn(testing::ReadFixtureManifest("tests/fixtures/models/")),
    [](const ::testing::TestParamInfo<FixtureModel>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuModelsTest);

}  // namespace
}  // namespace graphrun
