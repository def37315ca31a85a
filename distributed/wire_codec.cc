#include "distributed/wire_codec.h"

#include <atomic>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define GRAPHRUN_WIRE_CODEC_X86 1
#else
#define GRAPHRUN_WIRE_CODEC_X86 0
#endif

// Why hand-written loops: the conversions themselves are one instruction
// each (F16C's vcvtps2ph/vcvtph2ps, AVX-512's 16-wide forms; bf16 is a
// shift and a narrowing move), and what is around them no library offers:
// saturation with a count instead of overflow to infinity, bf16 by
// truncation with the NaN fix, and a choice made at run time, so that the
// x86-64-v2 build (--config=portable) still gets the vector loops. Eigen,
// the one library here with half and bfloat16, converts with overflow to
// infinity, rounds bfloat16 to nearest instead of truncating, and picks its
// instructions at compile time. Measured with bench/wire_codec_benchmark
// on one core of an AMD EPYC with AVX-512, -march=native (GB/s of float32,
// 1 MB / 256 MB arrays): Eigen's Tensor cast to and from half runs at
// 3.3-3.8 at every size, these loops at 46-52 in cache and 14-15 from
// memory (memcpy of the same array: 43 / 9.5). Even from memory one core
// writes 7 GB/s of halves, more than a TCP stream carries. Eigen's
// bfloat16 cast is as fast as the loops here but rounds, so it is not the
// wire format. The AVX-512 and AVX2 loops are within noise of each other
// from memory; the AVX-512 ones are chosen when present for being a little
// faster in cache.

namespace graphrun {

absl::StatusOr<WireCompression> ParseWireCompression(absl::string_view name) {
  if (name == "none") return WireCompression::kNone;
  if (name == "fp16" || name == "all") return WireCompression::kFp16;
  if (name == "bf16") return WireCompression::kBf16;
  if (name == "gradients") return WireCompression::kGradients;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown wire compression \"", name, "\" (expected gradients, all, none, bf16 or fp16)"));
}

absl::string_view WireCompressionName(WireCompression c) {
  switch (c) {
    case WireCompression::kNone:
      return "none";
    case WireCompression::kFp16:
      return "fp16";
    case WireCompression::kBf16:
      return "bf16";
    case WireCompression::kGradients:
      return "gradients";
  }
  return "unknown";
}

namespace {

// Bits of float32 and binary16 used below.
constexpr uint32_t kF32Abs = 0x7fffffffu;
constexpr uint32_t kF32Inf = 0x7f800000u;
constexpr uint32_t kF32Quiet = 0x00400000u;
constexpr uint32_t kF32SmallestNormalHalf = 0x38800000u;  // 2^-14
constexpr uint32_t kF32HalfSubnormalTie = 0x33000000u;    // 2^-25
constexpr uint32_t kF32RoundsToHalfInf = 0x477ff000u;     // 65520
constexpr uint16_t kHalfInf = 0x7c00;
constexpr uint16_t kHalfMax = 0x7bff;  // 65504
constexpr uint16_t kHalfQuiet = 0x0200;
constexpr uint16_t kBf16Quiet = 0x0040;
constexpr float kHalfMaxFloat = 65504.0f;
constexpr float kHalfOverflowFloat = 65520.0f;

inline uint32_t FloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

inline float BitsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// ---------------------------------------------------------------------------
// Scalar: integer arithmetic only, so the floating-point environment
// (rounding mode, flush-to-zero) never changes a result.

inline uint16_t ScalarFp16(uint32_t x, int64_t* saturated) {
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= kF32Abs;
  if (x >= kF32Inf) {
    if (x == kF32Inf) return sign | kHalfInf;
    // NaN: quiet, with the payload's top bits.
    return sign | kHalfInf | kHalfQuiet |
           static_cast<uint16_t>((x >> 13) & 0x3ffu);
  }
  if (x >= kF32RoundsToHalfInf) {
    ++*saturated;
    return sign | kHalfMax;
  }
  if (x >= kF32SmallestNormalHalf) {
    // Rebias the exponent (127 -> 15) and round the 13 dropped bits to
    // nearest even; a carry out of the mantissa correctly bumps the exponent.
    const uint32_t odd = (x >> 13) & 1u;
    return sign |
           static_cast<uint16_t>((x - (112u << 23) + 0xfffu + odd) >> 13);
  }
  if (x <= kF32HalfSubnormalTie) return sign;  // at most half of 2^-24: to 0
  // Subnormal half: the value in units of 2^-24 is m * 2^(e - 126), e in
  // [102, 112], so shift the 24-bit significand right by 126 - e (14..24).
  const uint32_t e = x >> 23;
  const uint32_t m = (x & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1u);
  uint32_t h = m >> shift;
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;  // may reach 0x400
  return sign | static_cast<uint16_t>(h);
}

inline float ScalarFromFp16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return BitsFloat(sign | kF32Inf | (mant ? kF32Quiet : 0u) | (mant << 13));
  if (exp != 0) return BitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return BitsFloat(sign);
  // Subnormal, mant * 2^-24: shift the leading one up to bit 10, to become
  // the implicit bit of a normal float32 of exponent -14 - shift.
  const uint32_t shift = static_cast<uint32_t>(__builtin_clz(mant)) - 21u;
  return BitsFloat(sign | ((113u - shift) << 23) |
                   (((mant << shift) & 0x3ffu) << 13));
}

