#include "distributed/wire_codec.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "distributed/wire_codec_test_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace graphrun {
namespace {

using wire_codec_internal::Kernel;
using wire_codec_internal::KernelSupported;
using wire_codec_internal::SetKernelForTest;

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::string Hex(uint32_t v) { return absl::StrFormat("0x%08x", v); }

// ---------------------------------------------------------------------------
// Independent references, in double arithmetic from the formats' definitions.

// The value of binary16 `h` (NaN for NaNs).
double HalfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN()
             : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return (h & 0x8000) ? -v : v;
}

// The value of bfloat16 `h` (8 exponent bits, 7 mantissa bits, bias 127).
double Bf16Value(uint16_t h) {
  const int exp = (h >> 7) & 0xff;
  const int mant = h & 0x7f;
  double v;
  if (exp == 255) {
    v = mant ? std::numeric_limits<double>::quiet_NaN()
             : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -133);
  } else {
    v = std::ldexp(128 + mant, exp - 134);
  }
  return (h & 0x8000) ? -v : v;
}

// The binary16 nearest `x` (ties to even), saturated at +-65504 where IEEE
// rounding gives infinity (then *saturated is set). NaNs: the codec's
// documented result (quiet, sign and top payload bits kept).
uint16_t RefFp16(float x, bool* saturated) {
  *saturated = false;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00 | ((Bits(x) >> 13) & 0x1ff);
  if (std::isinf(x)) return sign | 0x7c00;
  const double a = std::fabs(static_cast<double>(x));
  // Halfway between 65504 and the next step (65536) is 65520; ties go to
  // 65536 (even), which is infinity.
  if (a >= 65520.0) {
    *saturated = true;
    return sign | 0x7bff;
  }
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);                             // a in [2^(e-1), 2^e)
  const int q = std::max(e - 1, -14) - 10;       // the half's step at a
  double r = std::nearbyint(std::ldexp(a, -q));  // exact in double; ties even
  int qq = q;
  if (r == 2048) {
    r = 1024;
    ++qq;
  }
  if (r < 1024) return sign | static_cast<uint16_t>(r);  // subnormal (q == -24)
  return sign | static_cast<uint16_t>(((qq + 25) << 10) |
                                      (static_cast<int>(r) - 1024));
}

