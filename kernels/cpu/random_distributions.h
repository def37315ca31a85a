// The distributions TensorFlow's random ops draw from Philox4x32 words
// (philox.h), with TensorFlow's exact arithmetic so outputs match it bit
// for bit: uniform floats from the mantissa bits, uniform integers by
// modulo, normals by Box-Muller (the C library's logf/sqrtf/sincosf, 2*pi
// multiplied in double), truncated normals by rejecting |x| >= 2.
//
// Each distribution makes a group of kGroupSize values per call. Fixed-cost
// ones use one Philox block per group, so group i is block i; the
// variable-cost one (truncated normal) draws words one at a time through a
// SingleSampler. FillRandomGroups() writes groups [start, limit) of an
// output from a generator standing at group 0, the same bits however the
// groups are split between threads. Stateless; thread-safe.
#ifndef GRAPHRUN_KERNELS_CPU_RANDOM_DISTRIBUTIONS_H_
#define GRAPHRUN_KERNELS_CPU_RANDOM_DISTRIBUTIONS_H_

#include <math.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "graph/types.h"
#include "kernels/cpu/philox.h"

namespace graphrun {
namespace random {

// [0, 1) from 23 random mantissa bits: 1.m - 1.
inline float WordToFloat(uint32_t x) {
  const uint32_t bits = 0x3F800000u | (x & 0x7FFFFFu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// [0, 1) from 52 mantissa bits: the low 20 bits of `hi` above all of `lo`.
inline double WordsToDouble(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(hi & 0xFFFFFu) << 32) | lo;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// [0, 1) from the low 10 bits (half) or 7 bits (bfloat16) of a word.
inline half WordToHalf(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((15u << 10) | (x & 0x3FFu));
  return static_cast<half>(static_cast<float>(Eigen::numext::bit_cast<half>(bits)) - 1.0f);
}
inline bfloat16 WordToBfloat16(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((127u << 7) | (x & 0x7Fu));
  return static_cast<bfloat16>(static_cast<float>(Eigen::numext::bit_cast<bfloat16>(bits)) - 1.0f);
}

// Box-Muller: two standard normals from two words.
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  constexpr float kEpsilon = 1.0e-7f;
  float u1 = WordToFloat(x0);
  if (u1 < kEpsilon) u1 = kEpsilon;
  // 2.0f * M_PI is a double; the product is rounded to float once.
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(WordToFloat(x1)));
  const float u2 = sqrtf(-2.0f * logf(u1));
  float s, c;
  sincosf(v1, &s, &c);
  *f0 = s * u2;
  *f1 = c * u2;
}

// The same in double, from four words.
inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0,
                            double* d1) {
  constexpr double kEpsilon = 1.0e-7;
  double u1 = WordsToDouble(x0, x1);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const double v1 = 2.0 * M_PI * WordsToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  double s, c;
  sincos(v1, &s, &c);
  *d0 = s * u2;
  *d1 = c * u2;
}

// Uniform [0, 1) of T in {half, bfloat16, float, double}.
template <typename T>
struct UniformReal {
  static constexpr int kGroupSize = std::is_same_v<T, double> ? 2 : 4;
  static constexpr bool kVariableCost = false;
  std::array<T, kGroupSize> operator()(Philox4x32* gen) const {
    const Philox4x32::Result w = (*gen)();
    std::array<T, kGroupSize> out;
    if constexpr (std::is_same_v<T, double>) {
      out[0] = WordsToDouble(w[0], w[1]);
      out[1] = WordsToDouble(w[2], w[3]);
    } else {
      for (int i = 0; i < 4; ++i) {
        if constexpr (std::is_same_v<T, float>) out[i] = WordToFloat(w[i]);
        if constexpr (std::is_same_v<T, half>) out[i] = WordToHalf(w[i]);
        if constexpr (std::is_same_v<T, bfloat16>) out[i] = WordToBfloat16(w[i]);
      }
    }
    return out;
  }
};

// Uniform integers in [lo, hi) (lo < hi), TensorFlow's way: lo plus a
// random word (int32) or pair of words (int64, low word first) modulo the
// range. (The modulo bias is TensorFlow's too.)
template <typename T>
struct UniformInt {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>);
  using Unsigned = std::make_unsigned_t<T>;
  static constexpr int kGroupSize = std::is_same_v<T, int64_t> ? 2 : 4;
  static constexpr bool kVariableCost = false;
  UniformInt(T lo, T hi) : lo(lo), range(static_cast<Unsigned>(hi) - static_cast<Unsigned>(lo)) {}
  std::array<T, kGroupSize> operator()(Philox4x32* gen) const {
    const Philox4x32::Result w = (*gen)();
    std::array<T, kGroupSize> out;
    for (int i = 0; i < kGroupSize; ++i) {
      Unsigned bits;
      if constexpr (std::is_same_v<T, int64_t>) {
        bits = w[2 * i] | (static_cast<uint64_t>(w[2 * i + 1]) << 32);
      } else {
        bits = w[i];
      }
      out[i] = static_cast<T>(static_cast<Unsigned>(lo) + bits % range);
    }
    return out;
  }
  T lo;
  Unsigned range;
};

