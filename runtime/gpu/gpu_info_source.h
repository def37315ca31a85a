// GpuInfoSources that need the CUDA runtime, for the placer's GPU choice
// (placer/gpu_select.h), which itself knows only the interface and NVML.
#ifndef GRAPHRUN_RUNTIME_GPU_GPU_INFO_SOURCE_H_
#define GRAPHRUN_RUNTIME_GPU_GPU_INFO_SOURCE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "placer/gpu_select.h"

namespace graphrun {

// Asks the CUDA runtime (cuda_probe.h); utilization, process counts and
// UUIDs are unknown. It sees only the GPUs CUDA_VISIBLE_DEVICES leaves
// visible and maps each back to the entry that named it: an index entry
// gives the physical index, a "GPU-..." entry becomes the uuid and the CUDA
// ordinal stands in for the index. Initializes CUDA in this process (a
// context on every visible GPU), so it is only the fallback to NVML.
class CudaRuntimeGpuInfoSource : public placer::GpuInfoSource {
 public:
  absl::StatusOr<std::vector<placer::GpuStatus>> Query() override;
};

// NVML when it initializes, else the CUDA runtime. Never null.
std::unique_ptr<placer::GpuInfoSource> DefaultGpuInfoSource();

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_GPU_INFO_SOURCE_H_
