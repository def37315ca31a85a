// GpuDevice: one GPU as a Device, over a GpuPlatform (CUDA, or a fake in
// tests).
//
// - Memory: tensors come from a BFC allocator over the GPU's memory
//   (bfc_allocator.h), "GPU_<i>_bfc"; HostMemory outputs and staging
//   buffers from a BFC allocator over pinned host memory, "gpu_host_bfc".
//   Both keep statistics (Allocator::GetStats) and outlive the device while
//   tensors they gave out are alive (fetched outputs).
// - Streams: kernels queue their work on the compute stream; copies into,
//   out of and within the GPU run on three streams of their own, each
//   waiting for an event recorded on the compute stream when the copy was
//   asked, and report completion through the platform's events (a
//   DeviceContext, kernels/device_context.h), never by blocking a thread.
#ifndef GRAPHRUN_RUNTIME_GPU_GPU_DEVICE_H_
#define GRAPHRUN_RUNTIME_GPU_GPU_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device.h"
#include "runtime/gpu/gpu_platform.h"

namespace graphrun {

struct GpuDeviceOptions {
  // Bytes the device's tensors may take; 0: from memory_fraction.
  int64_t memory_limit = 0;
  // Share of the GPU's total memory (TensorFlow's
  // per_process_gpu_memory_fraction); 0: the memory free when the device
  // is made, less a reserve for the driver (the larger of 256 MiB and 5%
  // of the total).
  double memory_fraction = 0;
  // Take memory from the GPU as tensors need it (graphrun's default, as
  // TensorFlow's allow_growth), or the whole limit on the first request
  // (TensorFlow's default).
  bool allow_growth = true;
};

// /device:GPU:<index> under `name_prefix` ("/job:localhost/replica:0/task:0").
// InvalidArgument for a memory_fraction outside [0, 1] or a negative limit;
// the platform's error when it cannot make streams or say its free memory.
absl::StatusOr<std::unique_ptr<Device>> NewGpuDevice(const std::string& name_prefix, int index,
                                                     std::shared_ptr<GpuPlatform> platform,
                                                     const GpuDeviceOptions& options);

// What SessionOptions::make_gpu_devices wants: /device:GPU:i on
// platforms[i], each with `options`.
std::function<absl::StatusOr<std::vector<std::unique_ptr<Device>>>(const std::string& prefix)>
GpuDevicesOn(std::vector<std::shared_ptr<GpuPlatform>> platforms, GpuDeviceOptions options = {});

// The bytes NewGpuDevice gives a GPU with `total` bytes of which `free` are
// free now.
int64_t GpuMemoryLimit(const GpuDeviceOptions& options, int64_t total, int64_t free);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_GPU_DEVICE_H_
