// The GPU device over a fake GPU (host memory, a thread per stream): its
// allocators, the order and errors of its copies, HostMemory outputs, and
// tensors crossing memory spaces through a local rendezvous.
#include "runtime/gpu/gpu_device.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "graph/protos/node_def.pb.h"
#include "kernels/device_context.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/rendezvous.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/local_rendezvous.h"

namespace graphrun {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

struct Gpu {
  explicit Gpu(FakeGpuOptions fake = {}, GpuDeviceOptions options = {}) {
    platform = std::make_shared<FakeGpuPlatform>(fake);
    auto made = NewGpuDevice(kPrefix, fake.ordinal, platform, options);
    EXPECT_TRUE(made.ok()) << made.status();
    device = *std::move(made);
  }
  DeviceContext* ctx() const { return device->device_context(); }
  std::shared_ptr<FakeGpuPlatform> platform;
  std::unique_ptr<Device> device;
};

Tensor Iota(int n, float base = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return Tensor::FromVector(v);
}

Tensor OnDevice(const Device& device, const TensorShape& shape, DataType dtype = DT_FLOAT) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(device.allocator(), dtype, shape,
                                              TensorBuffer::Init::kUninitialized);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(GpuDeviceTest, NamesItselfAndSizesItsMemory) {
  FakeGpuOptions fake;
  fake.ordinal = 1;
  fake.total_memory = int64_t{16} << 30;
  fake.used_by_others = int64_t{6} << 30;
  Gpu gpu(fake);
  EXPECT_EQ(gpu.device->name(), "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(gpu.device->device_type(), "GPU");
  EXPECT_NE(gpu.device->physical_description().find("name: Fake GPU"), std::string::npos);
  // All the free memory (10 GiB) less the larger of 256 MiB and 5% of 16 GiB.
  EXPECT_EQ(gpu.device->memory_limit(), (int64_t{10} << 30) - (int64_t{16} << 30) / 20);
  EXPECT_EQ(gpu.device->eigen_cpu_device(), nullptr);
  EXPECT_EQ(gpu.device->allocator()->Name(), "GPU_1_bfc");

  GpuDeviceOptions half;
  half.memory_fraction = 0.5;
  EXPECT_EQ(GpuMemoryLimit(half, 1000, 100), 500);
  GpuDeviceOptions fixed;
  fixed.memory_limit = 300;
  EXPECT_EQ(GpuMemoryLimit(fixed, 1000, 100), 300);
  fixed.memory_limit = 5000;
  EXPECT_EQ(GpuMemoryLimit(fixed, 1000, 100), 1000);

  GpuDeviceOptions bad;
  bad.memory_fraction = 1.5;
  auto refused = NewGpuDevice(kPrefix, 0, std::make_shared<FakeGpuPlatform>(), bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("device:GPU:0"), std::string::npos);
}

TEST(GpuDeviceTest, TensorsLiveInDeviceMemoryAndHostMemoryOnAsking) {
  Gpu gpu;
  Tensor d = OnDevice(*gpu.device, TensorShape({1000}));
  EXPECT_TRUE(gpu.platform->IsDeviceMemory(d.raw_data(), d.TotalBytes()));
  AllocatorAttributes host;
  host.on_host = true;
  Allocator* pinned = gpu.device->GetAllocator(host);
  EXPECT_EQ(pinned->Name(), "gpu_host_bfc");
  absl::StatusOr<Tensor> h = Tensor::Allocate(pinned, DT_FLOAT, TensorShape({10}));
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(gpu.platform->IsPinnedHost(h->raw_data()));
  EXPECT_FALSE(gpu.platform->IsDeviceMemory(h->raw_data()));

  // Statistics through the Allocator interface.
  std::optional<AllocatorStats> stats = gpu.device->allocator()->GetStats();
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->bytes_in_use, 4096);  // 4000 bytes in 256-byte units
  EXPECT_GE(stats->bytes_reserved, 4096);
  EXPECT_EQ(gpu.device->allocator_stats().bytes_in_use, 4096);
  EXPECT_FALSE(HostAllocator()->GetStats().has_value());
}

TEST(GpuDeviceTest, GrowsOnDemandOrTakesTheLimitAtOnce) {
  FakeGpuOptions fake;
  fake.total_memory = int64_t{8} << 30;
  {
    Gpu growing(fake);
    Tensor t = OnDevice(*growing.device, TensorShape({1024}));
    EXPECT_LT(growing.platform->device_bytes_in_use(), int64_t{64} << 20);
  }
  GpuDeviceOptions all;
  all.allow_growth = false;
  all.memory_limit = int64_t{1} << 30;
  Gpu whole(fake, all);
  Tensor t = OnDevice(*whole.device, TensorShape({1024}));
  EXPECT_EQ(whole.platform->device_bytes_in_use(), int64_t{1} << 30);
}

TEST(GpuDeviceTest, OutOfMemoryIsAnErrorNotACrash) {
  FakeGpuOptions fake;
  fake.total_memory = int64_t{64} << 20;
  GpuDeviceOptions options;
  options.memory_limit = int64_t{32} << 20;
  Gpu gpu(fake, options);
  absl::StatusOr<Tensor> big =
      Tensor::Allocate(gpu.device->allocator(), DT_FLOAT, TensorShape({int64_t{16} << 20}),
                       TensorBuffer::Init::kUninitialized);
  ASSERT_FALSE(big.ok());
  // The error names the allocator, the bytes asked and what is left.
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("GPU_0_bfc"), std::string::npos) << big.status();
  EXPECT_NE(big.status().message().find("(67108864 bytes)"), std::string::npos) << big.status();
  EXPECT_NE(big.status().message().find("of a 33554432 limit"), std::string::npos) << big.status();
  Tensor fits = OnDevice(*gpu.device, TensorShape({int64_t{1} << 20}));
  EXPECT_TRUE(fits.IsInitialized());
}

