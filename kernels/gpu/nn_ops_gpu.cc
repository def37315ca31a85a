// The GPU's nn kernels, float: Conv2D, DepthwiseConv2dNative and their
// fused forms (_FusedConv2D, _FusedDepthwiseConv2dNative: bias and
// activation after the convolution) on cuDNN, NHWC or NCHW; MaxPool and
// AvgPool, and FusedBatchNorm (V1-V3, 4-D or 5-D, inference and training)
// as CUDA kernels.
//
// cuDNN takes its filter as [out, kh, kw, in] (NHWC) or [out, in, kh, kw]
// (NCHW), so each step first copies TensorFlow's [kh, kw, in, out] filter
// into that layout in a temp buffer; where TensorFlow's SAME padding is
// larger after than before, the input is copied into a zeroed, bigger temp
// first (array_plans.h). Pooling is a direct kernel rather than cuDNN's: it
// takes TensorFlow's asymmetric padding as it is, and an average counts
// only the elements inside the input, without a padded copy.
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/array_plans.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using gpu::GpuKernel;
using gpu::Stream;
using op_shapes::Padding;

using gpu::FloatData;

using gpu::ReadDataFormat;
using gpu::ReadPadding;

// Conv2D and DepthwiseConv2dNative, and with `fused` their _Fused forms.
class ConvOp : public GpuKernel {
 public:
  ConvOp(OpKernelConstruction* c, bool depthwise, bool fused)
      : GpuKernel(c), depthwise_(depthwise), fused_(fused) {
    absl::Status s = c->GetAttr("strides", &attrs_.strides);
    if (s.ok() && c->attrs().Find("dilations") != nullptr) {
      s = c->GetAttr("dilations", &attrs_.dilations);
    }
    if (s.ok()) s = ReadPadding(c, &attrs_.padding, &attrs_.explicit_paddings);
    if (s.ok()) s = ReadDataFormat(c, &attrs_.nchw);
    if (s.ok() && fused_) {
      absl::StatusOr<gpu::Epilogue> e = gpu::EpilogueFromAttrs(c);
      s = e.status();
      if (e.ok()) epilogue_ = *e;
    }
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    absl::StatusOr<gpu::ConvPlan> plan =
        gpu::PlanConv2D(input.shape(), filter.shape(), attrs_, depthwise_);
    OP_REQUIRES_OK(ctx, plan.status());
    const gpu::ConvGeometry& g = plan->geometry;
    if (fused_) {
      const Tensor& bias = ctx->input(2);
      OP_REQUIRES(ctx, bias.dims() == 1 && bias.dim_size(0) == g.out_c,
                  absl::InvalidArgumentError(absl::StrCat("the fused bias must be [", g.out_c,
                                                          "], got ", bias.shape().DebugString())));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (input.NumElements() == 0 || filter.NumElements() == 0) {  // sums of nothing
      OP_REQUIRES_OK(ctx,
                     gpu::Zero(*stream, out->raw_data(), static_cast<int64_t>(out->TotalBytes())));
    } else {
      Tensor filter_layout;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->filter_layout, &filter_layout));
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, filter.raw_data(), filter_layout.raw_data(),
                                           plan->filter_copy));
      const float* in = FloatData(input);
      Tensor padded;
      if (plan->pad_input) {
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->padded_input, &padded));
        OP_REQUIRES_OK(
            ctx, gpu::Zero(*stream, padded.raw_data(), static_cast<int64_t>(padded.TotalBytes())));
        OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, input.raw_data(), padded.raw_data(),
                                             plan->input_copy));
        in = FloatData(padded);
      }
      std::vector<Tensor> scratch;
      auto workspace = [&](int64_t bytes) -> absl::StatusOr<void*> {
        absl::StatusOr<TensorShape> shape = TensorShape::FromDims({bytes});
        if (!shape.ok()) return shape.status();
        Tensor t;
        absl::Status s = ctx->allocate_temp(DT_UINT8, *shape, &t);
        if (!s.ok()) return s;
        scratch.push_back(t);
        return scratch.back().raw_data();
      };
      OP_REQUIRES_OK(
          ctx, gpu::Conv2D(*stream, g, in, FloatData(filter_layout), FloatData(out), workspace));
    }
    if (fused_) {
      gpu::ChannelView v;
      v.channels = g.out_c;
      v.outer = g.nchw ? g.n : g.n * g.out_h * g.out_w;
      v.inner = g.nchw ? g.out_h * g.out_w : 1;
      OP_REQUIRES_OK(ctx, gpu::ChannelBiasActivation(
                              *stream, FloatData(out), FloatData(ctx->input(2)), FloatData(out), v,
                              epilogue_.activation, epilogue_.leakyrelu_alpha));
    }
  }

 private:
  const bool depthwise_;
  const bool fused_;
  gpu::ConvAttrs attrs_;
  gpu::Epilogue epilogue_;
};

