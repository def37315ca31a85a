// Cast on CPU between float, double, half, bfloat16, bool and the signed and
// unsigned 8/16/32/64-bit integers, as TensorFlow's CastOp: floating to
// integer truncates toward zero, to bool is x != 0, from bool is 0 or 1,
// and SrcT == DstT passes the input through. With Truncate=true the casts
// that round mantissa bits away (float->half, double->half, double->float,
// float->bfloat16) truncate them instead, as TensorFlow's LSBZeroSetter.
#if defined(__F16C__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

using CastFn = void (*)(OpKernelContext* ctx, const Tensor& in, Tensor* out,
                        bool truncate);

template <typename T>
constexpr int MantissaDigits() {
  if constexpr (std::is_same_v<T, half>) {
    return 11;
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return 8;
  } else {
    return std::numeric_limits<T>::digits;
  }
}

// The pairs whose Truncate=true cast differs from the rounding one.
template <typename From, typename To>
constexpr bool kTruncates =
    (std::is_same_v<From, float> &&
     (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>)) ||
    (std::is_same_v<From, double> &&
     (std::is_same_v<To, half> || std::is_same_v<To, float>));

// Clears the mantissa bits `To` cannot hold (NaNs keep theirs), so the
// rounding cast that follows is exact: truncation toward zero.
template <typename From, typename To>
struct ZeroDroppedMantissaBits {
  From operator()(const From& x) const {
    if (Eigen::numext::isnan(x)) return x;
    using Bits = std::conditional_t<sizeof(From) == 8, uint64_t, uint32_t>;
    constexpr int kDropped = MantissaDigits<From>() - MantissaDigits<To>();
    Bits bits;
    std::memcpy(&bits, &x, sizeof(bits));
    bits &= ~Bits{0} << kDropped;
    From out;
    std::memcpy(&out, &bits, sizeof(out));
    return out;
  }
};

#if defined(__F16C__)
// float <-> half with the CPU's conversion instructions, 16 or 8 at a time.
// Eigen 3.4 compiles its vectorized half casts out under AVX-512, which
// leaves an element at a time (about 1 ns each); these round to nearest
// even and overflow to inf as its scalar conversion (the same instruction).
void Convert(const float* src, half* dst, int64_t begin, int64_t end) {
  int64_t i = begin;
#if defined(__AVX512F__)
  for (; i + 16 <= end; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
#endif
  for (; i + 8 <= end; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < end; ++i) dst[i] = static_cast<half>(src[i]);
}

void Convert(const half* src, float* dst, int64_t begin, int64_t end) {
  int64_t i = begin;
#if defined(__AVX512F__)
  for (; i + 16 <= end; i += 16) {
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                  reinterpret_cast<const __m256i*>(src + i))));
  }
#endif
  for (; i + 8 <= end; i += 8) {
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  for (; i < end; ++i) dst[i] = static_cast<float>(src[i]);
}

// float <-> half, over the intra-op threads when big.
template <typename From, typename To>
void ConvertAll(OpKernelContext* ctx, const From* src, To* dst, int64_t n) {
  if (n > kParallelThreshold) {
    const double bytes = sizeof(From) + sizeof(To);
    ctx->eigen_cpu_device().parallelFor(
        n, Eigen::TensorOpCost(sizeof(From), sizeof(To), bytes / 4),
        [src, dst](Eigen::Index begin, Eigen::Index end) { Convert(src, dst, begin, end); });
  } else {
    Convert(src, dst, 0, n);
  }
}
#endif

template <typename From, typename To>
void CastElements(OpKernelContext* ctx, const Tensor& in, Tensor* out,
                  bool truncate) {
  const int64_t n = in.NumElements();
#if defined(__F16C__)
  if constexpr ((std::is_same_v<From, float> && std::is_same_v<To, half>) ||
                (std::is_same_v<From, half> && std::is_same_v<To, float>)) {
    if (!truncate) {
      ConvertAll(ctx, Data<From>(in), MutableData<To>(out), n);
      return;
    }
  }
#endif
  ConstMap<From> src(Data<From>(in), n);
  MutableMap<To> dst(MutableData<To>(out), n);
  RunOnDevice(ctx, n, [&](const auto& d) {
    if constexpr (kTruncates<From, To>) {
      if (truncate) {
        dst.device(d) = src.unaryExpr(ZeroDroppedMantissaBits<From, To>())
                            .template cast<To>();
        return;
      }
    }
    dst.device(d) = src.template cast<To>();
  });
}

// Calls f(T{}) for the dtypes Cast converts between; false for others.
template <typename F>
bool VisitCastType(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_FLOAT: f(float{}); return true;
    case DT_DOUBLE: f(double{}); return true;
    case DT_HALF: f(half{}); return true;
    case DT_BFLOAT16: f(bfloat16{}); return true;
    case DT_INT8: f(int8_t{}); return true;
    case DT_INT16: f(int16_t{}); return true;
    case DT_INT32: f(int32_t{}); return true;
    case DT_INT64: f(int64_t{}); return true;
    case DT_UINT8: f(uint8_t{}); return true;
    case DT_UINT16: f(uint16_t{}); return true;
    case DT_UINT32: f(uint32_t{}); return true;
    case DT_UINT64: f(uint64_t{}); return true;
    case DT_BOOL: f(bool{}); return true;
    default: return false;
  }
}

// The conversion from src to dst (src != dst), or nullptr.
CastFn FindCast(DataType src, DataType dst) {
  CastFn fn = nullptr;
  VisitCastType(src, [&](auto from) {
    VisitCastType(dst, [&](auto to) {
      using From = decltype(from);
      using To = decltype(to);
      if constexpr (!std::is_same_v<From, To>) fn = &CastElements<From, To>;
    });
  });
  return fn;
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    DataType src = DT_INVALID, dst = DT_INVALID;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("SrcT", &src));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("DstT", &dst));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Truncate", &truncate_));
    if (src == dst) {
      set_expensive(false);  // passes the input through
      return;
    }
    cast_ = FindCast(src, dst);
    OP_REQUIRES(ctx, cast_ != nullptr,
                absl::UnimplementedError(absl::StrCat(
                    "Cast ", DataTypeString(src), " to ", DataTypeString(dst),
                    " is not supported")));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (cast_ == nullptr) {
      ctx->set_output(0, in);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    cast_(ctx, in, out, truncate_);
  }

 private:
  CastFn cast_ = nullptr;
  bool truncate_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("Cast").Device(kDeviceCpu), CastOp);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
