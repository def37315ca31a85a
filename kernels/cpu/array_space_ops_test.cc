// Expected values: TensorFlow 2.21, checked by make_array_space_ops_test_values.py
// beside this file.
// Tests for Roll, SpaceToBatchND, BatchToSpaceND, DepthToSpace and
// SpaceToDepth: values computed once with TensorFlow 2.21 (NCHW through
// transposes of the NHWC result, as TensorFlow's CPU kernels are NHWC
// only), round trips for every dtype, zero-size dims and bad inputs.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrI;
using testing::AttrS;

Tensor Pairs(const std::vector<int32_t>& v) {
  return Mat<int32_t>(v, TensorShape({static_cast<int64_t>(v.size() / 2), 2}));
}
Tensor Range1(int64_t n, const TensorShape& shape) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return Mat<float>(v, shape);
}

TEST(RollTest, MatchesTensorFlow) {
  ExpectEqual(Run1("Roll", {},
                   {Iota<int64_t>(TensorShape({5})),
                    Tensor::Scalar<int32_t>(-7), Tensor::Scalar<int32_t>(0)}),
              Vec<int64_t>({2, 3, 4, 0, 1}));
  const Tensor x = Iota<float>(TensorShape({3, 4}));
  ExpectEqual(
      Run1("Roll", {}, {x, Vec<int32_t>({1, -1}), Vec<int32_t>({0, 1})}),
      Mat<float>({9, 10, 11, 8, 1, 2, 3, 0, 5, 6, 7, 4}, TensorShape({3, 4})));
  // Shifts on the same axis add up.
  ExpectEqual(
      Run1("Roll", {}, {x, Vec<int64_t>({2, 3}), Vec<int64_t>({1, -1})}),
      Mat<float>({3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}, TensorShape({3, 4})));
}

// out[..., (i + shift) mod n, ...] = in[..., i, ...] along each axis.
template <typename T>
Tensor RollReference(const Tensor& in, const std::vector<int64_t>& shifts) {
  const TensorShape& s = in.shape();
  const std::vector<int64_t> strides = Strides(s);
  return Remap<T>(in, s, [&](int64_t flat) {
    std::vector<int64_t> idx = Unravel(s, flat);
    int64_t src = 0;
    for (int d = 0; d < s.dims(); ++d) {
      const int64_t n = s.dim_size(d);
      src += (((idx[d] - shifts[d]) % n + n) % n) * strides[d];
    }
    return src;
  });
}

template <typename T>
class LayoutTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(LayoutTypedTest, AllTypes);

TYPED_TEST(LayoutTypedTest, RollEveryDtype) {
  using T = TypeParam;
  const Tensor in = Distinct<T>(TensorShape({3, 5, 2}));
  ExpectEqual(
      Run1("Roll", {}, {in, Vec<int32_t>({-4, 7}), Vec<int32_t>({0, 1})}),
      RollReference<T>(in, {2, 2, 0}));
  ExpectEqual(Run1("Roll", {}, {in, Vec<int32_t>({1}), Vec<int32_t>({2})}),
              RollReference<T>(in, {0, 0, 1}));
}

TYPED_TEST(LayoutTypedTest, SpaceBatchAndDepthRoundTrips) {
  using T = TypeParam;
  const Tensor in = Distinct<T>(TensorShape({2, 3, 4, 2}));
  const Tensor batched = Run1("SpaceToBatchND", {},
                              {in, Vec<int32_t>({2, 2}), Pairs({1, 0, 1, 1})});
  EXPECT_EQ(batched.shape(), TensorShape({8, 2, 3, 2}));
  ExpectEqual(Run1("BatchToSpaceND", {},
                   {batched, Vec<int32_t>({2, 2}), Pairs({1, 0, 1, 1})}),
              in);
  const Tensor image = Distinct<T>(TensorShape({2, 4, 6, 4}));
  for (const char* format : {"NHWC", "NCHW"}) {
    const Attrs attrs = {{"block_size", AttrI(2)},
                         {"data_format", AttrS(format)}};
    const Tensor deep = Run1("SpaceToDepth", attrs, {image});
    ExpectEqual(Run1("DepthToSpace", attrs, {deep}), image);
  }
}

