// Expected values: TensorFlow 2.21, checked by make_ragged_text_test_values.py beside this file.
// Tests for RaggedBincount, StringNGrams, UnicodeDecode and UnicodeEncode.
// Every expected value is what TensorFlow 2.21's raw ops gave for the same
// inputs (tf.raw_ops.<Op> in eager mode).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrI;
using testing::AttrInts;
using testing::AttrS;
using testing::AttrType;
using testing::ExpectError;
using testing::RunOp;
using testing::ToDoubles;

Tensor Strings(const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(v); }

std::vector<std::string> StringsOf(const Tensor& t) {
  auto s = t.flat<std::string>();
  return std::vector<std::string>(s.begin(), s.end());
}

std::vector<int> IntsOf(const Tensor& t) {
  std::vector<int> v;
  for (double d : t.dtype() == DT_INT32 ? ToDoubles<int32_t>(t) : ToDoubles<int64_t>(t)) {
    v.push_back(static_cast<int>(d));
  }
  return v;
}

TEST(RaggedTextOpsTest, RaggedBincount) {
  const Tensor splits = Tensor::FromVector<int64_t>({0, 3, 3, 6});
  const Tensor values = Tensor::FromVector<int32_t>({1, 1, 4, 0, 2, 2});
  auto counts = RunOp("RaggedBincount", {{"binary_output", AttrB(false)}},
                      {splits, values, Tensor::Scalar<int32_t>(3), Tensor::FromVector<int64_t>({})});
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ((*counts)[0].shape(), TensorShape({3, 3}));
  EXPECT_EQ(ToDoubles<int64_t>((*counts)[0]), (std::vector<double>{0, 2, 0, 0, 0, 0, 1, 0, 2}));

  auto weighted = RunOp("RaggedBincount", {{"binary_output", AttrB(false)}},
                        {splits, values, Tensor::Scalar<int32_t>(5),
                         Tensor::FromVector<float>({.5f, 1.5f, 2, 3, 4, .25f})});
  ASSERT_TRUE(weighted.ok()) << weighted.status();
  EXPECT_EQ(ToDoubles<float>((*weighted)[0]),
            (std::vector<double>{0, 2, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4.25, 0, 0}));

  auto binary = RunOp("RaggedBincount", {{"binary_output", AttrB(true)}},
                      {splits, values, Tensor::Scalar<int32_t>(3), Tensor::FromVector<float>({})});
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(ToDoubles<float>((*binary)[0]), (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 1}));

  ExpectError(RunOp("RaggedBincount", {{"binary_output", AttrB(false)}},
                    {splits, Tensor::FromVector<int32_t>({1, -1, 4, 0, 2, 2}),
                     Tensor::Scalar<int32_t>(3), Tensor::FromVector<float>({})}),
              absl::StatusCode::kInvalidArgument, "Input must be non-negative");
  ExpectError(RunOp("RaggedBincount", {{"binary_output", AttrB(false)}},
                    {Tensor::FromVector<int64_t>({0, 3, 5}), values, Tensor::Scalar<int32_t>(3),
                     Tensor::FromVector<float>({})}),
              absl::StatusCode::kInvalidArgument, "must end with the number of values");
}

struct NGrams {
  std::vector<std::string> grams;
  std::vector<int> splits;
};

NGrams RunNGrams(const std::vector<int64_t>& widths, const std::string& left,
                 const std::string& right, int64_t pad_width, bool preserve,
                 const std::string& separator) {
  auto out = RunOp("StringNGrams",
                   {{"separator", AttrS(separator)},
                    {"ngram_widths", AttrInts(widths)},
                    {"left_pad", AttrS(left)},
                    {"right_pad", AttrS(right)},
                    {"pad_width", AttrI(pad_width)},
                    {"preserve_short_sequences", AttrB(preserve)}},
                   {Strings({"a", "b", "c", "d", "e", "f"}),
                    Tensor::FromVector<int64_t>({0, 1, 4, 6, 6})});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return {StringsOf((*out)[0]), IntsOf((*out)[1])};
}

