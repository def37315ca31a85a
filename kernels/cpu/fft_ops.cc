// Fourier transforms on CPU with FFTW (Debian's libfftw3-dev, the FFT
// library this platform packages), with TensorFlow's semantics
// (fft_ops.cc): FFT/IFFT[2D|3D] transform the innermost 1-3 dims of a
// complex tensor; RFFT* take real input cropped or zero-padded to
// fft_length (an input shorter than fft_length is refused, as TensorFlow
// 2.21 does) and keep the fft_length[-1] / 2 + 1 non-negative frequencies;
// IRFFT* crop their input to those frequencies and return fft_length real
// values. Inverses are scaled by 1 / N. Plans are
// made with FFTW_ESTIMATE (no timing runs) under a lock, since FFTW's
// planner is not thread-safe; executing a plan is.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include <fftw3.h>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

std::mutex& PlannerMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}

// Elements of one transform of dims n[0..rank), and of its half spectrum.
int Product(int rank, const int* n) {
  int p = 1;
  for (int i = 0; i < rank; ++i) p *= n[i];
  return p;
}
int HalfProduct(int rank, const int* n) { return Product(rank - 1, n) * (n[rank - 1] / 2 + 1); }

// FFTW's single- and double-precision interfaces behind one name.
template <typename R>
struct Fftw;
template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Complex = fftwf_complex;
  static Plan C2C(int rank, const int* n, int howmany, Complex* in, Complex* out, int sign) {
    const int dist = Product(rank, n);
    return fftwf_plan_many_dft(rank, n, howmany, in, nullptr, 1, dist, out, nullptr, 1, dist,
                               sign, FFTW_ESTIMATE);
  }
  static Plan R2C(int rank, const int* n, int howmany, float* in, Complex* out) {
    return fftwf_plan_many_dft_r2c(rank, n, howmany, in, nullptr, 1, Product(rank, n), out,
                                   nullptr, 1, HalfProduct(rank, n), FFTW_ESTIMATE);
  }
  static Plan C2R(int rank, const int* n, int howmany, Complex* in, float* out) {
    return fftwf_plan_many_dft_c2r(rank, n, howmany, in, nullptr, 1, HalfProduct(rank, n), out,
                                   nullptr, 1, Product(rank, n), FFTW_ESTIMATE);
  }
  static void Execute(Plan p) { fftwf_execute(p); }
  static void Destroy(Plan p) { fftwf_destroy_plan(p); }
};
template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Complex = fftw_complex;
  static Plan C2C(int rank, const int* n, int howmany, Complex* in, Complex* out, int sign) {
    const int dist = Product(rank, n);
    return fftw_plan_many_dft(rank, n, howmany, in, nullptr, 1, dist, out, nullptr, 1, dist,
                              sign, FFTW_ESTIMATE);
  }
  static Plan R2C(int rank, const int* n, int howmany, double* in, Complex* out) {
    return fftw_plan_many_dft_r2c(rank, n, howmany, in, nullptr, 1,
                                  Product(rank, n), out, nullptr, 1,
                                  HalfProduct(rank, n), FFTW_ESTIMATE);
  }
  static Plan C2R(int rank, const int* n, int howmany, Complex* in, double* out) {
    return fftw_plan_many_dft_c2r(rank, n, howmany, in, nullptr, 1,
                                  HalfProduct(rank, n), out, nullptr, 1,
                                  Product(rank, n), FFTW_ESTIMATE);
  }
  static void Execute(Plan p) { fftw_execute(p); }
  static void Destroy(Plan p) { fftw_destroy_plan(p); }
};

// Copies `batch` blocks of the innermost dims `from` (row-major) into
// blocks of dims `to`, cropping each dim (zeros where `to` is longer).
template <typename T>
void Resize(const T* src, const std::vector<int64_t>& from, T* dst,
            const std::vector<int64_t>& to, int64_t batch) {
  const int r = static_cast<int>(to.size());
  int64_t src_block = 1, dst_block = 1;
  for (int i = 0; i < r; ++i) {
    src_block *= from[i];
    dst_block *= to[i];
  }
  for (int64_t b = 0; b < batch; ++b) {
    T* d = dst + b * dst_block;
    const T* s = src + b * src_block;
    for (int64_t j = 0; j < dst_block; ++j) {
      int64_t rest = j, offset = 0, stride = 1;
      bool inside = true;
      for (int i = r - 1; i >= 0; --i) {
        const int64_t c = rest % to[i];
        rest /= to[i];
        inside = inside && c < from[i];
        offset += c * stride;
        stride *= from[i];
      }
      d[j] = inside ? s[offset] : T(0);
    }
  }
}

