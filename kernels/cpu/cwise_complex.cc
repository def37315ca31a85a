// Complex-number element-wise ops on CPU (TensorFlow's cwise_ops.h):
// Complex (broadcasting real and imaginary parts), Real, Imag, Angle
// (atan2(imag, real)), Conj and ComplexAbs (std::abs, which avoids overflow
// as hypot does).
#include <cmath>
#include <complex>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename R>
struct Magnitude {
  R operator()(const std::complex<R>& z) const { return std::abs(z); }
};
REGISTER_KERNEL(KernelDefBuilder("ComplexAbs")
                    .Device(kDeviceCpu)
                    .TypeConstraint<complex64>("T")
                    .TypeConstraint<float>("Tout"),
                UnaryOp<complex64, Magnitude<float>, float>);
REGISTER_KERNEL(KernelDefBuilder("ComplexAbs")
                    .Device(kDeviceCpu)
                    .TypeConstraint<complex128>("T")
                    .TypeConstraint<double>("Tout"),
                UnaryOp<complex128, Magnitude<double>, double>);

template <typename R>
struct RealPart {
  R operator()(const std::complex<R>& z) const { return z.real(); }
};
template <typename R>
struct ImagPart {
  R operator()(const std::complex<R>& z) const { return z.imag(); }
};
template <typename R>
struct Phase {
  R operator()(const std::complex<R>& z) const { return std::atan2(z.imag(), z.real()); }
};
template <typename R>
struct Conjugate {
  std::complex<R> operator()(const std::complex<R>& z) const { return std::conj(z); }
};
template <typename R>
struct MakeComplex {
  std::complex<R> operator()(const R& re, const R& im) const { return {re, im}; }
};

#define GR_REGISTER_COMPLEX_PART(NAME, F)                                  \
  REGISTER_KERNEL(KernelDefBuilder(NAME)                                   \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<complex64>("T")                      \
                      .TypeConstraint<float>("Tout"),                      \
                  UnaryOp<complex64, F<float>, float>);                    \
  REGISTER_KERNEL(KernelDefBuilder(NAME)                                   \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<complex128>("T")                     \
                      .TypeConstraint<double>("Tout"),                     \
                  UnaryOp<complex128, F<double>, double>)
GR_REGISTER_COMPLEX_PART("Real", RealPart);
GR_REGISTER_COMPLEX_PART("Imag", ImagPart);
GR_REGISTER_COMPLEX_PART("Angle", Phase);
#undef GR_REGISTER_COMPLEX_PART

GR_CWISE_REGISTER("Conj", complex64, UnaryOp<complex64, Conjugate<float>>);
GR_CWISE_REGISTER("Conj", complex128, UnaryOp<complex128, Conjugate<double>>);

REGISTER_KERNEL(KernelDefBuilder("Complex")
                    .Device(kDeviceCpu)
                    .TypeConstraint<float>("T")
                    .TypeConstraint<complex64>("Tout"),
                BinaryOp<float, complex64, MakeComplex<float>>);
REGISTER_KERNEL(KernelDefBuilder("Complex")
                    .Device(kDeviceCpu)
                    .TypeConstraint<double>("T")
                    .TypeConstraint<complex128>("Tout"),
                BinaryOp<double, complex128, MakeComplex<double>>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
