#include "runtime/kernel_availability.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using placer::KernelAvailability;

class RegistryKernelAvailability : public KernelAvailability {
 public:
  explicit RegistryKernelAvailability(RegistryAvailabilityOptions options)
      : options_(std::move(options)) {}

  bool Supports(const Node& node, absl::string_view type) const override {
    if (type != "CPU" && std::find(options_.cpu_only_ops.begin(),
                                   options_.cpu_only_ops.end(),
                                   node.op()) != options_.cpu_only_ops.end()) {
      return false;
    }
    if (node.op_def() == nullptr) return false;
    const KernelRegistry* registry = KernelRegistry::Global();
    if (options_.assume_unbuilt_types_run_everything &&
        !registry->HasKernelsForDeviceType(type)) {
      return true;
    }
    return registry->FindKernel(node.def(), node.op_def(), type).ok();
  }

  bool InputInHostMemory(const Node& node, int input,
                         absl::string_view type) const override {
    if (type == "CPU" || node.op_def() == nullptr) return false;
    auto kernel = KernelRegistry::Global()->FindKernel(node.def(), node.op_def(), type);
    if (!kernel.ok()) return false;
    auto types = GetMemoryTypes(**kernel, node.def(), *node.op_def());
    return types.ok() && input < static_cast<int>(types->input_on_host.size()) &&
           types->input_on_host[input];
  }

  std::string WhyNot(const Node& node, absl::string_view type) const override {
    if (node.op_def() == nullptr) {
      return absl::StrCat("op '", node.op(), "' is unknown to this build");
    }
    auto found = KernelRegistry::Global()->FindKernel(node.def(), node.op_def(), type);
    if (!found.ok()) return std::string(found.status().message());
    return KernelAvailability::WhyNot(node, type);
  }

 private:
  RegistryAvailabilityOptions options_;
};

}  // namespace

std::unique_ptr<placer::KernelAvailability> RegistryAvailability(
    RegistryAvailabilityOptions options) {
  return std::make_unique<RegistryKernelAvailability>(std::move(options));
}

}  // namespace graphrun