// kComplex: FFT/IFFT; kReal: RFFT (forward) / IRFFT (inverse).
template <typename R, bool kReal, bool kForward>
class FftOp : public OpKernel {
 public:
  FftOp(OpKernelConstruction* ctx, int rank) : OpKernel(ctx), rank_(rank) {}

  void Compute(OpKernelContext* ctx) override {
    using C = std::complex<R>;
    const Tensor& in = ctx->input(0);
    const int dims = in.dims();
    OP_REQUIRES(ctx, dims >= rank_,
                absl::InvalidArgumentError(absl::StrCat("Input must have rank of at least ",
                                                        rank_, " but got: ",
                                                        in.shape().DebugString())));
    std::vector<int64_t> in_inner(in.shape().dim_sizes().end() - rank_,
                                  in.shape().dim_sizes().end());
    std::vector<int64_t> lengths = in_inner;  // the transform's size
    if (kReal) {
      const Tensor& len_t = ctx->input(1);
      OP_REQUIRES(ctx, len_t.dims() == 1 && len_t.NumElements() == rank_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "fft_length must be length ", rank_, " vector, but got: ",
                      len_t.shape().DebugString())));
      for (int i = 0; i < rank_; ++i) {
        lengths[i] = len_t.flat<int32_t>()[i];
        OP_REQUIRES(ctx, lengths[i] >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "fft_length[", i, "] must >= 0, but got: ", lengths[i])));
      }
    }
    // The complex side's innermost dims.
    std::vector<int64_t> spectrum = lengths;
    if (kReal) spectrum.back() = lengths.back() / 2 + 1;
    if (kReal) {
      // The input is cropped to the transform, never padded.
      const std::vector<int64_t>& need = kForward ? lengths : spectrum;
      for (int i = 0; i < rank_; ++i) {
        OP_REQUIRES(ctx, in_inner[i] >= need[i],
                    absl::InvalidArgumentError(absl::StrCat(
                        "Input dimension ", dims - rank_ + i, " must have length of at least ",
                        need[i], " but got: ", in_inner[i])));
      }
    }
    std::vector<int64_t> out_dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end());
    const std::vector<int64_t>& out_inner = kReal && kForward ? spectrum : lengths;
    std::copy(out_inner.begin(), out_inner.end(), out_dims.end() - rank_);
    absl::StatusOr<TensorShape> out_shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, out_shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;
    int64_t batch = 1;
    for (int i = 0; i < dims - rank_; ++i) batch *= in.dim_size(i);
    std::vector<int> n(lengths.begin(), lengths.end());
    int64_t count = 1;
    for (int64_t l : lengths) count *= l;
    if (count == 0) {  // an empty transform: zeros
      std::memset(out->raw_data(), 0, out->TotalBytes());
      return;
    }
    using F = Fftw<R>;
    auto fc = [](C* p) { return reinterpret_cast<typename F::Complex*>(p); };
    typename F::Plan plan;
    if (!kReal) {
      // In place on the output, which first takes the input.
      C* o = out->flat<C>().data();
      std::copy(in.flat<C>().data(), in.flat<C>().data() + in.NumElements(), o);
      {
        std::lock_guard<std::mutex> lock(PlannerMutex());
        plan = F::C2C(rank_, n.data(), static_cast<int>(batch), fc(o), fc(o),
                      kForward ? FFTW_FORWARD : FFTW_BACKWARD);
      }
      F::Execute(plan);
      if (!kForward) {
        const R scale = R(1) / static_cast<R>(count);
        for (int64_t i = 0; i < out->NumElements(); ++i) o[i] *= scale;
      }
    } else if (kForward) {
      std::vector<R> buffer(static_cast<size_t>(batch * count));
      Resize(in.flat<R>().data(), in_inner, buffer.data(), lengths, batch);
      C* o = out->flat<C>().data();
      {
        std::lock_guard<std::mutex> lock(PlannerMutex());
        plan = F::R2C(rank_, n.data(), static_cast<int>(batch), buffer.data(), fc(o));
      }
      F::Execute(plan);
    } else {
      int64_t half = 1;
      for (int64_t s : spectrum) half *= s;
      std::vector<C> buffer(static_cast<size_t>(batch * half));
      Resize(in.flat<C>().data(), in_inner, buffer.data(), spectrum, batch);
      R* o = out->flat<R>().data();
      {
        std::lock_guard<std::mutex> lock(PlannerMutex());
        plan = F::C2R(rank_, n.data(), static_cast<int>(batch), fc(buffer.data()), o);
      }
      F::Execute(plan);
      const R scale = R(1) / static_cast<R>(count);
      for (int64_t i = 0; i < out->NumElements(); ++i) o[i] *= scale;
    }
    std::lock_guard<std::mutex> lock(PlannerMutex());
    F::Destroy(plan);
  }

 private:
  const int rank_;
};

