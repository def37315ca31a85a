// What the CPU image resizers share (ResizeBilinear, ResizeNearestNeighbor,
// ResizeBicubic, ResizeArea): TensorFlow's validation of images [batch,
// height, width, channels] and size [new_height, new_width]
// (image_resizer_state.h), the input / output scale on each axis, the
// spread of output rows over the intra-op pool, and a kernel base that
// reads the align_corners / half_pixel_centers attrs and allocates the
// output.
#ifndef GRAPHRUN_KERNELS_CPU_RESIZE_COMMON_H_
#define GRAPHRUN_KERNELS_CPU_RESIZE_COMMON_H_

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace resize {

struct ResizeGeometry {
  int64_t batch = 0, in_height = 0, in_width = 0, channels = 0;
  int64_t out_height = 0, out_width = 0;
  float height_scale = 0, width_scale = 0;
};

// Input pixels per output pixel along one axis: in / out, or
// (in - 1) / (out - 1) when align_corners and both sizes exceed 1.
inline float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && in > 1 && out > 1)
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// Checks input and size in TensorFlow's order and fills g; the errors are
// TensorFlow's InvalidArgument messages.
inline absl::Status ComputeGeometry(const Tensor& input, const Tensor& size,
                                    bool align_corners, ResizeGeometry* g) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional", input.shape().DebugString()));
  }
  g->batch = input.dim_size(0);
  g->in_height = input.dim_size(1);
  g->in_width = input.dim_size(2);
  g->channels = input.dim_size(3);
  if (g->channels <= 0) {
    return absl::InvalidArgumentError(
        "image must have at least one channel");
  }
  if (g->in_height <= 0 || g->in_width <= 0) {
    return absl::InvalidArgumentError("input image must be of non-zero size");
  }
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (g->in_height >= kIntMax || g->in_width >= kIntMax) {
    return absl::InvalidArgumentError(
        "input sizes must be between 0 and max int32");
  }
  if (size.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must be 1-dimensional", size.shape().DebugString()));
  }
  if (size.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must have two elements", size.shape().DebugString()));
  }
  g->out_height = size.flat<int32_t>()[0];
  g->out_width = size.flat<int32_t>()[1];
  if (g->out_height <= 0 || g->out_width <= 0) {
    return absl::InvalidArgumentError("output dimensions must be positive");
  }
  g->height_scale = ResizeScale(g->in_height, g->out_height, align_corners);
  g->width_scale = ResizeScale(g->in_width, g->out_width, align_corners);
  // The farthest input coordinate an output pixel maps to must fit the
  // index types.
  if (std::ceil(static_cast<float>(g->out_height - 1) * g->height_scale) >
      static_cast<float>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        "input image height scale would cause an overflow");
  }
  if (std::ceil(static_cast<float>(g->out_width - 1) * g->width_scale) >
      static_cast<float>(INT_MAX)) {
    return absl::InvalidArgumentError(
        "input image width scale would cause an overflow");
  }
  return absl::OkStatus();
}

// Runs fn(first_row, last_row) over the batch * out_height output rows, on
// the intra-op pool when the output is large; cycles_per_element is the
// rough cost of one output element.
template <typename Fn>
void ForEachRow(OpKernelContext* ctx, const ResizeGeometry& g, Fn fn,
                double cycles_per_element = 8) {
  const int64_t rows = g.batch * g.out_height;
  const double per_row = static_cast<double>(g.out_width) * g.channels;
  if (per_row * rows > static_cast<double>(kParallelElements)) {
    ctx->eigen_cpu_device().parallelFor(
        rows,
        Eigen::TensorOpCost(4 * per_row * 4, per_row * 4,
                            cycles_per_element * per_row),
        [&](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
  } else {
    fn(0, rows);
  }
}

// Reads align_corners and, for the ops that have it, half_pixel_centers
// (both true is an error); Prepare validates the inputs and allocates the
// output [batch, out_height, out_width, channels].
class ResizeOpBase : public OpKernel {
 public:
  explicit ResizeOpBase(OpKernelConstruction* ctx,
                        bool has_half_pixel_centers = true)
      : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    if (!has_half_pixel_centers) return;
    OP_REQUIRES_OK(ctx,
                   ctx->GetAttr("half_pixel_centers", &half_pixel_centers_));
    OP_REQUIRES(ctx, !(align_corners_ && half_pixel_centers_),
                absl::InvalidArgumentError(
                    "If half_pixel_centers is True, align_corners must be "
                    "False."));
  }

 protected:
  // The output tensor, or nullptr when there is nothing to compute (an
  // empty output, or an error, which is set on ctx).
  Tensor* Prepare(OpKernelContext* ctx, ResizeGeometry* g) {
    absl::Status s =
        ComputeGeometry(ctx->input(0), ctx->input(1), align_corners_, g);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return nullptr;
    }
    auto shape = TensorShape::FromDims(
        {g->batch, g->out_height, g->out_width, g->channels});
    if (!shape.ok()) {
      ctx->SetStatus(shape.status());
      return nullptr;
    }
    Tensor* out = nullptr;
    s = ctx->allocate_output(0, *shape, &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return nullptr;
    }
    return shape->num_elements() == 0 ? nullptr : out;
  }

  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

}  // namespace resize
}  // namespace graphrun

// Calls M(T) for each element type the resize kernels take (TensorFlow's
// real number types).
#define GR_FOR_EACH_RESIZE_TYPE(M) \
  M(float);                        \
  M(double);                       \
  M(half);                         \
  M(bfloat16);                     \
  M(uint8_t);                      \
  M(int8_t);                       \
  M(uint16_t);                     \
  M(int16_t);                      \
  M(int32_t);                      \
  M(int64_t)

#endif  // GRAPHRUN_KERNELS_CPU_RESIZE_COMMON_H_
