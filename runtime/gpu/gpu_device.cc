#include "runtime/gpu/gpu_device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/device_context.h"
#include "runtime/gpu/bfc_allocator.h"

namespace graphrun {
namespace {

// Pinned host memory a device may hold for HostMemory tensors and staging,
// as TensorFlow's gpu_host_bfc.
constexpr int64_t kPinnedHostLimit = int64_t{64} << 30;

// Regions of a BFC allocator, from the GPU's memory or its pinned host
// memory.
class PlatformMemory : public SubAllocator {
 public:
  PlatformMemory(std::shared_ptr<GpuPlatform> platform, bool pinned_host)
      : platform_(std::move(platform)), pinned_host_(pinned_host) {}
  void* Alloc(size_t alignment, size_t bytes) override {
    // Both cudaMalloc and cudaHostAlloc align to at least 256 bytes, all a
    // BFC allocator asks.
    if (alignment > 256) return nullptr;
    return pinned_host_ ? platform_->AllocatePinnedHost(bytes) : platform_->AllocateDevice(bytes);
  }
  void Free(void* ptr, size_t) override {
    if (pinned_host_) {
      platform_->FreePinnedHost(ptr);
    } else {
      platform_->FreeDevice(ptr);
    }
  }

 private:
  const std::shared_ptr<GpuPlatform> platform_;
  const bool pinned_host_;
};

// A BFC allocator that deletes itself once its device has released it and
// the last buffer it gave out is freed: fetched outputs may outlive their
// device. Holds the platform, so its regions can be given back then.
class SharedBfc : public Allocator {
 public:
  SharedBfc(std::shared_ptr<GpuPlatform> platform, bool pinned_host, BfcAllocatorOptions options)
      : bfc_(std::make_unique<PlatformMemory>(std::move(platform), pinned_host),
             std::move(options)),
        pinned_host_(pinned_host) {}

  std::string Name() const override { return bfc_.Name(); }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    void* p = bfc_.AllocateRaw(alignment, num_bytes);
    if (p != nullptr) refs_.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
  void DeallocateRaw(void* ptr, size_t num_bytes) override {
    bfc_.DeallocateRaw(ptr, num_bytes);
    Unref();
  }
  std::optional<AllocatorStats> GetStats() const override { return bfc_.GetStats(); }
  bool ResetPeak() override { return bfc_.ResetPeak(); }
  void BeginStep() override { bfc_.BeginStep(); }
  void EndStep() override { bfc_.EndStep(); }
  bool IsHostMemory() const override { return pinned_host_; }
  // The device's reference.
  void Release() { Unref(); }

 private:
  ~SharedBfc() override = default;
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  BfcAllocator bfc_;
  const bool pinned_host_;
  std::atomic<int64_t> refs_{1};
};

// `s` naming the device and what failed.
absl::Status Named(const absl::Status& s, absl::string_view device, absl::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(device, ": ", what, ": ", s.message()));
}

// Completions may run after the device is gone (a platform's callback
// thread outlives it): they hold copies of what they need, never `this`.
class GpuDeviceContext : public DeviceContext {
 public:
  GpuDeviceContext(std::string device, GpuPlatform* platform,
                   std::unique_ptr<GpuStream> compute, std::unique_ptr<GpuStream> h2d,
                   std::unique_ptr<GpuStream> d2h, std::unique_ptr<GpuStream> d2d)
      : device_(std::move(device)),
        platform_(platform),
        compute_(std::move(compute)),
        h2d_(std::move(h2d)),
        d2h_(std::move(d2h)),
        d2d_(std::move(d2d)) {}

  void* compute_stream() const override { return compute_->native(); }

