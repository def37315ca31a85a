// gpu_platform.h for builds without the CUDA toolkit.
#include "runtime/gpu/gpu_platform.h"

namespace graphrun {

absl::StatusOr<std::unique_ptr<GpuPlatform>> NewCudaPlatform(int) {
  return absl::UnavailableError("graphrun was built without CUDA (no toolkit at build time)");
}

}  // namespace graphrun