inline uint16_t ScalarBf16(uint32_t x) {
  uint16_t h = static_cast<uint16_t>(x >> 16);
  if ((x & kF32Abs) > kF32Inf && (h & 0x7fu) == 0) h |= kBf16Quiet;
  return h;
}

int64_t EncodeFp16Scalar(const float* src, int64_t n, uint16_t* dst) {
  int64_t saturated = 0;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = ScalarFp16(FloatBits(src[i]), &saturated);
  return saturated;
}

void DecodeFp16Scalar(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = ScalarFromFp16(src[i]);
}

void EncodeBf16Scalar(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = ScalarBf16(FloatBits(src[i]));
}

void DecodeBf16Scalar(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = BitsFloat(static_cast<uint32_t>(src[i]) << 16);
}

#if GRAPHRUN_WIRE_CODEC_X86

// ---------------------------------------------------------------------------
// AVX2 + F16C: 16 values per iteration, the rest through the scalar loop.
// vcvtps2ph rounds to nearest even (given explicitly, so MXCSR's mode does
// not matter), quiets NaNs keeping their sign and top payload bits, and
// produces subnormal halves whatever MXCSR's flush-to-zero says; overflow is
// the one case it gets "wrong" for the wire, so finite values that would
// round to infinity are replaced by +-65504 first.

#define GRAPHRUN_AVX2 __attribute__((target("avx2,f16c,popcnt")))

// Replaces the lanes of x that must saturate (a = |x| at least 65520, and
// finite) by +-65504 and counts them. `big` is a >= 65520 (ordered: false
// for NaN), which also holds for +-Inf.
GRAPHRUN_AVX2 inline __m256 SaturateAvx2(__m256 x, __m256 a, __m256 big,
                                         int64_t* saturated) {
  const __m256 sat = _mm256_and_ps(
      big, _mm256_cmp_ps(a, _mm256_set1_ps(BitsFloat(kF32Inf)), _CMP_LT_OQ));
  *saturated += __builtin_popcount(_mm256_movemask_ps(sat));
  const __m256 sign =
      _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_set1_epi32(kF32Abs)), x);
  return _mm256_blendv_ps(x, _mm256_or_ps(sign, _mm256_set1_ps(kHalfMaxFloat)),
                          sat);
}

GRAPHRUN_AVX2 int64_t EncodeFp16Avx2(const float* src, int64_t n,
                                     uint16_t* dst) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(kF32Abs));
  const __m256 overflow = _mm256_set1_ps(kHalfOverflowFloat);
  int64_t saturated = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 x0 = _mm256_loadu_ps(src + i);
    __m256 x1 = _mm256_loadu_ps(src + i + 8);
    const __m256 a0 = _mm256_and_ps(x0, abs_mask);
    const __m256 a1 = _mm256_and_ps(x1, abs_mask);
    const __m256 big0 = _mm256_cmp_ps(a0, overflow, _CMP_GE_OQ);
    const __m256 big1 = _mm256_cmp_ps(a1, overflow, _CMP_GE_OQ);
    const __m256 big = _mm256_or_ps(big0, big1);
    // Rare (a value out of range, or an infinity): one test per 16 values
    // keeps the common case to a compare per vector.
    if (!_mm256_testz_ps(big, big)) {
      x0 = SaturateAvx2(x0, a0, big0, &saturated);
      x1 = SaturateAvx2(x1, a1, big1, &saturated);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(x0, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 8),
                     _mm256_cvtps_ph(x1, _MM_FROUND_TO_NEAREST_INT));
  }
  return saturated + EncodeFp16Scalar(src + i, n - i, dst + i);
}

GRAPHRUN_AVX2 void DecodeFp16Avx2(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i lo =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i hi =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(lo));
    _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(hi));
  }
  DecodeFp16Scalar(src + i, n - i, dst + i);
}

