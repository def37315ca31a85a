// Every byte region of a TensorFlow-written checkpoint, flipped or cut off,
// is refused with a clear status naming the file (and key), never a crash.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/bundle_format.h"
#include "graph/checkpoint/table.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kTfPrefix[] = "graph/checkpoint/testdata/tf_model.ckpt";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    prefix_ = absl::StrCat(dir ? dir : "/tmp", "/corrupt.ckpt");
    index_ = Slurp(absl::StrCat(kTfPrefix, ".index"));
    data_ = Slurp(absl::StrCat(kTfPrefix, ".data-00000-of-00001"));
    ASSERT_GT(index_.size(), 48u);
    ASSERT_GT(data_.size(), 0u);
    auto reader = BundleReader::Open(kTfPrefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    for (const BundleTensorInfo& info : (*reader)->ListTensors()) {
      keys_.push_back(info.key);
      auto t = (*reader)->Lookup(info.key);
      ASSERT_TRUE(t.ok());
      values_.push_back(t->DebugString(1000));
    }
  }

  std::string index_path() const { return prefix_ + ".index"; }
  std::string data_path() const { return prefix_ + ".data-00000-of-00001"; }

  // Opens the bundle and reads every key. Returns how many keys read back with
  // their original values; each failure must be a clear, expected status.
  int ReadAll(const std::string& context) {
    auto reader = BundleReader::Open(prefix_);
    if (!reader.ok()) {
      const absl::StatusCode code = reader.status().code();
      EXPECT_TRUE(code == absl::StatusCode::kDataLoss ||
                  code == absl::StatusCode::kInvalidArgument ||
                  code == absl::StatusCode::kUnimplemented)
          << context << ": " << reader.status();
      EXPECT_NE(reader.status().message().find(index_path()), std::string::npos)
          << context << ": " << reader.status();
      return -1;
    }
    int good = 0;
    for (size_t i = 0; i < keys_.size(); ++i) {
      auto t = (*reader)->Lookup(keys_[i]);
      if (t.ok()) {
        good += t->DebugString(1000) == values_[i];
        continue;
      }
      EXPECT_TRUE(t.status().code() == absl::StatusCode::kDataLoss ||
                  t.status().code() == absl::StatusCode::kNotFound)
          << context << ": " << t.status();
    }
    return good;
  }

  std::string prefix_, index_, data_;
  std::vector<std::string> keys_, values_;
};

TEST_F(CorruptionTest, IntactCopyReadsEverything) {
  Spit(index_path(), index_);
  Spit(data_path(), data_);
  EXPECT_EQ(ReadAll("intact"), static_cast<int>(keys_.size()));
}

TEST_F(CorruptionTest, EveryFlippedIndexByteIsRefused) {
  Spit(data_path(), data_);
  const size_t footer = index_.size() - 48;
  for (size_t i = 0; i < index_.size(); ++i) {
    for (char mask : {'\x01', '\x80'}) {
      std::string bad = index_;
      bad[i] ^= mask;
      Spit(index_path(), bad);
      const int good = ReadAll(absl::StrCat("index byte ", i));
      // Only the footer's zero padding after the handles is unprotected.
      if (good >= 0) {
        EXPECT_TRUE(i >= footer && i < footer + 40) << "index byte " << i << " went unnoticed";
        EXPECT_EQ(good, static_cast<int>(keys_.size())) << "index byte " << i;
      }
    }
  }
}

TEST_F(CorruptionTest, EveryFlippedDataByteFailsItsKey) {
  Spit(index_path(), index_);
  for (size_t i = 0; i < data_.size(); ++i) {
    std::string bad = data_;
    bad[i] ^= 0x10;
    Spit(data_path(), bad);
    auto reader = BundleReader::Open(prefix_);
    ASSERT_TRUE(reader.ok());
    int failed = 0;
    for (const std::string& key : keys_) {
      auto t = (*reader)->Lookup(key);
      if (t.ok()) continue;
      ++failed;
      EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();
      EXPECT_NE(t.status().message().find(data_path()), std::string::npos) << t.status();
      EXPECT_NE(t.status().message().find(key), std::string::npos) << t.status();
    }
    EXPECT_EQ(failed, 1) << "data byte " << i;
  }
}

TEST_F(CorruptionTest, TruncatedIndexIsRefused) {
  Spit(data_path(), data_);
  for (size_t n = 0; n < index_.size(); ++n) {
    Spit(index_path(), index_.substr(0, n));
    auto reader = BundleReader::Open(prefix_);
    ASSERT_FALSE(reader.ok()) << "index cut to " << n;
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(reader.status().message().find(index_path()), std::string::npos);
  }
}

