// ResizeBilinear and ResizeNearestNeighbor on CPU, with TensorFlow's
// coordinate rules (image_resizer_state.h): scale = in / out, or
// (in - 1) / (out - 1) with align_corners; an output pixel y samples input
// coordinate y * scale, or (y + 0.5) * scale - 0.5 with half_pixel_centers
// (nearest neighbour: (y + 0.5) * scale, then floor). Bilinear reads the
// two neighbours on each axis (clamped to the image) and interpolates in
// float; its output is float whatever the input type. Images are NHWC;
// output rows are spread over the intra-op pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

constexpr double kParallelElements = 32 * 1024;

struct ResizeGeometry {
  int64_t batch = 0, in_height = 0, in_width = 0, channels = 0;
  int64_t out_height = 0, out_width = 0;
  float height_scale = 0, width_scale = 0;
};

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1)
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

// TensorFlow's ImageResizerState::ValidateAndCalculateOutputSize.
absl::Status ComputeGeometry(const Tensor& input, const Tensor& size,
                             bool align_corners, ResizeGeometry* g) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional", input.shape().DebugString()));
  }
  if (size.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must be 1-dimensional", size.shape().DebugString()));
  }
  if (size.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must have two elements", size.shape().DebugString()));
  }
  g->batch = input.dim_size(0);
  g->in_height = input.dim_size(1);
  g->in_width = input.dim_size(2);
  g->channels = input.dim_size(3);
  g->out_height = size.flat<int32_t>()[0];
  g->out_width = size.flat<int32_t>()[1];
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (g->in_height > kIntMax || g->in_width > kIntMax) {
    return absl::InvalidArgumentError(
        "input sizes must be between 0 and max int32");
  }
  if (g->out_height <= 0 || g->out_width <= 0) {
    return absl::InvalidArgumentError("output dimensions must be positive");
  }
  if (g->channels <= 0) {
    return absl::InvalidArgumentError(
        "image must have at least one channel");
  }
  if (g->in_height <= 0 || g->in_width <= 0) {
    return absl::InvalidArgumentError("input image must be of non-zero size");
  }
  g->height_scale = ResizeScale(g->in_height, g->out_height, align_corners);
  g->width_scale = ResizeScale(g->in_width, g->out_width, align_corners);
  return absl::OkStatus();
}

// Runs fn(first_row, last_row) over the batch * out_height output rows.
template <typename Fn>
void ForEachRow(OpKernelContext* ctx, const ResizeGeometry& g, Fn fn) {
  const int64_t rows = g.batch * g.out_height;
  const double per_row = static_cast<double>(g.out_width) * g.channels;
  if (per_row * rows > kParallelElements) {
    ctx->eigen_cpu_device().parallelFor(
        rows, Eigen::TensorOpCost(4 * per_row * 4, per_row * 4, 8 * per_row),
        [&](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
  } else {
    fn(0, rows);
  }
}

// One output coordinate's two input neighbours and the weight of the upper.
struct Lerp {
  int64_t lower = 0, upper = 0;
  float weight = 0;
};

std::vector<Lerp> LerpTable(int64_t out_size, int64_t in_size, float scale,
                            bool half_pixel_centers) {
  std::vector<Lerp> table(out_size);
  for (int64_t i = 0; i < out_size; ++i) {
    const float in = half_pixel_centers
                         ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                         : static_cast<float>(i) * scale;
    const float in_floor = std::floor(in);
    table[i].lower = std::max<int64_t>(static_cast<int64_t>(in_floor), 0);
    table[i].upper =
        std::min<int64_t>(static_cast<int64_t>(std::ceil(in)), in_size - 1);
    table[i].weight = in - in_floor;
  }
  return table;
}

class ResizeOpBase : public OpKernel {
 public:
  explicit ResizeOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(ctx,
                   ctx->GetAttr("half_pixel_centers", &half_pixel_centers_));
    OP_REQUIRES(ctx, !(align_corners_ && half_pixel_centers_),
                absl::InvalidArgumentError(
                    "If half_pixel_centers is True, align_corners must be "
                    "False."));
  }

 protected:
  // Validates the inputs and allocates the output; nullptr when there is
  // nothing to compute (or on error, set on ctx).
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

template <typename T>
class ResizeBilinearOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* ctx) override {
    ResizeGeometry g;
    Tensor* output = Prepare(ctx, &g);
    if (output == nullptr) return;
    const std::vector<Lerp> ys =
        LerpTable(g.out_height, g.in_height, g.height_scale, half_pixel_centers_);
    const std::vector<Lerp> xs =
        LerpTable(g.out_width, g.in_width, g.width_scale, half_pixel_centers_);
    const T* in = ctx->input(0).flat<T>().data();
    float* out = output->flat<float>().data();
    const int64_t c_count = g.channels;
    ForEachRow(ctx, g, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / g.out_height, y = row % g.out_height;
        const T* image = in + b * g.in_height * g.in_width * c_count;
        const T* top_row = image + ys[y].lower * g.in_width * c_count;
        const T* bottom_row = image + ys[y].upper * g.in_width * c_count;
        const float y_lerp = ys[y].weight;
        float* dst = out + row * g.out_width * c_count;
        for (int64_t x = 0; x < g.out_width; ++x, dst += c_count) {
          const int64_t left = xs[x].lower * c_count;
          const int64_t right = xs[x].upper * c_count;
          const float x_lerp = xs[x].weight;
          for (int64_t c = 0; c < c_count; ++c) {
            const float top_left = static_cast<float>(top_row[left + c]);
            const float top_right = static_cast<float>(top_row[right + c]);
            const float bottom_left = static_cast<float>(bottom_row[left + c]);
            const float bottom_right = static_cast<float>(bottom_row[right + c]);
            const float top = top_left + (top_right - top_left) * x_lerp;
            const float bottom =
                bottom_left + (bottom_right - bottom_left) * x_lerp;
            dst[c] = top + (bottom - top) * y_lerp;
          }
        }
      }
    });
  }
};

