// Expected values: TensorFlow 2.21, checked by make_array_nd_ops_test_values.py beside this file.
// Tests for GatherNd, ScatterNd and Where: values computed once with
// TensorFlow 2.21 and written here, every dtype for GatherNd, duplicate
// coordinates for ScatterNd, no true element for Where, bad coordinates.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrS;

TEST(GatherNdTest, MatchesTensorFlow) {
  const Tensor p = Iota<float>(TensorShape({2, 3, 2}));
  ExpectEqual(Run1("GatherNd", {},
                   {p, Mat<int32_t>({1, 2, 0, 0, 1, 1}, TensorShape({2, 3}))}),
              Vec<float>({10, 3}));
  ExpectEqual(Run1("GatherNd", {},
                   {p, Mat<int64_t>({1, 0, 1, 1}, TensorShape({2, 2, 1}))}),
              Mat<float>({6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4,  5,
                          6, 7, 8, 9, 10, 11, 6, 7, 8, 9, 10, 11},
                         TensorShape({2, 2, 3, 2})));
  ExpectEqual(Run1("GatherNd", {},
                   {p, Mat<int16_t>({0, 2, 1, 0}, TensorShape({2, 2}))}),
              Mat<float>({4, 5, 6, 7}, TensorShape({2, 2})));
  // indices.shape[-1] == 0: the whole of params per coordinate.
  const Tensor all =
      Run1("GatherNd", {}, {p, Tensor(DT_INT32, TensorShape({2, 0}))});
  EXPECT_EQ(all.shape(), TensorShape({2, 2, 3, 2}));
  EXPECT_EQ(all.flat<float>()[11], 11.f);
  EXPECT_EQ(all.flat<float>()[12], 0.f);
}

template <typename T>
class GatherNdTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(GatherNdTypedTest, AllTypes);

TYPED_TEST(GatherNdTypedTest, EveryDtypeCopiesSlices) {
  using T = TypeParam;
  const Tensor p = Distinct<T>(TensorShape({3, 4, 2}));
  // Rows (2, 1) and (0, 3): slices of 2 elements at flat 18 and 6.
  const Tensor got = Run1("GatherNd", {},
                          {p, Mat<int32_t>({2, 1, 0, 3}, TensorShape({2, 2}))});
  ExpectEqual(got, Remap<T>(p, TensorShape({2, 2}), [](int64_t i) {
                return (i < 2 ? 18 : 6) + i % 2;
              }));
}

TEST(GatherNdTest, BadCoordinates) {
  const Tensor p = Iota<int32_t>(TensorShape({2, 3}));
  std::string e = ErrorOf("GatherNd", {},
                          {p, Mat<int32_t>({0, 1, 1, 5}, TensorShape({2, 2}))});
  EXPECT_TRUE(absl::StrContains(
      e, "indices[1] = [1, 5] does not index into param shape [2,3]"))
      << e;
  e = ErrorOf("GatherNd", {},
              {p, Mat<int32_t>({-1, 0}, TensorShape({1, 1, 2}))});
  EXPECT_TRUE(absl::StrContains(e, "indices[0,0] = [-1, 0]")) << e;
  e = ErrorOf("GatherNd", {},
              {p, Mat<int32_t>({0, 0, 0}, TensorShape({1, 3}))});
  EXPECT_TRUE(absl::StrContains(e, "indices.shape[-1] must be <= params.rank"))
      << e;
  // IGNORE reads zeros for bad coordinates.
  ExpectEqual(Run1("GatherNd", {{"bad_indices_policy", AttrS("IGNORE")}},
                   {p, Mat<int32_t>({1, 2, 7, 0}, TensorShape({2, 2}))}),
              Vec<int32_t>({5, 0}));
}

TEST(ScatterNdTest, MatchesTensorFlowAndSumsDuplicates) {
  ExpectEqual(Run1("ScatterNd", {},
                   {Mat<int32_t>({4, 3, 1, 7, 4}, TensorShape({5, 1})),
                    Vec<float>({9, 10, 11, 12, 13}), Vec<int32_t>({8})}),
              Vec<float>({0, 11, 0, 10, 22, 0, 0, 12}));
  ExpectEqual(Run1("ScatterNd", {},
                   {Mat<int64_t>({0, 2, 0}, TensorShape({3, 1})),
                    Iota<int32_t>(TensorShape({3, 4})), Vec<int64_t>({3, 4})}),
              Mat<int32_t>({8, 10, 12, 14, 0, 0, 0, 0, 4, 5, 6, 7},
                           TensorShape({3, 4})));
  ExpectEqual(
      Run1("ScatterNd", {},
           {Mat<int16_t>({1, 1, 0, 0}, TensorShape({2, 2})),
            Vec<half>({half(1.5f), half(-2.0f)}), Vec<int16_t>({2, 2})}),
      Mat<half>({half(-2.0f), half(0.f), half(0.f), half(1.5f)},
                TensorShape({2, 2})));
  // No updates: zeros.
  ExpectEqual(
      Run1("ScatterNd", {},
           {Tensor(DT_INT32, TensorShape({0, 1})),
            Tensor(DT_DOUBLE, TensorShape({0, 2})), Vec<int32_t>({3, 2})}),
      Tensor(DT_DOUBLE, TensorShape({3, 2})));
}

TEST(ScatterNdTest, BadInputs) {
  std::string e = ErrorOf("ScatterNd", {},
                          {Mat<int32_t>({5}, TensorShape({1, 1})),
                           Vec<float>({1}), Vec<int32_t>({4})});
  EXPECT_TRUE(
      absl::StrContains(e, "indices[0] = [5] does not index into shape [4]"))
      << e;
  e = ErrorOf("ScatterNd", {},
              {Mat<int32_t>({1, 2}, TensorShape({2, 1})), Vec<float>({1, 2, 3}),
               Vec<int32_t>({4})});
  EXPECT_TRUE(absl::StrContains(e, "updates must have shape")) << e;
  e = ErrorOf("ScatterNd", {},
              {Mat<int32_t>({0}, TensorShape({1, 1})), Vec<float>({1}),
               Vec<int32_t>({0})});
  EXPECT_TRUE(absl::StrContains(e, "empty output shape")) << e;
  ExpectEqual(Run1("ScatterNd", {{"bad_indices_policy", AttrS("IGNORE")}},
                   {Mat<int32_t>({5, 1}, TensorShape({2, 1})),
                    Vec<float>({1, 2}), Vec<int32_t>({3})}),
              Vec<float>({0, 2, 0}));
}

TEST(WhereTest, MatchesTensorFlow) {
  const Tensor cond =
      Mat<bool>({true, false, false, true, false, false, true, true},
                TensorShape({2, 2, 2}));
  ExpectEqual(
      Run1("Where", {}, {cond}),
      Mat<int64_t>({0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1}, TensorShape({4, 3})));
  // -0 is false, NaN is true.
  ExpectEqual(Run1("Where", {}, {Vec<float>({0.f, -0.f, NAN, 1.5f, 0.f})}),
              Mat<int64_t>({2, 3}, TensorShape({2, 1})));
  ExpectEqual(Run1("Where", {}, {Vec<int32_t>({0, 7, 0})}),
              Mat<int64_t>({1}, TensorShape({1, 1})));
  // No true element: a [0, rank] result.
  ExpectEqual(Run1("Where", {}, {Tensor(DT_BOOL, TensorShape({2, 3}))}),
              Tensor(DT_INT64, TensorShape({0, 2})));
  ExpectEqual(Run1("Where", {}, {Tensor::Scalar<bool>(true)}),
              Tensor(DT_INT64, TensorShape({1, 0})));
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
