// Element-wise unary ops on CPU: Neg, Abs, Square, Sqrt, Rsqrt, Exp, Log,
// Tanh, Sigmoid and LogicalNot, with TensorFlow's (Eigen's) functors.
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

#define GR_REGISTER_SIGNED(T)                                         \
  GR_CWISE_REGISTER("Neg", T, UnaryOp<T, ei::scalar_opposite_op<T>>); \
  GR_CWISE_REGISTER("Abs", T, UnaryOp<T, ei::scalar_abs_op<T>>);      \
  GR_CWISE_REGISTER("Square", T, UnaryOp<T, ei::scalar_square_op<T>>)

#define GR_REGISTER_FLOAT(T)                                             \
  GR_REGISTER_SIGNED(T);                                                 \
  GR_CWISE_REGISTER("Sqrt", T, UnaryOp<T, ei::scalar_sqrt_op<T>>);       \
  GR_CWISE_REGISTER("Rsqrt", T, UnaryOp<T, ei::scalar_rsqrt_op<T>>);     \
  GR_CWISE_REGISTER("Exp", T, UnaryOp<T, ei::scalar_exp_op<T>>);         \
  GR_CWISE_REGISTER("Log", T, UnaryOp<T, ei::scalar_log_op<T>>);         \
  GR_CWISE_REGISTER("Tanh", T, UnaryOp<T, ei::scalar_tanh_op<T>>);       \
  GR_CWISE_REGISTER("Sigmoid", T, UnaryOp<T, ei::scalar_logistic_op<T>>)

GR_REGISTER_FLOAT(float);
GR_REGISTER_FLOAT(double);
GR_REGISTER_FLOAT(half);
GR_REGISTER_FLOAT(bfloat16);
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
