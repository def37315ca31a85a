// Variables in a GPU's memory: the CPU's variable kernels (variable_ops.h)
// registered for GPUs, copying on the device's compute stream and adding
// with the Binary launcher, so the Var, its locking, copy on write and
// messages are the CPU's. As in TensorFlow, resource handles, the
// initialized flags and VariableShape's shape stay in host memory and a
// variable's value in device memory; a ref variable's edge carries its
// handle, which the executor reads the device value through. Every dtype a
// GPU keeps in device memory and can copy may be a variable's; adding into
// one (AssignAdd, AssignSub and their resource forms) is float.
#include <vector>

#include "kernels/cpu/variable_ops.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

VariableDeviceOps GpuVariableOps() {
  VariableDeviceOps ops;
  ops.copy = [](OpKernelContext* ctx, const void* src, void* dst, size_t bytes) -> absl::Status {
    absl::StatusOr<void*> stream = gpu::Stream(ctx);
    if (!stream.ok()) return stream.status();
    return gpu::CopyOnDevice(*stream, src, dst, static_cast<int64_t>(bytes));
  };
  ops.accumulate = [](OpKernelContext* ctx, Tensor* var, const Tensor& value,
                      bool add) -> absl::Status {
    if (var->dtype() != DT_FLOAT) {
      return absl::UnimplementedError(absl::StrCat("no GPU kernel adds into a ",
                                                   DataTypeString(var->dtype()), " variable"));
    }
    const int64_t n = var->NumElements();
    if (n == 0) return absl::OkStatus();
    absl::StatusOr<void*> stream = gpu::Stream(ctx);
    if (!stream.ok()) return stream.status();
    gpu::BroadcastShape shape;
    shape.rank = 1;
    shape.dims[0] = n;
    shape.x_strides[0] = 1;
    shape.y_strides[0] = 1;
    float* x = static_cast<float*>(var->raw_data());
    return gpu::Binary(*stream, add ? gpu::BinaryOp::kAdd : gpu::BinaryOp::kSub, x,
                       static_cast<const float*>(value.raw_data()), x, shape);
  };
  return ops;
}

void Register(const char* op, const char* type_attr, const std::vector<DataType>& types,
              const std::vector<const char*>& host_args) {
  KernelDefBuilder b(op);
  b.Device(kDeviceGpu);
  if (type_attr != nullptr) b.TypeConstraint(type_attr, types);
  for (const char* arg : host_args) b.HostMemory(arg);
  KernelRegistry::Global()->Register(b.Build(VariableKernel(op, GpuVariableOps())));
}

const bool kRegistered = [] {
  const std::vector<DataType>& any = gpu::CopyableDeviceTypes();
  const std::vector<DataType> float_only = {DT_FLOAT};
  Register("VariableV2", "dtype", any, {});
  Register("Assign", "T", any, {});
  Register("AssignAdd", "T", float_only, {});
  Register("AssignSub", "T", float_only, {});
  Register("IsVariableInitialized", "dtype", any, {"is_initialized"});
  Register("VarHandleOp", "dtype", any, {"resource"});
  Register("ReadVariableOp", "dtype", any, {"resource"});
  Register("AssignVariableOp", "dtype", any, {"resource"});
  Register("AssignAddVariableOp", "dtype", float_only, {"resource"});
  Register("AssignSubVariableOp", "dtype", float_only, {"resource"});
  Register("VarIsInitializedOp", nullptr, {}, {"resource", "is_initialized"});
  Register("DestroyResourceOp", nullptr, {}, {"resource"});
  Register("VariableShape", "out_type", {DT_INT32, DT_INT64}, {"input", "output"});
  return true;
}();

}  // namespace
}  // namespace graphrun
