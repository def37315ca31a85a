#include "graph/checkpoint/tensor_bundle.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/checkpoint/table.h"
#include "graph/npy.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kTfPrefix[] = "graph/checkpoint/testdata/tf_model.ckpt";

std::string TmpPrefix(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

std::string Bytes(const Tensor& t) {
  if (t.dtype() == DT_STRING) {
    std::string out;
    for (const std::string& s : t.flat<std::string>()) absl::StrAppend(&out, s.size(), ":", s, ";");
    return out;
  }
  return std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes());
}

// One tensor of every type BundleWriter supports.
std::vector<std::pair<std::string, Tensor>> EveryDtype() {
  std::vector<std::pair<std::string, Tensor>> out;
  out.emplace_back(
      "f32", Tensor::FromVector<float>({1.5f, -0.0f, 3e38f, 1e-45f, 7, 8}, TensorShape({2, 3})));
  out.emplace_back("f64", Tensor::Scalar<double>(-2.718281828459045));
  out.emplace_back("f16", Tensor::FromVector<half>({half(1.0f), half(-65504.0f), half(0.5f)}));
  out.emplace_back("bf16", Tensor::FromVector<bfloat16>({bfloat16(3.0f), bfloat16(-1e30f)}));
  out.emplace_back("i8", Tensor::FromVector<int8_t>({-128, 127}));
  out.emplace_back("i16", Tensor::FromVector<int16_t>({-32768, 32767, 1}, TensorShape({3, 1})));
  out.emplace_back("i32", Tensor::FromVector<int32_t>({INT32_MIN, 0, INT32_MAX}));
  out.emplace_back("i64", Tensor::FromVector<int64_t>({INT64_MIN, 5, INT64_MAX}));
  out.emplace_back("u8", Tensor::FromVector<uint8_t>({0, 255}));
  out.emplace_back("bool", Tensor::FromVector<bool>({true, false, true}));
  out.emplace_back("empty", Tensor(DT_FLOAT, TensorShape({0, 4})));
  out.emplace_back("str", Tensor::FromVector<std::string>(
                              {"", "abc", std::string(300, 'z'), std::string("\0\xff", 2)},
                              TensorShape({2, 2})));
  out.emplace_back("str_scalar", Tensor::Scalar<std::string>("step"));
  return out;
}

TEST(TensorBundleTest, RoundTripsEveryDtype) {
  const std::string prefix = TmpPrefix("every_dtype");
  BundleWriter writer(prefix);
  // Added out of key order: the index must still be sorted.
  auto tensors = EveryDtype();
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
    ASSERT_TRUE(writer.Add(it->first, it->second).ok()) << it->first;
  }
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_TRUE(FileExists(prefix + ".index"));
  EXPECT_TRUE(FileExists(prefix + ".data-00000-of-00001"));

  // The header is the first entry, byte for byte as TensorFlow writes it.
  auto table = ReadTable(Slurp(prefix + ".index"), "index");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->size(), tensors.size() + 1);
  EXPECT_EQ((*table)[0].first, "");
  EXPECT_EQ((*table)[0].second, std::string("\x08\x01\x1a\x02\x08\x01", 6));

  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<BundleTensorInfo> infos = (*reader)->ListTensors();
  ASSERT_EQ(infos.size(), tensors.size());
  for (size_t i = 1; i < infos.size(); ++i) EXPECT_LT(infos[i - 1].key, infos[i].key);
  for (const auto& [key, tensor] : tensors) {
    auto info = (*reader)->GetInfo(key);
    ASSERT_TRUE(info.ok()) << key;
    EXPECT_EQ(info->dtype, tensor.dtype()) << key;
    EXPECT_EQ(info->shape, tensor.shape()) << key;
    auto read = (*reader)->Lookup(key);
    ASSERT_TRUE(read.ok()) << key << ": " << read.status();
    EXPECT_EQ(read->dtype(), tensor.dtype()) << key;
    EXPECT_EQ(read->shape(), tensor.shape()) << key;
    EXPECT_EQ(Bytes(*read), Bytes(tensor)) << key;
  }
}

