// MergeBundles: shard bundles become one checkpoint whose tensors are the
// ones written, under TensorFlow's file names; a bundle TensorFlow merged
// from two devices' shards reads back its values; bad merges fail naming
// the prefix or key and leave no index behind.
#include "graph/checkpoint/merge_bundles.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/bundle_format.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

std::string Tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void Write(const std::string& prefix,
           const std::vector<std::pair<std::string, Tensor>>& tensors) {
  BundleWriter writer(prefix);
  for (const auto& [key, t] : tensors) ASSERT_TRUE(writer.Add(key, t).ok());
  ASSERT_TRUE(writer.Finish().ok());
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

TEST(MergeBundlesTest, ShardsBecomeOneCheckpoint) {
  const std::string dir = Tmp("merge_ok");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string a = dir + "/model_temp/part-00000-of-00002";
  const std::string b = dir + "/model_temp/part-00001-of-00002";
  ASSERT_EQ(::mkdir((dir + "/model_temp").c_str(), 0755), 0);
  Write(a, {{"w", Tensor::FromVector<float>({1, 2, 3})},
            {"step", Tensor::Scalar<int64_t>(7)}});
  Write(b, {{"b", Tensor::FromVector<float>({-4, 5})},
            {"name", Tensor::Scalar<std::string>("layer")}});
  const std::string merged = dir + "/model.ckpt-7";
  ASSERT_TRUE(MergeBundles({a, b}, merged).ok());

  EXPECT_TRUE(Exists(merged + ".index"));
  EXPECT_TRUE(Exists(merged + ".data-00000-of-00002"));
  EXPECT_TRUE(Exists(merged + ".data-00001-of-00002"));
  EXPECT_FALSE(Exists(a + ".index"));
  EXPECT_FALSE(Exists(b + ".index"));
  EXPECT_FALSE(Exists(DataFilename(a, 0, 1)));

  auto reader = BundleReader::Open(merged);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header().num_shards(), 2);
  EXPECT_EQ(Floats(*(*reader)->Lookup("w")), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Floats(*(*reader)->Lookup("b")), (std::vector<float>{-4, 5}));
  EXPECT_EQ((*reader)->Lookup("step")->scalar<int64_t>(), 7);
  EXPECT_EQ((*reader)->Lookup("name")->scalar<std::string>(), "layer");
  EXPECT_EQ((*reader)->ListTensors().size(), 4u);
}

TEST(MergeBundlesTest, OneShardMergesUnderItsOwnName) {
  const std::string prefix = Tmp("merge_self");
  Write(prefix, {{"v", Tensor::FromVector<float>({9})}});
  ASSERT_TRUE(MergeBundles({prefix}, prefix).ok());
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Floats(*(*reader)->Lookup("v")), (std::vector<float>{9}));
}

// Written by TensorFlow (testdata/make_sharded_checkpoint.py): a sharded
// Saver over variables on two devices, merged into two data shards.
TEST(MergeBundlesTest, ReadsTensorFlowsTwoShardCheckpoint) {
  auto reader = BundleReader::Open("graph/checkpoint/testdata/tf_sharded.ckpt");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header().num_shards(), 2);
  EXPECT_EQ(Floats(*(*reader)->Lookup("a")), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Floats(*(*reader)->Lookup("b")), (std::vector<float>{-1.5f, 2.5f}));
}

TEST(MergeBundlesTest, MissingSourceNamedAndNothingWritten) {
  const std::string a = Tmp("merge_missing_a");
  Write(a, {{"x", Tensor::FromVector<float>({1})}});
  const std::string merged = Tmp("merge_missing_out");
  absl::Status s = MergeBundles({a, Tmp("no_such_shard")}, merged);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no_such_shard"), std::string::npos) << s;
  EXPECT_FALSE(Exists(merged + ".index"));
  EXPECT_TRUE(Exists(a + ".index"));  // the source is kept

  ASSERT_TRUE(MergeBundles({a, Tmp("no_such_shard")}, merged, /*allow_missing_files=*/true).ok());
  auto reader = BundleReader::Open(merged);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Floats(*(*reader)->Lookup("x")), (std::vector<float>{1}));

  s = MergeBundles({Tmp("none_1"), Tmp("none_2")}, Tmp("merge_none"), true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("none existed"), std::string::npos) << s;
}

TEST(MergeBundlesTest, DuplicateKeyNamed) {
  const std::string a = Tmp("merge_dup_a"), b = Tmp("merge_dup_b");
  Write(a, {{"layer/kernel", Tensor::FromVector<float>({1})}});
  Write(b, {{"layer/kernel", Tensor::FromVector<float>({2})}});
  const std::string merged = Tmp("merge_dup_out");
  absl::Status s = MergeBundles({a, b}, merged);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("layer/kernel"), std::string::npos) << s;
  EXPECT_NE(s.message().find("merge_dup_b"), std::string::npos) << s;
  EXPECT_FALSE(Exists(merged + ".index"));
}

}  // namespace
}  // namespace graphrun