// Standard normal of T; half and bfloat16 are float results rounded.
template <typename T>
struct Normal {
  static constexpr int kGroupSize = std::is_same_v<T, double> ? 2 : 4;
  static constexpr bool kVariableCost = false;
  std::array<T, kGroupSize> operator()(Philox4x32* gen) const {
    const Philox4x32::Result w = (*gen)();
    std::array<T, kGroupSize> out;
    if constexpr (std::is_same_v<T, double>) {
      BoxMullerDouble(w[0], w[1], w[2], w[3], &out[0], &out[1]);
    } else {
      for (int i = 0; i < 4; i += 2) {
        float f0, f1;
        BoxMullerFloat(w[i], w[i + 1], &f0, &f1);
        out[i] = static_cast<T>(f0);
        out[i + 1] = static_cast<T>(f1);
      }
    }
    return out;
  }
};

// Standard normal of T truncated to (-2, 2): Box-Muller pairs from words
// drawn one at a time, each value kept only when |x| < 2, until the group
// is full (the pair's second value is dropped once it is).
template <typename T>
struct TruncatedNormal {
  static constexpr int kGroupSize = std::is_same_v<T, double> ? 2 : 4;
  static constexpr bool kVariableCost = true;
  std::array<T, kGroupSize> operator()(SingleSampler* words) const {
    std::array<T, kGroupSize> out;
    int filled = 0;
    while (true) {
      if constexpr (std::is_same_v<T, double>) {
        const uint32_t x0 = (*words)(), x1 = (*words)(), x2 = (*words)(), x3 = (*words)();
        double d[2];
        BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
        for (double v : d) {
          if (std::abs(v) < 2.0) {
            out[filled++] = v;
            if (filled == kGroupSize) return out;
          }
        }
      } else {
        const uint32_t x0 = (*words)(), x1 = (*words)();
        float f[2];
        BoxMullerFloat(x0, x1, &f[0], &f[1]);
        for (float v : f) {
          if (std::abs(v) < 2.0f) {
            out[filled++] = static_cast<T>(v);
            if (filled == kGroupSize) return out;
          }
        }
      }
    }
  }
};

// Philox blocks set aside per variable-cost output value, so each group
// starts at a known place in the stream (TensorFlow's 256).
constexpr int64_t kReservedBlocksPerOutput = 256;

// Writes groups [start_group, limit_group) of the `size` outputs in `data`;
// `gen` stands at the start of group 0. Fixed cost: group i is the i-th
// draw. Variable cost: group i draws from the generator moved on by
// i * kGroupSize * 256 / 4 blocks. The last group may be cut short.
template <typename Dist, typename T>
void FillRandomGroups(const Philox4x32& gen, const Dist& dist, T* data, int64_t size,
                      int64_t start_group, int64_t limit_group) {
  constexpr int64_t kGroup = Dist::kGroupSize;
  Philox4x32 running = gen;
  if constexpr (!Dist::kVariableCost) running.Skip(static_cast<uint64_t>(start_group));
  for (int64_t g = start_group; g < limit_group; ++g) {
    std::array<T, kGroup> values;
    if constexpr (Dist::kVariableCost) {
      Philox4x32 local = gen;
      local.Skip(static_cast<uint64_t>(g) * kGroup * kReservedBlocksPerOutput /
                 Philox4x32::kResultElementCount);
      SingleSampler words(&local);
      values = dist(&words);
    } else {
      values = dist(&running);
    }
    const int64_t offset = g * kGroup;
    const int64_t n = std::min<int64_t>(kGroup, size - offset);
    std::copy(values.begin(), values.begin() + n, data + offset);
  }
}

}  // namespace random
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_RANDOM_DISTRIBUTIONS_H_
