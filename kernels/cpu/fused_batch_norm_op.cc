// FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3 on CPU, as
// TensorFlow's FusedBatchNormOp: y = (x - mean) * rsqrt(variance + epsilon)
// * scale + offset per channel (the last dim for NHWC/NDHWC, dim 1 for
// NCHW/NCDHW), with the statistics in float (U) whatever x's type.
//
// Inference (is_training=false) uses the given mean and variance and
// returns them as batch_mean/batch_variance and reserve_space_1/2.
// Training computes the batch mean and the biased variance, normalizes with
// the biased one, and returns the unbiased (Bessel-corrected) variance as
// batch_variance, blended into the given running statistics when
// exponential_avg_factor != 1; reserve_space_1/2 hold the batch mean and the
// biased variance. V3's reserve_space_3 is a scalar 0 (as TF's CPU kernel).
// An empty x gives NaN statistics, as TensorFlow.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernel_util.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using Index = Eigen::Index;
using Vec = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>>;
using ConstVec = Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>>;

using cpu::kParallelElements;

using cpu::Assign;

// x viewed as [outer, channels, inner]: inner == 1 when channels are last
// (then x is a [outer, channels] matrix), outer == batch when first.
struct ChannelView {
  Index outer = 0;
  Index channels = 0;
  Index inner = 1;
  bool channel_last = true;
};

// Per-channel mean and biased variance of x.
template <typename T>
void Moments(const OpKernelContext& ctx, bool parallel, const ChannelView& v,
             const T* x, float* mean_out, float* var_out) {
  Vec mean(mean_out, v.channels);
  Vec var(var_out, v.channels);
  const float inv_count =
      1.0f / static_cast<float>(v.outer * v.inner);
  if (v.channel_last) {
    Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>> xm(
        x, v.outer, v.channels);
    const Eigen::IndexList<Eigen::type2index<0>> rows;
    Eigen::IndexList<Eigen::type2index<1>, Index> one_by_c;
    one_by_c.set(1, v.channels);
    Eigen::IndexList<Index, Eigen::type2index<1>> bcast;
    bcast.set(0, v.outer);
    auto xf = xm.template cast<float>();
    Assign(ctx, parallel, mean, xf.sum(rows) * inv_count);
    Assign(ctx, parallel, var,
           (xf - mean.reshape(one_by_c).broadcast(bcast)).square().sum(rows) *
               inv_count);
  } else {
    Eigen::TensorMap<Eigen::Tensor<const T, 3, Eigen::RowMajor>> xm(
        x, v.outer, v.channels, v.inner);
    const Eigen::IndexList<Eigen::type2index<0>, Eigen::type2index<2>> dims;
    Eigen::IndexList<Eigen::type2index<1>, Index, Eigen::type2index<1>> shape;
    shape.set(1, v.channels);
    Eigen::IndexList<Index, Eigen::type2index<1>, Index> bcast;
    bcast.set(0, v.outer);
    bcast.set(2, v.inner);
    auto xf = xm.template cast<float>();
    Assign(ctx, parallel, mean, xf.sum(dims) * inv_count);
    Assign(ctx, parallel, var,
           (xf - mean.reshape(shape).broadcast(bcast)).square().sum(dims) *
               inv_count);
  }
}

