// Colour adjustments on CPU, TensorFlow's adjust_contrast_op.cc,
// adjust_saturation_op.cc and adjust_hue_op.cc: AdjustContrastv2 moves each
// channel of each image toward or away from its mean over the image;
// AdjustSaturation scales the saturation of each RGB pixel in HSV (clamped
// to [0, 1]); AdjustHue rotates its hue (delta in turns), through
// TensorFlow's hue-and-value-range form so the values agree bit for bit.
// Arithmetic in float (half inputs are widened).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

void RgbToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0;
  const float norm = 1.0f / (6.0f * range);
  float hh;
  if (r == vv) {
    hh = norm * (g - b);
  } else if (g == vv) {
    hh = norm * (b - r) + 2.0 / 6.0;
  } else {
    hh = norm * (r - g) + 4.0 / 6.0;
  }
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh = hh + 1;
  *v = vv;
  *h = hh;
}

void HsvToRgb(float h, float s, float v, float* r, float* g, float* b) {
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6;
  const int category = static_cast<int>(dh);
  float fmodu = dh;
  while (fmodu <= 0) fmodu += 2.0f;
  while (fmodu >= 2.0f) fmodu -= 2.0f;
  const float x = c * (1 - std::abs(fmodu - 1));
  float rr = 0, gg = 0, bb = 0;
  switch (category) {
    case 0: rr = c; gg = x; break;
    case 1: rr = x; gg = c; break;
    case 2: gg = c; bb = x; break;
    case 3: gg = x; bb = c; break;
    case 4: rr = x; bb = c; break;
    case 5: rr = c; bb = x; break;
    default: break;
  }
  *r = rr + m;
  *g = gg + m;
  *b = bb + m;
}

// Hue in [0, 6) with the smallest and largest component.
void RgbToHvRange(float r, float g, float b, float* h, float* v_min, float* v_max) {
  float v_mid;
  int category;
  if (r < g) {
    if (b < r) {
      *v_max = g; v_mid = r; *v_min = b; category = 1;
    } else if (b > g) {
      *v_max = b; v_mid = g; *v_min = r; category = 3;
    } else {
      *v_max = g; v_mid = b; *v_min = r; category = 2;
    }
  } else {
    if (b < g) {
      *v_max = r; v_mid = g; *v_min = b; category = 0;
    } else if (b > r) {
      *v_max = b; v_mid = r; *v_min = g; category = 4;
    } else {
      *v_max = r; v_mid = b; *v_min = g; category = 5;
    }
  }
  if (*v_max == *v_min) {
    *h = 0;
    return;
  }
  const float ratio = (v_mid - *v_min) / (*v_max - *v_min);
  const bool increase = (category & 1) == 0;
  *h = category + (increase ? ratio : (1 - ratio));
}

void HvRangeToRgb(float h, float v_min, float v_max, float* r, float* g, float* b) {
  const int category = static_cast<int>(h);
  float ratio = h - category;
  if ((category & 1) != 0) ratio = 1 - ratio;
  const float v_mid = v_min + ratio * (v_max - v_min);
  switch (category) {
    case 0: *r = v_max; *g = v_mid; *b = v_min; break;
    case 1: *r = v_mid; *g = v_max; *b = v_min; break;
    case 2: *r = v_min; *g = v_max; *b = v_mid; break;
    case 3: *r = v_min; *g = v_mid; *b = v_max; break;
    case 4: *r = v_mid; *g = v_min; *b = v_max; break;
    default: *r = v_max; *g = v_min; *b = v_mid; break;
  }
}

float Scalar(const Tensor& t) { return t.flat<float>()[0]; }

// AdjustSaturation (kHue false) and AdjustHue: images [..., 3].
template <typename T, bool kHue>
class ColorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& amount = ctx->input(1);
    OP_REQUIRES(ctx, in.dims() >= 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be at least 3-D, got shape", in.shape().DebugString())));
    OP_REQUIRES(ctx, amount.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    kHue ? "delta" : "scale", " must be scalar: ", amount.shape().DebugString())));
    OP_REQUIRES(ctx, in.dim_size(in.dims() - 1) == 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must have 3 channels but instead has ", in.dim_size(in.dims() - 1),
                    " channels.")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const float a = Scalar(amount);
    const T* x = in.flat<T>().data();
    T* y = out->flat<T>().data();
    for (int64_t p = 0, n = in.NumElements() / 3; p < n; ++p) {
      const float r = static_cast<float>(x[3 * p]), g = static_cast<float>(x[3 * p + 1]);
      const float b = static_cast<float>(x[3 * p + 2]);
      float ro, go, bo;
      if (kHue) {
        float h, v_min, v_max;
        RgbToHvRange(r, g, b, &h, &v_min, &v_max);
        h += a * 6;
        while (h < 0) h += 6;
        while (h >= 6) h -= 6;
        HvRangeToRgb(h, v_min, v_max, &ro, &go, &bo);
      } else {
        float h, s, v;
        RgbToHsv(r, g, b, &h, &s, &v);
        s = std::min(1.0f, std::max(0.0f, s * a));
        HsvToRgb(h, s, v, &ro, &go, &bo);
      }
      y[3 * p] = static_cast<T>(ro);
      y[3 * p + 1] = static_cast<T>(go);
      y[3 * p + 2] = static_cast<T>(bo);
    }
  }
};

// AdjustContrastv2: images [..., height, width, channels].
template <typename T>
class AdjustContrastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& factor_t = ctx->input(1);
    OP_REQUIRES(ctx, in.dims() >= 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be at least 3-D, got shape", in.shape().DebugString())));
    OP_REQUIRES(ctx, factor_t.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "contrast_factor must be scalar: ", factor_t.shape().DebugString())));
    const int r = in.dims();
    const int64_t pixels = in.dim_size(r - 3) * in.dim_size(r - 2);
    const int64_t channels = in.dim_size(r - 1);
    const int64_t images = pixels * channels == 0 ? 0 : in.NumElements() / (pixels * channels);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const float factor = Scalar(factor_t);
    const T* x = in.flat<T>().data();
    T* y = out->flat<T>().data();
    for (int64_t i = 0; i < images; ++i) {
      const T* img = x + i * pixels * channels;
      T* o = y + i * pixels * channels;
      for (int64_t c = 0; c < channels; ++c) {
        float sum = 0;
        for (int64_t p = 0; p < pixels; ++p) sum += static_cast<float>(img[p * channels + c]);
        const float mean = sum / static_cast<float>(pixels);
        for (int64_t p = 0; p < pixels; ++p) {
          const float v = static_cast<float>(img[p * channels + c]);
          o[p * channels + c] = static_cast<T>((v - mean) * factor + mean);
        }
      }
    }
  }
};

#define GR_REGISTER_COLOR(T)                                                                  \
  REGISTER_KERNEL(KernelDefBuilder("AdjustSaturation").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  ColorOp<T, false>);                                                          \
  REGISTER_KERNEL(KernelDefBuilder("AdjustHue").Device(kDeviceCpu).TypeConstraint<T>("T"),    \
                  ColorOp<T, true>);                                                           \
  REGISTER_KERNEL(                                                                            \
      KernelDefBuilder("AdjustContrastv2").Device(kDeviceCpu).TypeConstraint<T>("T"),         \
      AdjustContrastOp<T>)
GR_REGISTER_COLOR(float);
GR_REGISTER_COLOR(half);
#undef GR_REGISTER_COLOR

}  // namespace
}  // namespace graphrun