TEST(TensorBundleTest, ReadsTensorFlowCheckpointWithTensorFlowValues) {
  auto reader = BundleReader::Open(kTfPrefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<std::string> keys = {"bf16",  "dense/bias",  "dense/kernel", "f64_scalar",
                                         "flags", "global_step", "i16",          "i32",
                                         "i64",   "i8",          "u8",           "words"};
  std::vector<BundleTensorInfo> infos = (*reader)->ListTensors();
  ASSERT_EQ(infos.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(infos[i].key, keys[i]);
    const std::string npy = absl::StrCat("graph/checkpoint/testdata/expected_",
                                         absl::StrReplaceAll(keys[i], {{"/", "_"}}), ".npy");
    auto expected = ReadNpyFile(npy);
    ASSERT_TRUE(expected.ok()) << expected.status();
    auto got = (*reader)->Lookup(keys[i]);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->shape(), expected->shape()) << keys[i];
    if (got->dtype() == DT_BFLOAT16) {  // stored in the .npy as float32
      ASSERT_EQ(expected->dtype(), DT_FLOAT);
      for (int64_t j = 0; j < got->NumElements(); ++j) {
        EXPECT_EQ(static_cast<float>(got->flat<bfloat16>()[j]), expected->flat<float>()[j]);
      }
      continue;
    }
    EXPECT_EQ(got->dtype(), expected->dtype()) << keys[i];
    // graph/npy.h cuts 'S' strings at their first NUL (NumPy keeps inner
    // NULs), so the strings are checked as literals below.
    if (got->dtype() == DT_STRING) continue;
    EXPECT_EQ(Bytes(*got), Bytes(*expected)) << keys[i];
  }
  // A few values spelled out, as TensorFlow's sess.run returned them.
  EXPECT_EQ((*reader)->Lookup("global_step")->scalar<int64_t>(), 42);
  EXPECT_EQ((*reader)->Lookup("f64_scalar")->scalar<double>(), 3.141592653589793);
  EXPECT_EQ((*reader)->Lookup("dense/kernel")->flat<float>()[1], -2.25f);
  EXPECT_EQ((*reader)->Lookup("dense/bias")->flat<half>()[2], half(65504.0f));
  EXPECT_EQ((*reader)->Lookup("i64")->flat<int64_t>()[0], -(int64_t{1} << 62));
  EXPECT_EQ((*reader)->Lookup("i32")->shape(), TensorShape({2, 2, 3}));
  auto words = (*reader)->Lookup("words");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(words->flat<std::string>()[0], "hello");
  EXPECT_EQ(words->flat<std::string>()[1], "");
  EXPECT_EQ(words->flat<std::string>()[2], std::string("\xff\x00"
                                                       "binary",
                                                       8));
  EXPECT_EQ(words->flat<std::string>()[3], std::string(200, 'x'));
  EXPECT_EQ((*reader)->Lookup("bf16")->flat<bfloat16>()[1], bfloat16(-2.5f));
}

