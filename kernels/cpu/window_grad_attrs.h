// What the windowed ops' gradient kernels share (pool_grad_ops.cc,
// conv_filter_grad_op.cc): the attrs of a 4-D NHWC windowed op and its
// geometry on one input, and the checks of their shape inputs. Internal to
// the CPU kernels.
#ifndef GRAPHRUN_KERNELS_CPU_WINDOW_GRAD_ATTRS_H_
#define GRAPHRUN_KERNELS_CPU_WINDOW_GRAD_ATTRS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"
#include "kernels/cpu/channel_sums.h"
#include "kernels/op_kernel.h"
#include "kernels/window.h"

namespace graphrun {
namespace window_grad {

using op_shapes::Padding;

using cpu::AccumulatorOf;

// A pooling op has a ksize attr; a convolution's window is its filter.
enum class WindowKind { kPool, kConv };

// The attrs of a 4-D NHWC windowed op and its geometry on one input.
struct WindowAttrs {
  std::vector<int64_t> ksize = {1, 1, 1, 1};  // all ones for convolutions
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::vector<int64_t> explicit_paddings;
  Padding padding = Padding::kValid;

  absl::Status Read(OpKernelConstruction* ctx, WindowKind kind) {
    std::string data_format = "NHWC", padding_str;
    GR_RETURN_IF_ERROR(ctx->GetAttr("data_format", &data_format));
    if (data_format != "NHWC") {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->def().op(), " only supports NHWC on device type ", kDeviceCpu));
    }
    if (kind == WindowKind::kPool) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("ksize", &ksize));
      if (ksize.size() != 4) {
        return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
      }
      for (int64_t k : ksize) {
        if (k <= 0) return absl::InvalidArgumentError("Sliding window ksize must be positive");
      }
    }
    GR_RETURN_IF_ERROR(ctx->GetAttr("strides", &strides));
    if (strides.size() != 4) {
      return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
    }
    if (ctx->attrs().Find("dilations") != nullptr) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("dilations", &dilations));
      if (dilations.size() != 4) {
        return absl::InvalidArgumentError(
            "Sliding window dilations field must specify 4 dimensions");
      }
    }
    if (ksize[0] != 1 || strides[0] != 1 || dilations[0] != 1 || ksize[3] != 1 || strides[3] != 1 ||
        dilations[3] != 1) {
      return absl::UnimplementedError(
          absl::StrCat(ctx->def().op(), " is not yet supported on the batch or depth dimensions."));
    }
    GR_RETURN_IF_ERROR(ctx->GetAttr("padding", &padding_str));
    GR_ASSIGN_OR_RETURN(padding, op_shapes::ParsePadding(padding_str));
    if (ctx->attrs().Find("explicit_paddings") != nullptr) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("explicit_paddings", &explicit_paddings));
    }
    return windowed::CheckExplicitPaddings(padding, explicit_paddings, 3);
  }

  // The rows (d = 1) or columns (d = 2) of the window over `input` of them.
  absl::StatusOr<windowed::Window> Along(int d, int64_t input, int64_t window) const {
    windowed::Window w;
    if (padding == Padding::kExplicit) {
      w.pad_before = explicit_paddings[2 * d];
      w.pad_after = explicit_paddings[2 * d + 1];
    }
    GR_RETURN_IF_ERROR(
        windowed::ComputeWindow(input, window, dilations[d], strides[d], padding, &w));
    return w;
  }
};

// A 4-D shape from an int32 vector input (orig_input_shape, filter_sizes).
inline absl::StatusOr<TensorShape> ShapeFromInput(const Tensor& t, const char* name) {
  if (t.dims() != 1 || t.NumElements() != 4 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a 1-D int32 tensor of 4 elements, got shape ", t.shape().DebugString()));
  }
  std::vector<int64_t> dims;
  for (int32_t d : t.flat<int32_t>()) dims.push_back(d);
  return TensorShape::FromDims(dims);
}

inline absl::Status CheckShape(const Tensor& t, const char* name, const std::vector<int64_t>& want) {
  if (t.dims() == 4 && t.dim_size(0) == want[0] && t.dim_size(1) == want[1] &&
      t.dim_size(2) == want[2] && t.dim_size(3) == want[3]) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(name, " has shape ", t.shape().DebugString(),
                                                 " where the window's geometry gives [",
                                                 absl::StrJoin(want, ","), "]"));
}

}  // namespace window_grad
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_WINDOW_GRAD_ATTRS_H_
