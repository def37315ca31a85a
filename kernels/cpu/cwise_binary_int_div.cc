// Div, TruncateDiv, FloorDiv, FloorMod and Pow on integers on CPU, with
// broadcasting, as TensorFlow's safe_div / safe_mod / safe_pow: division
// truncates (Div, TruncateDiv) or floors (FloorDiv; FloorMod's result takes
// the divisor's sign) and fails on a zero divisor; Pow fails on a negative
// exponent. The floating-point kernels are in cwise_binary_div.cc.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

// -a with two's-complement wrap-around (-INT_MIN == INT_MIN), which is what
// TensorFlow returns for INT_MIN / -1 instead of trapping.
template <typename T>
T WrappingNegate(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}

// Truncating integer division. Zero divisors are rejected before computing;
// the guard only keeps a bad value from trapping.
template <typename T>
struct IntDiv {
  T operator()(const T& a, const T& b) const {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return WrappingNegate(a);
    }
    return static_cast<T>(a / b);
  }
};

// Integer division rounding toward negative infinity.
template <typename T>
struct IntFloorDiv {
  T operator()(const T& a, const T& b) const {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return WrappingNegate(a);
      const T z = static_cast<T>(a / b);
      // One less if there is a remainder and the signs differ.
      return (static_cast<T>(z * b) != a && ((a < T(0)) != (b < T(0))))
                 ? static_cast<T>(z - T(1))
                 : z;
    } else {
      return static_cast<T>(a / b);
    }
  }
};

// The remainder of floored division, with the sign of b (Python's %);
// b != 0 (checked before).
template <typename T>
struct IntFloorMod {
  T operator()(const T& a, const T& b) const {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);  // INT_MIN % -1 would trap
    }
    T r = static_cast<T>(a % b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    return r;
  }
};

// a^b by repeated squaring, wrapping on overflow; b >= 0 (checked before).
template <typename T>
struct IntPow {
  T operator()(const T& a, const T& b) const {
    if (b < T(0)) return T(0);
    uint64_t result = 1;
    uint64_t base = static_cast<uint64_t>(static_cast<int64_t>(a));
    for (uint64_t e = static_cast<uint64_t>(b); e > 0; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return static_cast<T>(result);
  }
};

struct NonNegativeExponent {
  template <typename T>
  static absl::Status Validate(const Tensor&, const Tensor& y) {
    const T* p = Data<T>(y);
    if (std::any_of(p, p + y.NumElements(), [](T v) { return v < T(0); })) {
      return absl::InvalidArgumentError(
          "Integers to negative integer powers are not allowed");
    }
    return absl::OkStatus();
  }
};

// TruncateDiv is Div on integers: the same kernel class, so no new code.
#define GR_REGISTER_INT_DIV(T)                                            \
  GR_CWISE_REGISTER("Div", T, BinaryOp<T, T, IntDiv<T>, NonZeroDivisor>); \
  GR_CWISE_REGISTER("TruncateDiv", T,                                     \
                    BinaryOp<T, T, IntDiv<T>, NonZeroDivisor>);           \
  GR_CWISE_REGISTER("FloorDiv", T,                                        \
                    BinaryOp<T, T, IntFloorDiv<T>, NonZeroDivisor>);      \
  GR_CWISE_REGISTER("FloorMod", T,                                        \
                    BinaryOp<T, T, IntFloorMod<T>, NonZeroDivisor>)

GR_REGISTER_INT_DIV(int8_t);
GR_REGISTER_INT_DIV(int16_t);
GR_REGISTER_INT_DIV(int32_t);
GR_REGISTER_INT_DIV(int64_t);
GR_REGISTER_INT_DIV(uint8_t);
#undef GR_REGISTER_INT_DIV

#define GR_REGISTER_INT_POW(T) \
  GR_CWISE_REGISTER("Pow", T, BinaryOp<T, T, IntPow<T>, NonNegativeExponent>)

GR_REGISTER_INT_POW(int8_t);
GR_REGISTER_INT_POW(int16_t);
GR_REGISTER_INT_POW(int32_t);
GR_REGISTER_INT_POW(int64_t);
#undef GR_REGISTER_INT_POW

}  // namespace
}  // namespace cwise
}  // namespace graphrun
