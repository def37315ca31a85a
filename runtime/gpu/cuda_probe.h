// What GPUs this process can use, asked of the CUDA runtime.
//
// With CUDA compiled in (the toolkit was found at build time), QueryGpus()
// asks cudart; without a driver or GPU it returns an empty list and says why.
// Built without CUDA, it always reports "built without CUDA". Thread-safe.
// The GPU device and allocator (runtime/) build on this.
#ifndef GRAPHRUN_RUNTIME_GPU_CUDA_PROBE_H_
#define GRAPHRUN_RUNTIME_GPU_CUDA_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace graphrun {

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  int64_t total_memory = 0;
  int64_t free_memory = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
};

struct GpuInventory {
  bool cuda_compiled = false;
  std::vector<GpuInfo> gpus;
  // Why `gpus` is empty ("no CUDA driver: ..."), or "" when GPUs were found.
  std::string why_none;
};

GpuInventory QueryGpus();

// Runs a CUDA kernel that writes `value` into `out.size()` floats on GPU
// `ordinal` and copies them back: the smallest end-to-end check that kernels
// compiled into this build run on the GPU. Unavailable without a GPU.
absl::Status FillOnGpu(int ordinal, float value, absl::Span<float> out);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_CUDA_PROBE_H_
