#include "kernels/kernel_registry.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace graphrun {

bool KernelDef::Matches(const AttrSlice& attrs) const {
  for (const auto& [attr, allowed] : type_constraints) {
    const AttrValue* v = attrs.Find(attr);
    if (v == nullptr) return false;
    std::vector<DataType> types;
    if (v->value_case() == AttrValue::kType) {
      types.push_back(v->type());
    } else if (v->value_case() == AttrValue::kList) {
      for (int t : v->list().type()) types.push_back(static_cast<DataType>(t));
    } else {
      return false;
    }
    for (DataType t : types) {
      if (std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
        return false;
      }
    }
  }
  return true;
}

std::string KernelDef::DebugString() const {
  std::string s = absl::StrCat("device='", device_type, "'");
  for (const auto& [attr, allowed] : type_constraints) {
    std::vector<std::string> names;
    for (DataType t : allowed) names.push_back(DataTypeString(t));
    absl::StrAppend(&s, "; ", attr, " in [", absl::StrJoin(names, ", "), "]");
  }
  if (!host_memory_args.empty()) {
    absl::StrAppend(&s, "; host memory: ", absl::StrJoin(host_memory_args, ", "));
  }
  return s;
}

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* const registry = new KernelRegistry();
  return registry;
}

void KernelRegistry::Register(KernelDef def) {
  std::string op = def.op;
  kernels_.emplace(std::move(op), std::make_unique<KernelDef>(std::move(def)));
}

std::vector<const KernelDef*> KernelRegistry::KernelsForOp(
    absl::string_view op) const {
  std::vector<const KernelDef*> out;
  auto range = kernels_.equal_range(std::string(op));
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second.get());
  return out;
}

absl::StatusOr<const KernelDef*> KernelRegistry::FindKernel(
    const NodeDef& node, const OpDef* op_def,
    absl::string_view device_type) const {
  AttrSlice attrs(&node.attr(), op_def);
  const KernelDef* best = nullptr;
  const KernelDef* tied = nullptr;  // another match at best's priority
  std::vector<std::string> registered;
  for (const KernelDef* k : KernelsForOp(node.op())) {
    registered.push_back(absl::StrCat("  ", k->DebugString()));
    if (k->device_type != device_type || !k->Matches(attrs)) continue;
    if (best == nullptr || k->priority > best->priority) {
      best = k;
      tied = nullptr;
    } else if (k->priority == best->priority && tied == nullptr) {
      tied = k;
    }
  }
  if (tied != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Multiple OpKernel registrations match NodeDef '", node.name(), "' (",
        node.op(), ") on '", device_type, "' devices at the same priority ",
        best->priority, ": '", best->DebugString(), "' and '",
        tied->DebugString(), "'"));
  }
  if (best != nullptr) return best;
  std::vector<std::string> type_attrs;
  if (op_def != nullptr) {
    for (const AttrDef& a : op_def->attrs) {
      if (a.type != "type" && a.type != "list(type)") continue;
      if (const AttrValue* v = attrs.Find(a.name)) {
        type_attrs.push_back(absl::StrCat(a.name, "=", AttrValueSummary(*v)));
      }
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "No registered '", node.op(), "' OpKernel for '", device_type,
      "' devices compatible with node '", node.name(), "'",
      type_attrs.empty() ? "" : absl::StrCat(" (", absl::StrJoin(type_attrs, ", "), ")"),
      registered.empty() ? ". No kernels are registered for this op."
                         : absl::StrCat(". Registered:\n", absl::StrJoin(registered, "\n"))));
}

std::vector<std::string> KernelRegistry::SupportedDeviceTypes(
    const NodeDef& node, const OpDef* op_def) const {
  AttrSlice attrs(&node.attr(), op_def);
  std::vector<std::string> types;
  for (const KernelDef* k : KernelsForOp(node.op())) {
    if (!k->Matches(attrs)) continue;
    if (std::find(types.begin(), types.end(), k->device_type) == types.end()) {
      types.push_back(k->device_type);
    }
  }
  return types;
}

bool KernelRegistry::HasKernelForOp(absl::string_view op,
                                    absl::string_view device_type) const {
  for (const KernelDef* k : KernelsForOp(op)) {
    if (k->device_type == device_type) return true;
  }
  return false;
}

