// GpuPlatform: what the GPU device needs of a GPU runtime, one object per
// GPU: device memory, pinned host memory, streams and events.
//
// The CUDA runtime implements it (NewCudaPlatform, gpu_platform_cuda.cu);
// FakeGpuPlatform (testing/fake_gpu_platform.h) implements it over host
// memory and one thread per stream, so that the device, its allocators and
// the ordering of its copies are tested on machines without a GPU.
//
// Work queued on one stream runs in order; work on different streams runs
// in any order unless an event joins them (Record on one, Wait on the
// other). Queueing returns the error of queueing; an error of the work
// itself reaches the next ThenCall or Synchronize of that stream. Streams
// and events must not outlive their platform. Thread-safe.
#ifndef GRAPHRUN_RUNTIME_GPU_GPU_PLATFORM_H_
#define GRAPHRUN_RUNTIME_GPU_GPU_PLATFORM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphrun {

// A point in a stream's queue.
class GpuEvent {
 public:
  virtual ~GpuEvent() = default;
};

class GpuStream {
 public:
  virtual ~GpuStream() = default;
  // cudaStream_t on CUDA; what kernels are launched on.
  virtual void* native() const = 0;

  virtual absl::Status MemcpyHostToDevice(void* device_dst, const void* host_src,
                                          size_t bytes) = 0;
  virtual absl::Status MemcpyDeviceToHost(void* host_dst, const void* device_src,
                                          size_t bytes) = 0;
  virtual absl::Status MemcpyDeviceToDevice(void* device_dst, const void* device_src,
                                            size_t bytes) = 0;
  // Marks the point after the work queued so far.
  virtual absl::Status Record(GpuEvent* event) = 0;
  // Work queued on this stream from now on waits until `event`'s point (on
  // whichever stream recorded it) is passed.
  virtual absl::Status Wait(GpuEvent* event) = 0;
  // Calls `fn` once the work queued so far is done, with the first error
  // the stream met (OK when none), on a thread of the platform's. `fn` may
  // queue more work.
  virtual absl::Status ThenCall(std::function<void(const absl::Status&)> fn) = 0;
  // Blocks until the work queued so far is done; the stream's first error.
  virtual absl::Status Synchronize() = 0;
};

class GpuPlatform {
 public:
  virtual ~GpuPlatform() = default;
  virtual int ordinal() const = 0;
  // "device: 0, name: NVIDIA H200, pci bus id: 0000:19:00.0, compute
  // capability: 9.0", as TensorFlow's device mapping prints it.
  virtual std::string description() const = 0;
  virtual int64_t total_memory() const = 0;
  // Memory free on the GPU now (other processes' use counted).
  virtual absl::StatusOr<int64_t> free_memory() const = 0;
  // nullptr when the GPU has no such memory left.
  virtual void* AllocateDevice(size_t bytes) = 0;
  virtual void FreeDevice(void* ptr) = 0;
  // Page-locked host memory the GPU copies from and to without staging;
  // nullptr when refused.
  virtual void* AllocatePinnedHost(size_t bytes) = 0;
  virtual void FreePinnedHost(void* ptr) = 0;
  virtual absl::StatusOr<std::unique_ptr<GpuStream>> NewStream() = 0;
  virtual absl::StatusOr<std::unique_ptr<GpuEvent>> NewEvent() = 0;
};

// The CUDA runtime's GPU `ordinal` (of those CUDA_VISIBLE_DEVICES leaves);
// Unavailable without a driver, a GPU or a build with CUDA, saying which.
absl::StatusOr<std::unique_ptr<GpuPlatform>> NewCudaPlatform(int ordinal);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_GPU_PLATFORM_H_
