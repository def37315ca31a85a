// Element-wise activations (Relu, Relu6, Elu, Softplus, Softsign, Selu,
// LeakyRelu) and BiasAdd/BiasAddV1 on CPU, as TensorFlow's relu_op.cc,
// softplus_op.cc, softsign_op.cc and bias_op.cc: outputs reuse the input
// buffer when they can; tensors over kThreadedMinElements run on the
// intra-op pool.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Element counts above this run on the thread pool.
constexpr int64_t kThreadedMinElements = kParallelElements;

// Evaluates `dst = expr` on the pool when big (and a pool exists), else on
// the calling thread.
template <typename Dst, typename Expr>
void Assign(OpKernelContext* ctx, int64_t elements, Dst dst, const Expr& expr) {
  const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
  if (pool != nullptr && elements > kThreadedMinElements) {
    dst.device(*pool) = expr;
  } else {
    dst = expr;
  }
}

// Output 0 = expr_of(x) for input 0 `x` (a rank-1 ConstTensorMap), in x's
// buffer when it can be forwarded.
template <typename T, typename ExprOf>
void ComputeElementwise(OpKernelContext* ctx, ExprOf expr_of) {
  const Tensor& x = ctx->input(0);
  // Forwarding may take the input away: keep what we need first. The
  // buffer itself lives on in the output or in the input.
  const TensorShape shape = x.shape();
  const int64_t n = x.NumElements();
  const T* in = x.flat<T>().data();
  Tensor* y = nullptr;
  OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, shape, &y));
  if (n == 0) return;
  ConstTensorMap<T> src(in, n);
  Assign(ctx, n, TensorMap<T>(y->flat<T>().data(), n), expr_of(src));
}

// Unary activation: Functor::Apply(x) builds the Eigen expression.
template <typename T, typename Functor>
class ActivationOp : public OpKernel {
 public:
  explicit ActivationOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    ComputeElementwise<T>(ctx, [](const auto& x) { return Functor::Apply(x); });
  }
};

struct ReluFunctor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.cwiseMax(static_cast<T>(0));
  }
};

struct Relu6Functor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.cwiseMax(static_cast<T>(0)).cwiseMin(static_cast<T>(6));
  }
};

struct EluFunctor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    // exp(x) - 1 for x < 0, else x (TensorFlow's EluOp).
    return (x < x.constant(static_cast<T>(0)))
        .select(x.exp() - x.constant(static_cast<T>(1)), x);
  }
};

struct SoftplusFunctor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): exp never overflows
    // and large x give x exactly.
    return x.cwiseMax(static_cast<T>(0)) + (-x.abs()).exp().log1p();
  }
};

struct SoftsignFunctor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x / (x.abs() + x.constant(static_cast<T>(1)));
  }
};

struct SeluFunctor {
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    // Klambauer et al. (2017): scale and alpha for unit variance.
    const T scale = static_cast<T>(1.0507009873554804934193349852946);
    const T scale_alpha =
        static_cast<T>(1.0507009873554804934193349852946 *
                       1.6732632423543772848170429916717);
    return (x > x.constant(static_cast<T>(0)))
        .select(x * scale, x.expm1() * scale_alpha);
  }
};

// LeakyRelu: x for x > 0, else alpha * x (alpha may exceed 1).
template <typename T>
class LeakyReluOp : public OpKernel {
 public:
  explicit LeakyReluOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    float alpha = 0.2f;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("alpha", &alpha));
    alpha_ = static_cast<T>(alpha);
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    ComputeElementwise<T>(ctx, [this](const auto& x) {
      return (x > x.constant(static_cast<T>(0))).select(x, x * alpha_);
    });
  }

 private:
  T alpha_;
};

// BiasAdd: adds a 1-D bias along the channel dimension (last for NHWC,
// dimension 1 for NCHW, as TensorFlow's BiasOp). BiasAddV1 has no
// data_format attr: always the last dimension.
template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string format = "NHWC";
    if (ctx->def().op() != "BiasAddV1") {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &format));
    }
    OP_REQUIRES(ctx, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError("Invalid data format"));
    nchw_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ",
                                 value.shape().DebugString())));
    OP_REQUIRES(ctx, bias.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Biases must be 1D: ", bias.shape().DebugString())));
    const int channel_dim = nchw_ ? 1 : value.dims() - 1;
    OP_REQUIRES(
        ctx, bias.dim_size(0) == value.dim_size(channel_dim),
        absl::InvalidArgumentError(absl::StrCat(
            "Must provide as many biases as the last dimension of the input "
            "tensor: ",
            bias.shape().DebugString(), " vs. ", value.shape().DebugString())));
    const TensorShape shape = value.shape();
    const int64_t n = value.NumElements();
    const T* in = value.flat<T>().data();
    const T* b = bias.flat<T>().data();
    const int64_t channels = bias.dim_size(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, shape, &out));
    if (n == 0) return;
    T* o = out->flat<T>().data();
    if (nchw_ && shape.dims() > 2) {
      const int64_t batch = shape.dim_size(0);
      const int64_t inner = n / (batch * channels);
      Eigen::array<Eigen::Index, 3> bias_shape = {1, channels, 1};
      Eigen::array<Eigen::Index, 3> bcast = {batch, 1, inner};
      Assign(ctx, n, TensorMap<T, 3>(o, batch, channels, inner),
             ConstTensorMap<T, 3>(in, batch, channels, inner) +
                 ConstTensorMap<T>(b, channels).reshape(bias_shape).broadcast(bcast));
    } else {
      const int64_t rows = n / channels;
      Eigen::array<Eigen::Index, 2> bias_shape = {1, channels};
      Eigen::array<Eigen::Index, 2> bcast = {rows, 1};
      Assign(ctx, n, TensorMap<T, 2>(o, rows, channels),
             ConstTensorMap<T, 2>(in, rows, channels) +
                 ConstTensorMap<T>(b, channels).reshape(bias_shape).broadcast(bcast));
    }
  }

 private:
  bool nchw_ = false;
};

