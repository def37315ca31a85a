// Fourier transforms and complex-number ops (TensorFlow's
// core/ops/spectral_ops.cc and math_ops.cc): FFT, IFFT, FFT2D, IFFT2D,
// FFT3D, IFFT3D over the innermost 1-3 dims of a complex tensor; RFFT,
// IRFFT, RFFT2D, IRFFT2D, RFFT3D, IRFFT3D between real and complex with
// fft_length; Complex, Real, Imag, Angle, Conj. Names, inputs, outputs,
// attrs and defaults are TensorFlow's.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// FFT*: the input's shape, of rank >= `rank`.
ShapeFn ComplexShape(int rank) {
  return [rank](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRankAtLeast(*c, "FFT", 0, rank));
    c->set_output(0, std::move(in));
    return absl::OkStatus();
  };
}

// RFFT* (forward) and IRFFT*: the innermost `rank` dims become fft_length
// (the last one fft_length / 2 + 1 for RFFT).
ShapeFn RealShape(int rank, bool forward) {
  return [rank, forward](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRankAtLeast(*c, "RFFT", 0, rank));
    GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, "RFFT", 1, 1).status());
    if (in.unknown_rank()) return absl::OkStatus();
    std::vector<int64_t> dims = in.dims();
    std::optional<std::vector<int64_t>> lengths = op_shapes::ConstantInts(*c, 1);
    for (int i = 0; i < rank; ++i) {
      int64_t d = -1;
      if (lengths.has_value() && static_cast<int>(lengths->size()) == rank) {
        d = (*lengths)[i];
        if (forward && i == rank - 1) d = d / 2 + 1;
      }
      dims[dims.size() - rank + i] = d;
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

}  // namespace

#define GR_COMPLEX_FFT(NAME, RANK)                                        \
  REGISTER_OP(NAME)                                                       \
      .Input("input: Tcomplex")                                           \
      .Output("output: Tcomplex")                                         \
      .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")           \
      .SetShapeFn(ComplexShape(RANK))
GR_COMPLEX_FFT("FFT", 1);
GR_COMPLEX_FFT("IFFT", 1);
GR_COMPLEX_FFT("FFT2D", 2);
GR_COMPLEX_FFT("IFFT2D", 2);
GR_COMPLEX_FFT("FFT3D", 3);
GR_COMPLEX_FFT("IFFT3D", 3);
#undef GR_COMPLEX_FFT

#define GR_REAL_FFT(NAME, RANK)                                           \
  REGISTER_OP(NAME)                                                       \
      .Input("input: Treal")                                              \
      .Input("fft_length: int32")                                         \
      .Output("output: Tcomplex")                                         \
      .Attr("Treal: {float, double} = DT_FLOAT")                          \
      .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")           \
      .SetShapeFn(RealShape(RANK, true));                                 \
  REGISTER_OP("I" NAME)                                                   \
      .Input("input: Tcomplex")                                           \
      .Input("fft_length: int32")                                         \
      .Output("output: Treal")                                            \
      .Attr("Treal: {float, double} = DT_FLOAT")                          \
      .Attr("Tcomplex: {complex64, complex128} = DT_COMPLEX64")           \
      .SetShapeFn(RealShape(RANK, false))
GR_REAL_FFT("RFFT", 1);
GR_REAL_FFT("RFFT2D", 2);
GR_REAL_FFT("RFFT3D", 3);
#undef GR_REAL_FFT

REGISTER_OP("Complex")
    .Input("real: T")
    .Input("imag: T")
    .Output("out: Tout")
    .Attr("T: {float, double} = DT_FLOAT")
    .Attr("Tout: {complex64, complex128} = DT_COMPLEX64")
    .SetShapeFn(op_shapes::BroadcastBinaryShapeFor("Complex"));

#define GR_COMPLEX_PART(NAME)                                             \
  REGISTER_OP(NAME)                                                       \
      .Input("input: T")                                                  \
      .Output("output: Tout")                                             \
      .Attr("T: {complex64, complex128} = DT_COMPLEX64")                  \
      .Attr("Tout: {float, double} = DT_FLOAT")                           \
      .SetShapeFn(shape_fns::UnchangedShape)
GR_COMPLEX_PART("Real");
GR_COMPLEX_PART("Imag");
GR_COMPLEX_PART("Angle");
#undef GR_COMPLEX_PART

REGISTER_OP("Conj")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {complex64, complex128} = DT_COMPLEX64")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
