// Expected values: TensorFlow 2.21, checked by make_array_index_ops_test_values.py
// beside this file.
// Tests for Unique, InvertPermutation, BroadcastArgs, Bucketize, LinSpace,
// EnsureShape, PreventGradient and Snapshot: values computed once with
// TensorFlow 2.21 and written here, and the errors TensorFlow raises.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrShape;
using testing::AttrType;

AttrValue AttrFloats(const std::vector<float>& v) {
  AttrValue a;
  for (float f : v) a.mutable_list()->add_f(f);
  return a;
}

TEST(UniqueTest, MatchesTensorFlow) {
  // -0 equals 0; each NaN is its own value.
  auto out = testing::RunOp("Unique", {},
                            {Vec<float>({0.f, -0.f, NAN, NAN, 1.f, 0.f, 1.f})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], Vec<float>({0.f, NAN, NAN, 1.f}));
  ExpectEqual((*out)[1], Vec<int32_t>({0, 0, 1, 2, 3, 0, 3}));

  out = testing::RunOp("Unique", {{"out_idx", AttrType(DT_INT64)}},
                       {Vec<int32_t>({5, 3, 5, -1, 3, 7})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], Vec<int32_t>({5, 3, -1, 7}));
  ExpectEqual((*out)[1], Vec<int64_t>({0, 1, 0, 2, 1, 3}));

  out = testing::RunOp("Unique", {}, {Vec<std::string>({"b", "a", "b", ""})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], Vec<std::string>({"b", "a", ""}));
  ExpectEqual((*out)[1], Vec<int32_t>({0, 1, 0, 2}));

  // TensorFlow keeps -0 and 0 apart in half (not in float).
  out = testing::RunOp("Unique", {},
                       {Vec<half>({half(2.f), half(-0.f), half(0.f)})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[1], Vec<int32_t>({0, 1, 2}));
  out = testing::RunOp("Unique", {}, {Vec<float>({2.f, -0.f, 0.f})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[1], Vec<int32_t>({0, 1, 1}));

  out = testing::RunOp("Unique", {}, {Tensor(DT_INT64, TensorShape({0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));

  std::string e = ErrorOf("Unique", {}, {Iota<int32_t>(TensorShape({2, 2}))});
  EXPECT_TRUE(absl::StrContains(e, "x must be a vector")) << e;
}

TEST(InvertPermutationTest, MatchesTensorFlow) {
  ExpectEqual(Run1("InvertPermutation", {}, {Vec<int32_t>({3, 4, 0, 2, 1})}),
              Vec<int32_t>({2, 4, 3, 0, 1}));
  ExpectEqual(
      Run1("InvertPermutation", {}, {Tensor(DT_INT64, TensorShape({0}))}),
      Tensor(DT_INT64, TensorShape({0})));
  std::string e = ErrorOf("InvertPermutation", {}, {Vec<int32_t>({0, 0, 1})});
  EXPECT_TRUE(absl::StrContains(e, "0 is duplicated in the input.")) << e;
  e = ErrorOf("InvertPermutation", {}, {Vec<int64_t>({0, 3, 1})});
  EXPECT_TRUE(absl::StrContains(e, "3 is not between 0 and 3")) << e;
}

TEST(BroadcastArgsTest, MatchesTensorFlow) {
  ExpectEqual(Run1("BroadcastArgs", {},
                   {Vec<int64_t>({2, 1, 3}), Vec<int64_t>({4, 1, 1, 3})}),
              Vec<int64_t>({4, 2, 1, 3}));
  ExpectEqual(
      Run1("BroadcastArgs", {}, {Vec<int32_t>({0, 1}), Vec<int32_t>({1, 5})}),
      Vec<int32_t>({0, 5}));
  ExpectEqual(Run1("BroadcastArgs", {},
                   {Tensor(DT_INT32, TensorShape({0})), Vec<int32_t>({3})}),
              Vec<int32_t>({3}));
  std::string e = ErrorOf("BroadcastArgs", {},
                          {Vec<int32_t>({2, 1, 3}), Vec<int32_t>({4, 2})});
  EXPECT_TRUE(absl::StrContains(e, "Incompatible shapes: [2,1,3] vs. [4,2]"))
      << e;
}

TEST(BucketizeTest, MatchesTensorFlow) {
  ExpectEqual(
      Run1("Bucketize", {{"boundaries", AttrFloats({0, 10, 11})}},
           {Mat<float>({-5, 0, 2.5f, 10, 11, 100}, TensorShape({2, 3}))}),
      Mat<int32_t>({0, 1, 1, 2, 3, 3}, TensorShape({2, 3})));
  ExpectEqual(Run1("Bucketize", {{"boundaries", AttrFloats({0, 2.5f, 10})}},
                   {Vec<int64_t>({-5, 0, 3, 10, 11})}),
              Vec<int32_t>({0, 1, 2, 3, 3}));
  // Doubles compare with the float boundaries widened to double.
  ExpectEqual(
      Run1("Bucketize", {{"boundaries", AttrFloats({0.1f, 0.2f, 0.3f})}},
           {Vec<double>({0.1, 0.2, 0.30000001})}),
      Vec<int32_t>({0, 1, 2}));
  auto out = testing::RunOp("Bucketize", {{"boundaries", AttrFloats({1, 0})}},
                            {Vec<float>({1})});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(
      absl::StrContains(out.status().message(), "Expected sorted boundaries"))
      << out.status();
}

TEST(LinSpaceTest, MatchesTensorFlow) {
  ExpectEqual(
      Run1("LinSpace", {},
           {Tensor::Scalar<float>(0.1f), Tensor::Scalar<float>(1.7f),
            Tensor::Scalar<int32_t>(7)}),
      Vec<float>({0.10000000149011612f, 0.36666667461395264f,
                  0.6333333849906921f, 0.9000000953674316f, 1.1666667461395264f,
                  1.433333396911621f, 1.7000000476837158f}));
  ExpectEqual(Run1("LinSpace", {},
                   {Tensor::Scalar<double>(-1), Tensor::Scalar<double>(2),
                    Tensor::Scalar<int64_t>(4)}),
              Vec<double>({-1, 0, 1, 2}));
  ExpectEqual(Run1("LinSpace", {},
                   {Tensor::Scalar<float>(3), Tensor::Scalar<float>(5),
                    Tensor::Scalar<int32_t>(1)}),
              Vec<float>({3}));
  std::string e = ErrorOf("LinSpace", {},
                          {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1),
                           Tensor::Scalar<int32_t>(0)});
  EXPECT_TRUE(absl::StrContains(e, "Requires num > 0: 0")) << e;
}

TEST(EnsureShapeTest, PassesOrNamesTheMismatch) {
  const Tensor x = Iota<float>(TensorShape({2, 3}));
  Tensor got = Run1("EnsureShape", {{"shape", AttrShape({-1, 3})}}, {x});
  EXPECT_TRUE(got.SharesBufferWith(x));
  std::string e = ErrorOf("EnsureShape", {{"shape", AttrShape({2, 4})}}, {x});
  EXPECT_TRUE(absl::StrContains(e,
                                "[2,3] is not compatible with expected "
                                "shape [2,4]"))
      << e;
  e = ErrorOf("EnsureShape", {{"shape", AttrShape({6})}}, {x});
  EXPECT_TRUE(absl::StrContains(e, "not compatible")) << e;
  AttrValue unknown_rank;
  unknown_rank.mutable_shape()->set_unknown_rank(true);
  got = Run1("EnsureShape", {{"shape", unknown_rank}},
             {Tensor::Scalar<std::string>("s")});
  EXPECT_EQ(got.flat<std::string>()[0], "s");
}

TEST(IdentityLikeTest, PreventGradientAndSnapshotForward) {
  const Tensor x = Distinct<bool>(TensorShape({4}));
  EXPECT_TRUE(Run1("PreventGradient", {}, {x}).SharesBufferWith(x));
  EXPECT_TRUE(Run1("Snapshot", {}, {x}).SharesBufferWith(x));
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
