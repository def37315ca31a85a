// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3"), laid out as TensorFlow's random ops use it: a 64-bit key of two
// 32-bit words and a 128-bit counter of four, each call returning four
// 32-bit words and stepping the counter by one. The random kernels
// (random_ops.cc) and their distributions (random_distributions.h) build on
// it. A value type: copying it forks the stream; not thread-safe to share.
#ifndef GRAPHRUN_KERNELS_CPU_PHILOX_H_
#define GRAPHRUN_KERNELS_CPU_PHILOX_H_

#include <array>
#include <cstdint>

namespace graphrun {
namespace random {

class Philox4x32 {
 public:
  static constexpr int kResultElementCount = 4;
  using Result = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;
  using Counter = std::array<uint32_t, 4>;

  // TensorFlow's (seed, seed2) layout: the key is `seed` (low word first),
  // the counter's high half is `seed2` (low word first), its low half zero.
  Philox4x32(uint64_t seed, uint64_t seed2)
      : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
        counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)} {}
  Philox4x32(const Counter& counter, const Key& key) : key_(key), counter_(counter) {}

  const Key& key() const { return key_; }
  const Counter& counter() const { return counter_; }

  // Moves the counter on by `count` 128-bit blocks (a carrying add).
  void Skip(uint64_t count) {
    const uint32_t lo = static_cast<uint32_t>(count);
    uint32_t hi = static_cast<uint32_t>(count >> 32);
    counter_[0] += lo;
    if (counter_[0] < lo) ++hi;
    counter_[1] += hi;
    if (counter_[1] < hi) {
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  // The block for the current counter; then the counter moves on by one.
  Result operator()() {
    Result block = counter_;
    Key key = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kWeyl0;
        key[1] += kWeyl1;
      }
      block = Round(block, key);
    }
    Skip(1);
    return block;
  }

 private:
  static constexpr uint32_t kMultiplier0 = 0xD2511F53;
  static constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9;
  static constexpr uint32_t kWeyl1 = 0xBB67AE85;

  static Result Round(const Result& c, const Key& key) {
    const uint64_t p0 = static_cast<uint64_t>(kMultiplier0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMultiplier1) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    return {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
  }

  Key key_;
  Counter counter_;
};

// Hands out a generator's words one at a time, drawing a new block when the
// last is used up: for the distributions that reject samples.
class SingleSampler {
 public:
  explicit SingleSampler(Philox4x32* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == Philox4x32::kResultElementCount) {
      block_ = (*gen_)();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  Philox4x32* gen_;
  Philox4x32::Result block_{};
  int used_ = Philox4x32::kResultElementCount;
};

}  // namespace random
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_PHILOX_H_
