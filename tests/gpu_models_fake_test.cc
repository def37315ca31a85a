// The Keras fixture models on the fake GPU (runtime/gpu/testing: device
// memory the host cannot touch outside queued work, streams as threads, the
// launchers of gpu_launch.h as host code queued on them), each node asked
// onto the GPU: TensorFlow's outputs, with every float compute op and the
// loops on the GPU. Apart from gpu_kernels_fake_test for time: opening and
// closing the device memory around every kernel costs a few seconds here.
#include <cstdint>
#include <memory>

#include "gtest/gtest.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"
#include "tests/fake_gpu_session.h"
#include "tests/gpu_cases.h"

namespace graphrun {
namespace {

using testing::WithFakeGpu;

// Every Keras fixture model with each node asked onto the fake GPU (soft
// placement keeps those without a GPU kernel on the CPU): TensorFlow's
// outputs, with every float compute op and the loops on the GPU.
class FakeGpuModelsTest : public ::testing::TestWithParam<testing::FixtureModel> {};

TEST_P(FakeGpuModelsTest, MatchesTensorFlowWithItsNodesOnTheGpu) {
  const testing::FixtureModel& model = GetParam();
  // 512 MiB: at 256 MiB, ResNet-50 ran out of device memory copying a
  // weight to the GPU in about one run in 30 on a loaded machine (what is
  // in use at a moment depends on when the fake streams' frees land).
  SessionOptions options = testing::WithFakeGpuOf(int64_t{512} << 20);
  options.allow_soft_placement = true;
  RunMetadata metadata;
  const absl::Status s = testing::RunFixture(model, options, &metadata, [](GraphDef* graph) {
    for (NodeDef& n : *graph->mutable_node()) n.set_device("/device:GPU:0");
  });
  ASSERT_TRUE(s.ok()) << model.name << ": " << s;
  testing::ExpectModelOnGpu(model.name, metadata);
}

// The models above come from the manifest: an empty or missing one would
// leave nothing to check.
TEST(FakeGpuModelsManifestTest, ListsEveryModel) {
  EXPECT_EQ(testing::ReadFixtureManifest("tests/fixtures/models/").size(), 26u);
}

INSTANTIATE_TEST_SUITE_P(
    Manifest, FakeGpuModelsTest,
    ::testing::ValuesIn(testing::ReadFixtureManifest("tests/fixtures/models/")),
    [](const ::testing::TestParamInfo<testing::FixtureModel>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FakeGpuModelsTest);

}  // namespace
}  // namespace graphrun
