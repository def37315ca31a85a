// Expected values: TensorFlow 2.21, checked by make_array_matrix_ops_test_values.py
// beside this file.
// Tests for MatrixBandPart, MatrixDiag, MatrixDiagV3 and MatrixDiagPartV3:
// values computed once with TensorFlow 2.21 and written here (every
// alignment, rectangular outputs), other dtypes, and bad arguments.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrS;

Tensor OneTo(int64_t n, const TensorShape& shape) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return Mat<float>(v, shape);
}

TEST(MatrixBandPartTest, MatchesTensorFlow) {
  const Tensor m = OneTo(20, TensorShape({4, 5}));
  ExpectEqual(Run1("MatrixBandPart", {},
                   {m, Tensor::Scalar<int64_t>(1), Tensor::Scalar<int64_t>(2)}),
              Mat<float>({1, 2,  3,  0,  0,  6, 7, 8,  9,  0,
                          0, 12, 13, 14, 15, 0, 0, 18, 19, 20},
                         TensorShape({4, 5})));
  ExpectEqual(
      Run1("MatrixBandPart", {},
           {m, Tensor::Scalar<int64_t>(-1), Tensor::Scalar<int64_t>(0)}),
      Mat<float>(
          {1, 0, 0, 0, 0, 6, 7, 0, 0, 0, 11, 12, 13, 0, 0, 16, 17, 18, 19, 0},
          TensorShape({4, 5})));
  ExpectEqual(
      Run1("MatrixBandPart", {},
           {m, Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(-1)}),
      Mat<float>(
          {1, 2, 3, 4, 5, 0, 7, 8, 9, 10, 0, 0, 13, 14, 15, 0, 0, 0, 19, 20},
          TensorShape({4, 5})));
}

TEST(MatrixBandPartTest, BatchesDtypesAndErrors) {
  // A batch of 2 string matrices, lower triangle.
  const Tensor s = Distinct<std::string>(TensorShape({2, 2, 2}));
  ExpectEqual(
      Run1("MatrixBandPart", {},
           {s, Tensor::Scalar<int64_t>(-1), Tensor::Scalar<int64_t>(0)}),
      Mat<std::string>({"s0", "", "s2", "s3", "s4", "", "s6", "s7"},
                       TensorShape({2, 2, 2})));
  EXPECT_EQ(Run1("MatrixBandPart", {},
                 {Tensor(DT_BOOL, TensorShape({3, 0, 4})),
                  Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(0)})
                .shape(),
            TensorShape({3, 0, 4}));
  const Tensor m = OneTo(9, TensorShape({3, 3}));
  std::string e =
      ErrorOf("MatrixBandPart", {},
              {m, Tensor::Scalar<int64_t>(4), Tensor::Scalar<int64_t>(0)});
  EXPECT_TRUE(absl::StrContains(
      e, "num_lower must be negative or at most the number of rows (3)"))
      << e;
  e = ErrorOf("MatrixBandPart", {},
              {Vec<float>({1}), Tensor::Scalar<int64_t>(0),
               Tensor::Scalar<int64_t>(0)});
  EXPECT_TRUE(absl::StrContains(e, "at least 2-dim")) << e;
}

TEST(MatrixDiagTest, MatchesTensorFlow) {
  ExpectEqual(
      Run1("MatrixDiag", {},
           {Mat<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))}),
      Mat<int32_t>({1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0, 0, 0, 6},
                   TensorShape({2, 3, 3})));
  // Diagonals 1, 0, -1 of a 3x3 matrix, padded with 9, in each alignment.
  const Tensor diags =
      Mat<float>({1, 2, 0, 3, 4, 5, 6, 7, 0}, TensorShape({3, 3}));
  const std::pair<const char*, std::vector<float>> aligned[] = {
      {"RIGHT_LEFT", {3, 2, 9, 6, 4, 0, 9, 7, 5}},
      {"LEFT_RIGHT", {3, 1, 9, 7, 4, 2, 9, 0, 5}},
      {"LEFT_LEFT", {3, 1, 9, 6, 4, 2, 9, 7, 5}},
      {"RIGHT_RIGHT", {3, 2, 9, 7, 4, 0, 9, 0, 5}},
  };
  for (const auto& [align, want] : aligned) {
    SCOPED_TRACE(align);
    ExpectEqual(Run1("MatrixDiagV3", {{"align", AttrS(align)}},
                     {diags, Vec<int32_t>({-1, 1}), Tensor::Scalar<int32_t>(-1),
                      Tensor::Scalar<int32_t>(-1), Tensor::Scalar<float>(9)}),
                Mat<float>(want, TensorShape({3, 3})));
  }
  // One diagonal in a rectangle: given rows (columns inferred) and the
  // reverse.
  ExpectEqual(Run1("MatrixDiagV3", {},
                   {Vec<float>({1, 2}), Tensor::Scalar<int32_t>(1),
                    Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(-1),
                    Tensor::Scalar<float>(0)}),
              Mat<float>({0, 1, 0, 0, 0, 2, 0, 0, 0}, TensorShape({3, 3})));
  ExpectEqual(Run1("MatrixDiagV3", {},
                   {Vec<float>({1, 2}), Tensor::Scalar<int32_t>(-1),
                    Tensor::Scalar<int32_t>(-1), Tensor::Scalar<int32_t>(4),
                    Tensor::Scalar<float>(-1)}),
              Mat<float>({-1, -1, -1, -1, 1, -1, -1, -1, -1, 2, -1, -1},
                         TensorShape({3, 4})));
}

