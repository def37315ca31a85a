// Element-wise unary ops on CPU: Neg, Abs, Square, Sqrt, Rsqrt, Exp, Log,
// Tanh, Sigmoid and LogicalNot, with TensorFlow's (Eigen's) functors.
#include <cmath>
#include <limits>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

// Eigen's vectorized sqrt (a reciprocal square root estimate and Newton
// steps, for float and, on some instruction sets, double) gives NaN for +inf,
// also under the 16-bit floats' packets, which compute in float; TensorFlow
// gives inf. Same values otherwise. The 16-bit floats go an element at a time.
template <typename T>
struct SqrtViaFloat {
  T operator()(const T& x) const { return static_cast<T>(std::sqrt(static_cast<float>(x))); }
};
template <typename T>
struct SqrtKeepsInf {
  T operator()(const T& x) const { return ei::scalar_sqrt_op<T>()(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    const Packet inf = ei::pset1<Packet>(std::numeric_limits<T>::infinity());
    return ei::pselect(ei::pcmp_eq(x, inf), inf, ei::psqrt(x));
  }
};

}  // namespace
}  // namespace cwise
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<graphrun::cwise::SqrtKeepsInf<T>> {
  enum {
    Cost = functor_traits<scalar_sqrt_op<T>>::Cost + NumTraits<T>::AddCost,
    PacketAccess = functor_traits<scalar_sqrt_op<T>>::PacketAccess
  };
};
}  // namespace internal
}  // namespace Eigen

namespace graphrun {
namespace cwise {
namespace {

#define GR_REGISTER_SIGNED(T)                                         \
  GR_CWISE_REGISTER("Neg", T, UnaryOp<T, ei::scalar_opposite_op<T>>); \
  GR_CWISE_REGISTER("Abs", T, UnaryOp<T, ei::scalar_abs_op<T>>);      \
  GR_CWISE_REGISTER("Square", T, UnaryOp<T, ei::scalar_square_op<T>>)

#define GR_REGISTER_FLOAT(T)                                             \
  GR_REGISTER_SIGNED(T);                                                 \
  GR_CWISE_REGISTER("Rsqrt", T, UnaryOp<T, ei::scalar_rsqrt_op<T>>);     \
  GR_CWISE_REGISTER("Exp", T, UnaryOp<T, ei::scalar_exp_op<T>>);         \
  GR_CWISE_REGISTER("Log", T, UnaryOp<T, ei::scalar_log_op<T>>);         \
  GR_CWISE_REGISTER("Tanh", T, UnaryOp<T, ei::scalar_tanh_op<T>>);       \
  GR_CWISE_REGISTER("Sigmoid", T, UnaryOp<T, ei::scalar_logistic_op<T>>)

GR_REGISTER_FLOAT(float);
GR_REGISTER_FLOAT(double);
GR_REGISTER_FLOAT(half);
GR_REGISTER_FLOAT(bfloat16);
GR_CWISE_REGISTER("Sqrt", float, UnaryOp<float, SqrtKeepsInf<float>>);
GR_CWISE_REGISTER("Sqrt", double, UnaryOp<double, SqrtKeepsInf<double>>);
GR_CWISE_REGISTER("Sqrt", half, UnaryOp<half, SqrtViaFloat<half>>);
GR_CWISE_REGISTER("Sqrt", bfloat16, UnaryOp<bfloat16, SqrtViaFloat<bfloat16>>);
GR_REGISTER_SIGNED(int8_t);
GR_REGISTER_SIGNED(int16_t);
GR_REGISTER_SIGNED(int32_t);
GR_REGISTER_SIGNED(int64_t);
GR_CWISE_REGISTER("Square", uint8_t, UnaryOp<uint8_t, ei::scalar_square_op<uint8_t>>);
#undef GR_REGISTER_FLOAT
#undef GR_REGISTER_SIGNED

REGISTER_KERNEL(KernelDefBuilder("LogicalNot").Device(kDeviceCpu),
                UnaryOp<bool, ei::scalar_boolean_not_op<bool>>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
