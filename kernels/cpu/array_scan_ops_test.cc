// Expected values: TensorFlow 2.21, checked by make_array_scan_ops_test_values.py beside this file.
// Tests for Cumsum, Cumprod and TopKV2: values computed once with
// TensorFlow 2.21 and written here (every exclusive/reverse combination,
// ties in top-k), zero-size inputs and bad axes or k.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrB;
using testing::AttrType;

struct ScanCase {
  bool exclusive, reverse;
  std::vector<float> sum, prod;
};

TEST(ScanTest, MatchesTensorFlow) {
  const Tensor x = Mat<float>({1, 2, 3, 4, 5, 6, -1, 0.5f, 2, -3, 0.25f, 4},
                              TensorShape({2, 3, 2}));
  const ScanCase cases[] = {
      {false,
       false,
       {1, 2, 4, 6, 9, 12, -1, 0.5f, 1, -2.5f, 1.25f, 1.5f},
       {1, 2, 3, 8, 15, 48, -1, 0.5f, -2, -1.5f, -0.5f, -6}},
      {false,
       true,
       {9, 12, 8, 10, 5, 6, 1.25f, 1.5f, 2.25f, 1, 0.25f, 4},
       {15, 48, 15, 24, 5, 6, -0.5f, -6, 0.5f, -12, 0.25f, 4}},
      {true,
       false,
       {0, 0, 1, 2, 4, 6, 0, 0, -1, 0.5f, 1, -2.5f},
       {1, 1, 1, 2, 3, 8, 1, 1, -1, 0.5f, -2, -1.5f}},
      {true,
       true,
       {8, 10, 5, 6, 0, 0, 2.25f, 1, 0.25f, 4, 0, 0},
       {15, 24, 5, 6, 1, 1, 0.5f, -12, 0.25f, 4, 1, 1}},
  };
  for (const ScanCase& c : cases) {
    SCOPED_TRACE(
        absl::StrCat("exclusive=", c.exclusive, " reverse=", c.reverse));
    const Attrs attrs = {{"exclusive", AttrB(c.exclusive)},
                         {"reverse", AttrB(c.reverse)}};
    ExpectEqual(Run1("Cumsum", attrs, {x, Tensor::Scalar<int32_t>(1)}),
                Mat<float>(c.sum, x.shape()));
    ExpectEqual(Run1("Cumprod", attrs, {x, Tensor::Scalar<int64_t>(-2)}),
                Mat<float>(c.prod, x.shape()));
  }
  ExpectEqual(Run1("Cumsum", {{"exclusive", AttrB(true)}},
                   {Mat<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
                    Tensor::Scalar<int32_t>(-1)}),
              Mat<int32_t>({0, 1, 3, 0, 4, 9}, TensorShape({2, 3})));
  ExpectEqual(Run1("Cumprod", {{"reverse", AttrB(true)}},
                   {Mat<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
                    Tensor::Scalar<int32_t>(0)}),
              Mat<int64_t>({4, 10, 18, 4, 5, 6}, TensorShape({2, 3})));
  ExpectEqual(Run1("Cumsum", {},
                   {Vec<double>({0.5, 0.25}), Tensor::Scalar<int32_t>(0)}),
              Vec<double>({0.5, 0.75}));
}

TEST(ScanTest, BigInputsAndZeroSize) {
  // 40 scans of 2000 along axis 1: the running sum of 1s is the position.
  Tensor ones(DT_FLOAT, TensorShape({40, 2000}));
  for (float& v : ones.flat<float>()) v = 1;
  const Tensor got = Run1("Cumsum", {}, {ones, Tensor::Scalar<int32_t>(1)});
  for (int64_t i = 0; i < got.NumElements(); i += 997) {
    EXPECT_EQ(got.flat<float>()[i], static_cast<float>(i % 2000 + 1));
  }
  ExpectEqual(
      Run1("Cumsum", {},
           {Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor::Scalar<int32_t>(1)}),
      Tensor(DT_FLOAT, TensorShape({0, 3})));
}

TEST(ScanTest, BadAxis) {
  std::string e = ErrorOf(
      "Cumsum", {}, {Vec<int32_t>({1, 2, 3}), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(absl::StrContains(
      e, "Expected scan axis in the range [-1, 1), but got 1"))
      << e;
  e = ErrorOf("Cumprod", {}, {Vec<float>({1}), Vec<int32_t>({0})});
  EXPECT_TRUE(absl::StrContains(e, "axis must be a scalar")) << e;
}

TEST(TopKTest, MatchesTensorFlow) {
  const Tensor t =
      Mat<float>({1, 3, 3, 2, 3, 0, 5, -1, 5, 5, 2, 7}, TensorShape({2, 6}));
  auto out = testing::RunOp("TopKV2", {}, {t, Tensor::Scalar<int32_t>(4)});
  ASSERT_TRUE(out.ok()) << out.status();
  // Ties go to the lower index.
  ExpectEqual((*out)[0],
              Mat<float>({3, 3, 3, 2, 7, 5, 5, 5}, TensorShape({2, 4})));
  ExpectEqual((*out)[1],
              Mat<int32_t>({1, 2, 4, 3, 5, 0, 2, 3}, TensorShape({2, 4})));

  out =
      testing::RunOp("TopKV2", {{"index_type", AttrType(DT_INT64)}},
                     {Vec<int64_t>({4, 1, 4, 9}), Tensor::Scalar<int64_t>(4)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], Vec<int64_t>({9, 4, 4, 1}));
  ExpectEqual((*out)[1], Vec<int64_t>({3, 0, 2, 1}));

  out = testing::RunOp("TopKV2", {{"sorted", AttrB(false)}},
                       {Vec<int32_t>({2, 8, 5}), Tensor::Scalar<int16_t>(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({0}));
}

TEST(TopKTest, NanComesFirst) {
  // TensorFlow leaves the place of NaN unspecified; graphrun ranks it above
  // every number, so the order is a strict weak order.
  auto out = testing::RunOp(
      "TopKV2", {},
      {Vec<double>({2, NAN, 1, NAN, 3}), Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan((*out)[0].flat<double>()[0]));
  EXPECT_TRUE(std::isnan((*out)[0].flat<double>()[1]));
  EXPECT_EQ((*out)[0].flat<double>()[2], 3.0);
  ExpectEqual((*out)[1], Vec<int32_t>({1, 3, 4}));
}

TEST(TopKTest, BadK) {
  const Tensor t = Vec<float>({1, 3, 3, 2, 3});
  std::string e = ErrorOf("TopKV2", {}, {t, Tensor::Scalar<int32_t>(6)});
  EXPECT_TRUE(absl::StrContains(
      e, "input must have at least k columns. Had 5, needed 6"))
      << e;
  e = ErrorOf("TopKV2", {}, {t, Tensor::Scalar<int32_t>(-1)});
  EXPECT_TRUE(absl::StrContains(e, "Need k >= 0, got -1")) << e;
  e = ErrorOf("TopKV2", {},
              {Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(absl::StrContains(e, "at least 1-dim")) << e;
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