TEST_F(CorruptionTest, TruncatedDataFailsTheKeysItCuts) {
  Spit(index_path(), index_);
  for (size_t n = 0; n < data_.size(); n += 7) {
    Spit(data_path(), data_.substr(0, n));
    const int good = ReadAll(absl::StrCat("data cut to ", n));
    EXPECT_GE(good, 0);
    EXPECT_LT(good, static_cast<int>(keys_.size())) << "data cut to " << n;
  }
  ::unlink(data_path().c_str());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Lookup(keys_[0]).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CorruptionTest, GarbageIndexIsRefused) {
  for (const std::string& junk :
       {std::string(), std::string(48, '\0'), std::string(1000, 'x'), data_}) {
    Spit(index_path(), junk);
    auto reader = BundleReader::Open(prefix_);
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  }
}

// Tables whose CRCs are right but whose contents are not: what a buggy
// writer (rather than a bad disk) produces.
std::string IndexOf(const std::string& header, const std::string& key, const std::string& entry) {
  TableBuilder builder;
  EXPECT_TRUE(builder.Add("", header).ok());
  if (!key.empty()) {
    EXPECT_TRUE(builder.Add(key, entry).ok());
  }
  return builder.Finish();
}

std::string GoodHeader() {
  BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  return header.SerializeAsString();
}

TEST(CraftedIndexTest, BadHeadersAreRefused) {
  BundleHeaderProto header;
  header.set_num_shards(0);
  EXPECT_EQ(
      ParseBundleIndex(IndexOf(header.SerializeAsString(), "", ""), "x.index").status().code(),
      absl::StatusCode::kDataLoss);
  header.set_num_shards(1);
  header.mutable_version()->set_min_consumer(2);
  auto newer = ParseBundleIndex(IndexOf(header.SerializeAsString(), "", ""), "x.index");
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(newer.status().message().find("x.index"), std::string::npos);
  EXPECT_EQ(ParseBundleIndex(IndexOf("\xff\xff", "", ""), "x.index").status().code(),
            absl::StatusCode::kDataLoss);
  TableBuilder no_header;
  ASSERT_TRUE(no_header.Add("a", "").ok());
  EXPECT_EQ(ParseBundleIndex(no_header.Finish(), "x.index").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(CraftedIndexTest, BadEntriesAreRefused) {
  BundleEntryProto entry;
  entry.set_dtype(DT_FLOAT);
  entry.mutable_shape()->add_dim()->set_size(-1);
  EXPECT_EQ(ParseBundleIndex(IndexOf(GoodHeader(), "k", entry.SerializeAsString()), "x.index")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  entry.mutable_shape()->mutable_dim(0)->set_size(4);
  entry.set_shard_id(3);
  EXPECT_EQ(ParseBundleIndex(IndexOf(GoodHeader(), "k", entry.SerializeAsString()), "x.index")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  entry.set_shard_id(0);
  entry.set_dtype(static_cast<DataType>(999));
  EXPECT_EQ(ParseBundleIndex(IndexOf(GoodHeader(), "k", entry.SerializeAsString()), "x.index")
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
}

TEST(CraftedIndexTest, HugeClaimsFailWithoutAllocating) {
  BundleEntryProto entry;
  entry.set_dtype(DT_STRING);
  entry.mutable_shape()->add_dim()->set_size(int64_t{1} << 40);
  entry.set_size(16);
  auto t = DecodeTensor(entry, false, std::string(16, '\0'), "x.data, key k");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);
  entry.set_dtype(DT_DOUBLE);
  t = DecodeTensor(entry, false, std::string(16, '\0'), "x.data, key k");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);
}

TEST(CraftedIndexTest, RandomEntriesWithValidChecksumsNeverCrash) {
  std::mt19937_64 rng(77);
  BundleEntryProto base;
  base.set_dtype(DT_STRING);
  base.mutable_shape()->add_dim()->set_size(3);
  base.set_size(12);
  const std::string base_bytes = base.SerializeAsString();
  int decoded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string value = base_bytes;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
      value[rng() % value.size()] = static_cast<char>(rng());
    }
    auto index = ParseBundleIndex(IndexOf(GoodHeader(), "k", value), "r.index");
    if (!index.ok()) continue;
    std::string shard(64, '\0');
    for (char& c : shard) c = static_cast<char>(rng() % 4);
    for (const auto& [key, entry] : index->entries) {
      if (entry.offset() > 64 || entry.size() > 64 - entry.offset()) continue;
      auto t = DecodeTensor(entry, rng() % 2, shard.substr(entry.offset(), entry.size()), key);
      decoded += t.ok();
    }
  }
  EXPECT_GE(decoded, 0);
}

}  // namespace
}  // namespace graphrun
