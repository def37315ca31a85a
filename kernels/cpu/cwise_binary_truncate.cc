// TruncateDiv on floating types and TruncateMod on CPU, with broadcasting.
// Both round the quotient toward zero: TruncateDiv is trunc(x / y) (so
// 1 / 0 is Inf and 0 / 0 NaN), TruncateMod is C's remainder (x % y, fmod on
// floats), taking x's sign. Integer TruncateMod fails on a zero divisor, as
// TensorFlow's safe_mod; integer TruncateDiv is Div (cwise_binary_int_div.cc).
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
struct FloatTruncateDiv {
  T operator()(const T& a, const T& b) const { return std::trunc(a / b); }
};

// The remainder of truncated division. Integers: b != 0 (checked before;
// the guard only keeps a bad value from trapping); INT_MIN % -1 is 0.
template <typename T>
struct TruncateMod {
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == T(0) || b == T(-1)) return T(0);
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

#define GR_REGISTER_FLOAT(T)                                                \
  GR_CWISE_REGISTER("TruncateDiv", T, BinaryOp<T, T, FloatTruncateDiv<T>>); \
  GR_CWISE_REGISTER("TruncateMod", T, BinaryOp<T, T, TruncateMod<T>>)
GR_REGISTER_FLOAT(float);
GR_REGISTER_FLOAT(double);
#undef GR_REGISTER_FLOAT

#define GR_REGISTER_INT(T)            \
  GR_CWISE_REGISTER("TruncateMod", T, \
                    BinaryOp<T, T, TruncateMod<T>, NonZeroDivisor>)
GR_REGISTER_INT(int32_t);
GR_REGISTER_INT(int64_t);
#undef GR_REGISTER_INT

}  // namespace
}  // namespace cwise
}  // namespace graphrun
