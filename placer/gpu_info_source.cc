// The NVML GpuInfoSource (dlopen: building needs neither header nor library).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"
#include "placer/gpu_select.h"

namespace graphrun {
namespace placer {
namespace {

// The slice of nvml.h this file uses, declared here so that building needs
// neither the header nor the library.
using NvmlReturn = int;    // nvmlReturn_t
using NvmlDevice = void*;  // nvmlDevice_t
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;
constexpr unsigned int kNvmlStringSize = 96;  // NVML_DEVICE_*_V2_BUFFER_SIZE
struct NvmlMemory {
  unsigned long long total, free, used;  // NOLINT(runtime/int): NVML's types
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlProcessInfo {  // nvmlProcessInfo_t, as _v3 fills it
  unsigned int pid;
  unsigned long long used_gpu_memory;  // NOLINT(runtime/int)
  unsigned int gpu_instance_id, compute_instance_id;
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*get_count)(unsigned int*) = nullptr;
  NvmlReturn (*get_handle)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*get_name)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*get_uuid)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*get_memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*get_utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  // Optional: older drivers lack them.
  NvmlReturn (*get_processes)(NvmlDevice, unsigned int*,
                              NvmlProcessInfo*) = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;

  std::string Error(const char* call, NvmlReturn rc) const {
    return absl::StrCat(call, ": ",
                        error_string ? error_string(rc) : "NVML error", " (",
                        rc, ")");
  }
};

template <typename Fn>
bool Resolve(void* handle, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return *fn != nullptr;
}

absl::StatusOr<NvmlApi> ResolveNvml(void* handle) {
  NvmlApi api;
  Resolve(handle, "nvmlDeviceGetComputeRunningProcesses_v3",
          &api.get_processes);
  Resolve(handle, "nvmlErrorString", &api.error_string);
  const char* missing = nullptr;
  if (!Resolve(handle, "nvmlInit_v2", &api.init)) missing = "nvmlInit_v2";
  if (!Resolve(handle, "nvmlShutdown", &api.shutdown)) missing = "nvmlShutdown";
  if (!Resolve(handle, "nvmlDeviceGetCount_v2", &api.get_count)) {
    missing = "nvmlDeviceGetCount_v2";
  }
  if (!Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &api.get_handle)) {
    missing = "nvmlDeviceGetHandleByIndex_v2";
  }
  if (!Resolve(handle, "nvmlDeviceGetName", &api.get_name)) {
    missing = "nvmlDeviceGetName";
  }
  if (!Resolve(handle, "nvmlDeviceGetUUID", &api.get_uuid)) {
    missing = "nvmlDeviceGetUUID";
  }
  if (!Resolve(handle, "nvmlDeviceGetMemoryInfo", &api.get_memory)) {
    missing = "nvmlDeviceGetMemoryInfo";
  }
  if (!Resolve(handle, "nvmlDeviceGetUtilizationRates", &api.get_utilization)) {
    missing = "nvmlDeviceGetUtilizationRates";
  }
  if (missing != nullptr) {
    return absl::UnavailableError(
        absl::StrCat("NVML library lacks ", missing, " (driver too old?)"));
  }
  return api;
}

// Compute processes on `device` other than this one, or -1 when unknown.
// NVML reports host pids, so inside a pid namespace this process may count.
int CountOtherProcesses(const NvmlApi& api, NvmlDevice device) {
  if (api.get_processes == nullptr) return -1;
  unsigned int count = 0;
  NvmlReturn rc = api.get_processes(device, &count, nullptr);
  if (rc == kNvmlSuccess && count == 0) return 0;
  if (rc != kNvmlSuccess && rc != kNvmlErrorInsufficientSize) return -1;
  std::vector<NvmlProcessInfo> infos(count + 8);  // room for newcomers
  count = static_cast<unsigned int>(infos.size());
  if (api.get_processes(device, &count, infos.data()) != kNvmlSuccess) {
    return -1;
  }
  infos.resize(std::min<size_t>(count, infos.size()));
  const unsigned int self = static_cast<unsigned int>(getpid());
  return static_cast<int>(std::count_if(
      infos.begin(), infos.end(),
      [self](const NvmlProcessInfo& p) { return p.pid != self; }));
}

absl::StatusOr<std::vector<GpuStatus>> QueryNvmlDevices(const NvmlApi& api) {
  unsigned int count = 0;
  NvmlReturn rc = api.get_count(&count);
  if (rc != kNvmlSuccess) {
    return absl::UnavailableError(api.Error("nvmlDeviceGetCount_v2", rc));
  }
  std::vector<GpuStatus> gpus;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    // A GPU NVML cannot open (lost, no permission) is left out: unusable.
    if (api.get_handle(i, &device) != kNvmlSuccess) continue;
    GpuStatus gpu;
    gpu.index = static_cast<int>(i);
    char text[kNvmlStringSize] = {};
    if (api.get_name(device, text, sizeof(text)) == kNvmlSuccess) {
      gpu.name = text;
    }
    if (api.get_uuid(device, text, sizeof(text)) == kNvmlSuccess) {
      gpu.uuid = text;
    }
    NvmlMemory memory = {};
    if (api.get_memory(device, &memory) == kNvmlSuccess) {
      gpu.total_memory = static_cast<int64_t>(memory.total);
      gpu.free_memory = static_cast<int64_t>(memory.free);
    }
    NvmlUtilization utilization = {};
    if (api.get_utilization(device, &utilization) == kNvmlSuccess) {
      gpu.utilization_percent = static_cast<int>(utilization.gpu);
    }
    gpu.other_processes = CountOtherProcesses(api, device);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace

NvmlGpuInfoSource::NvmlGpuInfoSource(std::string library)
    : library_(std::move(library)) {}

NvmlGpuInfoSource::~NvmlGpuInfoSource() {
  if (handle_ != nullptr) dlclose(handle_);
}

absl::StatusOr<std::vector<GpuStatus>> NvmlGpuInfoSource::Query() {
  if (handle_ == nullptr) {
    handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* error = dlerror();
      return absl::UnavailableError(
          absl::StrCat("NVML unavailable: cannot load ", library_, " (",
                       error ? error : "unknown error",
                       "); is the NVIDIA driver installed?"));
    }
  }
  absl::StatusOr<NvmlApi> api = ResolveNvml(handle_);
  if (!api.ok()) return WithContext(api.status(), "NVML unavailable");
  NvmlReturn rc = api->init();
  if (rc != kNvmlSuccess) {
    return absl::UnavailableError(
        absl::StrCat("NVML unavailable: ", api->Error("nvmlInit_v2", rc)));
  }
  absl::StatusOr<std::vector<GpuStatus>> gpus = QueryNvmlDevices(*api);
  api->shutdown();
  return gpus;
}

}  // namespace placer
}  // namespace graphrun
