// Tests for Transpose, Tile and BroadcastTo (array_transpose_ops.cc)
// against index-arithmetic references, for every dtype family, with the
// high-rank fallback, the threaded path, and TensorFlow's errors.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

template <typename T>
Tensor RefTranspose(const Tensor& x, const std::vector<int>& perm) {
  std::vector<int64_t> out_dims;
  for (int p : perm) out_dims.push_back(x.dim_size(p));
  const TensorShape out_shape = Shape(out_dims);
  const std::vector<int64_t> in_strides = Strides(x.shape());
  return Remap<T>(x, out_shape, [&](int64_t i) {
    const std::vector<int64_t> idx = Unravel(out_shape, i);
    int64_t offset = 0;
    for (size_t k = 0; k < perm.size(); ++k) offset += idx[k] * in_strides[perm[k]];
    return offset;
  });
}

// Tile when `multiples` is given, else broadcast (right-aligned, 1 -> n).
template <typename T>
Tensor RefRepeat(const Tensor& x, const TensorShape& out_shape) {
  const int offset = out_shape.dims() - x.dims();
  const std::vector<int64_t> in_strides = Strides(x.shape());
  return Remap<T>(x, out_shape, [&](int64_t i) {
    const std::vector<int64_t> idx = Unravel(out_shape, i);
    int64_t flat = 0;
    for (int k = 0; k < x.dims(); ++k) {
      flat += (idx[k + offset] % x.dim_size(k)) * in_strides[k];
    }
    return flat;
  });
}

template <typename T>
class ArrayRepeatTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(ArrayRepeatTypedTest, AllTypes);

TYPED_TEST(ArrayRepeatTypedTest, TransposeMatchesReference) {
  using T = TypeParam;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int>>> cases = {
      {{2, 3}, {1, 0}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 0, 2}},
      {{2, 3, 4}, {0, 2, 1}},
      {{4, 1, 3, 1, 2}, {4, 2, 0, 3, 1}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{3, 2, 2, 3, 2, 2}, {1, 0, 3, 2, 5, 4}},
      {{2, 1, 3, 4}, {3, 0, 1, 2}},  // [2, 3] merge across the size-1 dim
      {{3, 1, 1, 2}, {3, 2, 1, 0}},
  };
  for (const auto& [dims, perm] : cases) {
    const Tensor x = Distinct<T>(Shape(dims));
    std::vector<int32_t> p(perm.begin(), perm.end());
    ExpectEqual(Run1("Transpose", {}, {x, Vec<int32_t>(p)}), RefTranspose<T>(x, perm));
  }
}

TYPED_TEST(ArrayRepeatTypedTest, TileMatchesReference) {
  using T = TypeParam;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}},       {{2, 3}, {2, 2}},
      {{1, 3}, {4, 1}}, {{3, 1}, {1, 4}},       {{2, 1, 3}, {2, 3, 1}},
      {{1}, {5}},       {{2, 2, 1, 2}, {1, 2, 3, 2}},
  };
  for (const auto& [dims, multiples] : cases) {
    const Tensor x = Distinct<T>(Shape(dims));
    std::vector<int64_t> out_dims;
    for (size_t i = 0; i < dims.size(); ++i) out_dims.push_back(dims[i] * multiples[i]);
    ExpectEqual(Run1("Tile", {}, {x, Vec<int64_t>(multiples)}),
                RefRepeat<T>(x, Shape(out_dims)));
  }
}

TYPED_TEST(ArrayRepeatTypedTest, BroadcastToMatchesReference) {
  using T = TypeParam;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3}, {2, 3}},       {{2, 1}, {2, 3}}, {{1, 3}, {2, 2, 3}},
      {{}, {2, 2}},        {{1, 1}, {3, 1}}, {{2, 1, 3}, {4, 2, 5, 3}},
  };
  for (const auto& [dims, target] : cases) {
    const Tensor x = Distinct<T>(Shape(dims));
    ExpectEqual(Run1("BroadcastTo", {}, {x, Vec<int64_t>(target)}),
                RefRepeat<T>(x, Shape(target)));
  }
}

TEST(TransposeOpTest, HighRankUsesTheFallbackAndStaysCorrect) {
  // Ten dims of 2, reversed: nothing merges, rank 10 > 8.
  const Tensor x = Iota<int32_t>(Shape(std::vector<int64_t>(10, 2)));
  const std::vector<int> perm = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  ExpectEqual(Run1("Transpose", {}, {x, Vec<int32_t>({9, 8, 7, 6, 5, 4, 3, 2, 1, 0})}),
              RefTranspose<int32_t>(x, perm));
  // Rank 10 that merges down to rank 2.
  const std::vector<int> swap = {5, 6, 7, 8, 9, 0, 1, 2, 3, 4};
  ExpectEqual(Run1("Transpose", {}, {x, Vec<int32_t>({5, 6, 7, 8, 9, 0, 1, 2, 3, 4})}),
              RefTranspose<int32_t>(x, swap));
}

TEST(TransposeOpTest, BigTransposeOnThePool) {
  const Tensor x = Iota<float>(Shape({300, 257}));
  ExpectEqual(Run1("Transpose", {}, {x, Vec<int32_t>({1, 0})}),
              RefTranspose<float>(x, {1, 0}));
  const Tensor s = Distinct<std::string>(Shape({40, 30, 30}));
  ExpectEqual(Run1("Transpose", {}, {s, Vec<int64_t>({2, 1, 0})}),
              RefTranspose<std::string>(s, {2, 1, 0}));
}