  // A source in pageable memory is first copied into pinned memory here:
  // the GPU's copy from pageable memory would hold this thread until the
  // copy stream (which waits for the compute stream) got to it.
  void CopyCpuTensorToDevice(const Tensor& cpu, Tensor* device_tensor,
                             StatusCallback done) override {
    if (pinned_ != nullptr && cpu.buffer_allocator() != pinned_ && cpu.TotalBytes() > 0 &&
        cpu.TotalBytes() == device_tensor->TotalBytes()) {
      absl::StatusOr<Tensor> staging = Tensor::Allocate(pinned_, cpu.dtype(), cpu.shape(),
                                                        TensorBuffer::Init::kUninitialized);
      if (staging.ok()) {
        std::memcpy(staging->raw_data(), cpu.raw_data(), cpu.TotalBytes());
        Copy(h2d_.get(), "host to device", *staging, device_tensor, std::move(done));
        return;
      }
      // No pinned memory left: the GPU copies from pageable memory itself.
    }
    Copy(h2d_.get(), "host to device", cpu, device_tensor, std::move(done));
  }
  // The device's pinned host allocator, once it is made.
  void set_pinned(Allocator* pinned) { pinned_ = pinned; }
  void CopyDeviceTensorToCpu(const Tensor& device_tensor, Tensor* cpu,
                             StatusCallback done) override {
    Copy(d2h_.get(), "device to host", device_tensor, cpu, std::move(done));
  }
  void CopyTensorInSameDevice(const Tensor& src, Tensor* dst, StatusCallback done) override {
    Copy(d2d_.get(), "device to device", src, dst, std::move(done));
  }
  void ThenExecute(StatusCallback done) override {
    absl::Status s = compute_->ThenCall([device = device_, done](const absl::Status& status) {
      done(Named(status, device, "queued work"));
    });
    if (!s.ok()) done(Named(s, device_, "queued work"));
  }

  absl::Status Sync() {
    absl::Status first;
    for (GpuStream* s : {compute_.get(), h2d_.get(), d2h_.get(), d2d_.get()}) {
      absl::Status status = s->Synchronize();
      if (first.ok() && !status.ok()) first = Named(status, device_, "synchronizing");
    }
    return first;
  }

 private:
  // Copies on `stream` once the compute stream's work queued so far is done
  // (the source may be a kernel's output; the destination's memory may have
  // been a buffer kernels still read); `done` runs when the bytes are there.
  void Copy(GpuStream* stream, const char* kind, const Tensor& src, Tensor* dst,
            StatusCallback done) {
    const size_t bytes = src.TotalBytes();
    if (dst->TotalBytes() != bytes) {
      done(absl::InvalidArgumentError(absl::StrCat(
          device_, ": ", kind, " copy of ", bytes, " bytes into a tensor of ",
          dst->TotalBytes())));
      return;
    }
    if (bytes == 0) {
      done(absl::OkStatus());
      return;
    }
    absl::StatusOr<std::unique_ptr<GpuEvent>> made = platform_->NewEvent();
    if (!made.ok()) {
      done(Named(made.status(), device_, kind));
      return;
    }
    std::shared_ptr<GpuEvent> event = *std::move(made);
    absl::Status s = compute_->Record(event.get());
    if (s.ok()) s = stream->Wait(event.get());
    if (s.ok()) {
      void* to = dst->raw_data();
      const void* from = src.raw_data();
      if (stream == h2d_.get()) {
        s = stream->MemcpyHostToDevice(to, from, bytes);
      } else if (stream == d2h_.get()) {
        s = stream->MemcpyDeviceToHost(to, from, bytes);
      } else {
        s = stream->MemcpyDeviceToDevice(to, from, bytes);
      }
    }
    if (s.ok()) {
      // The source and destination stay alive until the copy is done.
      s = stream->ThenCall([device = device_, kind, event, keep_src = src, keep_dst = *dst,
                            done](const absl::Status& status) {
        done(Named(status, device, absl::StrCat(kind, " copy")));
      });
    }
    if (!s.ok()) done(Named(s, device_, absl::StrCat(kind, " copy")));
  }

  const std::string device_;
  GpuPlatform* const platform_;
  const std::unique_ptr<GpuStream> compute_, h2d_, d2h_, d2d_;
  Allocator* pinned_ = nullptr;
};

class GpuDevice : public Device {
 public:
  GpuDevice(std::string name, std::shared_ptr<GpuPlatform> platform, int64_t memory_limit,
            SharedBfc* device_allocator, SharedBfc* host_allocator,
            std::unique_ptr<GpuDeviceContext> context)
      : name_(std::move(name)),
        type_(kDeviceGpu),
        platform_(std::move(platform)),
        memory_limit_(memory_limit),
        device_allocator_(device_allocator),
        host_allocator_(host_allocator),
        context_(std::move(context)) {}

