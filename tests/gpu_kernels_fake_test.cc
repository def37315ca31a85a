// The GPU OpKernels on the fake GPU (runtime/gpu/testing: device memory on
// the host heap, streams as threads; the launchers of gpu_launch.h as host
// code queued on those streams): every case of gpu_cases.h, placed on the
// fake GPU with its int arguments crossing into host memory and its tensors
// copied in and out through the device context, must agree with the CPU
// kernels. This checks on CPU everything of the GPU kernels but the CUDA
// kernels' own arithmetic: shapes, host-memory arguments, allocations,
// plans and the arguments each launcher is given. The Keras fixture models
// run the same way, against TensorFlow's outputs.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"
#include "tests/gpu_cases.h"

namespace graphrun {
namespace {

SessionOptions WithFakeGpu() {
  SessionOptions options;
  GpuDeviceOptions o;
  o.memory_limit = int64_t{256} << 20;
  options.make_gpu_devices = GpuDevicesOn({std::make_shared<FakeGpuPlatform>()}, o);
  return options;
}

TEST(GpuKernelsOnFakeGpuTest, EveryGpuKernelAgreesWithTheCpu) {
  testing::ExpectEveryCaseAgrees(WithFakeGpu);
}

// A fake GPU that counts the regions its allocators take.
class CountingFakeGpu : public FakeGpuPlatform {
 public:
  void* AllocateDevice(size_t bytes) override {
    Count(bytes);
    return FakeGpuPlatform::AllocateDevice(bytes);
  }
  void* AllocatePinnedHost(size_t bytes) override {
    Count(bytes);
    return FakeGpuPlatform::AllocatePinnedHost(bytes);
  }
  std::atomic<int> regions{0};
  std::atomic<size_t> largest{0};

 private:
  void Count(size_t bytes) {
    ++regions;
    size_t seen = largest.load();
    while (bytes > seen && !largest.compare_exchange_weak(seen, bytes)) {
    }
  }
};

// A long chain of GPU kernel nodes (the shape of gpu_benchmark's host-time
// benchmark) runs its steps: 1000 Relus on 16 floats, fed from and fetched
// to the CPU. Over 100 steps the allocators take few, small regions: a
// region given back and taken again used to double each time (2 MiB, 4,
// 8, ... of pinned memory every other step), so steps slowed without end
// on a GPU.
TEST(GpuKernelsOnFakeGpuTest, LongChainOfGpuNodesRunsStepsInBoundedMemory) {
  std::string text =
      "node { name: 'x' op: 'Placeholder' device: '/device:CPU:0' attr { key: 'dtype' value { "
      "type: DT_FLOAT } } }\n";
  std::string prev = "x";
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "r" + std::to_string(i);
    text += "node { name: '" + name + "' op: 'Relu' input: '" + prev +
            "' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    prev = name;
  }
  for (char& ch : text) {
    if (ch == '\'') ch = '"';
  }
  SessionOptions options;
  options.optimize = SessionOptions::Optimize::kNone;
  auto platform = std::make_shared<CountingFakeGpu>();
  options.make_gpu_devices = GpuDevicesOn({platform});
  absl::StatusOr<GraphDef> graph = ParseGraphDef(text, GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto session = Session::Create(*graph, options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = i - 8.0f;
  std::vector<Tensor> out;
  for (int step = 0; step < 100; ++step) {
    ASSERT_TRUE((*session)->Run({{"x", Tensor::FromVector<float>(values)}}, {prev}, {}, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(out[0].flat<float>()[i], std::max(values[i], 0.0f));
  }
  // A region given back and needed again within two steps makes the next
  // give-back wait twice as long: O(log steps) regions.
  EXPECT_LE(platform->regions.load(), 30);
  EXPECT_LE(platform->largest.load(), size_t{2} << 20);
}

// Fresh fake device memory is all ones (NaN as float), so a GPU kernel that
// reads its output before writing it fails the NaN-aware comparisons
// instead of reading zeros.
TEST(FakeGpuTest, FreshDeviceMemoryIsPoisoned) {
  FakeGpuPlatform platform;
  void* p = platform.AllocateDevice(64);
  ASSERT_NE(p, nullptr);
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(bytes[i], 0xFF) << i;
  float f;
  std::memcpy(&f, p, sizeof(f));
  EXPECT_TRUE(std::isnan(f));
  platform.FreeDevice(p);
}

// The comparison every GPU check goes through: a NaN, an infinity of the
// wrong sign, a shape or a dtype that differs is a disagreement, however
// small the other differences.
TEST(FloatsAgreeTest, NanInfShapeAndDtypeDisagree) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto t = [](std::vector<float> v) { return Tensor::FromVector<float>(v); };
  std::string why;
  EXPECT_TRUE(testing::FloatsAgree(t({1, 2, nan, inf}), t({1, 2, nan, inf}), 1e-6, &why)) << why;
  EXPECT_TRUE(testing::FloatsAgree(t({100}), t({100.00001f}), 1e-6, &why)) << why;
  EXPECT_FALSE(testing::FloatsAgree(t({1, 2}), t({1, nan}), 1e-3, &why));
  EXPECT_NE(why.find("element 1"), std::string::npos) << why;
  EXPECT_FALSE(testing::FloatsAgree(t({1, nan}), t({1, 2}), 1e-3, &why));
  EXPECT_FALSE(testing::FloatsAgree(t({inf}), t({-inf}), 1e-3, &why));
  EXPECT_FALSE(testing::FloatsAgree(t({inf}), t({1e30f}), 1e-3, &why));
  EXPECT_FALSE(testing::FloatsAgree(t({1}), t({1.01f}), 1e-3, &why));
  EXPECT_FALSE(testing::FloatsAgree(t({1, 2}), t({1, 2, 3}), 1e-3, &why));
  EXPECT_FALSE(testing::FloatsAgree(t({1}), Tensor::FromVector<double>({1}), 1e-3, &why));
}

// Every Keras fixture model with each node asked onto the fake GPU (soft
// placement keeps those without a GPU kernel on the CPU): TensorFlow's
// outputs, with every float compute op and the loops on the GPU.
class FakeGpuModelsTest : public ::testing::TestWithParam<testing::FixtureModel> {};

TEST_P(FakeGpuModelsTest, MatchesTensorFlowWithItsNodesOnTheGpu) {
  const testing::FixtureModel& model = GetParam();
  SessionOptions options = WithFakeGpu();
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