TEST(RaggedTextOpsTest, StringNGrams) {
  NGrams g = RunNGrams({1, 2}, "", "", 0, false, " ");
  EXPECT_EQ(g.grams, (std::vector<std::string>{"a", "b", "c", "d", "b c", "c d", "e", "f", "e f"}));
  EXPECT_EQ(g.splits, (std::vector<int>{0, 1, 6, 9, 9}));

  g = RunNGrams({2}, "<", ">", -1, false, "|");
  EXPECT_EQ(g.grams, (std::vector<std::string>{"<|a", "a|>", "<|b", "b|c", "c|d", "d|>", "<|e",
                                               "e|f", "f|>", "<|>"}));
  EXPECT_EQ(g.splits, (std::vector<int>{0, 2, 6, 9, 10}));

  g = RunNGrams({3}, "<", ">", 1, false, "|");
  EXPECT_EQ(g.grams,
            (std::vector<std::string>{"<|a|>", "<|b|c", "b|c|d", "c|d|>", "<|e|f", "e|f|>"}));
  EXPECT_EQ(g.splits, (std::vector<int>{0, 1, 4, 6, 6}));

  g = RunNGrams({3}, "", "", 0, true, "|");
  EXPECT_EQ(g.grams, (std::vector<std::string>{"a", "b|c|d", "e|f"}));
  EXPECT_EQ(g.splits, (std::vector<int>{0, 1, 2, 3, 3}));

  g = RunNGrams({4}, "<", ">", 1, true, "|");
  EXPECT_EQ(g.grams, (std::vector<std::string>{"<|a|>", "<|b|c|d", "b|c|d|>", "<|e|f|>"}));
  EXPECT_EQ(g.splits, (std::vector<int>{0, 1, 3, 4, 4}));

  // Widths 5 and 6 padded by width - 1: every row, the empty one too.
  g = RunNGrams({5, 6}, "<", ">", -1, true, "|");
  EXPECT_EQ(g.splits, (std::vector<int>{0, 11, 26, 39, 48}));
  ASSERT_EQ(g.grams.size(), 48u);
  EXPECT_EQ(g.grams[0], "<|<|<|<|a");
  EXPECT_EQ(g.grams[5], "<|<|<|<|<|a");
  EXPECT_EQ(g.grams[13], "<|<|b|c|d");
  EXPECT_EQ(g.grams[25], "d|>|>|>|>|>");
  EXPECT_EQ(g.grams[39], "<|<|<|<|>");
  EXPECT_EQ(g.grams[47], "<|>|>|>|>|>");
}

const std::vector<std::string> kDecodeInput = {
    "h\xc3\xa9llo", "a\x80" "b", "\xe2\x82", "\xf0\x9f\x98\x80\x01", "\xed\xa0\x80x",
    "\xef\xbf\xbf", "\xc0\xaf", "\xf4\x90\x80\x80", ""};

