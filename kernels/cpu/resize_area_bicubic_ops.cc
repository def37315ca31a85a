// ResizeBicubic and ResizeArea on CPU, TensorFlow's resize_bicubic_op.cc
// and resize_area_op.cc. Images are NHWC of any real type; the output is
// float. Geometry and validation are resize_common.h's.
//
// Bicubic: output coordinate y maps to input coordinate y * scale (or
// (y + 0.5) * scale - 0.5 with half_pixel_centers); the four input pixels
// around it (clamped to the image) are weighted by a cubic convolution
// kernel sampled from a 1024-step table, a = -0.75 by default and a = -0.5
// (Keys) with half_pixel_centers. In the Keys form taps that fall outside
// the image get weight 0 and the rest are rescaled to sum to 1. Each
// output is interpolated along y first, then along x.
//
// Area: output pixel y covers input span [y * scale, (y + 1) * scale); each
// input pixel contributes the fraction of it that lies inside the span
// (indices past the edge read the edge pixel), and the weighted sum is
// multiplied by 1 / (height_scale * width_scale).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
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

inline int64_t Clamp(int64_t v, int64_t size) {
  return std::min(size - 1, std::max<int64_t>(0, v));
}

// ---------------------------------------------------------------- Bicubic

constexpr int kCubicSteps = 1024;

// Entry 2 * i holds the kernel at distance i / kCubicSteps (the near taps),
// entry 2 * i + 1 at distance 1 + i / kCubicSteps (the far taps). Values
// are evaluated in double and stored as float.
using CubicTable = std::array<float, (kCubicSteps + 1) * 2>;

CubicTable MakeCubicTable(double a) {
  CubicTable table{};
  for (int i = 0; i <= kCubicSteps; ++i) {
    float d = static_cast<float>(i * 1.0 / kCubicSteps);
    table[i * 2] = static_cast<float>(((a + 2) * d - (a + 3)) * d * d + 1);
    d += 1.0f;
    table[i * 2 + 1] =
        static_cast<float>(((a * d - 5 * a) * d + 8 * a) * d - 4 * a);
  }
  return table;
}

const CubicTable& CubicCoefficients(bool keys) {
  static const CubicTable* const legacy = new CubicTable(MakeCubicTable(-0.75));
  static const CubicTable* const keys_table =
      new CubicTable(MakeCubicTable(-0.5));
  return keys ? *keys_table : *legacy;
}

// The four taps of one output coordinate: input indices (clamped) and
// their weights.
struct CubicTaps {
  std::array<int64_t, 4> index{};
  std::array<float, 4> weight{};
};

CubicTaps ComputeTaps(int64_t out, float scale, int64_t in_size,
                      bool half_pixel_centers) {
  const float in_f = half_pixel_centers
                         ? (static_cast<float>(out) + 0.5f) * scale - 0.5f
                         : static_cast<float>(out) * scale;
  const int64_t in = static_cast<int64_t>(std::floor(in_f));
  const float frac = in_f - static_cast<float>(in);
  const int64_t step = std::lrint(frac * static_cast<float>(kCubicSteps));
  const CubicTable& table = CubicCoefficients(half_pixel_centers);
  const float raw[4] = {table[step * 2 + 1], table[step * 2],
                        table[(kCubicSteps - step) * 2],
                        table[(kCubicSteps - step) * 2 + 1]};
  CubicTaps taps;
  for (int k = 0; k < 4; ++k) {
    taps.index[k] = Clamp(in - 1 + k, in_size);
    taps.weight[k] = raw[k];
  }
  if (half_pixel_centers) {
    // Keys form: drop the taps outside the image and renormalize.
    for (int k = 0; k < 4; ++k) {
      if (taps.index[k] != in - 1 + k) taps.weight[k] = 0.0f;
    }
    const float sum =
        taps.weight[0] + taps.weight[1] + taps.weight[2] + taps.weight[3];
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (float& w : taps.weight) w *= inv;
    }
  }
  return taps;
}

inline float Cubic(const std::array<float, 4>& w, float v0, float v1, float v2,
                   float v3) {
  return v0 * w[0] + v1 * w[1] + v2 * w[2] + v3 * w[3];
}

template <typename T>
class ResizeBicubicOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* ctx) override {
    ResizeGeometry g;
    Tensor* output = Prepare(ctx, &g);
    if (output == nullptr) return;
    const int64_t c_count = g.channels;
    const int64_t row_size = g.in_width * c_count;
    std::vector<CubicTaps> xs(g.out_width);
    // Input columns some output pixel reads: only those are interpolated
    // along y.
    std::vector<int64_t> columns;
    {
      std::vector<char> used(g.in_width, 0);
      for (int64_t x = 0; x < g.out_width; ++x) {
        xs[x] = ComputeTaps(x, g.width_scale, g.in_width, half_pixel_centers_);
        for (int64_t i : xs[x].index) used[i] = 1;
      }
      for (int64_t i = 0; i < g.in_width; ++i) {
        if (used[i]) columns.push_back(i);
      }
    }
    const T* in = ctx->input(0).flat<T>().data();
    float* out = output->flat<float>().data();
    ForEachRow(
        ctx, g,
        [&](int64_t begin, int64_t end) {
          // The y-interpolated values of the current row, by input column
          // and channel.
          std::vector<float> column_values(row_size);
          for (int64_t row = begin; row < end; ++row) {
            const int64_t b = row / g.out_height, y = row % g.out_height;
            const CubicTaps ys = ComputeTaps(y, g.height_scale, g.in_height,
                                             half_pixel_centers_);
            const T* image = in + b * g.in_height * row_size;
            const T* r0 = image + ys.index[0] * row_size;
            const T* r1 = image + ys.index[1] * row_size;
            const T* r2 = image + ys.index[2] * row_size;
            const T* r3 = image + ys.index[3] * row_size;
            for (int64_t col : columns) {
              for (int64_t k = col * c_count; k < (col + 1) * c_count; ++k) {
                column_values[k] = Cubic(
                    ys.weight, static_cast<float>(r0[k]),
                    static_cast<float>(r1[k]), static_cast<float>(r2[k]),
                    static_cast<float>(r3[k]));
              }
            }
            float* dst = out + row * g.out_width * c_count;
            for (int64_t x = 0; x < g.out_width; ++x, dst += c_count) {
              const CubicTaps& t = xs[x];
              const float* v0 = column_values.data() + t.index[0] * c_count;
              const float* v1 = column_values.data() + t.index[1] * c_count;
              const float* v2 = column_values.data() + t.index[2] * c_count;
              const float* v3 = column_values.data() + t.index[3] * c_count;
              for (int64_t c = 0; c < c_count; ++c) {
                dst[c] = Cubic(t.weight, v0[c], v1[c], v2[c], v3[c]);
              }
            }
          }
        },
        /*cycles_per_element=*/40);
  }
};

