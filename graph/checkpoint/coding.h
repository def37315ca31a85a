// Little-endian fixed-width and varint encodings of LevelDB's table format
// and TensorFlow's string tensors. Decoders take a cursor (a string_view they
// advance) and return false, leaving it unspecified, on truncated or
// overlong input. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_CODING_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_CODING_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace graphrun {
namespace coding {

inline void PutFixed32(std::string* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint32_t>(u[0]) | static_cast<uint32_t>(u[1]) << 8 |
         static_cast<uint32_t>(u[2]) << 16 | static_cast<uint32_t>(u[3]) << 24;
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

inline void PutVarint32(std::string* dst, uint32_t v) { PutVarint64(dst, v); }

inline bool GetVarint64(absl::string_view* in, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint64_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

inline bool GetVarint32(absl::string_view* in, uint32_t* value) {
  uint64_t v = 0;
  if (!GetVarint64(in, &v) || v > UINT32_MAX) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

}  // namespace coding
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_CODING_H_
