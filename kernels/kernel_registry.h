// KernelRegistry: which kernel runs an op on a device type.
//
// Kernels register by op name, device type, dtype constraints on type attrs,
// and the arguments they keep in host memory:
//
//   REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(kDeviceCpu)
//                       .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}),
//                   MatMulOp);
//
// The placer asks SupportedDeviceTypes() "where can this node run" without
// building anything. Filled at static-initialization time, read-only after;
// lookups are thread-safe.
#ifndef GRAPHRUN_KERNELS_KERNEL_REGISTRY_H_
#define GRAPHRUN_KERNELS_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attr_slice.h"
#include "graph/op_registry.h"
#include "graph/protos/node_def.pb.h"
#include "kernels/op_kernel.h"

namespace graphrun {

using KernelFactory = std::function<OpKernel*(OpKernelConstruction*)>;

struct KernelDef {
  std::string op;
  std::string device_type;
  // attr name -> allowed types.
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  // Input/output arg names whose tensors live in host memory.
  std::vector<std::string> host_memory_args;
  // Higher wins when several kernels match.
  int priority = 0;
  KernelFactory factory;

  // True if the node's type attrs satisfy every constraint.
  bool Matches(const AttrSlice& attrs) const;
  // "device='CPU'; T in [DT_FLOAT, DT_DOUBLE]"
  std::string DebugString() const;
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) { def_.op = std::move(op); }
  KernelDefBuilder& Device(std::string type) {
    def_.device_type = std::move(type);
    return *this;
  }
  KernelDefBuilder& TypeConstraint(std::string attr, std::vector<DataType> types) {
    def_.type_constraints.emplace_back(std::move(attr), std::move(types));
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), {DataTypeToEnum<T>::value});
  }
  KernelDefBuilder& HostMemory(std::string arg) {
    def_.host_memory_args.push_back(std::move(arg));
    return *this;
  }
  KernelDefBuilder& Priority(int p) {
    def_.priority = p;
    return *this;
  }
  KernelDef Build(KernelFactory factory) const {
    KernelDef d = def_;
    d.factory = std::move(factory);
    return d;
  }

 private:
  KernelDef def_;
};

class KernelRegistry {
 public:
  static KernelRegistry* Global();

  void Register(KernelDef def);

  // The kernel for this node on `device_type`: of those whose constraints
  // match, the one of highest priority. NotFound lists what is registered
  // for the op: "No registered 'MatMul' OpKernel for 'GPU' devices
  // compatible with node 'mm' (T=int8). Registered: device='CPU'; T in
  // [float, double]". InvalidArgument when several match at that priority
  // (TensorFlow's "Multiple OpKernel registrations match NodeDef"), naming
  // the node and each registration: registration order never decides.
  absl::StatusOr<const KernelDef*> FindKernel(const NodeDef& node,
                                              const OpDef* op_def,
                                              absl::string_view device_type) const;

  // Device types with a kernel for this node, in registration order.
  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node,
                                                const OpDef* op_def) const;
  // True if any kernel for `op` exists on `device_type` (ignoring dtypes).
  bool HasKernelForOp(absl::string_view op, absl::string_view device_type) const;
  // True if this build has any kernel for `device_type` at all (a build
  // without GPU kernels answers false for "GPU").
  bool HasKernelsForDeviceType(absl::string_view device_type) const;
  // Everything registered for `op`.
  std::vector<const KernelDef*> KernelsForOp(absl::string_view op) const;
  // Pairs of registrations (same op, device type and priority) that some
  // node would match both of, so FindKernel would refuse it: "MatMul:
  // device='CPU'; T in [float] and device='CPU'; T in [float, double]".
  // Type constraints on an attr overlap when they share a type, or when the
  // attr is a list(type) that may be empty. A test keeps this empty for the
  // kernels a build links.
  std::vector<std::string> OverlappingRegistrations(
      const OpRegistry& ops = *OpRegistry::Global()) const;

  // Builds the kernel. Errors (bad attrs, no kernel) name the node.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      DeviceBase* device, const NodeDef& node, const OpDef* op_def,
      const std::vector<DataType>& input_types,
      const std::vector<DataType>& output_types) const;

 private:
  std::multimap<std::string, std::unique_ptr<KernelDef>, std::less<>> kernels_;
};

// For each input/output of `node`, whether the kernel keeps it in host
// memory (always true on CPU devices).
struct MemoryTypes {
  std::vector<bool> input_on_host;
  std::vector<bool> output_on_host;
};
absl::StatusOr<MemoryTypes> GetMemoryTypes(const KernelDef& kernel,
                                           const NodeDef& node,
                                           const OpDef& op_def);

namespace internal {
struct KernelRegistrar {
  explicit KernelRegistrar(KernelDef def) {
    KernelRegistry::Global()->Register(std::move(def));
  }
};
}  // namespace internal

#define GR_KERNEL_CAT_INNER_(a, b) a##b
#define GR_KERNEL_CAT_(a, b) GR_KERNEL_CAT_INNER_(a, b)
// REGISTER_KERNEL(builder, Class): Class(OpKernelConstruction*) builds it.
#define REGISTER_KERNEL(builder, ...)                                       \
  static ::graphrun::internal::KernelRegistrar GR_KERNEL_CAT_(              \
      gr_kernel_registrar_, __COUNTER__)(                                   \
      (builder).Build([](::graphrun::OpKernelConstruction* ctx)             \
                          -> ::graphrun::OpKernel* {                        \
        return new __VA_ARGS__(ctx);                                        \
      }))

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_KERNEL_REGISTRY_H_
