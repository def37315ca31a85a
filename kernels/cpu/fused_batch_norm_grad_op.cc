// FusedBatchNormGrad, FusedBatchNormGradV2 and FusedBatchNormGradV3 on CPU,
// as TensorFlow's FusedBatchNormGradOp: the gradients of FusedBatchNorm's y
// with respect to x, scale and offset, per channel (the last dim for
// NHWC/NDHWC, dim 1 for NCHW/NCDHW), in float (U) whatever x's type.
//
// With c0 = rsqrt(variance + epsilon), xc = x - mean and n the elements
// per channel:
//   offset_backprop = sum(dy)
//   scale_backprop  = sum(dy * xc) * c0
//   training:  x_backprop = scale * c0 * (dy - sum(dy) / n
//                                         - xc * c0^2 * sum(dy * xc) / n)
//   inference: x_backprop = dy * scale * c0
// where mean and variance are reserve_space_1 and reserve_space_2: the
// batch mean and biased variance FusedBatchNorm saved when training, the
// population statistics it was given in inference. V3's reserve_space_3 is
// not read. reserve_space_3/4 (V3: 4/5) are empty vectors. An empty x gives
// zero scale and offset gradients. Unlike TensorFlow's CPU kernel, inference
// takes NCHW / NCDHW too (TensorFlow's Python gradient transposes to NHWC
// around it; the values are the same).
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using Index = Eigen::Index;
using Vec = Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>>;
using ConstVec = Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>>;
using Scratch = Eigen::Tensor<float, 1, Eigen::RowMajor>;

// dst = expr, on the intra-op pool when `parallel`.
template <typename Dst, typename Expr>
void Assign(const OpKernelContext& ctx, bool parallel, Dst&& dst, const Expr& expr) {
  if (parallel) {
    dst.device(ctx.eigen_cpu_device()) = expr;
  } else {
    Eigen::DefaultDevice device;
    dst.device(device) = expr;
  }
}

// x viewed as [outer, channels, inner]; inner is 1 when channels are last.
struct ChannelView {
  Index outer = 0;
  Index channels = 0;
  Index inner = 1;
};

// The Eigen view of x for each layout: [outer, channels] when channels are
// last, else [outer, channels, inner]; the dims summed to get one value per
// channel; and how a per-channel vector is reshaped and broadcast to x.
template <bool kChannelLast>
struct Geometry;

template <>
struct Geometry<true> {
  static constexpr int kRank = 2;
  using Reduce = Eigen::IndexList<Eigen::type2index<0>>;
  Eigen::DSizes<Index, 2> dims;
  Eigen::IndexList<Eigen::type2index<1>, Index> reshape;
  Eigen::IndexList<Index, Eigen::type2index<1>> bcast;
  explicit Geometry(const ChannelView& v) : dims(v.outer, v.channels) {
    reshape.set(1, v.channels);
    bcast.set(0, v.outer);
  }
};

template <>
struct Geometry<false> {
  static constexpr int kRank = 3;
  using Reduce = Eigen::IndexList<Eigen::type2index<0>, Eigen::type2index<2>>;
  Eigen::DSizes<Index, 3> dims;
  Eigen::IndexList<Eigen::type2index<1>, Index, Eigen::type2index<1>> reshape;
  Eigen::IndexList<Index, Eigen::type2index<1>, Index> bcast;
  explicit Geometry(const ChannelView& v) : dims(v.outer, v.channels, v.inner) {
    reshape.set(1, v.channels);
    bcast.set(0, v.outer);
    bcast.set(2, v.inner);
  }
};

// The per-channel inputs and outputs of one gradient.
struct ChannelParams {
  const float* scale = nullptr;
  const float* mean = nullptr;
  const float* variance = nullptr;
  float epsilon = 0;
  bool is_training = true;
  float* scale_backprop = nullptr;
  float* offset_backprop = nullptr;
};

// Writes dx (which may alias dy: each element is written after the sums
// have read them all) and the scale and offset gradients.
template <typename T, bool kChannelLast>
void Backprop(const OpKernelContext& ctx, bool parallel, const ChannelView& v,
              const ChannelParams& p, const T* dy, const T* x, T* dx) {
  using G = Geometry<kChannelLast>;
  using ConstMap = Eigen::TensorMap<Eigen::Tensor<const T, G::kRank, Eigen::RowMajor>>;
  using Map = Eigen::TensorMap<Eigen::Tensor<T, G::kRank, Eigen::RowMajor>>;
  const G g(v);
  const typename G::Reduce reduce;
  const Index c = v.channels;
  ConstMap dym(dy, g.dims);
  ConstMap xm(x, g.dims);
  ConstVec mean(p.mean, c), variance(p.variance, c), scale(p.scale, c);
  Vec offset_backprop(p.offset_backprop, c), scale_backprop(p.scale_backprop, c);
  Scratch sum_dy_xc(c), coef0(c), coef1(c);
  Eigen::DefaultDevice small;

  auto dyf = dym.template cast<float>();
  auto xc = xm.template cast<float>() - mean.reshape(g.reshape).broadcast(g.bcast);
  Assign(ctx, parallel, offset_backprop, dyf.sum(reduce));
  Assign(ctx, parallel, sum_dy_xc, (dyf * xc).sum(reduce));
  coef0.device(small) = (variance + p.epsilon).rsqrt();
  scale_backprop.device(small) = sum_dy_xc * coef0;
  coef1.device(small) = scale * coef0;

  Map dxm(dx, g.dims);
  if (!p.is_training) {
    Assign(ctx, parallel, dxm,
           (dyf * coef1.reshape(g.reshape).broadcast(g.bcast)).template cast<T>());
    return;
  }
  const float n = static_cast<float>(v.outer * v.inner);
  Scratch mean_dy(c), coef2(c);
  mean_dy.device(small) = offset_backprop * (1.0f / n);
  coef2.device(small) = coef0.square() * (sum_dy_xc / n);
  Assign(ctx, parallel, dxm,
         (coef1.reshape(g.reshape).broadcast(g.bcast) *
          ((dyf - mean_dy.reshape(g.reshape).broadcast(g.bcast)) -
           xc * coef2.reshape(g.reshape).broadcast(g.bcast)))
             .template cast<T>());
}

