// RealDiv, Div, FloorDiv, FloorMod and Pow on floating types (float,
// double, half, bfloat16) on CPU, with broadcasting. Division by zero gives
// Inf or NaN, as IEEE says. The integer kernels (which fail on a zero
// divisor) are in cwise_binary_int_div.cc.
#include <cmath>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

// floor(a / b).
template <typename T>
struct FloatFloorDiv {
  T operator()(const T& a, const T& b) const {
    return Eigen::numext::floor(T(a / b));
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return Eigen::internal::pfloor(Eigen::internal::pdiv(a, b));
  }
};

// The remainder of floored division: a - floor(a / b) * b, with the sign of
// b (Python's %).
template <typename T>
struct FloatFloorMod {
  T operator()(const T& a, const T& b) const {
    T r = static_cast<T>(
        std::fmod(static_cast<double>(a), static_cast<double>(b)));
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    return r;
  }
};

}  // namespace
}  // namespace cwise
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<graphrun::cwise::FloatFloorDiv<T>> {
  enum {
    Cost = 2 * NumTraits<T>::MulCost,
    PacketAccess = packet_traits<T>::HasDiv && packet_traits<T>::HasFloor
  };
};
}  // namespace internal
}  // namespace Eigen

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
using FloatDiv = BinaryOp<T, T, Eigen::internal::scalar_quotient_op<T>>;
template <typename T>
using FloatPow = BinaryOp<T, T, Eigen::internal::scalar_pow_op<T, T>>;

#define GR_REGISTER_FLOAT(T)                                          \
  GR_CWISE_REGISTER("RealDiv", T, FloatDiv<T>);                       \
  GR_CWISE_REGISTER("Div", T, FloatDiv<T>);                           \
  GR_CWISE_REGISTER("FloorDiv", T, BinaryOp<T, T, FloatFloorDiv<T>>); \
  GR_CWISE_REGISTER("FloorMod", T, BinaryOp<T, T, FloatFloorMod<T>>); \
  GR_CWISE_REGISTER("Pow", T, FloatPow<T>)

GR_REGISTER_FLOAT(float);
GR_REGISTER_FLOAT(double);
GR_REGISTER_FLOAT(half);
GR_REGISTER_FLOAT(bfloat16);
#undef GR_REGISTER_FLOAT

}  // namespace
}  // namespace cwise
}  // namespace graphrun
