#include "graph/checkpoint/table.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

std::string Build(const Entries& entries, TableOptions options = {}) {
  TableBuilder builder(options);
  for (const auto& [k, v] : entries) EXPECT_TRUE(builder.Add(k, v).ok()) << k;
  return builder.Finish();
}

TEST(TableTest, EmptyTableRoundTrips) {
  const std::string bytes = Build({});
  // Empty data: metaindex (8 + 5) + index (8 + 5) + footer (48).
  EXPECT_EQ(bytes.size(), 13u + 13u + 48u);
  auto read = ReadTable(bytes, "empty");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->empty());
}

TEST(TableTest, FooterEndsWithLevelDbMagic) {
  const std::string bytes = Build({{"", "h"}, {"a", "1"}});
  EXPECT_EQ(bytes.substr(bytes.size() - 8), std::string("\x57\xfb\x80\x8b\x24\x75\x47\xdb", 8));
}

TEST(TableTest, ManyBlocksRoundTrip) {
  Entries entries;
  for (int i = 0; i < 3000; ++i) {
    entries.emplace_back(absl::StrFormat("tensor/%06d/weights", i), std::string(i % 97, 'v'));
  }
  TableOptions options;
  options.block_size = 4096;  // force many data blocks
  const std::string bytes = Build(entries, options);
  auto read = ReadTable(bytes, "many");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, entries);
}

TEST(TableTest, RejectsOutOfOrderKeys) {
  TableBuilder builder;
  ASSERT_TRUE(builder.Add("b", "1").ok());
  EXPECT_EQ(builder.Add("a", "2").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(builder.Add("b", "2").code(), absl::StatusCode::kInvalidArgument);
}

TEST(TableTest, SeparatorsMatchLevelDb) {
  EXPECT_EQ(ShortestSeparator("abcd", "abzz"), "abd");
  EXPECT_EQ(ShortestSeparator("abc", "abcd"), "abc");  // prefix: unchanged
  EXPECT_EQ(ShortestSeparator("a4x", "a5"), "a4x");    // '4' + 1 is not < '5'
  EXPECT_EQ(ShortSuccessor("global_step"), "h");
  EXPECT_EQ(ShortSuccessor(std::string("\xff\xff", 2)), std::string("\xff\xff", 2));
}

TEST(TableTest, EveryFlippedByteIsRejectedOrHarmless) {
  const Entries entries = {{"", "header"}, {"a", "1"}, {"b", "22"}, {"c", "333"}};
  const std::string good = Build(entries);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x40;
    auto read = ReadTable(bad, "flipped.index");
    // Padding bytes of the footer are not covered by anything.
    if (read.ok()) {
      EXPECT_EQ(*read, entries) << "byte " << i;
      continue;
    }
    EXPECT_NE(read.status().message().find("flipped.index"), std::string::npos) << read.status();
  }
  for (size_t n = 0; n < good.size(); ++n) {
    auto read = ReadTable(good.substr(0, n), "cut.index");
    ASSERT_FALSE(read.ok()) << "length " << n;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace graphrun