TEST(GpuDeviceTest, CopiesRoundTripThroughDeviceMemory) {
  Gpu gpu;
  const Tensor host = Iota(5000, 3);
  Tensor d1 = OnDevice(*gpu.device, host.shape());
  Tensor d2 = OnDevice(*gpu.device, host.shape());
  Tensor back(DT_FLOAT, host.shape());
  ASSERT_TRUE(WaitFor([&](StatusCallback cb) { gpu.ctx()->CopyCpuTensorToDevice(host, &d1, cb); })
                  .ok());
  ASSERT_TRUE(WaitFor([&](StatusCallback cb) { gpu.ctx()->CopyTensorInSameDevice(d1, &d2, cb); })
                  .ok());
  ASSERT_TRUE(WaitFor([&](StatusCallback cb) { gpu.ctx()->CopyDeviceTensorToCpu(d2, &back, cb); })
                  .ok());
  EXPECT_EQ(std::memcmp(back.raw_data(), host.raw_data(), host.TotalBytes()), 0);
  EXPECT_EQ(gpu.platform->host_to_device_copies(), 1);
  EXPECT_EQ(gpu.platform->device_to_device_copies(), 1);
  EXPECT_EQ(gpu.platform->device_to_host_copies(), 1);
  // The pageable source went through pinned memory, so the copy never held
  // the calling thread.
  EXPECT_EQ(gpu.platform->host_to_device_copies_from_pinned(), 1);

  // A copy into a tensor of another size is refused before it is queued.
  Tensor small(DT_FLOAT, TensorShape({3}));
  const absl::Status s =
      WaitFor([&](StatusCallback cb) { gpu.ctx()->CopyDeviceTensorToCpu(d2, &small, cb); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(gpu.platform->device_to_host_copies(), 1);
}

// A copy out of the device waits for the kernels queued before it: here a
// "kernel" on the compute stream that writes the tensor, held until the
// copy has been asked for.
TEST(GpuDeviceTest, CopiesWaitForTheComputeStream) {
  Gpu gpu;
  Tensor d = OnDevice(*gpu.device, TensorShape({64}));
  absl::Notification release;
  float* device_values = static_cast<float*>(d.raw_data());
  // The fake's native stream is the stream object itself.
  auto* stream = static_cast<GpuStream*>(gpu.ctx()->compute_stream());
  FakeGpuPlatform::Enqueue(stream, [&] {
    release.WaitForNotification();
    for (int i = 0; i < 64; ++i) device_values[i] = 7.0f + i;
    return absl::OkStatus();
  });
  Tensor host(DT_FLOAT, TensorShape({64}));
  absl::Notification copied;
  absl::Status status;
  gpu.ctx()->CopyDeviceTensorToCpu(d, &host, [&](const absl::Status& s) {
    status = s;
    copied.Notify();
  });
  // The copy cannot have run: the kernel it waits for is held.
  EXPECT_FALSE(copied.HasBeenNotified());
  release.Notify();
  copied.WaitForNotification();
  ASSERT_TRUE(status.ok()) << status;
  for (int i = 0; i < 64; ++i) ASSERT_EQ(host.flat<float>()[i], 7.0f + i) << i;

  // ThenExecute runs after the work queued so far.
  bool ran = false;
  FakeGpuPlatform::Enqueue(stream, [&] {
    ran = true;
    return absl::OkStatus();
  });
  ASSERT_TRUE(WaitFor([&](StatusCallback cb) { gpu.ctx()->ThenExecute(cb); }).ok());
  EXPECT_TRUE(ran);
}

TEST(GpuDeviceTest, AFailedCopyReachesItsCallbackNamingTheDevice) {
  Gpu gpu;
  Tensor d = OnDevice(*gpu.device, TensorShape({16}));
  gpu.platform->FailNextCopy(absl::InternalError("an illegal address was encountered"));
  const absl::Status s = WaitFor(
      [&](StatusCallback cb) { gpu.ctx()->CopyCpuTensorToDevice(Iota(16), &d, cb); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_NE(s.message().find("device:GPU:0"), std::string::npos) << s;
  EXPECT_NE(s.message().find("illegal address"), std::string::npos) << s;

  // A host pointer where device memory belongs fails the copy, not the
  // process.
  Tensor not_device(DT_FLOAT, TensorShape({16}));
  Tensor host(DT_FLOAT, TensorShape({16}));
  const absl::Status bad = WaitFor(
      [&](StatusCallback cb) { gpu.ctx()->CopyDeviceTensorToCpu(not_device, &host, cb); });
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("not device memory"), std::string::npos) << bad;
}

TEST(GpuDeviceTest, TensorsOutliveTheirDevice) {
  auto platform = std::make_shared<FakeGpuPlatform>();
  Tensor kept;
  {
    auto device = NewGpuDevice(kPrefix, 0, platform, {});
    ASSERT_TRUE(device.ok());
    kept = OnDevice(**device, TensorShape({256}));
  }
  EXPECT_TRUE(platform->IsDeviceMemory(kept.raw_data()));
  kept = Tensor();
  EXPECT_EQ(platform->device_bytes_in_use(), 0);  // the regions went back with the last tensor
}

// A kernel for GPUs whose output is a HostMemory argument: as TensorFlow's
// Shape on GPU, it writes the dims from the host.
class HostShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({ctx->input(0).dims()}), &out));
    for (int i = 0; i < ctx->input(0).dims(); ++i) {
      out->flat<int32_t>()[i] = static_cast<int32_t>(ctx->input(0).dim_size(i));
    }
  }
};
REGISTER_KERNEL(KernelDefBuilder("Shape").Device(kDeviceGpu).HostMemory("output"), HostShapeOp);

