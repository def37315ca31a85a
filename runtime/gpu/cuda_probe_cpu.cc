// cuda_probe.h for builds without the CUDA toolkit.
#include "runtime/gpu/cuda_probe.h"

namespace graphrun {

GpuInventory QueryGpus() {
  GpuInventory inv;
  inv.why_none = "graphrun was built without CUDA (no toolkit at build time)";
  return inv;
}

absl::Status FillOnGpu(int, float, absl::Span<float>) {
  return absl::UnavailableError("graphrun was built without CUDA");
}

}  // namespace graphrun
