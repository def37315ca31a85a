#include "bench/gpu_bench_util.h"

#include <memory>
#include <utility>

#include "runtime/gpu/cuda_probe.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_platform.h"

namespace graphrun {
namespace bench {

Device* Gpu(std::string* why) {
  static std::string* reason = new std::string();
  static Device* device = []() -> Device* {
    const GpuInventory inventory = QueryGpus();
    if (inventory.gpus.empty()) {
      *reason = "no GPU visible: " + inventory.why_none;
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(0);
    if (!platform.ok()) {
      *reason = std::string(platform.status().message());
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<Device>> d =
        NewGpuDevice("/job:localhost/replica:0/task:0", 0,
                     std::shared_ptr<GpuPlatform>(*std::move(platform)), {});
    if (!d.ok()) {
      *reason = std::string(d.status().message());
      return nullptr;
    }
    return d->release();
  }();
  *why = *reason;
  return device;
}

}  // namespace bench
}  // namespace graphrun