// Eight float32 bit patterns -> their bf16 words in the low 16 bits of each
// 32-bit lane.
GRAPHRUN_AVX2 inline __m256i Bf16Avx2(__m256i x) {
  const __m256i h = _mm256_srli_epi32(x, 16);
  const __m256i is_nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(kF32Abs)),
                         _mm256_set1_epi32(kF32Inf));
  const __m256i mant_zero = _mm256_cmpeq_epi32(
      _mm256_and_si256(h, _mm256_set1_epi32(0x7f)), _mm256_setzero_si256());
  const __m256i fix = _mm256_and_si256(_mm256_and_si256(is_nan, mant_zero),
                                       _mm256_set1_epi32(kBf16Quiet));
  return _mm256_or_si256(h, fix);
}

GRAPHRUN_AVX2 void EncodeBf16Avx2(const float* src, int64_t n, uint16_t* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a =
        Bf16Avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    const __m256i b = Bf16Avx2(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)));
    // Lanes hold values <= 0xffff, so the unsigned-saturating pack keeps
    // them; it interleaves 128-bit halves (a0 b0 a1 b1), the permute puts
    // them back in order.
    const __m256i packed =
        _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  EncodeBf16Scalar(src + i, n - i, dst + i);
}

GRAPHRUN_AVX2 void DecodeBf16Avx2(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i lo =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i hi =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_slli_epi32(_mm256_cvtepu16_epi32(lo), 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 8),
                        _mm256_slli_epi32(_mm256_cvtepu16_epi32(hi), 16));
  }
  DecodeBf16Scalar(src + i, n - i, dst + i);
}

// ---------------------------------------------------------------------------
// AVX-512: the same steps 16 lanes wide, 32 values per iteration, with mask
// registers instead of blends.

#define GRAPHRUN_AVX512 __attribute__((target("avx512f,avx2,f16c,popcnt")))

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which it then
// reports as maybe-uninitialized when the file is built without -mavx512f
// (--config=portable); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// As SaturateAvx2, 16 lanes.
GRAPHRUN_AVX512 inline __m512 SaturateAvx512(__m512 x, __m512 a, __mmask16 big,
                                             int64_t* saturated) {
  const __mmask16 sat = _mm512_mask_cmp_ps_mask(
      big, a, _mm512_set1_ps(BitsFloat(kF32Inf)), _CMP_LT_OQ);
  *saturated += __builtin_popcount(sat);
  const __m512i sign =
      _mm512_andnot_si512(_mm512_set1_epi32(kF32Abs), _mm512_castps_si512(x));
  const __m512i clamped =
      _mm512_or_si512(sign, _mm512_set1_epi32(FloatBits(kHalfMaxFloat)));
  return _mm512_mask_mov_ps(x, sat, _mm512_castsi512_ps(clamped));
}

GRAPHRUN_AVX512 int64_t EncodeFp16Avx512(const float* src, int64_t n,
                                         uint16_t* dst) {
  const __m512i abs_mask = _mm512_set1_epi32(kF32Abs);
  const __m512 overflow = _mm512_set1_ps(kHalfOverflowFloat);
  int64_t saturated = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 x0 = _mm512_loadu_ps(src + i);
    __m512 x1 = _mm512_loadu_ps(src + i + 16);
    const __m512 a0 = _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(x0), abs_mask));
    const __m512 a1 = _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(x1), abs_mask));
    const __mmask16 big0 = _mm512_cmp_ps_mask(a0, overflow, _CMP_GE_OQ);
    const __mmask16 big1 = _mm512_cmp_ps_mask(a1, overflow, _CMP_GE_OQ);
    if ((big0 | big1) != 0) {
      x0 = SaturateAvx512(x0, a0, big0, &saturated);
      x1 = SaturateAvx512(x1, a1, big1, &saturated);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(x0, _MM_FROUND_TO_NEAREST_INT));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 16),
                        _mm512_cvtps_ph(x1, _MM_FROUND_TO_NEAREST_INT));
  }
  return saturated + EncodeFp16Avx2(src + i, n - i, dst + i);
}

GRAPHRUN_AVX512 void DecodeFp16Avx512(const uint16_t* src, int64_t n,
                                      float* dst) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i lo =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i hi =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 16));
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(lo));
    _mm512_storeu_ps(dst + i + 16, _mm512_cvtph_ps(hi));
  }
  DecodeFp16Avx2(src + i, n - i, dst + i);
}

GRAPHRUN_AVX512 inline __m256i Bf16Avx512(__m512i x) {
  const __m512i h = _mm512_srli_epi32(x, 16);
  const __mmask16 is_nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(kF32Abs)),
                              _mm512_set1_epi32(kF32Inf));
  const __mmask16 fix =
      _mm512_mask_testn_epi32_mask(is_nan, h, _mm512_set1_epi32(0x7f));
  // vpmovdw keeps each lane's low 16 bits: the bf16 word.
  return _mm512_cvtepi32_epi16(
      _mm512_mask_or_epi32(h, fix, h, _mm512_set1_epi32(kBf16Quiet)));
}