template <typename R, bool kReal, bool kForward, int kRank>
class FftRankOp : public FftOp<R, kReal, kForward> {
 public:
  explicit FftRankOp(OpKernelConstruction* ctx) : FftOp<R, kReal, kForward>(ctx, kRank) {}
};

#define GR_REGISTER_FFT(SUFFIX, RANK)                                                      \
  REGISTER_KERNEL(KernelDefBuilder("FFT" SUFFIX).Device(kDeviceCpu).TypeConstraint<complex64>( \
                      "Tcomplex"),                                                         \
                  FftRankOp<float, false, true, RANK>);                                  \
  REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("FFT" SUFFIX).Device(kDeviceCpu).TypeConstraint<complex128>(       \
          "Tcomplex"),                                                                     \
      FftRankOp<double, false, true, RANK>);                                             \
  REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("IFFT" SUFFIX).Device(kDeviceCpu).TypeConstraint<complex64>(       \
          "Tcomplex"),                                                                     \
      FftRankOp<float, false, false, RANK>);                                             \
  REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("IFFT" SUFFIX).Device(kDeviceCpu).TypeConstraint<complex128>(      \
          "Tcomplex"),                                                                     \
      FftRankOp<double, false, false, RANK>);                                            \
  REGISTER_KERNEL(KernelDefBuilder("RFFT" SUFFIX)                                          \
                      .Device(kDeviceCpu)                                                  \
                      .TypeConstraint<float>("Treal")                                      \
                      .TypeConstraint<complex64>("Tcomplex"),                              \
                  FftRankOp<float, true, true, RANK>);                                   \
  REGISTER_KERNEL(KernelDefBuilder("RFFT" SUFFIX)                                          \
                      .Device(kDeviceCpu)                                                  \
                      .TypeConstraint<double>("Treal")                                     \
                      .TypeConstraint<complex128>("Tcomplex"),                             \
                  FftRankOp<double, true, true, RANK>);                                  \
  REGISTER_KERNEL(KernelDefBuilder("IRFFT" SUFFIX)                                         \
                      .Device(kDeviceCpu)                                                  \
                      .TypeConstraint<float>("Treal")                                      \
                      .TypeConstraint<complex64>("Tcomplex"),                              \
                  FftRankOp<float, true, false, RANK>);                                  \
  REGISTER_KERNEL(KernelDefBuilder("IRFFT" SUFFIX)                                         \
                      .Device(kDeviceCpu)                                                  \
                      .TypeConstraint<double>("Treal")                                     \
                      .TypeConstraint<complex128>("Tcomplex"),                             \
                  FftRankOp<double, true, false, RANK>)
GR_REGISTER_FFT("", 1);
GR_REGISTER_FFT("2D", 2);
GR_REGISTER_FFT("3D", 3);
#undef GR_REGISTER_FFT

}  // namespace
}  // namespace graphrun