TEST(RaggedTextOpsTest, UnicodeDecodeReplacesEachMaximalSubpart) {
  auto out = RunOp("UnicodeDecode",
                   {{"input_encoding", AttrS("UTF-8")}, {"Tsplits", AttrType(DT_INT64)}},
                   {Strings(kDecodeInput)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(IntsOf((*out)[0]), (std::vector<int>{0, 5, 8, 9, 11, 15, 16, 18, 22, 22}));
  EXPECT_EQ(IntsOf((*out)[1]),
            (std::vector<int>{104, 233, 108, 108, 111, 97, 65533, 98, 65533, 128512, 1, 65533,
                              65533, 65533, 120, 65535, 65533, 65533, 65533, 65533, 65533,
                              65533}));

  out = RunOp("UnicodeDecode",
              {{"input_encoding", AttrS("UTF-8")}, {"errors", AttrS("ignore")},
               {"Tsplits", AttrType(DT_INT64)}},
              {Strings(kDecodeInput)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(IntsOf((*out)[0]), (std::vector<int>{0, 5, 7, 7, 9, 10, 11, 11, 11, 11}));
  EXPECT_EQ(IntsOf((*out)[1]),
            (std::vector<int>{104, 233, 108, 108, 111, 97, 98, 128512, 1, 120, 65535}));

  out = RunOp("UnicodeDecode",
              {{"input_encoding", AttrS("UTF-8")}, {"replace_control_characters", AttrB(true)},
               {"replacement_char", AttrI(63)}, {"Tsplits", AttrType(DT_INT64)}},
              {Strings(kDecodeInput)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(IntsOf((*out)[1]),
            (std::vector<int>{104, 233, 108, 108, 111, 97, 63, 98, 63, 128512, 63, 63, 63, 63,
                              120, 65535, 63, 63, 63, 63, 63, 63}));

  ExpectError(RunOp("UnicodeDecode",
                    {{"input_encoding", AttrS("UTF-8")}, {"errors", AttrS("strict")},
                     {"Tsplits", AttrType(DT_INT64)}},
                    {Strings(kDecodeInput)}),
              absl::StatusCode::kInvalidArgument, "Invalid formatting on input string");

  // A matrix: one row per string, row-major; int32 splits.
  out = RunOp("UnicodeDecode",
              {{"input_encoding", AttrS("UTF-8")}, {"Tsplits", AttrType(DT_INT32)}},
              {Tensor::FromVector<std::string>({"ab", "c", "", "d"}, TensorShape({2, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DT_INT32);
  EXPECT_EQ(IntsOf((*out)[0]), (std::vector<int>{0, 2, 3, 3, 4}));
  EXPECT_EQ(IntsOf((*out)[1]), (std::vector<int>{97, 98, 99, 100}));

  ExpectError(RunOp("UnicodeDecode",
                    {{"input_encoding", AttrS("ISO-8859-1")}, {"Tsplits", AttrType(DT_INT64)}},
                    {Strings({"a"})}),
              absl::StatusCode::kUnimplemented, "ISO-8859-1");
}

TEST(RaggedTextOpsTest, UnicodeEncode) {
  const Tensor cps =
      Tensor::FromVector<int32_t>({104, 233, 128512, 0xD800, 0xFFFF, 0x110000, -5, 65});
  const Tensor splits = Tensor::FromVector<int64_t>({0, 3, 8});
  auto encode = [&](const std::string& encoding, const std::string& errors, int64_t replacement) {
    return RunOp("UnicodeEncode",
                 {{"output_encoding", AttrS(encoding)}, {"errors", AttrS(errors)},
                  {"replacement_char", AttrI(replacement)}},
                 {cps, splits});
  };
  auto out = encode("UTF-8", "replace", 65533);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(StringsOf((*out)[0]),
            (std::vector<std::string>{"h\xc3\xa9\xf0\x9f\x98\x80",
                                      "\xef\xbf\xbd\xef\xbf\xbf\xef\xbf\xbd\xef\xbf\xbd" "A"}));
  out = encode("UTF-8", "ignore", 65533);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(StringsOf((*out)[0]),
            (std::vector<std::string>{"h\xc3\xa9\xf0\x9f\x98\x80", "\xef\xbf\xbf" "A"}));
  out = encode("UTF-16-BE", "replace", 63);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(StringsOf((*out)[0]),
            (std::vector<std::string>{std::string("\x00h\x00\xe9\xd8=\xde\x00", 8),
                                      std::string("\x00?\xff\xff\x00?\x00?\x00" "A", 10)}));
  ExpectError(encode("UTF-8", "strict", 65533), absl::StatusCode::kInvalidArgument,
              "out of range for Unicode, or is a surrogate");

  out = RunOp("UnicodeEncode", {{"output_encoding", AttrS("UTF-32-BE")}},
              {Tensor::FromVector<int32_t>({104, 233, 128512}), Tensor::FromVector<int64_t>({0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(StringsOf((*out)[0]),
            (std::vector<std::string>{std::string("\x00\x00\x00h\x00\x00\x00\xe9\x00\x01\xf6\x00",
                                                  12)}));
  // Noncharacters are scalar values: kept.
  out = RunOp("UnicodeEncode",
              {{"output_encoding", AttrS("UTF-8")}, {"replacement_char", AttrI(63)}},
              {Tensor::FromVector<int32_t>({0xFDD0, 0x1FFFE, 0xFDCF}),
               Tensor::FromVector<int64_t>({0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(StringsOf((*out)[0]),
            (std::vector<std::string>{"\xef\xb7\x90\xf0\x9f\xbf\xbe\xef\xb7\x8f"}));
}

}  // namespace
}  // namespace graphrun