#define GR_REGISTER_ACTIVATION(OP, FUNCTOR, T)                             \
  REGISTER_KERNEL(                                                         \
      KernelDefBuilder(OP).Device(kDeviceCpu).TypeConstraint<T>("T"),      \
      ActivationOp<T, FUNCTOR>)
#define GR_REGISTER_RELUS(T)                         \
  GR_REGISTER_ACTIVATION("Relu", ReluFunctor, T);    \
  GR_REGISTER_ACTIVATION("Relu6", Relu6Functor, T)
GR_REGISTER_RELUS(float);
GR_REGISTER_RELUS(double);
GR_REGISTER_RELUS(half);
GR_REGISTER_RELUS(bfloat16);
GR_REGISTER_RELUS(int8_t);
GR_REGISTER_RELUS(uint8_t);
GR_REGISTER_RELUS(int16_t);
GR_REGISTER_RELUS(uint16_t);
GR_REGISTER_RELUS(int32_t);
GR_REGISTER_RELUS(uint32_t);
GR_REGISTER_RELUS(int64_t);
GR_REGISTER_RELUS(uint64_t);
#undef GR_REGISTER_RELUS

GR_REGISTER_ACTIVATION("Elu", EluFunctor, float);
GR_REGISTER_ACTIVATION("Elu", EluFunctor, double);
GR_REGISTER_ACTIVATION("Elu", EluFunctor, half);
GR_REGISTER_ACTIVATION("Elu", EluFunctor, bfloat16);

#define GR_REGISTER_FLOAT_ACTIVATIONS(T)                                    \
  GR_REGISTER_ACTIVATION("Softplus", SoftplusFunctor, T);                   \
  GR_REGISTER_ACTIVATION("Softsign", SoftsignFunctor, T);                   \
  GR_REGISTER_ACTIVATION("Selu", SeluFunctor, T);                           \
  REGISTER_KERNEL(                                                          \
      KernelDefBuilder("LeakyRelu").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      LeakyReluOp<T>)
GR_REGISTER_FLOAT_ACTIVATIONS(float);
GR_REGISTER_FLOAT_ACTIVATIONS(double);
GR_REGISTER_FLOAT_ACTIVATIONS(half);
GR_REGISTER_FLOAT_ACTIVATIONS(bfloat16);
#undef GR_REGISTER_FLOAT_ACTIVATIONS
#undef GR_REGISTER_ACTIVATION

#define GR_REGISTER_BIAS_ADD(T)                                              \
  REGISTER_KERNEL(                                                           \
      KernelDefBuilder("BiasAdd").Device(kDeviceCpu).TypeConstraint<T>("T"),   \
      BiasAddOp<T>);                                                         \
  REGISTER_KERNEL(                                                           \
      KernelDefBuilder("BiasAddV1").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      BiasAddOp<T>)
GR_REGISTER_BIAS_ADD(float);
GR_REGISTER_BIAS_ADD(double);
GR_REGISTER_BIAS_ADD(half);
GR_REGISTER_BIAS_ADD(bfloat16);
GR_REGISTER_BIAS_ADD(int8_t);
GR_REGISTER_BIAS_ADD(uint8_t);
GR_REGISTER_BIAS_ADD(int16_t);
GR_REGISTER_BIAS_ADD(uint16_t);
GR_REGISTER_BIAS_ADD(int32_t);
GR_REGISTER_BIAS_ADD(uint32_t);
GR_REGISTER_BIAS_ADD(int64_t);
GR_REGISTER_BIAS_ADD(uint64_t);
GR_REGISTER_BIAS_ADD(complex64);
GR_REGISTER_BIAS_ADD(complex128);
#undef GR_REGISTER_BIAS_ADD

}  // namespace
}  // namespace graphrun