TEST(SpaceToBatchNDTest, MatchesTensorFlow) {
  ExpectEqual(
      Run1("SpaceToBatchND", {},
           {Range1(16, TensorShape({1, 4, 4, 1})), Vec<int32_t>({2, 2}),
            Pairs({0, 0, 0, 0})}),
      Mat<float>({1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16},
                 TensorShape({4, 2, 2, 1})));
  const Tensor x = Range1(24, TensorShape({2, 3, 2, 2}));
  const Tensor want =
      Mat<float>({0, 0, 0, 0, 0, 0,  7,  8,  0,  0,  0,  0,  0,  0,  19, 20,
                  0, 0, 0, 0, 5, 6,  0,  0,  0,  0,  0,  0,  17, 18, 0,  0,
                  0, 0, 3, 4, 0, 0,  11, 12, 0,  0,  15, 16, 0,  0,  23, 24,
                  1, 2, 0, 0, 9, 10, 0,  0,  13, 14, 0,  0,  21, 22, 0,  0},
                 TensorShape({8, 2, 2, 2}));
  const Tensor got = Run1("SpaceToBatchND", {},
                          {x, Vec<int64_t>({2, 2}), Pairs({1, 0, 1, 1})});
  ExpectEqual(got, want);
  ExpectEqual(Run1("BatchToSpaceND", {},
                   {got, Vec<int32_t>({2, 2}), Pairs({1, 0, 1, 1})}),
              x);
  ExpectEqual(Run1("BatchToSpaceND", {},
                   {Iota<int32_t>(TensorShape({4, 2, 2, 1})),
                    Vec<int32_t>({2, 2}), Pairs({0, 0, 0, 1})}),
              Mat<int32_t>({0, 4, 1, 8, 12, 9, 2, 6, 3, 10, 14, 11},
                           TensorShape({1, 4, 3, 1})));
}

TEST(SpaceToBatchNDTest, ZeroSizeAndBadInputs) {
  EXPECT_EQ(Run1("SpaceToBatchND", {},
                 {Tensor(DT_FLOAT, TensorShape({0, 4, 2})), Vec<int32_t>({2}),
                  Pairs({0, 0})})
                .shape(),
            TensorShape({0, 2, 2}));
  const Tensor x = Iota<float>(TensorShape({1, 3, 2}));
  std::string e =
      ErrorOf("SpaceToBatchND", {}, {x, Vec<int32_t>({2}), Pairs({0, 0})});
  EXPECT_TRUE(absl::StrContains(
      e, "padded_shape[0] = 3 is not divisible by block_shape[0] = 2"))
      << e;
  e = ErrorOf("SpaceToBatchND", {}, {x, Vec<int32_t>({0}), Pairs({0, 0})});
  EXPECT_TRUE(absl::StrContains(e, "block_shape must be positive")) << e;
  e = ErrorOf("SpaceToBatchND", {}, {x, Vec<int32_t>({1}), Pairs({-1, 1})});
  EXPECT_TRUE(absl::StrContains(e, "paddings must be non-negative")) << e;
  e = ErrorOf("BatchToSpaceND", {}, {x, Vec<int32_t>({2}), Pairs({0, 0})});
  EXPECT_TRUE(absl::StrContains(e, "is not divisible by the product")) << e;
  e = ErrorOf("BatchToSpaceND", {}, {x, Vec<int32_t>({1}), Pairs({2, 2})});
  EXPECT_TRUE(absl::StrContains(e, "exceed the uncropped size 3")) << e;
  e = ErrorOf("BatchToSpaceND", {},
              {x, Vec<int32_t>({1, 1, 1}), Pairs({0, 0, 0, 0, 0, 0})});
  EXPECT_TRUE(absl::StrContains(e,
                                "input rank must be at least 1 + the number "
                                "of block dims (4)"))
      << e;
}