  ~GpuDevice() override {
    context_->Sync().IgnoreError();
    context_.reset();
    device_allocator_->Release();
    host_allocator_->Release();
  }

  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* allocator() const override { return device_allocator_; }
  Allocator* GetAllocator(const AllocatorAttributes& attr) const override {
    return attr.on_host ? static_cast<Allocator*>(host_allocator_)
                        : static_cast<Allocator*>(device_allocator_);
  }
  DeviceContext* device_context() const override { return context_.get(); }
  absl::Status Sync() override { return context_->Sync(); }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return nullptr; }
  int intra_op_threads() const override { return 1; }
  std::string physical_description() const override { return platform_->description(); }
  int64_t memory_limit() const override { return memory_limit_; }

 private:
  const std::string name_;
  const std::string type_;
  const std::shared_ptr<GpuPlatform> platform_;
  const int64_t memory_limit_;
  SharedBfc* const device_allocator_;
  SharedBfc* const host_allocator_;
  std::unique_ptr<GpuDeviceContext> context_;
};

}  // namespace

int64_t GpuMemoryLimit(const GpuDeviceOptions& options, int64_t total, int64_t free) {
  if (options.memory_limit > 0) return std::min(options.memory_limit, total);
  if (options.memory_fraction > 0) {
    return static_cast<int64_t>(static_cast<double>(total) * options.memory_fraction);
  }
  const int64_t reserve = std::max<int64_t>(int64_t{256} << 20, total / 20);
  return std::max<int64_t>(free - reserve, free / 2);
}

absl::StatusOr<std::unique_ptr<Device>> NewGpuDevice(const std::string& name_prefix, int index,
                                                     std::shared_ptr<GpuPlatform> platform,
                                                     const GpuDeviceOptions& options) {
  const std::string name = absl::StrCat(name_prefix, "/device:GPU:", index);
  if (options.memory_fraction < 0 || options.memory_fraction > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": the memory fraction must be in [0, 1], not ", options.memory_fraction));
  }
  if (options.memory_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": a negative memory limit (", options.memory_limit, ")"));
  }
  absl::StatusOr<int64_t> free = platform->free_memory();
  if (!free.ok()) {
    return absl::Status(free.status().code(),
                        absl::StrCat(name, ": ", free.status().message()));
  }
  const int64_t limit = GpuMemoryLimit(options, platform->total_memory(), *free);
  std::unique_ptr<GpuStream> streams[4];
  for (auto& s : streams) {
    absl::StatusOr<std::unique_ptr<GpuStream>> made = platform->NewStream();
    if (!made.ok()) {
      return absl::Status(made.status().code(),
                          absl::StrCat(name, ": making a stream: ", made.status().message()));
    }
    s = *std::move(made);
  }
  auto context = std::make_unique<GpuDeviceContext>(
      name, platform.get(), std::move(streams[0]), std::move(streams[1]), std::move(streams[2]),
      std::move(streams[3]));

  BfcAllocatorOptions device_options;
  device_options.name = absl::StrCat("GPU_", index, "_bfc");
  device_options.memory_limit = static_cast<size_t>(std::max<int64_t>(limit, 0));
  device_options.allow_growth = options.allow_growth;
  BfcAllocatorOptions host_options;
  host_options.name = "gpu_host_bfc";
  host_options.memory_limit = static_cast<size_t>(kPinnedHostLimit);
  host_options.allow_growth = true;
  auto* device_allocator = new SharedBfc(platform, /*pinned_host=*/false, device_options);
  auto* host_allocator = new SharedBfc(platform, /*pinned_host=*/true, host_options);
  context->set_pinned(host_allocator);
  return std::unique_ptr<Device>(new GpuDevice(name, std::move(platform), limit,
                                               device_allocator, host_allocator,
                                               std::move(context)));
}

std::function<absl::StatusOr<std::vector<std::unique_ptr<Device>>>(const std::string& prefix)>
GpuDevicesOn(std::vector<std::shared_ptr<GpuPlatform>> platforms, GpuDeviceOptions options) {
  return [platforms = std::move(platforms), options](const std::string& prefix)
             -> absl::StatusOr<std::vector<std::unique_ptr<Device>>> {
    std::vector<std::unique_ptr<Device>> devices;
    for (size_t i = 0; i < platforms.size(); ++i) {
      GR_ASSIGN_OR_RETURN(std::unique_ptr<Device> d,
                          NewGpuDevice(prefix, static_cast<int>(i), platforms[i], options));
      devices.push_back(std::move(d));
    }
    return devices;
  };
}

}  // namespace graphrun