template <bool kDepthwise, bool kFused>
class ConvOpOf : public ConvOp {
 public:
  explicit ConvOpOf(OpKernelConstruction* c) : ConvOp(c, kDepthwise, kFused) {}
};

class PoolOp : public GpuKernel {
 public:
  explicit PoolOp(OpKernelConstruction* c) : GpuKernel(c), max_(c->def().op() == "MaxPool") {
    absl::Status s = c->GetAttr("ksize", &ksize_);
    if (s.ok()) s = c->GetAttr("strides", &strides_);
    if (s.ok()) s = ReadPadding(c, &padding_, &explicit_paddings_);
    if (s.ok()) s = ReadDataFormat(c, &nchw_);
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TensorShape shape;
    absl::StatusOr<gpu::PoolGeometry> g =
        gpu::PoolPlan(x.shape(), ksize_, strides_, padding_, explicit_paddings_, nchw_, &shape);
    OP_REQUIRES_OK(ctx, g.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::Pool(*stream, max_, FloatData(x), FloatData(out), *g));
  }

 private:
  const bool max_;
  std::vector<int64_t> ksize_, strides_, explicit_paddings_;
  Padding padding_ = Padding::kValid;
  bool nchw_ = false;
};

// FusedBatchNorm, V2 and V3 (float x and statistics), as the CPU kernel:
// inference normalizes with the given statistics and returns them; training
// computes the batch's (see gpu::BatchNormTraining).
class FusedBatchNormOp : public GpuKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : GpuKernel(c) {
    absl::Status s = c->GetAttr("epsilon", &epsilon_);
    if (s.ok() && c->attrs().Find("exponential_avg_factor") != nullptr) {
      s = c->GetAttr("exponential_avg_factor", &factor_);
    }
    if (s.ok()) s = c->GetAttr("is_training", &is_training_);
    std::string format = "NHWC";
    if (s.ok() && c->attrs().Find("data_format") != nullptr) s = c->GetAttr("data_format", &format);
    if (s.ok() && format != "NHWC" && format != "NCHW" && format != "NDHWC" && format != "NCDHW") {
      s = absl::InvalidArgumentError("Invalid data format");
    }
    channel_last_ = format == "NHWC" || format == "NDHWC";
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 4 || x.dims() == 5,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be 4 or 5-dimensional", x.shape().DebugString())));
    gpu::ChannelView v;
    v.channels = x.dim_size(channel_last_ ? x.dims() - 1 : 1);
    if (channel_last_) {
      v.outer = v.channels == 0 ? 0 : x.NumElements() / v.channels;
    } else {
      v.outer = x.dim_size(0);
      for (int d = 2; d < x.dims(); ++d) v.inner *= x.dim_size(d);
    }
    const bool use_given = !is_training_ || factor_ != 1.0f;
    for (int i = 1; i <= 4; ++i) {
      const Tensor& t = ctx->input(i);
      if (i >= 3 && !use_given) continue;
      OP_REQUIRES(ctx, t.dims() == 1 && t.dim_size(0) == v.channels,
                  absl::InvalidArgumentError(absl::StrCat(
                      "scale, offset, mean and variance must be [", v.channels,
                      "] (the channels of x), got ", t.shape().DebugString(), " for input ", i)));
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    Tensor* stats[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i + 1, TensorShape({v.channels}), &stats[i]));
    }
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (ctx->num_outputs() == 6) {
      Tensor* reserve3 = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape(), &reserve3));
      OP_REQUIRES_OK(ctx, gpu::Zero(*stream, reserve3->raw_data(), 4));
    }
    if (x.NumElements() == 0) {  // NaN statistics, as TensorFlow
      const float nan = std::numeric_limits<float>::quiet_NaN();
      uint32_t bits;
      std::memcpy(&bits, &nan, sizeof(bits));
      for (Tensor* t : stats) {
        OP_REQUIRES_OK(ctx, gpu::Fill(*stream, 4, bits, t->raw_data(), t->NumElements()));
      }
      return;
    }
    if (!is_training_) {
      OP_REQUIRES_OK(ctx,
                     gpu::BatchNormInference(*stream, FloatData(x), FloatData(ctx->input(1)),
                                             FloatData(ctx->input(2)), FloatData(ctx->input(3)),
                                             FloatData(ctx->input(4)), epsilon_, FloatData(y), v));
      for (int i = 0; i < 4; ++i) {
        const Tensor& given = ctx->input(3 + i % 2);
        OP_REQUIRES_OK(ctx, gpu::CopyOnDevice(*stream, given.raw_data(), stats[i]->raw_data(),
                                              static_cast<int64_t>(given.TotalBytes())));
      }
      return;
    }
    OP_REQUIRES_OK(
        ctx, gpu::BatchNormTraining(*stream, FloatData(x), FloatData(ctx->input(1)),
                                    FloatData(ctx->input(2)),
                                    use_given ? FloatData(ctx->input(3)) : nullptr,
                                    use_given ? FloatData(ctx->input(4)) : nullptr, epsilon_,
                                    factor_, FloatData(y), FloatData(stats[0]), FloatData(stats[1]),
                                    FloatData(stats[2]), FloatData(stats[3]), v));
  }

 private:
  float epsilon_ = 1e-4f;
  float factor_ = 1.0f;
  bool is_training_ = true;
  bool channel_last_ = true;
};

