// What the GPU OpKernels share: the device's compute stream, the kernel
// base (launching is cheap, so GPU kernels run inline on the executor's
// thread), the element types the launchers take, and the dtypes the data
// movement kernels serve.
#ifndef GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_
#define GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/types.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/device_context.h"
#include "kernels/gpu/gpu_launch.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace gpu {

// The device's compute stream; an error on a device without one (the
// legacy default stream would not be ordered with the copy streams).
inline absl::StatusOr<void*> Stream(OpKernelContext* ctx) {
  DeviceContext* dc = ctx->device()->device_context();
  if (dc == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(ctx->device()->name(), " has no device context (no stream) for a GPU kernel"));
  }
  return dc->compute_stream();
}

inline absl::StatusOr<ElementType> ElementTypeOf(DataType t) {
  switch (t) {
    case DT_FLOAT:
      return ElementType::kFloat;
    case DT_HALF:
      return ElementType::kHalf;
    case DT_BFLOAT16:
      return ElementType::kBfloat16;
    default:
      return absl::InvalidArgumentError(absl::StrCat("no GPU kernel for ", DataTypeString(t)));
  }
}

class GpuKernel : public OpKernel {
 public:
  explicit GpuKernel(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
};

// The bias + activation epilogue of a fused node (_FusedMatMul,
// _FusedConv2D), read as the CPU kernels read it (fusions neither knows
// fail when the kernel is made, naming them).
struct Epilogue {
  Activation activation = Activation::kNone;
  float leakyrelu_alpha = 0.2f;
};
inline absl::StatusOr<Epilogue> EpilogueFromAttrs(OpKernelConstruction* c) {
  absl::StatusOr<cpu::BiasActivation> cpu_epilogue = cpu::BiasActivation::FromAttrs(c);
  if (!cpu_epilogue.ok()) return cpu_epilogue.status();
  Epilogue e;
  e.leakyrelu_alpha = cpu_epilogue->leakyrelu_alpha;
  switch (cpu_epilogue->activation) {
    case cpu::FusedActivation::kNone: e.activation = Activation::kNone; break;
    case cpu::FusedActivation::kRelu: e.activation = Activation::kRelu; break;
    case cpu::FusedActivation::kRelu6: e.activation = Activation::kRelu6; break;
    case cpu::FusedActivation::kElu: e.activation = Activation::kElu; break;
    case cpu::FusedActivation::kLeakyRelu: e.activation = Activation::kLeakyRelu; break;
    case cpu::FusedActivation::kTanh: e.activation = Activation::kTanh; break;
    case cpu::FusedActivation::kSigmoid: e.activation = Activation::kSigmoid; break;
  }
  return e;
}

// The dtypes GPU tensors hold in device memory (int32 stays in host
// memory, as TensorFlow's GPU kernels keep it): what the data movement
// kernels (copies of 1, 2, 4 or 8-byte elements) are registered for.
inline const std::vector<DataType>& DeviceMemoryTypes() {
  static const std::vector<DataType>* types = new std::vector<DataType>{
      DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64, DT_INT8, DT_UINT8, DT_INT16, DT_BOOL};
  return *types;
}

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_
