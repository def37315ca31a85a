// TensorFlow's fixed 64-bit string hash (its Hash64: MurmurHash64A with seed
// 0xDECAFCAFFE): the same value in every process and run. The executor
// names while-loop frames by it; StringToHashBucket buckets by it.
#ifndef GRAPHRUN_GRAPH_HASH_H_
#define GRAPHRUN_GRAPH_HASH_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace graphrun {

inline uint64_t Hash64(absl::string_view s) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  constexpr int kShift = 47;
  uint64_t h = 0xDECAFCAFFEULL ^ (static_cast<uint64_t>(s.size()) * kMul);
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t k;
    std::memcpy(&k, p, 8);  // little-endian, as TensorFlow reads it
    k *= kMul;
    k ^= k >> kShift;
    k *= kMul;
    h ^= k;
    h *= kMul;
  }
  if (n > 0) {
    uint64_t tail = 0;
    for (size_t i = 0; i < n; ++i) tail |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    h ^= tail;
    h *= kMul;
  }
  h ^= h >> kShift;
  h *= kMul;
  h ^= h >> kShift;
  return h;
}

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_HASH_H_
