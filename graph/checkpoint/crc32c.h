// CRC32C (Castagnoli, reflected polynomial 0x82F63B78) and LevelDB's masking,
// as TensorFlow's checkpoint files use them: every .index block trailer and
// every tensor's bytes carry a masked CRC32C. Stateless; thread-safe.
//
// Debian 12 has no libcrc32c-dev, its Abseil predates absl/crc, and LevelDB's
// crc32c is not in its public headers, so this is a small implementation of
// our own: the CPU's CRC32C instruction on three interleaved chains where
// SSE 4.2 is compiled in, slicing-by-4 tables elsewhere.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_CRC32C_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace graphrun {
namespace crc32c {

// The CRC32C of `crc`'s data followed by data[0, n).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

// The same by the tables alone, whatever the CPU has (for tests).
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(absl::string_view data) { return Extend(0, data.data(), data.size()); }

// A CRC stored next to the data it covers is masked, so that the CRC of a
// string holding embedded CRCs stays well distributed.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_CRC32C_H_
