// The GPU OpKernels on the fake GPU (runtime/gpu/testing: device memory the
// host cannot touch outside queued work, streams as threads; the launchers of gpu_launch.h as host
// code queued on those streams): every case of gpu_cases.h, placed on the
// fake GPU with its int arguments crossing into host memory and its tensors
// copied in and out through the device context, must agree with the CPU
// kernels. This checks on CPU everything of the GPU kernels but the CUDA
// kernels' own arithmetic: shapes, host-memory arguments, allocations,
// plans and the arguments each launcher is given (the Keras fixture models
// run the same way in gpu_models_fake_test.cc). The launchers, called
// directly, refuse a range they would touch outside one device block.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "kernels/gpu/gpu_launch.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "tests/fake_gpu_session.h"
#include "tests/gpu_cases.h"

namespace graphrun {
namespace {

using testing::WithFakeGpu;

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
  // A region given back and needed again soon makes the next give-back
  // wait twice as long, so regions come ever more rarely. How many depends
  // on when the stream threads' frees land against the step boundaries:
  // between 17 and 31 in runs on a loaded 2-core machine. A region every
  // other step from each of the three allocators (device, pinned host,
  // step plan), the failure this guards against, takes 150.
  EXPECT_LE(platform->regions.load(), 50);
  EXPECT_LE(platform->largest.load(), size_t{2} << 20);
}

// Fresh fake device memory is all ones (NaN as float), so a GPU kernel that
// reads its output before writing it fails the NaN-aware comparisons
// instead of reading zeros.
TEST(FakeGpuTest, FreshDeviceMemoryIsPoisoned) {
  FakeGpuPlatform platform;
  auto stream = platform.NewStream();
  ASSERT_TRUE(stream.ok()) << stream.status();
  void* p = platform.AllocateDevice(64);
  ASSERT_NE(p, nullptr);
  unsigned char bytes[64];
  ASSERT_TRUE((*stream)->MemcpyDeviceToHost(bytes, p, sizeof(bytes)).ok());
  ASSERT_TRUE((*stream)->Synchronize().ok());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(bytes[i], 0xFF) << i;
  float f;
  std::memcpy(&f, bytes, sizeof(f));
  EXPECT_TRUE(std::isnan(f));
  platform.FreeDevice(p);
}

// Host code cannot read or write device memory, as on a GPU (a missing
// HostMemory, a host memcpy of a device tensor): it faults. Work queued on
// a stream (a kernel, a copy) can.
TEST(FakeGpuDeathTest, TheHostCannotTouchDeviceMemory) {
  FakeGpuPlatform platform;
  auto* p = static_cast<volatile float*>(platform.AllocateDevice(16));
  ASSERT_NE(p, nullptr);
  EXPECT_DEATH(static_cast<void>(p[0]), "");
  EXPECT_DEATH(p[1] = 1.0f, "");
  auto stream = platform.NewStream();
  ASSERT_TRUE(stream.ok()) << stream.status();
  FakeGpuPlatform::Enqueue(stream->get(), [p] {
    p[2] = 5.0f;
    return absl::OkStatus();
  });
  float back = 0;
  ASSERT_TRUE((*stream)->MemcpyDeviceToHost(&back, const_cast<float*>(p) + 2, 4).ok());
  ASSERT_TRUE((*stream)->Synchronize().ok());
  EXPECT_EQ(back, 5.0f);
  EXPECT_DEATH(static_cast<void>(p[2]), "");
  platform.FreeDevice(const_cast<float*>(p));
}

// A block freed while work queued before the free still has to touch it
// (cudaFree waits for that work): the work can, as on a GPU. The stream is
// held by a host callback, during which no queued work opens the memory.
TEST(FakeGpuTest, WorkQueuedBeforeAFreeStillTouchesTheBlock) {
  FakeGpuPlatform platform;
  auto stream = platform.NewStream();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto* p = static_cast<float*>(platform.AllocateDevice(16));
  ASSERT_NE(p, nullptr);
  absl::Notification release;
  ASSERT_TRUE((*stream)->ThenCall([&](const absl::Status&) { release.WaitForNotification(); })
                  .ok());
  std::atomic<bool> wrote{false};
  FakeGpuPlatform::Enqueue(stream->get(), [p, &wrote] {
    p[3] = 2.0f;
    wrote = true;
    return absl::OkStatus();
  });
  platform.FreeDevice(p);
  EXPECT_FALSE(platform.IsDeviceMemory(p));  // no new work may take it
  release.Notify();
  ASSERT_TRUE((*stream)->Synchronize().ok());
  EXPECT_TRUE(wrote);
}

// A fake GPU, one of its streams and device blocks of floats, to call the
// fake GPU's launchers with directly.
class FakeGpuLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GpuStream>> made = platform_.NewStream();
    ASSERT_TRUE(made.ok()) << made.status();
    stream_ = std::move(*made);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_TRUE(stream_->Synchronize().ok());
    }
    for (void* p : blocks_) platform_.FreeDevice(p);
  }

  // A device block of `n` floats, each `value` (copied there: the host
  // cannot write device memory).
  float* Floats(int n, float value) {
    auto* p = static_cast<float*>(platform_.AllocateDevice(n * sizeof(float)));
    blocks_.push_back(p);
    const std::vector<float> values(n, value);
    EXPECT_TRUE(stream_->MemcpyHostToDevice(p, values.data(), n * sizeof(float)).ok());
    EXPECT_TRUE(stream_->Synchronize().ok());
    return p;
  }
  // The `n` floats at device address `p`, copied back.
  std::vector<float> Read(const float* p, int n) {
    std::vector<float> out(n);
    EXPECT_TRUE(stream_->MemcpyDeviceToHost(out.data(), p, n * sizeof(float)).ok());
    EXPECT_TRUE(stream_->Synchronize().ok());
    return out;
  }
  // What the launchers take as their stream.
  void* stream() const { return stream_->native(); }

  FakeGpuPlatform platform_;
  std::unique_ptr<GpuStream> stream_;
  std::vector<void*> blocks_;
};

