// DivNoNan, MulNoNan, Xdivy, Xlogy and Xlog1py on CPU (float, double), with
// broadcasting: the plain product or quotient, except that a zero y
// (DivNoNan, MulNoNan) or a zero x (Xdivy, Xlogy, Xlog1py) gives 0 whatever
// the other operand, NaN and Inf included, as TensorFlow's.
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

namespace ei = Eigen::internal;

// z = (`Zero` operand == 0) ? 0 : Op(x, y), where Op is a functor on
// scalars and packets.
template <typename T, typename Op, bool kZeroWhenXIsZero>
struct ZeroWhenZero {
  T operator()(const T& a, const T& b) const {
    return (kZeroWhenXIsZero ? a : b) == T(0) ? T(0) : Op()(a, b);
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    const Packet zero = ei::pzero(a);
    const Packet mask = ei::pcmp_eq(kZeroWhenXIsZero ? a : b, zero);
    return ei::pselect(mask, zero, Op().packetOp(a, b));
  }
};

// x * log(y) and x * log1p(y), with Eigen's vectorized logarithms.
template <typename T>
struct TimesLog {
  T operator()(const T& a, const T& b) const {
    return a * ei::scalar_log_op<T>()(b);
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return ei::pmul(a, ei::scalar_log_op<T>().packetOp(b));
  }
};
template <typename T>
struct TimesLog1p {
  T operator()(const T& a, const T& b) const {
    return a * ei::scalar_log1p_op<T>()(b);
  }
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    return ei::pmul(a, ei::scalar_log1p_op<T>().packetOp(b));
  }
};

template <typename T>
using DivNoNan = ZeroWhenZero<T, ei::scalar_quotient_op<T>, false>;
template <typename T>
using MulNoNan = ZeroWhenZero<T, ei::scalar_product_op<T>, false>;
template <typename T>
using Xdivy = ZeroWhenZero<T, ei::scalar_quotient_op<T>, true>;
template <typename T>
using Xlogy = ZeroWhenZero<T, TimesLog<T>, true>;
template <typename T>
using Xlog1py = ZeroWhenZero<T, TimesLog1p<T>, true>;

}  // namespace
}  // namespace cwise
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<graphrun::cwise::TimesLog<T>> {
  enum {
    Cost = functor_traits<scalar_log_op<T>>::Cost + NumTraits<T>::MulCost,
    PacketAccess = functor_traits<scalar_log_op<T>>::PacketAccess &&
                   packet_traits<T>::HasMul
  };
};
template <typename T>
struct functor_traits<graphrun::cwise::TimesLog1p<T>> {
  enum {
    Cost = functor_traits<scalar_log1p_op<T>>::Cost + NumTraits<T>::MulCost,
    PacketAccess = functor_traits<scalar_log1p_op<T>>::PacketAccess &&
                   packet_traits<T>::HasMul
  };
};
template <typename T, typename Op, bool kZeroWhenXIsZero>
struct functor_traits<graphrun::cwise::ZeroWhenZero<T, Op, kZeroWhenXIsZero>> {
  enum {
    Cost = functor_traits<Op>::Cost + NumTraits<T>::AddCost,
    PacketAccess = functor_traits<Op>::PacketAccess && packet_traits<T>::HasCmp
  };
};
}  // namespace internal
}  // namespace Eigen

namespace graphrun {
namespace cwise {
namespace {

#define GR_REGISTER_NONAN(T)                                     \
  GR_CWISE_REGISTER("DivNoNan", T, BinaryOp<T, T, DivNoNan<T>>); \
  GR_CWISE_REGISTER("MulNoNan", T, BinaryOp<T, T, MulNoNan<T>>); \
  GR_CWISE_REGISTER("Xdivy", T, BinaryOp<T, T, Xdivy<T>>);       \
  GR_CWISE_REGISTER("Xlogy", T, BinaryOp<T, T, Xlogy<T>>);       \
  GR_CWISE_REGISTER("Xlog1py", T, BinaryOp<T, T, Xlog1py<T>>)
GR_REGISTER_NONAN(float);
GR_REGISTER_NONAN(double);
#undef GR_REGISTER_NONAN

}  // namespace
}  // namespace cwise
}  // namespace graphrun
