// SquaredDifference ((x - y)^2; float, double, int32, int64) and Atan2
// (atan2(y, x), the angle of the point (x, y) in [-pi, pi]; float, double)
// on CPU, with broadcasting.
#include <cmath>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
struct SquaredDifference {
  T operator()(const T& a, const T& b) const {
    const T d = a - b;
    return d * d;
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    const Packet d = Eigen::internal::psub(a, b);
    return Eigen::internal::pmul(d, d);
  }
};

// Inputs (y, x), in the op's order.
template <typename T>
struct Atan2 {
  T operator()(const T& y, const T& x) const { return std::atan2(y, x); }
};

}  // namespace
}  // namespace cwise
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<graphrun::cwise::SquaredDifference<T>> {
  enum {
    Cost = NumTraits<T>::AddCost + NumTraits<T>::MulCost,
    PacketAccess = packet_traits<T>::HasSub && packet_traits<T>::HasMul
  };
};
}  // namespace internal
}  // namespace Eigen

namespace graphrun {
namespace cwise {
namespace {

#define GR_REGISTER_SQUARED_DIFFERENCE(T)   \
  GR_CWISE_REGISTER("SquaredDifference", T, \
                    BinaryOp<T, T, SquaredDifference<T>>)
GR_REGISTER_SQUARED_DIFFERENCE(float);
GR_REGISTER_SQUARED_DIFFERENCE(double);
GR_REGISTER_SQUARED_DIFFERENCE(int32_t);
GR_REGISTER_SQUARED_DIFFERENCE(int64_t);
#undef GR_REGISTER_SQUARED_DIFFERENCE

GR_CWISE_REGISTER("Atan2", float, BinaryOp<float, float, Atan2<float>>);
GR_CWISE_REGISTER("Atan2", double, BinaryOp<double, double, Atan2<double>>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
