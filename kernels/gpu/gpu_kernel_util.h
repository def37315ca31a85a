// What the GPU OpKernels share: the device's compute stream, the kernel
// base (launching is cheap, so GPU kernels run inline on the executor's
// thread), the element types the launchers take, the nn ops' data_format
// and padding attrs, and the dtypes kept in device memory.
#ifndef GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_
#define GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/types.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/device_context.h"
#include "kernels/gpu/gpu_launch.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace gpu {

// The device's compute stream; an error on a device without one (the
// legacy default stream would not be ordered with the copy streams).
// A float tensor's device buffer.
inline const float* FloatData(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }
inline float* FloatData(Tensor* t) { return static_cast<float*>(t->raw_data()); }

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
    case cpu::FusedActivation::kNone:
      e.activation = Activation::kNone;
      break;
    case cpu::FusedActivation::kRelu:
      e.activation = Activation::kRelu;
      break;
    case cpu::FusedActivation::kRelu6:
      e.activation = Activation::kRelu6;
      break;
    case cpu::FusedActivation::kElu:
      e.activation = Activation::kElu;
      break;
    case cpu::FusedActivation::kLeakyRelu:
      e.activation = Activation::kLeakyRelu;
      break;
    case cpu::FusedActivation::kTanh:
      e.activation = Activation::kTanh;
      break;
    case cpu::FusedActivation::kSigmoid:
      e.activation = Activation::kSigmoid;
      break;
  }
  return e;
}

// The data_format attr of a 2-D nn op (NHWC when absent): NHWC or NCHW.
inline absl::Status ReadDataFormat(OpKernelConstruction* c, bool* nchw) {
  std::string format = "NHWC";
  if (c->attrs().Find("data_format") != nullptr) {
    absl::Status s = c->GetAttr("data_format", &format);
    if (!s.ok()) return s;
  }
  if (format != "NHWC" && format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format));
  }
  *nchw = format == "NCHW";
  return absl::OkStatus();
}

// The padding attr and, when the op has it, explicit_paddings.
inline absl::Status ReadPadding(OpKernelConstruction* c, op_shapes::Padding* padding,
                               std::vector<int64_t>* explicit_paddings) {
  std::string text;
  absl::Status s = c->GetAttr("padding", &text);
  if (!s.ok()) return s;
  absl::StatusOr<op_shapes::Padding> parsed = op_shapes::ParsePadding(text);
  if (!parsed.ok()) return parsed.status();
  *padding = *parsed;
  if (c->attrs().Find("explicit_paddings") != nullptr) {
    s = c->GetAttr("explicit_paddings", explicit_paddings);
    if (!s.ok()) return s;
  }
  if (*padding != op_shapes::Padding::kExplicit && !explicit_paddings->empty()) {
    return absl::InvalidArgumentError(
        "explicit_paddings attribute must be empty if the padding attribute is "
        "not EXPLICIT");
  }
  return absl::OkStatus();
}

// The dtypes a GPU keeps in device memory: every type a tensor or handle
// can be but those kept in host memory: strings, TensorList handles
// (DT_VARIANT) and TensorArray handles (DT_RESOURCE), which never go to a
// GPU, and int32, which GPU kernels keep in host memory (TensorFlow's
// convention: shapes and loop counters stay where the host reads them).
inline const std::vector<DataType>& DeviceMemoryTypes() {
  static const std::vector<DataType>* types = [] {
    auto* v = new std::vector<DataType>();
    for (DataType t : ForwardableTypes()) {
      if (t != DT_STRING && t != DT_VARIANT && t != DT_RESOURCE && t != DT_INT32) v->push_back(t);
    }
    return v;
  }();
  return *types;
}

// Those whose elements the data movement kernels copy (1, 2, 4 or 8 bytes).
inline const std::vector<DataType>& CopyableDeviceTypes() {
  static const std::vector<DataType>* types = [] {
    auto* v = new std::vector<DataType>();
    for (DataType t : DeviceMemoryTypes()) {
      const int bytes = DataTypeSize(t);
      if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) v->push_back(t);
    }
    return v;
  }();
  return *types;
}

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_GPU_KERNEL_UTIL_H_
