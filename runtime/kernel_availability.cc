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
    return InHostMemory(node, /*is_output=*/false, input, type);
  }
  bool OutputInHostMemory(const Node& node, int output,
                          absl::string_view type) const override {
    return InHostMemory(node, /*is_output=*/true, output, type);
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
  static bool InHostMemory(const Node& node, bool is_output, int index,
                           absl::string_view type) {
    if (type == "CPU" || node.op_def() == nullptr) return false;
    auto kernel = KernelRegistry::Global()->FindKernel(node.def(), node.op_def(), type);
    if (!kernel.ok()) return false;
    auto types = GetMemoryTypes(**kernel, node.def(), *node.op_def());
    if (!types.ok()) return false;
    const std::vector<bool>& on_host = is_output ? types->output_on_host : types->input_on_host;
    return index < static_cast<int>(on_host.size()) && on_host[static_cast<size_t>(index)];
  }

  RegistryAvailabilityOptions options_;
};

}  // namespace

std::unique_ptr<placer::KernelAvailability> RegistryAvailability(
    RegistryAvailabilityOptions options) {
  return std::make_unique<RegistryKernelAvailability>(std::move(options));
}

}  // namespace graphrun