// Expects `s` to refuse the launch of `launcher`, as a GPU kernel would
// fault: `bytes` bytes at its argument `arg` (from 0, in the order it
// checks them) outside one block of device memory.
void ExpectRefused(const absl::Status& s, const std::string& launcher, int bytes, int arg) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::string said = "the fake GPU's " + launcher + " was given " + std::to_string(bytes) +
                           " bytes at argument " + std::to_string(arg) +
                           " that are not inside one block of the GPU's memory";
  EXPECT_NE(s.message().find(said), std::string::npos) << s;
}

// Each of var and grad (4 floats) is checked over all n elements, not at
// its first byte only: one element too many, or a pointer near a block's
// end, is refused before anything is queued; what fits runs.
TEST_F(FakeGpuLaunchTest, ApplyGradientDescentChecksEveryElementItTouches) {
  float* var = Floats(4, 1.0f);
  float* alpha = Floats(1, 0.5f);
  float* grad = Floats(4, 2.0f);
  ExpectRefused(gpu::ApplyGradientDescent(stream(), var, alpha, grad, 5), "ApplyGradientDescent",
                20, 0);
  ExpectRefused(gpu::ApplyGradientDescent(stream(), var + 3, alpha, grad, 2),
                "ApplyGradientDescent", 8, 0);
  ExpectRefused(gpu::ApplyGradientDescent(stream(), var, alpha, grad + 2, 4),
                "ApplyGradientDescent", 16, 2);
  ASSERT_TRUE(gpu::ApplyGradientDescent(stream(), var, alpha, grad, 4).ok());
  ASSERT_TRUE(gpu::ApplyGradientDescent(stream(), var + 3, alpha, grad + 3, 1).ok());
  // No elements: nothing to check.
  EXPECT_TRUE(gpu::ApplyGradientDescent(stream(), nullptr, nullptr, nullptr, 0).ok());
  const std::vector<float> got = Read(var, 4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], 0.0f) << i;  // 1 - 2 * 0.5
  EXPECT_EQ(got[3], -1.0f);                                   // and once more
}

TEST_F(FakeGpuLaunchTest, UnaryChecksEveryElementItTouches) {
  float* in = Floats(4, 3.0f);
  float* out = Floats(4, 0.0f);
  ExpectRefused(gpu::Unary(stream(), gpu::UnaryOp::kNeg, in, out, 5), "Unary", 20, 0);
  ExpectRefused(gpu::Unary(stream(), gpu::UnaryOp::kNeg, in, out + 2, 4), "Unary", 16, 1);
  ASSERT_TRUE(gpu::Unary(stream(), gpu::UnaryOp::kNeg, in, out, 4).ok());
  const std::vector<float> got = Read(out, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], -3.0f) << i;
}

// A broadcast input is checked over its own elements (here 1), not the
// output's; read as 4 elements it is refused.
TEST_F(FakeGpuLaunchTest, BinaryChecksEachInputOverItsOwnShape) {
  float* x = Floats(4, 1.0f);
  float* y = Floats(1, 2.0f);
  float* out = Floats(4, 0.0f);
  gpu::BroadcastShape shape;
  shape.rank = 1;
  shape.dims[0] = 4;
  shape.x_strides[0] = 1;
  shape.y_strides[0] = 0;
  ASSERT_TRUE(gpu::Binary(stream(), gpu::BinaryOp::kAdd, x, y, out, shape).ok());
  const std::vector<float> got = Read(out, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 3.0f) << i;
  shape.y_strides[0] = 1;
  ExpectRefused(gpu::Binary(stream(), gpu::BinaryOp::kAdd, x, y, out, shape), "Binary", 16, 1);
}

TEST_F(FakeGpuLaunchTest, ActivationGradChecksEveryElementItTouches) {
  float* gradients = Floats(4, 2.0f);
  float* features = Floats(4, 1.0f);
  float* out = Floats(4, 0.0f);
  ExpectRefused(gpu::ActivationGrad(stream(), gpu::GradOp::kRelu, gradients, features, out, 5),
                "ActivationGrad", 20, 0);
  ExpectRefused(
      gpu::ActivationGrad(stream(), gpu::GradOp::kRelu, gradients, features, out + 1, 4),
      "ActivationGrad", 16, 2);
  ASSERT_TRUE(
      gpu::ActivationGrad(stream(), gpu::GradOp::kRelu, gradients, features, out, 4).ok());
  const std::vector<float> got = Read(out, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], 2.0f) << i;  // features > 0
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

}  // namespace
}  // namespace graphrun
