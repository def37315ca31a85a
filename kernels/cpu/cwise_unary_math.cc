// More element-wise unary ops on CPU, with Eigen's functors (TensorFlow's
// choice too). On float and double: the trigonometric and hyperbolic
// functions, Erfc, Log1p, Expm1 and Rint. On float, double, half and
// bfloat16 (Keras runs GELU's Erf in the compute dtype under mixed
// precision): Erf, Floor, Ceil, Round, Sign, Reciprocal (and its alias Inv)
// and IsNan/IsInf/IsFinite. On int32 and int64: Sign, and Round, which
// returns integers unchanged. Round and Rint round half to even; Sign(NaN)
// is NaN.
#include "kernels/cpu/cwise_common.h"
#include "kernels/cpu/erfc_float.h"

namespace graphrun {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

// y = x: Round on integers.
class PassThroughOp : public OpKernel {
 public:
  explicit PassThroughOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
  }
};

#define GR_REGISTER_TRANSCENDENTAL(T)                                \
  GR_CWISE_REGISTER("Sin", T, UnaryOp<T, ei::scalar_sin_op<T>>);     \
  GR_CWISE_REGISTER("Cos", T, UnaryOp<T, ei::scalar_cos_op<T>>);     \
  GR_CWISE_REGISTER("Tan", T, UnaryOp<T, ei::scalar_tan_op<T>>);     \
  GR_CWISE_REGISTER("Asin", T, UnaryOp<T, ei::scalar_asin_op<T>>);   \
  GR_CWISE_REGISTER("Acos", T, UnaryOp<T, ei::scalar_acos_op<T>>);   \
  GR_CWISE_REGISTER("Atan", T, UnaryOp<T, ei::scalar_atan_op<T>>);   \
  GR_CWISE_REGISTER("Sinh", T, UnaryOp<T, ei::scalar_sinh_op<T>>);   \
  GR_CWISE_REGISTER("Cosh", T, UnaryOp<T, ei::scalar_cosh_op<T>>);   \
  GR_CWISE_REGISTER("Log1p", T, UnaryOp<T, ei::scalar_log1p_op<T>>); \
  GR_CWISE_REGISTER("Expm1", T, UnaryOp<T, ei::scalar_expm1_op<T>>); \
  GR_CWISE_REGISTER("Rint", T, UnaryOp<T, ei::scalar_rint_op<T>>)
GR_REGISTER_TRANSCENDENTAL(float);
GR_REGISTER_TRANSCENDENTAL(double);
#undef GR_REGISTER_TRANSCENDENTAL
// Eigen's float erfc calls the C library's erfcf one element at a time;
// erfc_float.h is the same function vectorized (GELU's Erfc in exported
// transformers).
GR_CWISE_REGISTER("Erfc", float, UnaryOp<float, cpu::ErfcFloatOp>);
GR_CWISE_REGISTER("Erfc", double, UnaryOp<double, ei::scalar_erfc_op<double>>);

#define GR_REGISTER_FLOAT(T)                                                \
  GR_CWISE_REGISTER("Erf", T, UnaryOp<T, ei::scalar_erf_op<T>>);            \
  GR_CWISE_REGISTER("Floor", T, UnaryOp<T, ei::scalar_floor_op<T>>);        \
  GR_CWISE_REGISTER("Ceil", T, UnaryOp<T, ei::scalar_ceil_op<T>>);          \
  GR_CWISE_REGISTER("Round", T, UnaryOp<T, ei::scalar_rint_op<T>>);         \
  GR_CWISE_REGISTER("Sign", T, UnaryOp<T, ei::scalar_sign_op<T>>);          \
  GR_CWISE_REGISTER("Reciprocal", T, UnaryOp<T, ei::scalar_inverse_op<T>>); \
  GR_CWISE_REGISTER("Inv", T, UnaryOp<T, ei::scalar_inverse_op<T>>);        \
  GR_CWISE_REGISTER("IsNan", T, UnaryOp<T, ei::scalar_isnan_op<T>, bool>);  \
  GR_CWISE_REGISTER("IsInf", T, UnaryOp<T, ei::scalar_isinf_op<T>, bool>);  \
  GR_CWISE_REGISTER("IsFinite", T, UnaryOp<T, ei::scalar_isfinite_op<T>, bool>)
GR_REGISTER_FLOAT(float);
GR_REGISTER_FLOAT(double);
GR_REGISTER_FLOAT(half);
GR_REGISTER_FLOAT(bfloat16);
#undef GR_REGISTER_FLOAT

#define GR_REGISTER_INT(T)                                         \
  GR_CWISE_REGISTER("Sign", T, UnaryOp<T, ei::scalar_sign_op<T>>); \
  GR_CWISE_REGISTER("Round", T, PassThroughOp)
GR_REGISTER_INT(int32_t);
GR_REGISTER_INT(int64_t);
#undef GR_REGISTER_INT

}  // namespace
}  // namespace cwise
}  // namespace graphrun