TEST(TransposeOpTest, OrderKeepingPermutationsShareTheBuffer) {
  const Tensor x = Iota<float>(Shape({2, 3}));
  const Tensor same = Run1("Transpose", {}, {x, Vec<int32_t>({0, 1})});
  ExpectEqual(same, x);
  EXPECT_TRUE(same.SharesBufferWith(x));
  const Tensor row = Iota<float>(Shape({1, 5}));
  const Tensor col = Run1("Transpose", {}, {row, Vec<int32_t>({1, 0})});
  ExpectEqual(col, Iota<float>(Shape({5, 1})));
  EXPECT_TRUE(col.SharesBufferWith(row));
}

TEST(TransposeOpTest, ScalarsAndEmptyTensors) {
  ExpectEqual(Run1("Transpose", {}, {Tensor::Scalar<double>(4), Vec<int32_t>({})}),
              Tensor::Scalar<double>(4));
  ExpectEqual(Run1("Transpose", {}, {Mat<float>({}, Shape({0, 3})), Vec<int32_t>({1, 0})}),
              Mat<float>({}, Shape({3, 0})));
}

TEST(TransposeOpTest, Errors) {
  const Tensor x = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("Transpose", {}, {x, Vec<int32_t>({0, 1, 2})}),
            "transpose expects a vector of size 2. But input(1) is a vector of size 3");
  EXPECT_EQ(ErrorOf("Transpose", {}, {x, Vec<int32_t>({0, 2})}),
            "2 is out of range [0 .. 2)");
  EXPECT_EQ(ErrorOf("Transpose", {}, {x, Vec<int32_t>({-1, 0})}),
            "-1 is out of range [0 .. 2)");
  EXPECT_EQ(ErrorOf("Transpose", {}, {x, Vec<int64_t>({0, 0})}),
            "1 is missing from {0,0}.");
  EXPECT_EQ(ErrorOf("Transpose", {}, {x, Mat<int32_t>({1, 0}, Shape({1, 2}))}),
            "perm must be rank 1, got shape [1,2]");
}

TEST(TileOpTest, IdentityScalarsEmptyAndBig) {
  const Tensor x = Iota<int64_t>(Shape({2, 3}));
  const Tensor same = Run1("Tile", {}, {x, Vec<int32_t>({1, 1})});
  ExpectEqual(same, x);
  EXPECT_TRUE(same.SharesBufferWith(x));
  ExpectEqual(Run1("Tile", {}, {Tensor::Scalar<float>(2), Vec<int32_t>({})}),
              Tensor::Scalar<float>(2));
  ExpectEqual(Run1("Tile", {}, {x, Vec<int32_t>({0, 2})}), Mat<int64_t>({}, Shape({0, 6})));
  ExpectEqual(Run1("Tile", {}, {Mat<int64_t>({}, Shape({0, 2})), Vec<int32_t>({3, 2})}),
              Mat<int64_t>({}, Shape({0, 4})));
  const Tensor v = Iota<float>(Shape({100, 3}));
  ExpectEqual(Run1("Tile", {}, {v, Vec<int32_t>({200, 1})}),
              RefRepeat<float>(v, Shape({20000, 3})));
  // Ten dims that do not collapse: beyond Eigen's ranks, as in TensorFlow.
  const Tensor high = Iota<float>(Shape(std::vector<int64_t>(10, 2)));
  auto out = testing::RunOp("Tile", {}, {high, Vec<int32_t>({2, 2, 2, 2, 2, 2, 2, 2, 2, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TileOpTest, Errors) {
  const Tensor x = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("Tile", {}, {x, Vec<int32_t>({2})}),
            "Expected multiples argument to be a vector of length 2 but got length 1");
  EXPECT_EQ(ErrorOf("Tile", {}, {x, Vec<int32_t>({1, -1})}),
            "Expected multiples[1] >= 0, but got -1");
}

TEST(BroadcastToOpTest, SameShapeSharesAndEmptyTargets) {
  const Tensor x = Iota<float>(Shape({2, 3}));
  const Tensor same = Run1("BroadcastTo", {}, {x, Vec<int32_t>({2, 3})});
  EXPECT_TRUE(same.SharesBufferWith(x));
  // TensorFlow returns before checking when the target is empty.
  ExpectEqual(Run1("BroadcastTo", {}, {Iota<float>(Shape({3})), Vec<int32_t>({0})}),
              Mat<float>({}, Shape({0})));
  ExpectEqual(Run1("BroadcastTo", {}, {Iota<float>(Shape({1})), Vec<int32_t>({2, 0})}),
              Mat<float>({}, Shape({2, 0})));
  const Tensor big = Iota<double>(Shape({1, 256}));
  ExpectEqual(Run1("BroadcastTo", {}, {big, Vec<int64_t>({300, 256})}),
              RefRepeat<double>(big, Shape({300, 256})));
}

TEST(BroadcastToOpTest, Errors) {
  EXPECT_EQ(ErrorOf("BroadcastTo", {}, {Iota<float>(Shape({3})), Vec<int32_t>({2})}),
            "Incompatible shapes: [3] vs. [2]");
  EXPECT_EQ(ErrorOf("BroadcastTo", {}, {Iota<float>(Shape({3})), Vec<int32_t>({1})}),
            "Unable to broadcast tensor of shape [3] to tensor of shape [1]");
  EXPECT_EQ(ErrorOf("BroadcastTo", {}, {Iota<float>(Shape({2, 3})), Vec<int32_t>({3})}),
            "Rank of input (2) must be no greater than rank of output shape (1).");
  EXPECT_EQ(ErrorOf("BroadcastTo", {}, {Iota<float>(Shape({3})), Vec<int32_t>({-1, 3})}),
            "Dimension -1 must be >= 0");
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