GRAPHRUN_AVX512 void EncodeBf16Avx512(const float* src, int64_t n,
                                      uint16_t* dst) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i lo = Bf16Avx512(_mm512_loadu_si512(src + i));
    const __m256i hi = Bf16Avx512(_mm512_loadu_si512(src + i + 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 16), hi);
  }
  EncodeBf16Avx2(src + i, n - i, dst + i);
}

GRAPHRUN_AVX512 void DecodeBf16Avx512(const uint16_t* src, int64_t n,
                                      float* dst) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i lo =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i hi =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 16));
    _mm512_storeu_si512(dst + i,
                        _mm512_slli_epi32(_mm512_cvtepu16_epi32(lo), 16));
    _mm512_storeu_si512(dst + i + 16,
                        _mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16));
  }
  DecodeBf16Avx2(src + i, n - i, dst + i);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // GRAPHRUN_WIRE_CODEC_X86

// ---------------------------------------------------------------------------
// Dispatch: one table per kernel, chosen on first use.

struct KernelTable {
  int64_t (*encode_fp16)(const float*, int64_t, uint16_t*);
  void (*decode_fp16)(const uint16_t*, int64_t, float*);
  void (*encode_bf16)(const float*, int64_t, uint16_t*);
  void (*decode_bf16)(const uint16_t*, int64_t, float*);
};

constexpr KernelTable kScalarTable = {EncodeFp16Scalar, DecodeFp16Scalar,
                                      EncodeBf16Scalar, DecodeBf16Scalar};
#if GRAPHRUN_WIRE_CODEC_X86
constexpr KernelTable kAvx2Table = {EncodeFp16Avx2, DecodeFp16Avx2,
                                    EncodeBf16Avx2, DecodeBf16Avx2};
constexpr KernelTable kAvx512Table = {EncodeFp16Avx512, DecodeFp16Avx512,
                                      EncodeBf16Avx512, DecodeBf16Avx512};
#endif

using wire_codec_internal::Kernel;

#if GRAPHRUN_WIRE_CODEC_X86
// CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports has no "f16c").
bool CpuHasF16c() {
  unsigned int eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}
#endif

bool CpuHas(Kernel k) {
#if GRAPHRUN_WIRE_CODEC_X86
  switch (k) {
    case Kernel::kAvx2:
      return __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("popcnt") && CpuHasF16c();
    case Kernel::kAvx512:
      return CpuHas(Kernel::kAvx2) && __builtin_cpu_supports("avx512f");
    default:
      return true;
  }
#else
  return k == Kernel::kBest || k == Kernel::kScalar;
#endif
}

const KernelTable* TableFor(Kernel k) {
#if GRAPHRUN_WIRE_CODEC_X86
  switch (k) {
    case Kernel::kBest:
      if (CpuHas(Kernel::kAvx512)) return &kAvx512Table;
      if (CpuHas(Kernel::kAvx2)) return &kAvx2Table;
      return &kScalarTable;
    case Kernel::kAvx2:
      return &kAvx2Table;
    case Kernel::kAvx512:
      return &kAvx512Table;
    case Kernel::kScalar:
      return &kScalarTable;
  }
#endif
  return &kScalarTable;
}

// Null until first use. Relaxed is enough: the tables are constants, so a
// thread that sees the pointer sees what it points to; a race between two
// first uses stores the same pointer twice.
std::atomic<const KernelTable*> g_table{nullptr};

inline const KernelTable& Table() {
  const KernelTable* t = g_table.load(std::memory_order_relaxed);
  if (t == nullptr) {
    t = TableFor(Kernel::kBest);
    g_table.store(t, std::memory_order_relaxed);
  }
  return *t;
}

}  // namespace

int64_t EncodeFp16(const float* src, int64_t n, uint16_t* dst) {
  return n > 0 ? Table().encode_fp16(src, n, dst) : 0;
}

void DecodeFp16(const uint16_t* src, int64_t n, float* dst) {
  if (n > 0) Table().decode_fp16(src, n, dst);
}

void EncodeBf16(const float* src, int64_t n, uint16_t* dst) {
  if (n > 0) Table().encode_bf16(src, n, dst);
}

void DecodeBf16(const uint16_t* src, int64_t n, float* dst) {
  if (n > 0) Table().decode_bf16(src, n, dst);
}

namespace wire_codec_internal {

bool KernelSupported(Kernel k) { return CpuHas(k); }

bool SetKernelForTest(Kernel k) {
  if (!CpuHas(k)) return false;
  g_table.store(TableFor(k), std::memory_order_relaxed);
  return true;
}

}  // namespace wire_codec_internal
}  // namespace graphrun