// ------------------------------------------------------------------- Area

// The input pixels one output coordinate covers: [start, end), the share
// of the first (start_weight) and of the last (last_weight); those between
// count fully.
struct AreaSpan {
  int64_t start = 0, end = 0;
  float start_weight = 0, last_weight = 0;
};

// How much of input pixel i lies in [lo, hi), where hi - lo == scale.
inline float Coverage(int64_t i, float lo, float hi, float scale) {
  const float i_f = static_cast<float>(i);
  const float next = static_cast<float>(i + 1);
  if (i_f < lo) return next > hi ? scale : next - lo;
  return next > hi ? hi - i_f : 1.0f;
}

std::vector<AreaSpan> AreaSpans(int64_t out_size, float scale) {
  std::vector<AreaSpan> spans(out_size);
  for (int64_t i = 0; i < out_size; ++i) {
    const float lo = static_cast<float>(i) * scale;
    const float hi = static_cast<float>(i + 1) * scale;
    AreaSpan& s = spans[i];
    s.start = static_cast<int64_t>(std::floor(lo));
    s.end = static_cast<int64_t>(std::ceil(hi));
    s.start_weight = Coverage(s.start, lo, hi, scale);
    s.last_weight = Coverage(s.end - 1, lo, hi, scale);
  }
  return spans;
}

template <typename T>
class ResizeAreaOp : public ResizeOpBase {
 public:
  explicit ResizeAreaOp(OpKernelConstruction* ctx)
      : ResizeOpBase(ctx, /*has_half_pixel_centers=*/false) {}

  void Compute(OpKernelContext* ctx) override {
    ResizeGeometry g;
    Tensor* output = Prepare(ctx, &g);
    if (output == nullptr) return;
    const std::vector<AreaSpan> xs = AreaSpans(g.out_width, g.width_scale);
    const float norm =
        static_cast<float>(1.0 / (g.height_scale * g.width_scale));
    const int64_t c_count = g.channels;
    const int64_t row_size = g.in_width * c_count;
    const T* in = ctx->input(0).flat<T>().data();
    float* out = output->flat<float>().data();
    ForEachRow(
        ctx, g,
        [&](int64_t begin, int64_t end) {
          std::vector<const T*> rows;
          std::vector<float> row_weights;
          for (int64_t row = begin; row < end; ++row) {
            const int64_t b = row / g.out_height, y = row % g.out_height;
            const float lo = static_cast<float>(y) * g.height_scale;
            const float hi = static_cast<float>(y + 1) * g.height_scale;
            const int64_t y_start = static_cast<int64_t>(std::floor(lo));
            const int64_t y_end = static_cast<int64_t>(std::ceil(hi));
            rows.clear();
            row_weights.clear();
            for (int64_t i = y_start; i < y_end; ++i) {
              row_weights.push_back(Coverage(i, lo, hi, g.height_scale));
              rows.push_back(in + (b * g.in_height + Clamp(i, g.in_height)) *
                                      row_size);
            }
            float* dst = out + row * g.out_width * c_count;
            for (int64_t x = 0; x < g.out_width; ++x, dst += c_count) {
              const AreaSpan& s = xs[x];
              const int64_t first = Clamp(s.start, g.in_width) * c_count;
              const int64_t last = Clamp(s.end - 1, g.in_width) * c_count;
              for (int64_t c = 0; c < c_count; ++c) {
                float sum = 0;
                for (size_t r = 0; r < rows.size(); ++r) {
                  const T* src = rows[r];
                  float line = static_cast<float>(src[first + c]) *
                               s.start_weight;
                  if (s.start + 1 != s.end) {
                    for (int64_t i = s.start + 1; i < s.end - 1; ++i) {
                      line += static_cast<float>(
                          src[Clamp(i, g.in_width) * c_count + c]);
                    }
                    line += static_cast<float>(src[last + c]) * s.last_weight;
                  }
                  sum += line * row_weights[r];
                }
                dst[c] = sum * norm;
              }
            }
          }
        },
        /*cycles_per_element=*/20);
  }
};

#define GR_REGISTER_RESIZE(T)                                              \
  REGISTER_KERNEL(KernelDefBuilder("ResizeBicubic")                        \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ResizeBicubicOp<T>);                                     \
  REGISTER_KERNEL(KernelDefBuilder("ResizeArea")                           \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ResizeAreaOp<T>)
GR_FOR_EACH_RESIZE_TYPE(GR_REGISTER_RESIZE);
#undef GR_REGISTER_RESIZE

}  // namespace
}  // namespace graphrun