absl::Status CheckVector(const Tensor& t, const char* rank_message, const char* name,
                         int64_t channels) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(rank_message, " must be 1-dimensional", t.shape().DebugString()));
  }
  if (t.NumElements() != channels) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must have the same number of elements as the channels of x, got ",
                     t.NumElements(), " and ", channels));
  }
  return absl::OkStatus();
}

// T is x's, y_backprop's and x_backprop's type; the rest are float.
template <typename T>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("is_training", &is_training_));
    OP_REQUIRES(ctx,
                data_format == "NHWC" || data_format == "NCHW" || data_format == "NDHWC" ||
                    data_format == "NCDHW",
                absl::InvalidArgumentError(
                    absl::StrCat("Invalid data format: ", data_format)));
    channel_last_ = data_format == "NHWC" || data_format == "NDHWC";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& scale = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& variance = ctx->input(4);
    for (const Tensor* t : {&dy, &x}) {
      OP_REQUIRES(ctx, t->dims() == 4 || t->dims() == 5,
                  absl::InvalidArgumentError(absl::StrCat("input must be 4 or 5-dimensional",
                                                          t->shape().DebugString())));
    }
    OP_REQUIRES(ctx, x.shape() == dy.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "x and y_backprop must have same shape, but x has shape ",
                    x.shape().DebugString(), " and y_backprop has shape ",
                    dy.shape().DebugString())));
    ChannelView v;
    const int channel_axis = channel_last_ ? x.dims() - 1 : 1;
    v.channels = x.dim_size(channel_axis);
    if (channel_last_) {
      v.outer = v.channels == 0 ? 0 : x.NumElements() / v.channels;
    } else {
      v.outer = x.dim_size(0);
      for (int i = 2; i < x.dims(); ++i) v.inner *= x.dim_size(i);
    }
    OP_REQUIRES_OK(ctx, CheckVector(scale, "scale", "scale", v.channels));
    OP_REQUIRES_OK(ctx, CheckVector(mean, "saved mean", "reserve_space_1", v.channels));
    OP_REQUIRES_OK(ctx, CheckVector(variance, "saved variance", "reserve_space_2", v.channels));

    // Forwarding may take y_backprop's buffer (and reset input 0).
    const int64_t num_elements = x.NumElements();
    const T* dy_data = num_elements > 0 ? dy.flat<T>().data() : nullptr;
    const T* x_data = num_elements > 0 ? x.flat<T>().data() : nullptr;
    ChannelParams p;
    p.scale = scale.flat<float>().data();
    p.mean = mean.flat<float>().data();
    p.variance = variance.flat<float>().data();
    p.epsilon = epsilon_;
    p.is_training = is_training_;
    const TensorShape x_shape = x.shape();
    const TensorShape channel_shape = scale.shape();
    Tensor* dx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, x_shape, &dx));
    Tensor* scale_backprop = nullptr;
    Tensor* offset_backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, channel_shape, &scale_backprop));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, channel_shape, &offset_backprop));
    for (int i = 3; i < 5; ++i) {
      Tensor* empty = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({0}), &empty));
    }
    p.scale_backprop = scale_backprop->flat<float>().data();
    p.offset_backprop = offset_backprop->flat<float>().data();
    if (num_elements == 0) {
      for (int64_t i = 0; i < v.channels; ++i) {
        p.scale_backprop[i] = 0.0f;
        p.offset_backprop[i] = 0.0f;
      }
      return;
    }
    const bool parallel = num_elements > kParallelElements;
    T* dx_data = dx->flat<T>().data();
    if (channel_last_) {
      Backprop<T, true>(*ctx, parallel, v, p, dy_data, x_data, dx_data);
    } else {
      Backprop<T, false>(*ctx, parallel, v, p, dy_data, x_data, dx_data);
    }
  }

 private:
  float epsilon_ = 1e-4f;
  bool is_training_ = true;
  bool channel_last_ = true;
};

REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormGrad")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT}),
                FusedBatchNormGradOp<float>);

#define GR_REGISTER_FBN_GRAD_V2_V3(T)                                  \
  REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormGradV2")             \
                      .Device(kDeviceCpu)                              \
                      .TypeConstraint("T", {DataTypeToEnum<T>::value}) \
                      .TypeConstraint("U", {DT_FLOAT}),                \
                  FusedBatchNormGradOp<T>);                            \
  REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormGradV3")             \
                      .Device(kDeviceCpu)                              \
                      .TypeConstraint("T", {DataTypeToEnum<T>::value}) \
                      .TypeConstraint("U", {DT_FLOAT}),                \
                  FusedBatchNormGradOp<T>)
GR_REGISTER_FBN_GRAD_V2_V3(float);
GR_REGISTER_FBN_GRAD_V2_V3(half);
GR_REGISTER_FBN_GRAD_V2_V3(bfloat16);
#undef GR_REGISTER_FBN_GRAD_V2_V3

}  // namespace
}  // namespace graphrun
