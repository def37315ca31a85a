// Bitwise ops on CPU, as TensorFlow's cwise_ops.h: BitwiseAnd/Or/Xor and
// the shifts broadcast; a shift amount is clamped to [0, bits - 1] (a left
// shift works on the unsigned bits, a right shift of a signed value is
// arithmetic); Invert is ~x; PopulationCount counts set bits (uint8). Also
// Asinh/Acosh/Atanh (Eigen's functors, TensorFlow's too) and CheckNumerics
// (InvalidArgument "<message> : Tensor had NaN values", "Inf values" or
// "Inf and NaN values").
#include <bitset>
#include <climits>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

template <typename T>
struct BitAnd {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T>
struct BitOr {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T>
struct BitXor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

template <typename T>
T ClampShift(T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * CHAR_BIT - 1);
  if (y < T(0)) return T(0);
  return y > kMax ? kMax : y;
}
template <typename T>
struct ShiftLeft {
  T operator()(const T& a, const T& b) const {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) << static_cast<U>(ClampShift(b)));
  }
};
template <typename T>
struct ShiftRight {
  T operator()(const T& a, const T& b) const { return a >> ClampShift(b); }
};
template <typename T>
struct BitInvert {
  T operator()(const T& a) const { return static_cast<T>(~a); }
};
template <typename T>
struct PopCount {
  uint8_t operator()(const T& a) const {
    using U = std::make_unsigned_t<T>;
    return static_cast<uint8_t>(std::bitset<sizeof(T) * CHAR_BIT>(static_cast<U>(a)).count());
  }
};

#define GR_REGISTER_BITWISE(T)                                            \
  GR_CWISE_REGISTER("BitwiseAnd", T, BinaryOp<T, T, BitAnd<T>>);          \
  GR_CWISE_REGISTER("BitwiseOr", T, BinaryOp<T, T, BitOr<T>>);            \
  GR_CWISE_REGISTER("BitwiseXor", T, BinaryOp<T, T, BitXor<T>>);          \
  GR_CWISE_REGISTER("LeftShift", T, BinaryOp<T, T, ShiftLeft<T>>);        \
  GR_CWISE_REGISTER("RightShift", T, BinaryOp<T, T, ShiftRight<T>>);      \
  GR_CWISE_REGISTER("Invert", T, UnaryOp<T, BitInvert<T>>);               \
  GR_CWISE_REGISTER("PopulationCount", T, UnaryOp<T, PopCount<T>, uint8_t>)
GR_REGISTER_BITWISE(int8_t);
GR_REGISTER_BITWISE(int16_t);
GR_REGISTER_BITWISE(int32_t);
GR_REGISTER_BITWISE(int64_t);
GR_REGISTER_BITWISE(uint8_t);
GR_REGISTER_BITWISE(uint16_t);
GR_REGISTER_BITWISE(uint32_t);
GR_REGISTER_BITWISE(uint64_t);
#undef GR_REGISTER_BITWISE

#define GR_REGISTER_INVERSE_HYPERBOLIC(T)                              \
  GR_CWISE_REGISTER("Asinh", T, UnaryOp<T, ei::scalar_asinh_op<T>>);   \
  GR_CWISE_REGISTER("Acosh", T, UnaryOp<T, ei::scalar_acosh_op<T>>);   \
  GR_CWISE_REGISTER("Atanh", T, UnaryOp<T, ei::scalar_atanh_op<T>>)
GR_REGISTER_INVERSE_HYPERBOLIC(float);
GR_REGISTER_INVERSE_HYPERBOLIC(double);
GR_REGISTER_INVERSE_HYPERBOLIC(half);
GR_REGISTER_INVERSE_HYPERBOLIC(bfloat16);
#undef GR_REGISTER_INVERSE_HYPERBOLIC

template <typename T>
class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("message", &message_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const T* p = Data<T>(x);
    bool nan = false, inf = false;
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      const float v = static_cast<float>(p[i]);
      nan |= std::isnan(v);
      inf |= std::isinf(v);
    }
    if (nan || inf) {
      const char* what = nan && inf ? "Inf and NaN" : (nan ? "NaN" : "Inf");
      ctx->SetStatus(absl::InvalidArgumentError(
          absl::StrCat(message_, " : Tensor had ", what, " values")));
      return;
    }
    ctx->set_output(0, x);
  }

 private:
  std::string message_;
};
REGISTER_KERNEL(KernelDefBuilder("CheckNumerics").Device(kDeviceCpu).TypeConstraint<float>("T"),
                CheckNumericsOp<float>);
REGISTER_KERNEL(KernelDefBuilder("CheckNumerics").Device(kDeviceCpu).TypeConstraint<double>("T"),
                CheckNumericsOp<double>);
REGISTER_KERNEL(KernelDefBuilder("CheckNumerics").Device(kDeviceCpu).TypeConstraint<half>("T"),
                CheckNumericsOp<half>);
REGISTER_KERNEL(
    KernelDefBuilder("CheckNumerics").Device(kDeviceCpu).TypeConstraint<bfloat16>("T"),
    CheckNumericsOp<bfloat16>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
