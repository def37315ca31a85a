// ResizeBilinear and ResizeNearestNeighbor on CPU, with TensorFlow's
// coordinate rules (resize_common.h): scale = in / out, or
// (in - 1) / (out - 1) with align_corners; an output pixel y samples input
// coordinate y * scale, or (y + 0.5) * scale - 0.5 with half_pixel_centers
// (nearest neighbour: (y + 0.5) * scale, then floor). Bilinear reads the
// two neighbours on each axis (clamped to the image) and interpolates in
// float; its output is float whatever the input type. Images are NHWC;
// output rows are spread over the intra-op pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "kernels/cpu/resize_common.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using resize::ForEachRow;
using resize::ResizeGeometry;
using resize::ResizeOpBase;

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
GR_FOR_EACH_RESIZE_TYPE(GR_REGISTER_RESIZE);
#undef GR_REGISTER_RESIZE

}  // namespace
}  // namespace graphrun
