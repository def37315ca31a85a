#include "graph/checkpoint/crc32c.h"

#include <array>
#include <cstring>

#if defined(__SSE4_2__) && defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace graphrun {
namespace crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;

// Slicing-by-4 tables: kTables[0] is the classic byte table; kTables[k][b] is
// the CRC of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 4>;

Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 4; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

const Tables& GetTables() {
  static const Tables tables = MakeTables();
  return tables;
}

// The raw (uninverted) CRC state after `c` and data[0, n), by the tables.
uint32_t ExtendRawTables(uint32_t c, const uint8_t* p, size_t n) {
  const Tables& t = GetTables();
  while (n >= 4) {
    c ^= static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    c = t[3][c & 0xff] ^ t[2][(c >> 8) & 0xff] ^ t[1][(c >> 16) & 0xff] ^ t[0][c >> 24];
    p += 4;
    n -= 4;
  }
  while (n-- > 0) c = t[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return c;
}

#if defined(__SSE4_2__) && defined(__x86_64__)
// The CPU's CRC32C instruction has a latency of three cycles and a
// throughput of one: one dependent chain runs at a third of its speed. Long
// inputs are therefore cut into runs of three blocks whose CRCs are computed
// as three independent chains and then joined. A CRC is affine in its state:
// the state after A then B is Shift(state after A) ^ (state after B from 0),
// where Shift appends kBlock zero bytes, a linear map on 32 bits kept as four
// byte tables. (Debian 12 packages neither google/crc32c nor an Abseil with
// absl/crc, which do the same.)
constexpr size_t kBlock = 4096;

using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

uint32_t ZerosRaw(uint32_t c, size_t n) {
  for (size_t i = 0; i < n; i += 8) c = static_cast<uint32_t>(_mm_crc32_u64(c, 0));
  return c;
}

ShiftTables MakeShiftTables() {
  std::array<uint32_t, 32> basis{};
  for (int bit = 0; bit < 32; ++bit) basis[bit] = ZerosRaw(uint32_t{1} << bit, kBlock);
  ShiftTables t{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t v = 0;
      for (int j = 0; j < 8; ++j) {
        if (b & (1u << j)) v ^= basis[8 * k + j];
      }
      t[k][b] = v;
    }
  }
  return t;
}

inline uint32_t Shift(const ShiftTables& t, uint32_t c) {
  return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

uint32_t ExtendRawHardware(uint32_t c, const uint8_t* p, size_t n) {
  if (n >= 3 * kBlock) {
    static const ShiftTables shift = MakeShiftTables();
    do {
      uint64_t a = c, b = 0, d = 0;
      for (size_t i = 0; i < kBlock; i += 8) {
        a = _mm_crc32_u64(a, Load64(p + i));
        b = _mm_crc32_u64(b, Load64(p + kBlock + i));
        d = _mm_crc32_u64(d, Load64(p + 2 * kBlock + i));
      }
      c = Shift(shift, Shift(shift, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
          static_cast<uint32_t>(d);
      p += 3 * kBlock;
      n -= 3 * kBlock;
    } while (n >= 3 * kBlock);
  }
  while (n >= 8) {
    c = static_cast<uint32_t>(_mm_crc32_u64(c, Load64(p)));
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = _mm_crc32_u8(c, *p++);
  return c;
}
#endif

}  // namespace

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const uint8_t*>(data);
#if defined(__SSE4_2__) && defined(__x86_64__)
  return ~ExtendRawHardware(~crc, p, n);
#else
  return ~ExtendRawTables(~crc, p, n);
#endif
}

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  return ~ExtendRawTables(~crc, reinterpret_cast<const uint8_t*>(data), n);
}

}  // namespace crc32c
}  // namespace graphrun