// y = (x - mean) * scaling + offset per channel. y may alias x.
template <typename T>
void Normalize(const OpKernelContext& ctx, bool parallel, const ChannelView& v,
               const T* x, const float* mean_in, const float* scaling_in,
               const float* offset_in, T* y) {
  ConstVec mean(mean_in, v.channels);
  ConstVec scaling(scaling_in, v.channels);
  ConstVec offset(offset_in, v.channels);
  if (v.channel_last) {
    Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>> xm(
        x, v.outer, v.channels);
    Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>> ym(y, v.outer,
                                                              v.channels);
    Eigen::IndexList<Eigen::type2index<1>, Index> one_by_c;
    one_by_c.set(1, v.channels);
    Eigen::IndexList<Index, Eigen::type2index<1>> bcast;
    bcast.set(0, v.outer);
    Assign(ctx, parallel, ym,
           ((xm.template cast<float>() -
             mean.reshape(one_by_c).broadcast(bcast)) *
                scaling.reshape(one_by_c).broadcast(bcast) +
            offset.reshape(one_by_c).broadcast(bcast))
               .template cast<T>());
  } else {
    Eigen::TensorMap<Eigen::Tensor<const T, 3, Eigen::RowMajor>> xm(
        x, v.outer, v.channels, v.inner);
    Eigen::TensorMap<Eigen::Tensor<T, 3, Eigen::RowMajor>> ym(
        y, v.outer, v.channels, v.inner);
    Eigen::IndexList<Eigen::type2index<1>, Index, Eigen::type2index<1>> shape;
    shape.set(1, v.channels);
    Eigen::IndexList<Index, Eigen::type2index<1>, Index> bcast;
    bcast.set(0, v.outer);
    bcast.set(2, v.inner);
    Assign(ctx, parallel, ym,
           ((xm.template cast<float>() - mean.reshape(shape).broadcast(bcast)) *
                scaling.reshape(shape).broadcast(bcast) +
            offset.reshape(shape).broadcast(bcast))
               .template cast<T>());
  }
}

