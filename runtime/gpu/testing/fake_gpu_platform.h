// FakeGpuPlatform: a GpuPlatform over host memory, for testing the GPU
// device's logic where no GPU is.
//
// "Device memory" is pages of its own (mmap), poisoned with all bits set,
// that the host cannot read or write: they are PROT_NONE except while work
// queued on a stream (a kernel or a copy) runs, so host code that reads a
// device tensor (a missing HostMemory, a host memcpy) faults as it would on
// a GPU, whenever no queued work is running. The fake knows which blocks
// are device memory and a copy whose device side is not (or whose host side
// is) fails like a bad pointer on a GPU would; a freed block is unmapped
// once every stream got past the work queued before (as cudaFree waits for
// the GPU). Each stream is a thread that runs its queue in
// order; events join streams as on a GPU. Tests can queue
// their own work on a stream (as a kernel would be), block it until they
// release it, and make the next copy fail, so ordering and errors are
// checked without sleeps or timing. Thread-safe.
#ifndef GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_GPU_PLATFORM_H_
#define GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_GPU_PLATFORM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/gpu/gpu_platform.h"

namespace graphrun {

class FakeGpuStream;

struct FakeGpuOptions {
  int ordinal = 0;
  std::string name = "Fake GPU";
  int64_t total_memory = int64_t{1} << 30;
  // Memory other processes hold (free_memory() = total - this - ours).
  int64_t used_by_others = 0;
};

class FakeGpuPlatform : public GpuPlatform {
 public:
  explicit FakeGpuPlatform(FakeGpuOptions options = {});
  ~FakeGpuPlatform() override;

  int ordinal() const override { return options_.ordinal; }
  std::string description() const override;
  int64_t total_memory() const override { return options_.total_memory; }
  absl::StatusOr<int64_t> free_memory() const override;
  void* AllocateDevice(size_t bytes) override;
  void FreeDevice(void* ptr) override;
  void* AllocatePinnedHost(size_t bytes) override;
  void FreePinnedHost(void* ptr) override;
  absl::StatusOr<std::unique_ptr<GpuStream>> NewStream() override;
  absl::StatusOr<std::unique_ptr<GpuEvent>> NewEvent() override;

  // ---- for tests
  // True when [ptr, ptr + bytes) lies in one live device block.
  bool IsDeviceMemory(const void* ptr, size_t bytes = 1) const;
  bool IsPinnedHost(const void* ptr) const;
  int64_t device_bytes_in_use() const;
  int64_t pinned_bytes_in_use() const;
  // Copies that ran, by kind.
  int64_t host_to_device_copies() const { return h2d_.load(); }
  int64_t device_to_host_copies() const { return d2h_.load(); }
  int64_t device_to_device_copies() const { return d2d_.load(); }
  // Host-to-device copies whose source was pinned host memory.
  int64_t host_to_device_copies_from_pinned() const { return h2d_pinned_.load(); }
  // The next copy to run (on any stream) fails with `status` instead.
  void FailNextCopy(absl::Status status);
  // Queues `work` on `stream` (a stream of this platform) as a kernel
  // launch would be: it runs in order with the stream's other work, and an
  // error it returns becomes the stream's.
  static void Enqueue(GpuStream* stream, std::function<absl::Status()> work);
  // The platform `stream` (a stream of a FakeGpuPlatform) belongs to.
  static FakeGpuPlatform* PlatformOf(GpuStream* stream);

 private:
  friend class FakeGpuStream;
  // An error from a memcpy's pointers, else OK (called on the stream thread).
  absl::Status CheckCopy(const char* kind, const void* dst, bool dst_device, const void* src,
                         bool src_device, size_t bytes) const;
  absl::Status TakeInjectedFailure();
  // Queued work starts or ends: the device blocks are readable and writable
  // while any runs (BeginDeviceWork .. EndDeviceWork), PROT_NONE otherwise.
  void BeginDeviceWork();
  void EndDeviceWork();

  const FakeGpuOptions options_;
  mutable absl::Mutex mu_;
  std::map<uintptr_t, size_t> device_blocks_ ABSL_GUARDED_BY(mu_);
  // Freed blocks that work queued before the free may still touch.
  std::map<uintptr_t, size_t> retiring_blocks_ ABSL_GUARDED_BY(mu_);
  std::map<uintptr_t, size_t> pinned_blocks_ ABSL_GUARDED_BY(mu_);
  // Live streams: a freed device block waits for them (FreeDevice).
  std::set<FakeGpuStream*> streams_ ABSL_GUARDED_BY(mu_);
  int64_t device_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t pinned_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  int running_work_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status injected_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> h2d_{0}, d2h_{0}, d2d_{0}, h2d_pinned_{0};
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_GPU_PLATFORM_H_
