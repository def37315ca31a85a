#include "runtime/gpu/gpu_info_source.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/gpu/cuda_probe.h"

namespace graphrun {
namespace {

using placer::GpuStatus;

// NVML first; the CUDA runtime only when NVML is Unavailable.
class FallbackGpuInfoSource : public placer::GpuInfoSource {
 public:
  absl::StatusOr<std::vector<GpuStatus>> Query() override {
    absl::StatusOr<std::vector<GpuStatus>> gpus = nvml_.Query();
    if (gpus.ok() || !absl::IsUnavailable(gpus.status())) return gpus;
    absl::StatusOr<std::vector<GpuStatus>> fallback = cuda_.Query();
    if (fallback.ok() || !absl::IsUnavailable(fallback.status())) {
      return fallback;
    }
    return absl::UnavailableError(absl::StrCat(gpus.status().message(), "; ",
                                               fallback.status().message()));
  }

 private:
  placer::NvmlGpuInfoSource nvml_;
  CudaRuntimeGpuInfoSource cuda_;
};

}  // namespace

absl::StatusOr<std::vector<GpuStatus>> CudaRuntimeGpuInfoSource::Query() {
  GpuInventory inventory = QueryGpus();
  if (inventory.gpus.empty() && !inventory.why_none.empty()) {
    return absl::UnavailableError(absl::StrCat("CUDA runtime: ", inventory.why_none));
  }
  // cudart numbers the GPUs CUDA_VISIBLE_DEVICES leaves visible 0, 1, ...,
  // in its order; the first entries name them.
  std::vector<std::string> entries;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    entries = absl::StrSplit(visible, ',');
  }
  std::vector<GpuStatus> gpus;
  for (const GpuInfo& info : inventory.gpus) {
    GpuStatus gpu;
    gpu.index = info.ordinal;
    gpu.name = info.name;
    gpu.total_memory = info.total_memory;
    gpu.free_memory = info.free_memory;
    if (info.ordinal >= 0 && info.ordinal < static_cast<int>(entries.size())) {
      absl::string_view entry = absl::StripAsciiWhitespace(entries[info.ordinal]);
      int index = 0;
      if (absl::SimpleAtoi(entry, &index)) {
        gpu.index = index;
      } else if (absl::StartsWithIgnoreCase(entry, "GPU-")) {
        gpu.uuid = std::string(entry);
      }
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::unique_ptr<placer::GpuInfoSource> DefaultGpuInfoSource() {
  return std::make_unique<FallbackGpuInfoSource>();
}

}  // namespace graphrun
