// Fake quantization on CPU, TensorFlow's fake_quant_ops_functor.h: the
// range [min, max] is nudged so that zero is exactly representable on the
// grid of 2^num_bits - 1 steps (one step fewer with narrow_range), inputs
// are clamped to the nudged range and rounded to the grid, half up.
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

struct Nudged {
  float min, max, scale, inv_scale;
};

Nudged Nudge(float min, float max, int quant_min, int quant_max) {
  const float qmin = static_cast<float>(quant_min);
  const float qmax = static_cast<float>(quant_max);
  Nudged n;
  n.scale = (max - min) / (qmax - qmin);
  n.inv_scale = (qmax - qmin) / (max - min);
  const float zero_from_min = qmin - min / n.scale;
  uint16_t zero;
  if (zero_from_min < qmin) {
    zero = static_cast<uint16_t>(quant_min);
  } else if (zero_from_min > qmax) {
    zero = static_cast<uint16_t>(quant_max);
  } else {
    zero = static_cast<uint16_t>(std::round(zero_from_min));
  }
  n.min = (qmin - zero) * n.scale;
  n.max = (qmax - zero) * n.scale;
  return n;
}

float Quantize(float x, const Nudged& n) {
  const float clamped = std::min(std::max(x, n.min), n.max);
  return std::floor((clamped - n.min) * n.inv_scale + 0.5f) * n.scale + n.min;
}

// Args (range from attrs), Vars (scalar inputs 1, 2), PerChannel (vectors
// over the last dim).
class FakeQuantOp : public OpKernel {
 public:
  explicit FakeQuantOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t bits = 8;
    bool narrow = false;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_bits", &bits));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("narrow_range", &narrow));
    OP_REQUIRES(ctx, bits >= 2 && bits <= 16,
                absl::InvalidArgumentError(absl::StrCat(
                    "num_bits must be between 2 and 16, inclusive")));
    quant_min_ = narrow ? 1 : 0;
    quant_max_ = (1 << bits) - 1;
    args_ = type_string() == "FakeQuantWithMinMaxArgs";
    per_channel_ = type_string() == "FakeQuantWithMinMaxVarsPerChannel";
    if (args_) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("min", &min_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("max", &max_));
      OP_REQUIRES(ctx, min_ < max_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "min has to be smaller than max, was: ", min_, " >= ", max_)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    int64_t channels = 1;
    const float* mins = &min_;
    const float* maxs = &max_;
    if (!args_) {
      const Tensor& lo = ctx->input(1);
      const Tensor& hi = ctx->input(2);
      if (per_channel_) {
        OP_REQUIRES(ctx, in.dims() >= 1,
                    absl::InvalidArgumentError("inputs must be at least 1-D"));
        channels = in.dim_size(in.dims() - 1);
        OP_REQUIRES(ctx, lo.dims() == 1 && lo.dim_size(0) == channels && hi.shape() == lo.shape(),
                    absl::InvalidArgumentError(absl::StrCat(
                        "min and max must be vectors of the inputs' last dim (", channels,
                        "), got ", lo.shape().DebugString(), " and ",
                        hi.shape().DebugString())));
      } else {
        OP_REQUIRES(ctx, lo.dims() == 0 && hi.dims() == 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "min and max must be scalars, got ", lo.shape().DebugString(), " and ",
                        hi.shape().DebugString())));
      }
      mins = lo.flat<float>().data();
      maxs = hi.flat<float>().data();
    }
    std::vector<Nudged> nudged(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      nudged[c] = Nudge(mins[c], maxs[c], quant_min_, quant_max_);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const float* x = in.flat<float>().data();
    float* y = out->flat<float>().data();
    for (int64_t i = 0, n = in.NumElements(); i < n; ++i) {
      y[i] = Quantize(x[i], nudged[channels == 1 ? 0 : i % channels]);
    }
  }

 private:
  int quant_min_ = 0, quant_max_ = 255;
  bool args_ = false, per_channel_ = false;
  float min_ = -6.0f, max_ = 6.0f;
};

REGISTER_KERNEL(KernelDefBuilder("FakeQuantWithMinMaxArgs").Device(kDeviceCpu), FakeQuantOp);
REGISTER_KERNEL(KernelDefBuilder("FakeQuantWithMinMaxVars").Device(kDeviceCpu), FakeQuantOp);
REGISTER_KERNEL(KernelDefBuilder("FakeQuantWithMinMaxVarsPerChannel").Device(kDeviceCpu),
                FakeQuantOp);

}  // namespace
}  // namespace graphrun