template <typename T>
class ResizeNearestNeighborOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* ctx) override {
    ResizeGeometry g;
    Tensor* output = Prepare(ctx, &g);
    if (output == nullptr) return;
    const std::vector<int64_t> ys =
        Nearest(g.out_height, g.in_height, g.height_scale);
    const std::vector<int64_t> xs =
        Nearest(g.out_width, g.in_width, g.width_scale);
    const T* in = ctx->input(0).flat<T>().data();
    T* out = output->flat<T>().data();
    const int64_t c_count = g.channels;
    ForEachRow(ctx, g, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / g.out_height, y = row % g.out_height;
        const T* src_row =
            in + (b * g.in_height + ys[y]) * g.in_width * c_count;
        T* dst = out + row * g.out_width * c_count;
        for (int64_t x = 0; x < g.out_width; ++x, dst += c_count) {
          std::copy_n(src_row + xs[x] * c_count, c_count, dst);
        }
      }
    });
  }

 private:
  // The input index each output index reads.
  std::vector<int64_t> Nearest(int64_t out_size, int64_t in_size,
                               float scale) const {
    std::vector<int64_t> index(out_size);
    for (int64_t i = 0; i < out_size; ++i) {
      const float in = half_pixel_centers_
                           ? (static_cast<float>(i) + 0.5f) * scale
                           : static_cast<float>(i) * scale;
      int64_t j = align_corners_ ? static_cast<int64_t>(std::round(in))
                                 : static_cast<int64_t>(std::floor(in));
      j = std::min(j, in_size - 1);
      if (half_pixel_centers_) j = std::max<int64_t>(j, 0);
      index[i] = j;
    }
    return index;
  }
};

#define GR_REGISTER_RESIZE(T)                                              \
  REGISTER_KERNEL(KernelDefBuilder("ResizeBilinear")                       \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ResizeBilinearOp<T>);                                    \
  REGISTER_KERNEL(KernelDefBuilder("ResizeNearestNeighbor")                \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ResizeNearestNeighborOp<T>)
GR_REGISTER_RESIZE(float);
GR_REGISTER_RESIZE(double);
GR_REGISTER_RESIZE(half);
GR_REGISTER_RESIZE(bfloat16);
GR_REGISTER_RESIZE(uint8_t);
GR_REGISTER_RESIZE(int8_t);
GR_REGISTER_RESIZE(uint16_t);
GR_REGISTER_RESIZE(int16_t);
GR_REGISTER_RESIZE(int32_t);
GR_REGISTER_RESIZE(int64_t);
#undef GR_REGISTER_RESIZE

}  // namespace
}  // namespace graphrun
