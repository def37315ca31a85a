// A session with a GPU device over a fake GPU (host memory, a thread per
// stream): nodes pinned to /device:GPU:0 run there, tensors cross between
// host and device memory through the partitioner's _Send/_Recv pairs and
// the device's copy streams, and a failed copy fails the step naming the
// device. The kernels here only move tensors (Identity, Const, Send/Recv):
// what the GPU path needs besides arithmetic, which only real GPUs run.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "runtime/trace.h"

namespace graphrun {
namespace {

constexpr char kGraph[] = R"(
  node { name: "x" op: "Placeholder" device: "/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "c" op: "Const" device: "/device:GPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT
           tensor_shape { dim { size: 4 } } float_val: 0.5 float_val: 1 float_val: 2
           float_val: 4 } } } }
  node { name: "n" op: "Const" device: "/device:GPU:0"
         attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32
           tensor_shape { dim { size: 2 } } int_val: 3 int_val: 7 } } } }
  node { name: "xi" op: "Identity" input: "x" device: "/device:GPU:0"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "ci" op: "Identity" input: "c" device: "/device:GPU:0"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "AddV2" input: "xi" input: "ci" device: "/device:CPU:0"
         attr { key: "T" value { type: DT_FLOAT } } }
)";

struct FakeGpuSession {
  FakeGpuSession() {
    platform = std::make_shared<FakeGpuPlatform>();
    SessionOptions options;
    options.make_gpu_devices = GpuDevicesOn({platform});
    auto graph = ParseGraphDef(kGraph, GraphFormat::kText);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto made = Session::Create(*graph, options);
    EXPECT_TRUE(made.ok()) << made.status();
    session = *std::move(made);
  }
  std::shared_ptr<FakeGpuPlatform> platform;
  std::unique_ptr<Session> session;
};

TEST(GpuSessionFakeTest, TheSessionHasTheGpuAndRunsPinnedNodesThere) {
  FakeGpuSession s;
  ASSERT_NE(s.session, nullptr);
  const std::vector<Device*> devices = s.session->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1]->name(), "/job:localhost/replica:0/task:0/device:GPU:0");

  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4});
  std::vector<Tensor> out;
  RunOptions run_options;
  RunMetadata metadata;
  const absl::Status ran =
      s.session->Run(run_options, {{"x", x}}, {"y", "xi", "n"}, {}, &out, &metadata);
  ASSERT_TRUE(ran.ok()) << ran;
  ASSERT_EQ(out.size(), 3u);
  const std::vector<float> want = {1.5f, 3, 5, 8};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].flat<float>()[i], want[i]) << i;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[1].flat<float>()[i], x.flat<float>()[i]) << i;
  EXPECT_EQ(out[2].flat<int32_t>()[1], 7);
  // Every fetched value is in host memory; what came off the GPU landed in
  // its pinned memory (a copy into pageable memory would block a thread).
  for (const Tensor& t : out) EXPECT_FALSE(s.platform->IsDeviceMemory(t.raw_data()));
  EXPECT_TRUE(s.platform->IsPinnedHost(out[1].raw_data()));

  // x went in; c went in once, when its kernel was made; xi and ci came out
  // to the CPU (y's inputs), xi once more for the fetch or shared with it.
  EXPECT_GE(s.platform->host_to_device_copies(), 2);
  EXPECT_GE(s.platform->device_to_host_copies(), 2);

  // The plan runs on both devices.
  bool on_gpu = false;
  for (const std::string& d : metadata.placement().devices()) {
    on_gpu |= d == "/job:localhost/replica:0/task:0/device:GPU:0";
  }
  EXPECT_TRUE(on_gpu) << metadata.placement().DebugString();

  // A second step of the same signature reuses the plan and the constant
  // already on the GPU.
  const int64_t before = s.platform->host_to_device_copies();
  ASSERT_TRUE(s.session->Run({{"x", x}}, {"y", "xi", "n"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[3], 8.0f);
  EXPECT_EQ(s.platform->host_to_device_copies(), before + 1);  // x only
}

// A traced step reports each device's allocators (the GPU's BFC over its
// memory, and its pinned host memory), and the Chrome trace draws them as
// counters.
TEST(GpuSessionFakeTest, TracedStepsReportDeviceMemory) {
  FakeGpuSession s;
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(1024, 1.0f));
  RunOptions run_options;
  run_options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  const absl::Status ran = s.session->Run(run_options, {{"x", x}}, {"xi"}, {}, &out, &metadata);
  ASSERT_TRUE(ran.ok()) << ran;
  const AllocatorStepStats* gpu = nullptr;
  const AllocatorStepStats* cpu = nullptr;
  for (const DeviceStepStats& d : metadata.step_stats().dev_stats()) {
    for (const AllocatorStepStats& a : d.allocators()) {
      if (a.allocator_name() == "GPU_0_bfc") gpu = &a;
      if (a.allocator_name() == "cpu") cpu = &a;
    }
  }
  ASSERT_NE(gpu, nullptr) << metadata.step_stats().DebugString();
  ASSERT_NE(cpu, nullptr) << metadata.step_stats().DebugString();
  // x (4 KiB) was copied in: the step's peak on the GPU holds it, within
  // the regions the allocator reserved.
  EXPECT_GE(gpu->peak_bytes_in_use(), 4096);
  EXPECT_GE(gpu->bytes_reserved(), gpu->peak_bytes_in_use());
  EXPECT_GT(gpu->bytes_limit(), 0);
  const std::string trace = StepStatsToChromeTrace(metadata.step_stats());
  EXPECT_NE(trace.find(R"("ph":"C","cat":"Memory","name":"memory GPU_0_bfc")"), std::string::npos)
      << trace;
}

TEST(GpuSessionFakeTest, AFailedCopyFailsTheStepNamingTheDevice) {
  FakeGpuSession s;
  const Tensor x = Tensor::FromVector<float>({1, 2, 3, 4});
  std::vector<Tensor> out;
  const absl::Status first = s.session->Run({{"x", x}}, {"y"}, {}, &out);
  ASSERT_TRUE(first.ok()) << first;  // plan and constant made
  s.platform->FailNextCopy(absl::InternalError("an illegal memory access was encountered"));
  const absl::Status failed = s.session->Run({{"x", x}}, {"y"}, {}, &out);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("device:GPU:0"), std::string::npos) << failed;
  EXPECT_NE(failed.message().find("illegal memory access"), std::string::npos) << failed;
}

}  // namespace
}  // namespace graphrun