// T is x's and y's type; the statistics (U) are float.
template <typename T>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("exponential_avg_factor",
                                     &exponential_avg_factor_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("is_training", &is_training_));
    OP_REQUIRES(ctx,
                data_format == "NHWC" || data_format == "NCHW" ||
                    data_format == "NDHWC" || data_format == "NCDHW",
                absl::InvalidArgumentError("Invalid data format"));
    channel_last_ = data_format == "NHWC" || data_format == "NDHWC";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& variance = ctx->input(4);
    OP_REQUIRES(ctx, x.dims() == 4 || x.dims() == 5,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be 4 or 5-dimensional",
                                 x.shape().DebugString())));
    OP_REQUIRES(ctx, scale.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("scale must be 1-dimensional",
                                 scale.shape().DebugString())));
    OP_REQUIRES(ctx, offset.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("offset must be 1-dimensional",
                                 offset.shape().DebugString())));
    OP_REQUIRES(ctx, mean.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("estimated_mean must be 1-dimensional",
                                 mean.shape().DebugString())));
    OP_REQUIRES(ctx, variance.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("estimated_variance must be 1-dimensional",
                                 variance.shape().DebugString())));
    ChannelView v;
    v.channel_last = channel_last_;
    const int channel_axis = channel_last_ ? x.dims() - 1 : 1;
    v.channels = x.dim_size(channel_axis);
    if (channel_last_) {
      v.outer = v.channels == 0 ? 0 : x.NumElements() / v.channels;
    } else {
      v.outer = x.dim_size(0);
      v.inner = 1;
      for (int i = 2; i < x.dims(); ++i) v.inner *= x.dim_size(i);
    }
    OP_REQUIRES(ctx, scale.NumElements() == v.channels,
                absl::InvalidArgumentError(absl::StrCat(
                    "scale must have the same number of elements as the "
                    "channels of x, got ",
                    scale.NumElements(), " and ", v.channels)));
    OP_REQUIRES(ctx, offset.NumElements() == v.channels,
                absl::InvalidArgumentError(absl::StrCat(
                    "offset must have the same number of elements as the "
                    "channels of x, got ",
                    offset.NumElements(), " and ", v.channels)));
    const bool use_running = !is_training_ || exponential_avg_factor_ != 1.0f;
    if (use_running) {
      const char* prefix = is_training_ ? "When exponential_avg_factor != 1"
                                        : "When is_training=false";
      OP_REQUIRES(ctx, mean.NumElements() == v.channels,
                  absl::InvalidArgumentError(absl::StrCat(
                      prefix,
                      ", mean must have the same number of elements as the "
                      "channels of x, got ",
                      mean.NumElements(), " and ", v.channels)));
      OP_REQUIRES(ctx, variance.NumElements() == v.channels,
                  absl::InvalidArgumentError(absl::StrCat(
                      prefix,
                      ", variance must have the same number of elements as "
                      "the channels of x, got ",
                      variance.NumElements(), " and ", v.channels)));
    }

    // Forwarding may take x's buffer (and reset input 0): keep what we need.
    const int64_t num_elements = x.NumElements();
    const T* x_data = num_elements > 0 ? x.flat<T>().data() : nullptr;
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, x.shape(),
                                                              &y));
    Tensor* stats[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i + 1, scale.shape(),
                                               &stats[i]));
    }
    float* batch_mean = stats[0]->flat<float>().data();
    float* batch_var = stats[1]->flat<float>().data();
    float* saved_mean = stats[2]->flat<float>().data();
    float* saved_var = stats[3]->flat<float>().data();
    if (num_outputs() == 6) {
      Tensor* reserve3 = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape(), &reserve3));
      reserve3->flat<float>()[0] = 0.0f;
    }
    const Index c = v.channels;
    if (num_elements == 0) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (float* out : {batch_mean, batch_var, saved_mean, saved_var}) {
        std::fill(out, out + c, nan);
      }
      return;
    }
    // Each y element is written after its x element is read: y may alias x.
    T* y_data = y->flat<T>().data();
    const bool parallel = num_elements > kParallelElements;
    ConstVec scale_v(scale.flat<float>().data(), c);
    ConstVec offset_v(offset.flat<float>().data(), c);
    Vec out_mean(batch_mean, c), out_var(batch_var, c);
    Vec reserve_mean(saved_mean, c), reserve_var(saved_var, c);
    Eigen::Tensor<float, 1, Eigen::RowMajor> scaling(c);
    Eigen::DefaultDevice small;

    if (!is_training_) {
      ConstVec mean_v(mean.flat<float>().data(), c);
      ConstVec var_v(variance.flat<float>().data(), c);
      scaling.device(small) = (var_v + epsilon_).rsqrt() * scale_v;
      Normalize<T>(*ctx, parallel, v, x_data, mean_v.data(), scaling.data(),
                   offset_v.data(), y_data);
      out_mean.device(small) = mean_v;
      out_var.device(small) = var_v;
      reserve_mean.device(small) = mean_v;
      reserve_var.device(small) = var_v;
      return;
    }

    // Training: the batch's statistics (reserve_space_1/2 hold them).
    Moments<T>(*ctx, parallel, v, x_data, saved_mean, saved_var);
    scaling.device(small) = (reserve_var + epsilon_).rsqrt() * scale_v;
    Normalize<T>(*ctx, parallel, v, x_data, saved_mean, scaling.data(),
                 offset_v.data(), y_data);
    const int64_t count = v.outer * v.inner;
    const float adjust =
        static_cast<float>(count) / static_cast<float>(count > 1 ? count - 1 : 1);
    if (exponential_avg_factor_ == 1.0f) {
      out_mean.device(small) = reserve_mean;
      out_var.device(small) = reserve_var * adjust;
    } else {
      const float f = exponential_avg_factor_;
      ConstVec old_mean(mean.flat<float>().data(), c);
      ConstVec old_var(variance.flat<float>().data(), c);
      out_mean.device(small) = old_mean * (1.0f - f) + reserve_mean * f;
      out_var.device(small) =
          old_var * (1.0f - f) + reserve_var * (f * adjust);
    }
  }

 private:
  float epsilon_ = 1e-4f;
  float exponential_avg_factor_ = 1.0f;
  bool is_training_ = true;
  bool channel_last_ = true;
};

REGISTER_KERNEL(KernelDefBuilder("FusedBatchNorm")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT}),
                FusedBatchNormOp<float>);

#define GR_REGISTER_FBN_V2_V3(T)                                       \
  REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV2")                 \
                      .Device(kDeviceCpu)                              \
                      .TypeConstraint("T", {DataTypeToEnum<T>::value}) \
                      .TypeConstraint("U", {DT_FLOAT}),                \
                  FusedBatchNormOp<T>);                                \
  REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV3")                 \
                      .Device(kDeviceCpu)                              \
                      .TypeConstraint("T", {DataTypeToEnum<T>::value}) \
                      .TypeConstraint("U", {DT_FLOAT}),                \
                  FusedBatchNormOp<T>)
GR_REGISTER_FBN_V2_V3(float);
GR_REGISTER_FBN_V2_V3(half);
GR_REGISTER_FBN_V2_V3(bfloat16);
#undef GR_REGISTER_FBN_V2_V3

}  // namespace
}  // namespace graphrun
