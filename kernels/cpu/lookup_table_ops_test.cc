// Expected values: TensorFlow 2.21, checked by make_lookup_table_test_values.py beside this file.
// Tests for the lookup table kernels. Every expected value and message is
// what TensorFlow 2.21 gave for the same ops, inputs and files in a v1
// Session: text-file columns, line numbers with an offset, vocab_size,
// "\r\n" line ends; the errors of bad files, of a lookup before the table
// is initialized, of conflicting re-initialization; a mutable table's
// inserts, removals, per-key defaults, export and import.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrI;
using testing::AttrS;
using testing::AttrType;
using testing::ExpectError;
using testing::RunOp;

std::string WriteFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir ? dir : "/tmp", "/", name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f != nullptr) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  return path;
}

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }
Tensor Int64s(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v); }

// A new table's handle.
Tensor NewTable(DataType key, DataType value, bool mutable_table = false) {
  auto out = RunOp(mutable_table ? "MutableHashTableV2" : "HashTableV2",
                   {{"key_dtype", AttrType(key)}, {"value_dtype", AttrType(value)},
                    {"shared_name", AttrS("t")}, {"use_node_name_sharing", AttrB(false)}},
                   {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

absl::StatusOr<std::vector<Tensor>> FromFile(const Tensor& table, const std::string& path,
                                             int64_t key_index, int64_t value_index,
                                             const std::string& delimiter = "\t",
                                             int64_t vocab_size = -1, int64_t offset = 0) {
  return RunOp("InitializeTableFromTextFileV2",
               {{"key_index", AttrI(key_index)}, {"value_index", AttrI(value_index)},
                {"delimiter", AttrS(delimiter)}, {"vocab_size", AttrI(vocab_size)},
                {"offset", AttrI(offset)}},
               {table, Tensor::Scalar<std::string>(path)});
}

absl::StatusOr<std::vector<Tensor>> Find(const Tensor& table, const Tensor& keys,
                                         const Tensor& default_value) {
  return RunOp("LookupTableFindV2", {}, {table, keys, default_value});
}

int64_t Size(const Tensor& table) {
  auto out = RunOp("LookupTableSizeV2", {}, {table});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].flat<int64_t>()[0] : -1;
}

const char kCrlf[] = "alpha 10\r\nbeta 20\ngamma 30";

TEST(LookupTableTest, TextFileColumnsLineNumbersAndVocabSize) {
  const std::string path = WriteFile("crlf.txt", kCrlf);
  Tensor t = NewTable(DT_STRING, DT_INT64);
  ASSERT_TRUE(FromFile(t, path, 0, 1, " ").ok());
  auto found = Find(t, Strings({"alpha", "beta", "gamma", "delta"}), Tensor::Scalar<int64_t>(-1));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(testing::ToDoubles<int64_t>((*found)[0]), (std::vector<double>{10, 20, 30, -1}));
  EXPECT_EQ(Size(t), 3);

  // Line numbers (plus the offset) to whole lines.
  Tensor back = NewTable(DT_INT64, DT_STRING);
  ASSERT_TRUE(FromFile(back, path, -1, -2, "\t", -1, 3).ok());
  found = Find(back, Int64s({2, 3, 4, 5, 6}), Tensor::Scalar<std::string>("?"));
  ASSERT_TRUE(found.ok()) << found.status();
  auto s = (*found)[0].flat<std::string>();
  EXPECT_EQ(std::vector<std::string>(s.begin(), s.end()),
            (std::vector<std::string>{"?", "alpha 10", "beta 20", "gamma 30", "?"}));

  // vocab_size 2 reads two lines.
  Tensor two = NewTable(DT_STRING, DT_INT64);
  ASSERT_TRUE(FromFile(two, path, -2, -1, "\t", 2).ok());
  found = Find(two, Strings({"alpha 10", "beta 20", "gamma 30"}), Tensor::Scalar<int64_t>(-1));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(testing::ToDoubles<int64_t>((*found)[0]), (std::vector<double>{0, 1, -1}));

  // Initialized tables ignore a second file initialization.
  EXPECT_TRUE(FromFile(two, path, -2, -1).ok());
  EXPECT_EQ(Size(two), 2);
}

TEST(LookupTableTest, TextFileErrors) {
  const std::string path = WriteFile("crlf2.txt", kCrlf);
  const std::string gap = WriteFile("emptyline.txt", "a\n\nb\n");
  const std::string empty = WriteFile("empty.txt", "");
  const std::string missing = WriteFile("x", "") + ".missing";
  auto table = [] { return NewTable(DT_STRING, DT_INT64); };
  ExpectError(FromFile(table(), path, -2, -1, "\t", 5), absl::StatusCode::kInvalidArgument,
              absl::StrCat("Invalid vocab_size in ", path, ": expected 5 but got 3"));
  ExpectError(FromFile(table(), gap, -2, -1), absl::StatusCode::kInvalidArgument,
              absl::StrCat("Invalid content in ", gap, ": empty line found at position 3."));
  ExpectError(FromFile(table(), path, 1, 0, " "), absl::StatusCode::kInvalidArgument,
              "Field alpha in line 0 is not a valid int64.");
  ExpectError(FromFile(table(), path, 0, 2, " "), absl::StatusCode::kInvalidArgument,
              absl::StrCat("Invalid number of columns in ", path,
                           " line 0 (alpha 10) : expected at least 3 got 2"));
  ExpectError(FromFile(table(), missing, -2, -1), absl::StatusCode::kNotFound,
              absl::StrCat(missing, "; No such file or directory"));
  ExpectError(FromFile(table(), empty, -2, -1), absl::StatusCode::kOutOfRange,
              "Read less bytes than requested");
  ExpectError(FromFile(NewTable(DT_STRING, DT_FLOAT), path, -2, -1),
              absl::StatusCode::kInvalidArgument,
              "Value index for line number requires table value dtype of int64, got float");
  ExpectError(FromFile(NewTable(DT_INT64, DT_FLOAT, true), path, -1, -2),
              absl::StatusCode::kInvalidArgument, "is not initializable");
}

TEST(LookupTableTest, HashTableFromTensors) {
  Tensor t = NewTable(DT_STRING, DT_INT64);
  ExpectError(Find(t, Strings({"a"}), Tensor::Scalar<int64_t>(0)),
              absl::StatusCode::kFailedPrecondition, "Table not initialized.");
  EXPECT_EQ(Size(t), 0);
  ExpectError(RunOp("LookupTableExportV2",
                    {{"Tkeys", AttrType(DT_STRING)}, {"Tvalues", AttrType(DT_INT64)}}, {t}),
              absl::StatusCode::kAborted, "HashTable is not initialized.");
  ExpectError(RunOp("InitializeTableV2", {}, {t, Strings({"a", "b", "a"}), Int64s({1, 2, 3})}),
              absl::StatusCode::kFailedPrecondition,
              "HashTable has different value for same key. Key a has 1 and trying to add value 3");
  // A repeated key with the same value is fine; a second initialization
  // with as many entries is ignored, one with another count is an error.
  ASSERT_TRUE(RunOp("InitializeTableV2", {}, {t, Strings({"a", "b", "a"}), Int64s({1, 2, 1})}).ok());
  ASSERT_TRUE(RunOp("InitializeTableV2", {}, {t, Strings({"x", "y"}), Int64s({7, 8})}).ok());
  auto found = Find(t, Strings({"a", "x"}), Tensor::Scalar<int64_t>(0));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(testing::ToDoubles<int64_t>((*found)[0]), (std::vector<double>{1, 0}));
  ExpectError(RunOp("InitializeTableV2", {}, {t, Strings({"x"}), Int64s({7})}),
              absl::StatusCode::kFailedPrecondition,
              "Table was already initialized with different data.");
  // The keys' shape is the values' shape.
  found = Find(t, Tensor::FromVector<std::string>({"b", "a", "q", "b"}, TensorShape({2, 2})),
               Tensor::Scalar<int64_t>(-5));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(testing::ToDoubles<int64_t>((*found)[0]), (std::vector<double>{2, 1, -5, 2}));

  ExpectError(Find(t, Strings({"a", "b"}), Int64s({0, 1, 2})),
              absl::StatusCode::kInvalidArgument,
              "Expected shape [] or [2] for default value, got [3]");
  ExpectError(RunOp("LookupTableInsertV2", {}, {t, Strings({"a"}), Int64s({1})}),
              absl::StatusCode::kUnimplemented,
              "Insert not supported by InitializableLookupTable implementations");
  ExpectError(RunOp("InitializeTableV2", {},
                    {NewTable(DT_INT64, DT_INT64),
                     Tensor::FromVector<int64_t>({1}, TensorShape({1, 1})), Int64s({1})}),
              absl::StatusCode::kInvalidArgument, "Keys must be a vector");
}

TEST(LookupTableTest, MutableTable) {
  Tensor t = NewTable(DT_INT64, DT_FLOAT, /*mutable_table=*/true);
  EXPECT_EQ(Size(t), 0);
  ASSERT_TRUE(RunOp("LookupTableInsertV2", {},
                    {t, Tensor::FromVector<int64_t>({1, 2, 3, 4}, TensorShape({2, 2})),
                     Tensor::FromVector<float>({.5f, 1.5f, 2.5f, 3.5f}, TensorShape({2, 2}))})
                  .ok());
  ASSERT_TRUE(RunOp("LookupTableInsertV2", {},
                    {t, Int64s({2}), Tensor::FromVector<float>({-1.f})}).ok());
  ASSERT_TRUE(RunOp("LookupTableRemoveV2", {}, {t, Int64s({3, 9})}).ok());
  EXPECT_EQ(Size(t), 3);
  auto found = Find(t, Int64s({1, 2, 3, 4}), Tensor::FromVector<float>({10, 20, 30, 40}));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(testing::ToDoubles<float>((*found)[0]), (std::vector<double>{.5, -1, 30, 3.5}));

  auto exported = RunOp("LookupTableExportV2",
                        {{"Tkeys", AttrType(DT_INT64)}, {"Tvalues", AttrType(DT_FLOAT)}}, {t});
  ASSERT_TRUE(exported.ok()) << exported.status();
  std::vector<std::pair<double, double>> entries;
  for (int i = 0; i < 3; ++i) {
    entries.emplace_back((*exported)[0].flat<int64_t>()[i], (*exported)[1].flat<float>()[i]);
  }
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::pair<double, double>>{{1, .5}, {2, -1}, {4, 3.5}}));

  // Import replaces every entry.
  ASSERT_TRUE(RunOp("LookupTableImportV2", {}, {t, Int64s({7}), Tensor::FromVector<float>({7.25f})})
                  .ok());
  EXPECT_EQ(Size(t), 1);
  found = Find(t, Int64s({7, 1}), Tensor::Scalar<float>(0));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(testing::ToDoubles<float>((*found)[0]), (std::vector<double>{7.25, 0}));

  ExpectError(RunOp("LookupTableInsertV2", {}, {t, Int64s({1, 2}), Tensor::FromVector<float>({1})}),
              absl::StatusCode::kInvalidArgument, "Expected shape [2] for value, got [1]");
  ExpectError(RunOp("InitializeTableV2", {}, {t, Int64s({1}), Tensor::FromVector<float>({1})}),
              absl::StatusCode::kInvalidArgument, "is not initializable");
}

}  // namespace
}  // namespace graphrun