TEST(GpuDeviceTest, HostMemoryOutputsComeFromPinnedHostMemory) {
  Gpu gpu;
  NodeDef node;
  node.set_name("shape");
  node.set_op("Shape");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  (*node.mutable_attr())["out_type"].set_type(DT_INT32);
  absl::StatusOr<const OpDef*> op_def = OpRegistry::Global()->LookUp("Shape");
  ASSERT_TRUE(op_def.ok()) << op_def.status();
  auto kernel = KernelRegistry::Global()->CreateKernel(gpu.device.get(), node, *op_def,
                                                       {DT_FLOAT}, {DT_INT32});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE((*kernel)->output_on_host(0));

  Tensor input = OnDevice(*gpu.device, TensorShape({2, 3, 5}));
  OpKernelContext::Params params;
  params.device = gpu.device.get();
  params.op_kernel = kernel->get();
  params.inputs = &input;
  params.num_inputs = 1;
  OpKernelContext ctx(&params);
  (*kernel)->Compute(&ctx);
  ASSERT_TRUE(ctx.status().ok()) << ctx.status();
  const Tensor& out = (*ctx.mutable_outputs())[0];
  EXPECT_TRUE(gpu.platform->IsPinnedHost(out.raw_data()));
  EXPECT_EQ(out.flat<int32_t>()[2], 5);
}