REGISTER_KERNEL(KernelDefBuilder("Conv2D").Device(kDeviceGpu).TypeConstraint<float>("T"),
                ConvOpOf<false, false>);
REGISTER_KERNEL(KernelDefBuilder("_FusedConv2D").Device(kDeviceGpu).TypeConstraint<float>("T"),
                ConvOpOf<false, true>);
REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNative").Device(kDeviceGpu).TypeConstraint<float>("T"),
    ConvOpOf<true, false>);
REGISTER_KERNEL(
    KernelDefBuilder("_FusedDepthwiseConv2dNative").Device(kDeviceGpu).TypeConstraint<float>("T"),
    ConvOpOf<true, true>);
REGISTER_KERNEL(KernelDefBuilder("MaxPool").Device(kDeviceGpu).TypeConstraint<float>("T"), PoolOp);
REGISTER_KERNEL(KernelDefBuilder("AvgPool").Device(kDeviceGpu).TypeConstraint<float>("T"), PoolOp);
REGISTER_KERNEL(KernelDefBuilder("FusedBatchNorm").Device(kDeviceGpu).TypeConstraint<float>("T"),
                FusedBatchNormOp);
REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV2")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .TypeConstraint<float>("U"),
                FusedBatchNormOp);
REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV3")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .TypeConstraint<float>("U"),
                FusedBatchNormOp);

}  // namespace
}  // namespace graphrun
