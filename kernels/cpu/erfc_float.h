// ErfcFloat: the complementary error function on float, vectorized. Eigen
// 3.4 computes float erfc one element at a time through the C library's
// erfcf (GELU's Erfc in an exported BERT took ~37 ns an element here); this
// is the same function in packet arithmetic, a few ns an element:
//
//   x < 0.5:           1 - erf(x)  (erfc is in (0.47, 2], so nothing is lost
//                      to cancellation; Eigen's vectorized float erf)
//   0.5 <= x < 10.06:  exp(-x^2) / x * P(1/x), P a degree-9 polynomial on
//                      each of [0.5, 2) and [2, 10.06), fitted to
//                      erfc(x) * x * exp(x^2) in Chebyshev form and evaluated
//                      at the interval's centred 1/x. x^2 is split as
//                      xh^2 + xl * (x + xh), xh holding x's top 12 bits (so
//                      xh^2 is exact), and exp(-xh^2) taken as exp(-xh^2/2)
//                      twice, so the result reaches the subnormal range
//                      smoothly instead of through a clamped exp.
//   x >= 10.06:        0 (below the smallest subnormal); NaN stays NaN.
//
// Relative error below 1e-6 where the result is a normal float
// (erfc_float_test checks it against std::erfc in double).
#ifndef GRAPHRUN_KERNELS_CPU_ERFC_FLOAT_H_
#define GRAPHRUN_KERNELS_CPU_ERFC_FLOAT_H_

#include <type_traits>

#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace erfc_internal {

namespace ei = Eigen::internal;

// Chebyshev-fitted polynomials in s = scale / x - offset, lowest degree
// first, on [0.5, 2) ("near") and [2, 10.06) ("far").
inline constexpr float kNear[10] = {
    3.912804850e-01f,  -1.019743329e-01f, 2.066523323e-02f, -1.206384082e-03f,
    -1.811857323e-03f, 1.375803486e-03f,  -7.261496704e-04f, 3.322765909e-04f,
    -8.955033023e-05f, -4.744030210e-07f};
inline constexpr float kFar[10] = {
    5.416998039e-01f,  -2.695989057e-02f, -5.462655388e-03f, 1.678254476e-03f,
    -1.311987718e-04f, -5.160748846e-05f, 2.243804171e-05f,  -3.538844972e-06f,
    -7.514350712e-07f, 4.997649356e-07f};
inline constexpr float kNearScale = 1.33333333f, kNearOffset = 1.66666667f;
inline constexpr float kFarScale = 4.98765432f, kFarOffset = 1.49382716f;

// x with its low 12 mantissa bits cleared.
template <typename Packet>
Packet TopBits(const Packet& x) {
  return ei::pand(x, ei::pset1frombits<Packet>(0xfffff000u));
}

template <typename Packet>
Packet Erfc(const Packet& x) {
  using ei::padd;
  using ei::pmul;
  using ei::pselect;
  using ei::pset1;
  using ei::psub;
  const Packet half = pset1<Packet>(0.5f);
  const Packet one = pset1<Packet>(1.f);
  // The tail, on x clamped into [0.5, 10.06].
  const Packet ax = ei::pmin(ei::pmax(x, half), pset1<Packet>(10.06f));
  const Packet t = ei::pdiv(one, ax);
  const Packet near = ei::pcmp_lt(ax, pset1<Packet>(2.f));
  const Packet s = psub(pmul(t, pselect(near, pset1<Packet>(kNearScale), pset1<Packet>(kFarScale))),
                        pselect(near, pset1<Packet>(kNearOffset), pset1<Packet>(kFarOffset)));
  Packet p = pselect(near, pset1<Packet>(kNear[9]), pset1<Packet>(kFar[9]));
  for (int i = 8; i >= 0; --i) {
    p = padd(pmul(p, s), pselect(near, pset1<Packet>(kNear[i]), pset1<Packet>(kFar[i])));
  }
  const Packet xh = TopBits(ax);
  const Packet xl = psub(ax, xh);
  const Packet half_square = ei::pexp(ei::pnegate(pmul(pmul(xh, xh), half)));
  const Packet rest = ei::pexp(ei::pnegate(pmul(xl, padd(ax, xh))));
  const Packet tail = pmul(pmul(half_square, pmul(pmul(rest, p), t)), half_square);
  // Near zero and below.
  const Packet head = psub(one, ei::generic_fast_erf_float(x));
  Packet r = pselect(ei::pcmp_lt(x, half), head, tail);
  r = pselect(ei::pcmp_lt(pset1<Packet>(10.06f), x), pset1<Packet>(0.f), r);
  // NaN compares false everywhere above: pass it through.
  return pselect(ei::pcmp_eq(x, x), r, x);
}

// The scalar path, for the elements left over after the last packet: the
// same arithmetic, in one packet's first lane.
inline float Erfc(float x) {
  using Packet = ei::packet_traits<float>::type;
  static_assert(!std::is_same_v<Packet, float>, "erfc_float.h needs a float packet type");
  return ei::pfirst(Erfc(ei::pset1<Packet>(x)));
}

}  // namespace erfc_internal

// An Eigen functor (unaryExpr), so the element-wise kernels run it like
// Eigen's own.
struct ErfcFloatOp {
  float operator()(float x) const { return erfc_internal::Erfc(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return erfc_internal::Erfc(x);
  }
};

}  // namespace cpu
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <>
struct functor_traits<graphrun::cpu::ErfcFloatOp> {
  enum { Cost = 60 * NumTraits<float>::MulCost, PacketAccess = packet_traits<float>::HasExp };
};
}  // namespace internal
}  // namespace Eigen

#endif  // GRAPHRUN_KERNELS_CPU_ERFC_FLOAT_H_
