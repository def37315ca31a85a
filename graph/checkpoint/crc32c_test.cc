// CRC32C against the published test vectors (RFC 3720, B.4) and a bit-at-a-
// time reference written from the polynomial, over lengths that cross the
// fast path's block boundaries and with data split across Extend calls.
#include "graph/checkpoint/crc32c.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

uint32_t BitwiseReference(uint32_t crc, const std::string& data) {
  uint32_t c = ~crc;
  for (unsigned char byte : data) {
    c ^= byte;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32cTest, PublishedVectors) {
  EXPECT_EQ(crc32c::Value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c::Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c::Value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc32c::Value(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c::Value(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c::ExtendPortable(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32cTest, MatchesBitwiseReferenceAcrossBlockBoundaries) {
  std::mt19937 rng(7);
  std::string data(3 * 3 * 4096 + 100, '\0');
  for (char& ch : data) ch = static_cast<char>(rng());
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{4095},
                   size_t{3 * 4096 - 1}, size_t{3 * 4096}, size_t{3 * 4096 + 1},
                   size_t{3 * 4096 + 13}, size_t{6 * 4096}, size_t{6 * 4096 + 5}, data.size()}) {
    const std::string part = data.substr(0, n);
    for (uint32_t seed : {0u, 0xDEADBEEFu}) {
      const uint32_t want = BitwiseReference(seed, part);
      EXPECT_EQ(crc32c::Extend(seed, part.data(), n), want) << "length " << n << " seed " << seed;
      EXPECT_EQ(crc32c::ExtendPortable(seed, part.data(), n), want) << "length " << n;
    }
  }
  // Misaligned starts.
  for (size_t off = 1; off < 8; ++off) {
    const std::string part = data.substr(off, 3 * 4096 + 40);
    EXPECT_EQ(crc32c::Value(absl::string_view(data).substr(off, part.size())),
              BitwiseReference(0, part))
        << "offset " << off;
  }
}

TEST(Crc32cTest, ExtendJoinsSplitData) {
  std::mt19937 rng(11);
  std::string data(5 * 4096 + 333, '\0');
  for (char& ch : data) ch = static_cast<char>(rng());
  const uint32_t whole = BitwiseReference(0, data);
  for (size_t cut : {size_t{1}, size_t{4096}, size_t{12288}, size_t{12289}, data.size() - 1}) {
    const uint32_t first = crc32c::Extend(0, data.data(), cut);
    EXPECT_EQ(crc32c::Extend(first, data.data() + cut, data.size() - cut), whole) << "cut " << cut;
  }
}

TEST(Crc32cTest, MaskRoundTrips) {
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu}) {
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(v)), v);
    EXPECT_NE(crc32c::Mask(v), v);
  }
}

}  // namespace
}  // namespace graphrun
