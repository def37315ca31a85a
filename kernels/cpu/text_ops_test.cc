// Expected values: TensorFlow 2.21, checked by make_text_test_values.py beside this file.
// Tests for StringLower, StaticRegexReplace, StringSplitV2,
// RaggedTensorToTensor and DenseBincount. Every expected value and message
// is what TensorFlow 2.21's raw ops gave for the same inputs.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrI;
using testing::AttrS;
using testing::ExpectError;
using testing::RunOp;
using testing::ToDoubles;

AttrValue AttrStrings(const std::vector<std::string>& v) {
  AttrValue a;
  for (const std::string& s : v) a.mutable_list()->add_s(s);
  return a;
}

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }

std::vector<std::string> StringsOf(const Tensor& t) {
  auto s = t.flat<std::string>();
  return std::vector<std::string>(s.begin(), s.end());
}

TEST(TextOpsTest, StringSplitV2IsPythonsSplit) {
  auto split = [](const std::vector<std::string>& in, const std::string& sep, int64_t maxsplit) {
    auto out = RunOp("StringSplitV2", {{"maxsplit", AttrI(maxsplit)}},
                     {Strings(in), Tensor::Scalar<std::string>(sep)});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<Tensor>(3);
  };
  auto out = split({"  a b  c d ", "x ", "", "   "}, "", 2);
  EXPECT_EQ(ToDoubles<int64_t>(out[0]), (std::vector<double>{0, 0, 0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(StringsOf(out[1]), (std::vector<std::string>{"a", "b", "c d ", "x"}));
  EXPECT_EQ(ToDoubles<int64_t>(out[2]), (std::vector<double>{4, 3}));

  out = split({"a ", "a\tb\nc"}, "", 1);
  EXPECT_EQ(StringsOf(out[1]), (std::vector<std::string>{"a", "", "a", "b\nc"}));
  EXPECT_EQ(ToDoubles<int64_t>(out[2]), (std::vector<double>{2, 2}));

  out = split({"<><>4<>5<><>6<>", "", "1<>2<>3"}, "<>", -1);
  EXPECT_EQ(StringsOf(out[1]),
            (std::vector<std::string>{"", "", "4", "5", "", "6", "", "", "1", "2", "3"}));
  EXPECT_EQ(out[0].shape(), TensorShape({11, 2}));
  EXPECT_EQ(out[0].flat<int64_t>()[2 * 7], 1);  // "" of row 1
  EXPECT_EQ(ToDoubles<int64_t>(out[2]), (std::vector<double>{3, 7}));

  out = split({"a,b,c", "abc"}, ",", 1);
  EXPECT_EQ(StringsOf(out[1]), (std::vector<std::string>{"a", "b,c", "abc"}));
  EXPECT_EQ(ToDoubles<int64_t>(out[0]), (std::vector<double>{0, 0, 0, 1, 1, 0}));
}

TEST(TextOpsTest, RegexReplaceAndLower) {
  const Tensor in = Strings({"aaa bab", "xyz"});
  auto global = RunOp("StaticRegexReplace",
                      {{"pattern", AttrS("a(b)?")}, {"rewrite", AttrS("[\\1]")},
                       {"replace_global", AttrB(true)}},
                      {in});
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_EQ(StringsOf((*global)[0]), (std::vector<std::string>{"[][][] b[b]", "xyz"}));
  auto first = RunOp("StaticRegexReplace",
                     {{"pattern", AttrS("a(b)?")}, {"rewrite", AttrS("[\\1]")},
                      {"replace_global", AttrB(false)}},
                     {in});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(StringsOf((*first)[0]), (std::vector<std::string>{"[]aa bab", "xyz"}));

  auto lower = RunOp("StringLower", {{"encoding", AttrS("")}},
                     {Tensor::FromVector<std::string>({"HeLLo WORLD", "CAF\xc3\x89 123"},
                                                      TensorShape({1, 2}))});
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_EQ((*lower)[0].shape(), TensorShape({1, 2}));
  EXPECT_EQ(StringsOf((*lower)[0]), (std::vector<std::string>{"hello world", "caf\xc3\x89 123"}));
}

TEST(TextOpsTest, RaggedTensorToTensor) {
  auto splits = RunOp(
      "RaggedTensorToTensor",
      {{"row_partition_types", AttrStrings({"ROW_SPLITS"})},
       {"num_row_partition_tensors", AttrI(1)}},
      {Tensor::FromVector<int64_t>({-1, 3}), Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}),
       Tensor::Scalar<float>(-1), Tensor::FromVector<int64_t>({0, 4, 4, 6})});
  ASSERT_TRUE(splits.ok()) << splits.status();
  EXPECT_EQ((*splits)[0].shape(), TensorShape({3, 3}));
  EXPECT_EQ(ToDoubles<float>((*splits)[0]), (std::vector<double>{1, 2, 3, -1, -1, -1, 5, 6, -1}));

  auto rowids = RunOp(
      "RaggedTensorToTensor",
      {{"row_partition_types", AttrStrings({"FIRST_DIM_SIZE", "VALUE_ROWIDS"})},
       {"num_row_partition_tensors", AttrI(2)}},
      {Tensor::Scalar<int64_t>(-1), Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
       Tensor::FromVector<int32_t>({7, 8}), Tensor::Scalar<int64_t>(4),
       Tensor::FromVector<int64_t>({0, 0, 2})});
  ASSERT_TRUE(rowids.ok()) << rowids.status();
  EXPECT_EQ((*rowids)[0].shape(), TensorShape({4, 2, 2}));
  EXPECT_EQ(ToDoubles<int32_t>((*rowids)[0]),
            (std::vector<double>{1, 2, 3, 4, 7, 8, 7, 8, 5, 6, 7, 8, 7, 8, 7, 8}));

  auto cut = RunOp(
      "RaggedTensorToTensor",
      {{"row_partition_types", AttrStrings({"ROW_SPLITS"})},
       {"num_row_partition_tensors", AttrI(1)}},
      {Tensor::FromVector<int32_t>({2, 5}), Strings({"a", "b", "c", "d"}),
       Tensor::Scalar<std::string>(""), Tensor::FromVector<int32_t>({0, 1, 3, 4})});
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ((*cut)[0].shape(), TensorShape({2, 5}));
  EXPECT_EQ(StringsOf((*cut)[0]),
            (std::vector<std::string>{"a", "", "", "", "", "b", "c", "", "", ""}));
}

TEST(TextOpsTest, DenseBincount) {
  auto counts = RunOp("DenseBincount", {{"binary_output", AttrB(false)}},
                      {Tensor::FromVector<int32_t>({1, 1, 3, 7, 0}), Tensor::Scalar<int32_t>(5),
                       Tensor::FromVector<int64_t>({})});
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(ToDoubles<int64_t>((*counts)[0]), (std::vector<double>{1, 2, 0, 1, 0}));

  const Tensor x = Tensor::FromVector<int64_t>({1, 1, 3, 2, 0, 2}, TensorShape({2, 3}));
  auto weighted = RunOp(
      "DenseBincount", {{"binary_output", AttrB(false)}},
      {x, Tensor::Scalar<int64_t>(4),
       Tensor::FromVector<float>({.5f, .25f, 1, 2, 3, 4}, TensorShape({2, 3}))});
  ASSERT_TRUE(weighted.ok()) << weighted.status();
  EXPECT_EQ((*weighted)[0].shape(), TensorShape({2, 4}));
  EXPECT_EQ(ToDoubles<float>((*weighted)[0]), (std::vector<double>{0, .75, 0, 1, 3, 0, 6, 0}));

  auto binary = RunOp("DenseBincount", {{"binary_output", AttrB(true)}},
                      {x, Tensor::Scalar<int64_t>(4), Tensor::FromVector<float>({})});
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(ToDoubles<float>((*binary)[0]), (std::vector<double>{0, 1, 0, 1, 1, 0, 1, 0}));

  ExpectError(RunOp("DenseBincount", {{"binary_output", AttrB(false)}},
                    {Tensor::FromVector<int32_t>({1, -1}), Tensor::Scalar<int32_t>(5),
                     Tensor::FromVector<int64_t>({})}),
              absl::StatusCode::kInvalidArgument, "Input arr must be non-negative!");
}

}  // namespace
}  // namespace graphrun