TEST(TensorBundleTest, RewritingTensorFlowCheckpointIsByteIdentical) {
  auto reader = BundleReader::Open(kTfPrefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::string prefix = TmpPrefix("rewritten");
  BundleWriter writer(prefix);
  for (const BundleTensorInfo& info : (*reader)->ListTensors()) {
    ASSERT_TRUE(writer.Add(info.key, *(*reader)->Lookup(info.key)).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(Slurp(prefix + ".index"), Slurp(absl::StrCat(kTfPrefix, ".index")));
  EXPECT_EQ(Slurp(prefix + ".data-00000-of-00001"),
            Slurp(absl::StrCat(kTfPrefix, ".data-00000-of-00001")));
}

TEST(TensorBundleTest, MissingKeyAndPrefixAreNotFound) {
  auto missing = BundleReader::Open(TmpPrefix("no_such_checkpoint"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no_such_checkpoint"), std::string::npos);

  auto reader = BundleReader::Open(kTfPrefix);
  ASSERT_TRUE(reader.ok());
  auto t = (*reader)->Lookup("dense/nope");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("dense/nope"), std::string::npos);
  EXPECT_NE(t.status().message().find(kTfPrefix), std::string::npos);
  EXPECT_FALSE((*reader)->Contains("dense/nope"));
  EXPECT_TRUE((*reader)->Contains("dense/kernel"));
}

TEST(TensorBundleTest, WriterRejectsBadKeys) {
  BundleWriter writer(TmpPrefix("bad_keys"));
  EXPECT_EQ(writer.Add("", Tensor::Scalar<float>(1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(writer.Add("a", Tensor::Scalar<float>(1)).ok());
  EXPECT_EQ(writer.Add("a", Tensor::Scalar<float>(2)).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorBundleTest, UnfinishedWriteLeavesPreviousCheckpointLoadable) {
  const std::string prefix = TmpPrefix("atomic");
  {
    BundleWriter writer(prefix);
    ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(1.0f)).ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  {
    // A save that dies before Finish: the old bundle is intact, no litter.
    BundleWriter writer(prefix);
    ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(2.0f)).ok());
    ASSERT_TRUE(writer.Add("v", Tensor::Scalar<float>(3.0f)).ok());
    auto reader = BundleReader::Open(prefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->Lookup("w")->scalar<float>(), 1.0f);
    EXPECT_FALSE((*reader)->Contains("v"));
  }
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Lookup("w")->scalar<float>(), 1.0f);
  // A finished overwrite replaces it.
  BundleWriter writer(prefix);
  ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(2.0f)).ok());
  ASSERT_TRUE(writer.Finish().ok());
  reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Lookup("w")->scalar<float>(), 2.0f);
}

// Big tensors go to the file in 16 MiB pieces whose writeback starts as
// each is written and whose pages leave the page cache two pieces later
// (checkpoint_io::WriteBehind). Tensors of odd sizes that start and end
// inside pieces and span several of them read back byte for byte, at the
// offsets the index gives.
TEST(TensorBundleTest, TensorsSpanningWriteBehindPiecesReadBack) {
  const std::string prefix = TmpPrefix("write_behind");
  auto pattern = [](int64_t n, int seed) {
    Tensor t(DT_UINT8, TensorShape({n}));
    uint8_t* p = static_cast<uint8_t*>(t.raw_data());
    uint32_t x = 2654435761u * static_cast<uint32_t>(seed + 1);
    for (int64_t i = 0; i < n; ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = static_cast<uint8_t>(x >> 24);
    }
    return t;
  };
  const std::vector<int64_t> sizes = {3, (int64_t{20} << 20) + 7, 17, (int64_t{33} << 20) - 5, 1};
  std::vector<Tensor> tensors;
  BundleWriter writer(prefix);
  for (size_t i = 0; i < sizes.size(); ++i) {
    tensors.push_back(pattern(sizes[i], static_cast<int>(i)));
    ASSERT_TRUE(writer.Add(absl::StrCat("t", i), tensors.back()).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  EXPECT_EQ(static_cast<int64_t>(Slurp(prefix + ".data-00000-of-00001").size()), total);
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto t = (*reader)->Lookup(absl::StrCat("t", i));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(Bytes(*t) == Bytes(tensors[i])) << "tensor t" << i << " of " << sizes[i] << " bytes";
  }
}

TEST(TensorBundleTest, EmptyBundleHasOnlyTheHeader) {
  const std::string prefix = TmpPrefix("empty_bundle");
  BundleWriter writer(prefix);
  ASSERT_TRUE(writer.Finish().ok());
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->ListTensors().empty());
  EXPECT_EQ((*reader)->header().num_shards(), 1);
}

}  // namespace
}  // namespace graphrun