bool KernelRegistry::HasKernelsForDeviceType(absl::string_view device_type) const {
  for (const auto& [op, kernel] : kernels_) {
    if (kernel->device_type == device_type) return true;
  }
  return false;
}

namespace {

// True if some node's attrs could satisfy both kernels' type constraints.
bool ConstraintsOverlap(const KernelDef& a, const KernelDef& b,
                        const OpDef* op_def) {
  for (const auto& [attr, allowed_a] : a.type_constraints) {
    for (const auto& [attr_b, allowed_b] : b.type_constraints) {
      if (attr != attr_b) continue;
      const AttrDef* def = op_def == nullptr ? nullptr : op_def->FindAttr(attr);
      if (def != nullptr && def->type == "list(type)" &&
          def->minimum.value_or(0) == 0) {
        continue;  // an empty list matches any constraint
      }
      bool shared = false;
      for (DataType t : allowed_a) {
        shared |= std::find(allowed_b.begin(), allowed_b.end(), t) != allowed_b.end();
      }
      if (!shared) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> KernelRegistry::OverlappingRegistrations(
    const OpRegistry& ops) const {
  std::vector<std::string> out;
  for (auto it = kernels_.begin(); it != kernels_.end();) {
    auto end = kernels_.upper_bound(it->first);
    const OpDef* op_def = ops.Find(it->first);
    for (auto a = it; a != end; ++a) {
      for (auto b = std::next(a); b != end; ++b) {
        const KernelDef& ka = *a->second;
        const KernelDef& kb = *b->second;
        if (ka.device_type != kb.device_type || ka.priority != kb.priority) continue;
        if (ConstraintsOverlap(ka, kb, op_def)) {
          out.push_back(absl::StrCat(it->first, ": ", ka.DebugString(), " and ",
                                     kb.DebugString()));
        }
      }
    }
    it = end;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    DeviceBase* device, const NodeDef& node, const OpDef* op_def,
    const std::vector<DataType>& input_types,
    const std::vector<DataType>& output_types) const {
  GR_ASSIGN_OR_RETURN(const KernelDef* k,
                      FindKernel(node, op_def, device->device_type()));
  OpKernelConstruction ctx(device, &node, op_def, input_types, output_types);
  if (device->device_type() != kDeviceCpu && !k->host_memory_args.empty() &&
      op_def != nullptr) {
    absl::StatusOr<MemoryTypes> types = GetMemoryTypes(*k, node, *op_def);
    if (!types.ok()) {
      return absl::Status(types.status().code(),
                          absl::StrCat("node '", node.name(), "' (", node.op(), ") on ",
                                       device->name(), ": ", types.status().message()));
    }
    ctx.set_output_on_host(std::move(types->output_on_host));
  }
  std::unique_ptr<OpKernel> kernel(k->factory(&ctx));
  if (!ctx.status().ok()) {
    return absl::Status(ctx.status().code(),
                        absl::StrCat("node '", node.name(), "' (", node.op(),
                                     ") on ", device->name(), ": ",
                                     ctx.status().message()));
  }
  return kernel;
}

absl::StatusOr<MemoryTypes> GetMemoryTypes(const KernelDef& kernel,
                                           const NodeDef& node,
                                           const OpDef& op_def) {
  MemoryTypes types;
  const bool host_device = kernel.device_type == kDeviceCpu;
  AttrSlice attrs(&node.attr(), &op_def);
  auto fill = [&](const std::vector<ArgDef>& args, std::vector<bool>* out) -> absl::Status {
    for (const ArgDef& arg : args) {
      int64_t n = 1;
      if (!arg.number_attr.empty()) GR_RETURN_IF_ERROR(attrs.Get(arg.number_attr, &n));
      if (!arg.type_list_attr.empty()) {
        std::vector<DataType> list;
        GR_RETURN_IF_ERROR(attrs.Get(arg.type_list_attr, &list));
        n = static_cast<int64_t>(list.size());
      }
      const bool host =
          host_device || std::find(kernel.host_memory_args.begin(),
                                   kernel.host_memory_args.end(),
                                   arg.name) != kernel.host_memory_args.end();
      out->insert(out->end(), n, host);
    }
    return absl::OkStatus();
  };
  GR_RETURN_IF_ERROR(fill(op_def.inputs, &types.input_on_host));
  GR_RETURN_IF_ERROR(fill(op_def.outputs, &types.output_on_host));
  return types;
}

}  // namespace graphrun