TEST(DepthToSpaceTest, MatchesTensorFlow) {
  const Attrs nhwc = {{"block_size", AttrI(2)}};
  ExpectEqual(
      Run1("DepthToSpace", nhwc, {Range1(32, TensorShape({1, 2, 2, 8}))}),
      Mat<float>(
          {1,  2,  3,  4,  9,  10, 11, 12, 5,  6,  7,  8,  13, 14, 15, 16,
           17, 18, 19, 20, 25, 26, 27, 28, 21, 22, 23, 24, 29, 30, 31, 32},
          TensorShape({1, 4, 4, 2})));
  ExpectEqual(
      Run1("SpaceToDepth", nhwc, {Range1(48, TensorShape({1, 4, 6, 2}))}),
      Mat<float>(
          {1,  2,  3,  4,  13, 14, 15, 16, 5,  6,  7,  8,  17, 18, 19, 20,
           9,  10, 11, 12, 21, 22, 23, 24, 25, 26, 27, 28, 37, 38, 39, 40,
           29, 30, 31, 32, 41, 42, 43, 44, 33, 34, 35, 36, 45, 46, 47, 48},
          TensorShape({1, 2, 3, 8})));
  const Attrs nchw = {{"block_size", AttrI(2)}, {"data_format", AttrS("NCHW")}};
  ExpectEqual(
      Run1("DepthToSpace", nchw, {Range1(32, TensorShape({1, 8, 2, 2}))}),
      Mat<float>({1, 9,  2, 10, 17, 25, 18, 26, 3, 11, 4, 12, 19, 27, 20, 28,
                  5, 13, 6, 14, 21, 29, 22, 30, 7, 15, 8, 16, 23, 31, 24, 32},
                 TensorShape({1, 2, 4, 4})));
  ExpectEqual(
      Run1("SpaceToDepth", nchw, {Range1(48, TensorShape({1, 2, 4, 6}))}),
      Mat<float>(
          {1,  3,  5,  13, 15, 17, 25, 27, 29, 37, 39, 41, 2,  4,  6,  14,
           16, 18, 26, 28, 30, 38, 40, 42, 7,  9,  11, 19, 21, 23, 31, 33,
           35, 43, 45, 47, 8,  10, 12, 20, 22, 24, 32, 34, 36, 44, 46, 48},
          TensorShape({1, 8, 2, 3})));
}

TEST(DepthToSpaceTest, BadInputs) {
  const Attrs attrs = {{"block_size", AttrI(2)}};
  std::string e =
      ErrorOf("DepthToSpace", attrs, {Iota<float>(TensorShape({1, 2, 2, 6}))});
  EXPECT_TRUE(absl::StrContains(e, "Input depth 6 must be divisible")) << e;
  e = ErrorOf("SpaceToDepth", attrs, {Iota<float>(TensorShape({1, 3, 2, 1}))});
  EXPECT_TRUE(absl::StrContains(e, "must be divisible by block_size 2")) << e;
  e = ErrorOf("SpaceToDepth", attrs, {Iota<float>(TensorShape({3, 2, 1}))});
  EXPECT_TRUE(absl::StrContains(e, "must be 4-dimensional")) << e;
  auto out = testing::RunOp(
      "DepthToSpace",
      {{"block_size", AttrI(2)}, {"data_format", AttrS("NCHW_VECT_C")}},
      {Iota<float>(TensorShape({1, 4, 2, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "NCHW_VECT_C"))
      << out.status();
}

TEST(RollTest, ZeroSizeAndBadInputs) {
  const Tensor empty(DT_FLOAT, TensorShape({2, 0}));
  ExpectEqual(
      Run1("Roll", {}, {empty, Vec<int32_t>({1, 3}), Vec<int32_t>({0, 1})}),
      empty);
  const Tensor x = Iota<float>(TensorShape({5}));
  std::string e =
      ErrorOf("Roll", {}, {x, Vec<int32_t>({1}), Vec<int32_t>({1})});
  EXPECT_TRUE(absl::StrContains(e, "axis 1 is out of range")) << e;
  e = ErrorOf("Roll", {}, {x, Vec<int32_t>({1, 2}), Vec<int32_t>({0})});
  EXPECT_TRUE(absl::StrContains(e, "shift and axis must have the same size"))
      << e;
  e = ErrorOf("Roll", {},
              {Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(1),
               Tensor::Scalar<int32_t>(0)});
  EXPECT_TRUE(absl::StrContains(e, "input must be 1-D or higher")) << e;
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