// Codec results compared as bits: one failure message per mismatch, capped.
class BitsMismatches {
 public:
  void Add(const std::string& what) {
    if (++count_ <= 10) ADD_FAILURE() << what;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

// ---------------------------------------------------------------------------

TEST(WireCompressionTest, ParsesAndNames) {
  for (WireCompression c : {WireCompression::kNone, WireCompression::kFp16,
                            WireCompression::kBf16, WireCompression::kGradients}) {
    absl::StatusOr<WireCompression> parsed =
        ParseWireCompression(WireCompressionName(c));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(WireCompressionName(WireCompression::kFp16), "fp16");
  EXPECT_EQ(WireCompressionName(WireCompression::kBf16), "bf16");
  EXPECT_EQ(WireCompressionName(WireCompression::kNone), "none");
  EXPECT_EQ(WireCompressionName(WireCompression::kGradients), "gradients");
  absl::StatusOr<WireCompression> all = ParseWireCompression("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, WireCompression::kFp16);
  EXPECT_TRUE(CompressesGradientsOnly(WireCompression::kGradients));
  EXPECT_TRUE(CompressesGradientsOnly(WireCompression::kBf16));
  EXPECT_FALSE(CompressesGradientsOnly(WireCompression::kFp16));
}

TEST(WireCompressionTest, RejectsUnknownNames) {
  for (const char* bad : {"FP16", "float16", "", "bf16 ", "half"}) {
    absl::StatusOr<WireCompression> parsed = ParseWireCompression(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()),
                testing::HasSubstr(absl::StrFormat("\"%s\"", bad)));
  }
}

TEST(WireCodecKernelTest, ScalarAlwaysRuns) {
  EXPECT_TRUE(KernelSupported(Kernel::kScalar));
  EXPECT_TRUE(KernelSupported(Kernel::kBest));
  EXPECT_TRUE(SetKernelForTest(Kernel::kScalar));
  EXPECT_TRUE(SetKernelForTest(Kernel::kBest));
}

// Every test below runs once per kernel; kernels the CPU lacks are skipped.
class WireCodecTest : public testing::TestWithParam<Kernel> {
 protected:
  void SetUp() override {
    if (!SetKernelForTest(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the kernel";
  }
  void TearDown() override { SetKernelForTest(Kernel::kBest); }
};

TEST_P(WireCodecTest, DecodeFp16IsExactForEveryHalf) {
  std::vector<uint16_t> halves(65536);
  for (int i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> out(65536);
  DecodeFp16(halves.data(), 65536, out.data());
  BitsMismatches bad;
  for (int i = 0; i < 65536; ++i) {
    const uint16_t h = halves[i];
    const double want = HalfValue(h);
    if (std::isnan(want)) {
      // Quiet NaN, same sign, payload first.
      const uint32_t expect =
          ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13);
      if (Bits(out[i]) != expect)
        bad.Add(absl::StrFormat("NaN %04x -> %s", h, Hex(Bits(out[i]))));
    } else if (static_cast<double>(out[i]) != want ||
               std::signbit(out[i]) != std::signbit(want)) {
      bad.Add(absl::StrFormat("%04x -> %.9g, want %.9g", h, out[i], want));
    }
  }
  EXPECT_EQ(bad.count(), 0);
}

TEST_P(WireCodecTest, EveryHalfSurvivesARoundTrip) {
  std::vector<uint16_t> halves(65536), back(65536);
  for (int i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> f(65536);
  DecodeFp16(halves.data(), 65536, f.data());
  EXPECT_EQ(EncodeFp16(f.data(), 65536, back.data()), 0);
  BitsMismatches bad;
  for (int i = 0; i < 65536; ++i) {
    const bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0;
    const uint16_t want =
        nan ? static_cast<uint16_t>(i | 0x0200) : static_cast<uint16_t>(i);
    if (back[i] != want)
      bad.Add(absl::StrFormat("%04x -> %04x, want %04x", i, back[i], want));
  }
  EXPECT_EQ(bad.count(), 0);
}

struct Fp16Expectation {
  uint32_t f32;
  uint16_t f16;
  bool saturated;
};

// Each case alone (the scalar tail) and 40 copies (the vector loops).
void ExpectFp16(const std::vector<Fp16Expectation>& cases) {
  for (int copies : {1, 40}) {
    std::vector<float> in;
    for (int c = 0; c < copies; ++c)
      for (const Fp16Expectation& e : cases) in.push_back(FromBits(e.f32));
    std::vector<uint16_t> out(in.size());
    int64_t want_saturated = 0;
    for (const Fp16Expectation& e : cases)
      want_saturated += e.saturated ? copies : 0;
    EXPECT_EQ(EncodeFp16(in.data(), in.size(), out.data()), want_saturated)
        << copies;
    for (size_t i = 0; i < in.size(); ++i) {
      const Fp16Expectation& e = cases[i % cases.size()];
      EXPECT_EQ(out[i], e.f16) << Hex(e.f32) << " (" << in[i] << ")";
    }
  }
}

TEST_P(WireCodecTest, Fp16RoundsTiesToEven) {
  ExpectFp16({
      {Bits(1.0f), 0x3c00, false},
      {Bits(1.0f + 0x1p-11f), 0x3c00, false},             // tie, 0x3c00 even
      {Bits(1.0f + 3 * 0x1p-11f), 0x3c02, false},         // tie, 0x3c02 even
      {Bits(1.0f + 0x1p-11f + 0x1p-23f), 0x3c01, false},  // just above the tie
      {Bits(1.0f + 0x1p-11f - 0x1p-23f), 0x3c00, false},  // just below
      {Bits(2049.0f), 0x6800, false},  // tie between 2048 and 2050
      {Bits(2051.0f), 0x6802, false},  // tie between 2050 and 2052
      {Bits(-2051.0f), 0xe802, false},
      {Bits(1.0f - 0x1p-12f), 0x3c00, false},  // tie between 0x3bff and 0x3c00
      {Bits(0.1f), 0x2e66, false},
      {Bits(-3.14159265f), 0xc248, false},
      {Bits(2047.5f), 0x6800, false},  // tie, rounds up into the next binade
  });
}

TEST_P(WireCodecTest, Fp16SaturatesAt65520) {
  ExpectFp16({
      {Bits(65504.0f), 0x7bff, false},
      {Bits(65519.99f), 0x7bff, false},  // rounds down to 65504
      {Bits(std::nextafter(65520.0f, 0.0f)), 0x7bff, false},
      {Bits(65520.0f), 0x7bff, true},  // the tie IEEE sends to Inf
      {Bits(-65520.0f), 0xfbff, true},
      {Bits(65536.0f), 0x7bff, true},
      {Bits(1e10f), 0x7bff, true},
      {Bits(-FLT_MAX), 0xfbff, true},
      {Bits(std::numeric_limits<float>::infinity()), 0x7c00, false},
      {Bits(-std::numeric_limits<float>::infinity()), 0xfc00, false},
  });
}

TEST_P(WireCodecTest, Fp16ZerosSubnormalsAndNaNs) {
  ExpectFp16({
      {Bits(0.0f), 0x0000, false},
      {Bits(-0.0f), 0x8000, false},
      {Bits(0x1p-24f), 0x0001, false},  // smallest subnormal
      {Bits(0x1p-25f), 0x0000, false},  // tie with 0: even is 0
      {Bits(-0x1p-25f), 0x8000, false},
      {Bits(0x1p-25f + 0x1p-48f), 0x0001, false},  // just above the tie
      {Bits(3 * 0x1p-25f), 0x0002, false},         // tie between 1 and 2
      {Bits(5 * 0x1p-25f), 0x0002, false},         // tie between 2 and 3
      {Bits(0x1p-14f), 0x0400, false},             // smallest normal
      {Bits(0x1p-14f - 0x1p-25f), 0x0400,
       false},  // tie between 0x3ff and 0x400
      {Bits(0x1p-14f - 3 * 0x1p-25f), 0x03fe,
       false},  // tie between 0x3fe and 0x3ff
      {Bits(1e-6f), 0x0011, false},
      {Bits(-6e-5f), 0x83ef, false},
      {0x00000001, 0x0000, false},  // float32 subnormal
      {0x80400000, 0x8000, false},
      {0x7f800001, 0x7e00, false},  // signalling NaN: quieted
      {0xff800001, 0xfe00, false},
      {0x7f802000, 0x7e01, false},  // payload kept
      {0xffc12345, 0xfe09, false},
      {0x7fc00000, 0x7e00, false},
      {0x7fffffff, 0x7fff, false},
  });
}

TEST_P(WireCodecTest, Fp16MatchesNumpy) {
  const int n = sizeof(wire_codec_test::kFp16Cases) /
                sizeof(wire_codec_test::kFp16Cases[0]);
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = FromBits(wire_codec_test::kFp16Cases[i].f32);
  std::vector<uint16_t> out(n);
  EXPECT_EQ(EncodeFp16(in.data(), n, out.data()),
            wire_codec_test::kFp16CasesSaturated);
  BitsMismatches bad;
  for (int i = 0; i < n; ++i) {
    const auto& c = wire_codec_test::kFp16Cases[i];
    if (out[i] != c.f16)
      bad.Add(
          absl::StrFormat("%s -> %04x, numpy %04x", Hex(c.f32), out[i], c.f16));
  }
  EXPECT_EQ(bad.count(), 0);
}

// Every 997th float32 bit pattern (4.3 million, all classes), against the
// double-arithmetic reference.
TEST_P(WireCodecTest, Fp16MatchesReferenceAcrossAllPatterns) {
  constexpr uint64_t kStride = 997;
  std::vector<float> in;
  in.reserve((1ull << 32) / kStride + 1);
  for (uint64_t b = 0; b < (1ull << 32); b += kStride)
    in.push_back(FromBits(static_cast<uint32_t>(b)));
  std::vector<uint16_t> out(in.size());
  const int64_t saturated = EncodeFp16(in.data(), in.size(), out.data());
  int64_t want_saturated = 0;
  BitsMismatches bad;
  for (size_t i = 0; i < in.size(); ++i) {
    bool sat;
    const uint16_t want = RefFp16(in[i], &sat);
    want_saturated += sat;
    if (out[i] != want)
      bad.Add(absl::StrFormat("%s -> %04x, want %04x", Hex(Bits(in[i])), out[i],
                              want));
  }
  EXPECT_EQ(bad.count(), 0);
  EXPECT_EQ(saturated, want_saturated);
}

TEST_P(WireCodecTest, DecodeBf16IsExactForEveryWord) {
  std::vector<uint16_t> words(65536);
  for (int i = 0; i < 65536; ++i) words[i] = static_cast<uint16_t>(i);
  std::vector<float> out(65536);
  DecodeBf16(words.data(), 65536, out.data());
  BitsMismatches bad;
  for (int i = 0; i < 65536; ++i) {
    const double want = Bf16Value(words[i]);
    if (std::isnan(want) ? Bits(out[i]) != static_cast<uint32_t>(i) << 16
                         : static_cast<double>(out[i]) != want ||
                               std::signbit(out[i]) != std::signbit(want)) {
      bad.Add(absl::StrFormat("%04x -> %s", i, Hex(Bits(out[i]))));
    }
  }
  EXPECT_EQ(bad.count(), 0);
}

TEST_P(WireCodecTest, Bf16TruncatesAndKeepsNaNs) {
  const std::vector<std::pair<uint32_t, uint16_t>> cases = {
      {Bits(1.0f), 0x3f80},
      {Bits(1.0f + 0x1p-7f), 0x3f81},
      {Bits(1.0f + 0x1p-7f - 0x1p-23f), 0x3f80},  // nearest would be 0x3f81
      {Bits(1.0f + 0x1p-8f), 0x3f80},  // a tie: truncated all the same
      {Bits(-1.9999999f), 0xbfff},     // nearest would be -2 (0xc000)
      {Bits(0.0f), 0x0000},
      {Bits(-0.0f), 0x8000},
      {Bits(FLT_MAX), 0x7f7f},  // nearest would be Inf
      {Bits(std::numeric_limits<float>::infinity()), 0x7f80},
      {Bits(-std::numeric_limits<float>::infinity()), 0xff80},
      {0x00012345, 0x0001},  // float32 subnormal
      {0x7f800001, 0x7fc0},  // NaN whose truncation is Inf
      {0xff80ffff, 0xffc0},
      {0x7f810000, 0x7f81},  // NaN that survives truncation
      {0xffa00001, 0xffa0},
      {0x7fc00000, 0x7fc0},
      {0x7fffffff, 0x7fff},
  };
  for (int copies : {1, 40}) {
    std::vector<float> in;
    for (int c = 0; c < copies; ++c)
      for (const auto& [f, h] : cases) in.push_back(FromBits(f));
    std::vector<uint16_t> out(in.size());
    EncodeBf16(in.data(), in.size(), out.data());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(out[i], cases[i % cases.size()].second) << Hex(Bits(in[i]));
    }
  }
}

// Every 997th pattern: the decoded bf16 is x rounded toward zero to 8
// significant bits, checked as a value (same sign, not larger, less than one
// bf16 step short), not as bits.
TEST_P(WireCodecTest, Bf16IsTruncationAcrossAllPatterns) {
  constexpr uint64_t kStride = 997;
  std::vector<float> in;
  for (uint64_t b = 0; b < (1ull << 32); b += kStride)
    in.push_back(FromBits(static_cast<uint32_t>(b)));
  std::vector<uint16_t> words(in.size());
  std::vector<float> back(in.size());
  EncodeBf16(in.data(), in.size(), words.data());
  DecodeBf16(words.data(), words.size(), back.data());
  BitsMismatches bad;
  for (size_t i = 0; i < in.size(); ++i) {
    const double x = in[i];
    const double y = Bf16Value(words[i]);
    if (static_cast<double>(back[i]) != y &&
        !(std::isnan(y) && std::isnan(back[i]))) {
      bad.Add(
          absl::StrFormat("%04x decodes to %s", words[i], Hex(Bits(back[i]))));
      continue;
    }
    bool ok;
    if (std::isnan(x)) {
      ok = std::isnan(y) && std::signbit(x) == std::signbit(y);
    } else if (std::isinf(x) || x == 0) {
      ok = Bits(static_cast<float>(y)) == Bits(in[i]);
    } else {
      int e;
      std::frexp(x, &e);
      const double step = std::ldexp(1.0, std::max(e - 1, -126) - 7);
      ok = std::signbit(x) == std::signbit(y) && std::fabs(y) <= std::fabs(x) &&
           std::fabs(x) - std::fabs(y) < step;
    }
    if (!ok)
      bad.Add(absl::StrFormat("%s (%.9g) -> %04x (%.9g)", Hex(Bits(in[i])), x,
                              words[i], y));
  }
  EXPECT_EQ(bad.count(), 0);
}

// Vector bodies and scalar tails: every length in 0..70 and some longer,
// from unaligned addresses, writing exactly n outputs.
TEST_P(WireCodecTest, AnyLengthAndAlignment) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {127, 128, 129, 1000, 4099}) lengths.push_back(n);
  for (int64_t n : lengths) {
    for (int offset : {0, 1, 3}) {
      SCOPED_TRACE(absl::StrFormat("n=%d offset=%d", n, offset));
      std::vector<float> src(n + offset + 1);
      for (float& v : src) v = dist(rng) * (rng() % 4 == 0 ? 1.0f : 0.001f);
      const float* in = src.data() + offset;
      std::vector<uint16_t> words(n + offset + 1, 0xdead);
      uint16_t* w = words.data() + offset;

      int64_t want_saturated = 0;
      bool sat;
      const int64_t saturated = EncodeFp16(in, n, w);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(w[i], RefFp16(in[i], &sat)) << i;
        want_saturated += sat;
      }
      EXPECT_EQ(saturated, want_saturated);
      EXPECT_EQ(w[n], 0xdead);
      if (offset > 0) {
        EXPECT_EQ(w[-1], 0xdead);
      }

      std::vector<float> back(n + offset + 1, -1.5f);
      float* b = back.data() + offset;
      DecodeFp16(w, n, b);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<double>(b[i]), HalfValue(w[i])) << i;
      EXPECT_EQ(b[n], -1.5f);

      EncodeBf16(in, n, w);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(w[i], Bits(in[i]) >> 16) << i;
      EXPECT_EQ(w[n], 0xdead);
      DecodeBf16(w, n, b);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<double>(b[i]), Bf16Value(w[i])) << i;
      EXPECT_EQ(b[n], -1.5f);
    }
  }
}