// A local rendezvous joins host and device memory: CPU -> GPU -> CPU, the
// value copied on the device's streams each way.
TEST(GpuDeviceTest, ALocalRendezvousCopiesBetweenMemorySpaces) {
  Gpu gpu;
  using Args = Rendezvous::Args;
  const Args on_client;  // host memory
  Args on_gpu;
  on_gpu.device = gpu.device.get();
  const Tensor value = Iota(300, 1);
  for (bool send_first : {true, false}) {
    auto r = NewLocalRendezvous();
    Tensor on_device;
    absl::Notification got;
    auto recv = [&] {
      r->RecvAsync("to_gpu", on_gpu,
                   [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                     EXPECT_TRUE(s.ok()) << s;
                     on_device = v;
                     got.Notify();
                   });
    };
    if (!send_first) recv();
    ASSERT_TRUE(r->Send("to_gpu", on_client, value, false).ok());
    if (send_first) recv();
    got.WaitForNotification();
    ASSERT_TRUE(gpu.platform->IsDeviceMemory(on_device.raw_data(), on_device.TotalBytes()));

    absl::Notification back;
    Tensor on_host;
    ASSERT_TRUE(r->Send("to_host", on_gpu, on_device, false).ok());
    r->RecvAsync("to_host", on_client,
                 [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                   EXPECT_TRUE(s.ok()) << s;
                   on_host = v;
                   back.Notify();
                 });
    back.WaitForNotification();
    EXPECT_FALSE(gpu.platform->IsDeviceMemory(on_host.raw_data()));
    EXPECT_EQ(std::memcmp(on_host.raw_data(), value.raw_data(), value.TotalBytes()), 0);
  }
  EXPECT_EQ(gpu.platform->host_to_device_copies(), 2);
  EXPECT_EQ(gpu.platform->device_to_host_copies(), 2);
}

TEST(GpuDeviceTest, TwoGpusExchangeThroughHostMemory) {
  FakeGpuOptions second;
  second.ordinal = 1;
  Gpu a, b(second);
  using Args = Rendezvous::Args;
  Args on_a, on_b;
  on_a.device = a.device.get();
  on_b.device = b.device.get();
  const Tensor value = Iota(100, 9);
  Tensor d = OnDevice(*a.device, value.shape());
  ASSERT_TRUE(
      WaitFor([&](StatusCallback cb) { a.ctx()->CopyCpuTensorToDevice(value, &d, cb); }).ok());
  auto r = NewLocalRendezvous();
  ASSERT_TRUE(r->Send("k", on_a, d, false).ok());
  absl::Notification got;
  Tensor on_device_b;
  r->RecvAsync("k", on_b, [&](const absl::Status& s, const Args&, const Args&, const Tensor& v,
                              bool) {
    EXPECT_TRUE(s.ok()) << s;
    on_device_b = v;
    got.Notify();
  });
  got.WaitForNotification();
  ASSERT_TRUE(b.platform->IsDeviceMemory(on_device_b.raw_data(), on_device_b.TotalBytes()));
  Tensor host(DT_FLOAT, value.shape());
  ASSERT_TRUE(
      WaitFor([&](StatusCallback cb) { b.ctx()->CopyDeviceTensorToCpu(on_device_b, &host, cb); })
          .ok());
  EXPECT_EQ(std::memcmp(host.raw_data(), value.raw_data(), value.TotalBytes()), 0);
}

}  // namespace
}  // namespace graphrun