TEST(MatrixDiagPartTest, MatchesTensorFlow) {
  const Tensor m = OneTo(12, TensorShape({3, 4}));
  const std::pair<const char*, std::vector<float>> aligned[] = {
      {"RIGHT_LEFT", {2, 7, 12, 1, 6, 11, 5, 10, 0, 9, 0, 0}},
      {"LEFT_RIGHT", {2, 7, 12, 1, 6, 11, 0, 5, 10, 0, 0, 9}},
      {"LEFT_LEFT", {2, 7, 12, 1, 6, 11, 5, 10, 0, 9, 0, 0}},
      {"RIGHT_RIGHT", {2, 7, 12, 1, 6, 11, 0, 5, 10, 0, 0, 9}},
  };
  for (const auto& [align, want] : aligned) {
    SCOPED_TRACE(align);
    ExpectEqual(Run1("MatrixDiagPartV3", {{"align", AttrS(align)}},
                     {m, Vec<int32_t>({-2, 1}), Tensor::Scalar<float>(0)}),
                Mat<float>(want, TensorShape({4, 3})));
  }
  // A batch of two, one superdiagonal; the main diagonal.
  Tensor batch = OneTo(24, TensorShape({2, 3, 4}));
  for (int i = 12; i < 24; ++i) batch.flat<float>()[i] = (i - 11) * 10.f;
  ExpectEqual(
      Run1("MatrixDiagPartV3", {},
           {batch, Tensor::Scalar<int32_t>(2), Tensor::Scalar<float>(0)}),
      Mat<float>({3, 8, 30, 80}, TensorShape({2, 2})));
  ExpectEqual(Run1("MatrixDiagPartV3", {},
                   {m, Tensor::Scalar<int32_t>(0), Tensor::Scalar<float>(0)}),
              Vec<float>({1, 6, 11}));
}

TEST(MatrixDiagPartTest, RoundTripsOtherDtypesAndErrors) {
  const Tensor m = Distinct<std::string>(TensorShape({2, 3, 3}));
  const Tensor part =
      Run1("MatrixDiagPartV3", {},
           {m, Vec<int32_t>({-2, 2}), Tensor::Scalar<std::string>("")});
  EXPECT_EQ(part.shape(), TensorShape({2, 5, 3}));
  ExpectEqual(
      Run1("MatrixDiagV3", {},
           {part, Vec<int32_t>({-2, 2}), Tensor::Scalar<int32_t>(3),
            Tensor::Scalar<int32_t>(3), Tensor::Scalar<std::string>("")}),
      m);
  std::string e = ErrorOf("MatrixDiagPartV3", {},
                          {OneTo(12, TensorShape({3, 4})),
                           Vec<int32_t>({1, -1}), Tensor::Scalar<float>(0)});
  EXPECT_TRUE(absl::StrContains(e, "must not be larger than upper_diag_index"))
      << e;
  e = ErrorOf("MatrixDiagPartV3", {},
              {OneTo(12, TensorShape({3, 4})), Tensor::Scalar<int32_t>(4),
               Tensor::Scalar<float>(0)});
  EXPECT_TRUE(absl::StrContains(e, "diagonal index 4 is out of bounds")) << e;
  e = ErrorOf("MatrixDiagV3", {},
              {Vec<float>({1, 2}), Tensor::Scalar<int32_t>(0),
               Tensor::Scalar<int32_t>(1), Tensor::Scalar<int32_t>(1),
               Tensor::Scalar<float>(0)});
  EXPECT_TRUE(absl::StrContains(e, "do not fit diagonals")) << e;
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