#if defined(__x86_64__)
// Results do not depend on MXCSR: flush-to-zero, denormals-are-zero and a
// rounding mode other than nearest (as other libraries may leave a thread).
TEST_P(WireCodecTest, IgnoresTheFloatingPointEnvironment) {
  std::vector<uint16_t> halves(65536);
  for (int i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> f(65536), f_env(65536);
  DecodeFp16(halves.data(), 65536, f.data());
  std::vector<float> in = f;
  for (int i = 0; i < 65536; ++i)
    in.push_back(f[i] * (1.0f + 0x1p-12f));  // ties
  for (uint32_t i = 1; i < 4096; ++i)
    in.push_back(FromBits(i * 16));  // float32 subnormals
  std::vector<uint16_t> enc(in.size()), enc_env(in.size()), b(in.size()),
      b_env(in.size());
  const int64_t sat = EncodeFp16(in.data(), in.size(), enc.data());
  EncodeBf16(in.data(), in.size(), b.data());

  const unsigned int saved = _mm_getcsr();
  _mm_setcsr((saved & ~0x6000u) | 0x8040u | 0x2000u);  // FTZ, DAZ, round down
  DecodeFp16(halves.data(), 65536, f_env.data());
  const int64_t sat_env = EncodeFp16(in.data(), in.size(), enc_env.data());
  EncodeBf16(in.data(), in.size(), b_env.data());
  _mm_setcsr(saved);

  EXPECT_EQ(std::memcmp(f.data(), f_env.data(), f.size() * sizeof(float)), 0);
  EXPECT_EQ(enc, enc_env);
  EXPECT_EQ(sat, sat_env);
  EXPECT_EQ(b, b_env);
}
#endif

std::string KernelName(const testing::TestParamInfo<Kernel>& info) {
  switch (info.param) {
    case Kernel::kScalar:
      return "Scalar";
    case Kernel::kAvx2:
      return "Avx2";
    case Kernel::kAvx512:
      return "Avx512";
    case Kernel::kBest:
      return "Best";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Kernels, WireCodecTest,
                         testing::Values(Kernel::kScalar, Kernel::kAvx2,
                                         Kernel::kAvx512, Kernel::kBest),
                         KernelName);

}  // namespace
}  // namespace graphrun
