// Tests for Pack, Unpack, ConcatV2 and Split (array_concat_ops.cc) against
// index-arithmetic references, for every dtype family, with empty inputs,
// negative axes, shared outputs, the threaded path and TensorFlow's errors.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrI;
using testing::RunOp;

int64_t Ravel(const TensorShape& shape, const std::vector<int64_t>& idx) {
  const std::vector<int64_t> strides = Strides(shape);
  int64_t flat = 0;
  for (size_t i = 0; i < idx.size(); ++i) flat += idx[i] * strides[i];
  return flat;
}

// Concatenation of `ins` along `axis` (>= 0), element by element.
template <typename T>
Tensor RefConcat(const std::vector<Tensor>& ins, int axis) {
  std::vector<int64_t> dims(ins[0].shape().dim_sizes().begin(),
                            ins[0].shape().dim_sizes().end());
  dims[axis] = 0;
  for (const Tensor& t : ins) dims[axis] += t.dim_size(axis);
  const TensorShape shape = Shape(dims);
  std::vector<T> v(shape.num_elements());
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    std::vector<int64_t> idx = Unravel(shape, i);
    size_t p = 0;
    while (idx[axis] >= ins[p].dim_size(axis)) idx[axis] -= ins[p++].dim_size(axis);
    v[i] = ins[p].flat<T>()[Ravel(ins[p].shape(), idx)];
  }
  return Tensor::FromVector<T>(v, shape);
}

// Piece `i` of `n` equal pieces of `x` along `axis`; keep_dim false drops it
// (Unpack).
template <typename T>
Tensor RefPiece(const Tensor& x, int axis, int i, int n, bool keep_dim) {
  std::vector<int64_t> dims(x.shape().dim_sizes().begin(), x.shape().dim_sizes().end());
  const int64_t size = dims[axis] / n;
  dims[axis] = size;
  const TensorShape piece = Shape(dims);
  std::vector<T> v(piece.num_elements());
  for (int64_t k = 0; k < piece.num_elements(); ++k) {
    std::vector<int64_t> idx = Unravel(piece, k);
    idx[axis] += i * size;
    v[k] = x.flat<T>()[Ravel(x.shape(), idx)];
  }
  if (!keep_dim) dims.erase(dims.begin() + axis);
  return Tensor::FromVector<T>(v, Shape(dims));
}

template <typename T>
class ArrayJoinTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(ArrayJoinTypedTest, AllTypes);

TYPED_TEST(ArrayJoinTypedTest, ConcatV2AlongEveryAxis) {
  using T = TypeParam;
  const Tensor a = Distinct<T>(Shape({2, 3, 4}));
  for (int axis = -3; axis < 3; ++axis) {
    const int pos = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> bd = {2, 3, 4}, cd = {2, 3, 4};
    bd[pos] = 1;
    cd[pos] = 0;
    const Tensor b = Distinct<T>(Shape(bd)), c = Distinct<T>(Shape(cd));
    ExpectEqual(Run1("ConcatV2", {}, {a, c, b, a, Tensor::Scalar<int32_t>(axis)}),
                RefConcat<T>({a, c, b, a}, pos));
  }
}

TYPED_TEST(ArrayJoinTypedTest, PackAndUnpackRoundTrip) {
  using T = TypeParam;
  const Tensor x = Distinct<T>(Shape({3, 2, 4}));
  for (int axis = -3; axis < 3; ++axis) {
    const int pos = axis < 0 ? axis + 3 : axis;
    const int n = static_cast<int>(x.dim_size(pos));
    auto parts = RunOp("Unpack", {{"num", AttrI(n)}, {"axis", AttrI(axis)}}, {x});
    ASSERT_TRUE(parts.ok()) << parts.status();
    ASSERT_EQ(parts->size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ExpectEqual((*parts)[i], RefPiece<T>(x, pos, i, n, /*keep_dim=*/false));
    }
    ExpectEqual(Run1("Pack", {{"axis", AttrI(axis)}}, *parts), x);
  }
}

TYPED_TEST(ArrayJoinTypedTest, SplitAlongEveryAxis) {
  using T = TypeParam;
  const Tensor x = Distinct<T>(Shape({4, 6, 2}));
  for (int axis = -3; axis < 3; ++axis) {
    const int pos = axis < 0 ? axis + 3 : axis;
    const int n = 2;
    auto parts = RunOp("Split", {{"num_split", AttrI(n)}},
                       {Tensor::Scalar<int32_t>(axis), x});
    ASSERT_TRUE(parts.ok()) << parts.status();
    ASSERT_EQ(parts->size(), 2u);
    for (int i = 0; i < n; ++i) {
      ExpectEqual((*parts)[i], RefPiece<T>(x, pos, i, n, /*keep_dim=*/true));
    }
  }
}

TEST(ConcatV2OpTest, BigConcatOnThePoolAndInt64Axis) {
  const Tensor a = Iota<float>(Shape({200, 300})), b = Iota<float>(Shape({200, 100}));
  ExpectEqual(Run1("ConcatV2", {}, {a, b, Tensor::Scalar<int64_t>(1)}),
              RefConcat<float>({a, b}, 1));
  ExpectEqual(Run1("ConcatV2", {}, {a, a, Tensor::Scalar<int64_t>(0)}),
              RefConcat<float>({a, a}, 0));
}

TEST(ConcatV2OpTest, AllButOneEmptySharesIt) {
  const Tensor a = Iota<int32_t>(Shape({2, 3})), e = Mat<int32_t>({}, Shape({0, 3}));
  const Tensor out = Run1("ConcatV2", {}, {e, a, e, Tensor::Scalar<int32_t>(0)});
  ExpectEqual(out, a);
  EXPECT_TRUE(out.SharesBufferWith(a));
  ExpectEqual(Run1("ConcatV2", {}, {e, e, Tensor::Scalar<int32_t>(0)}),
              Mat<int32_t>({}, Shape({0, 3})));
}

TEST(ConcatV2OpTest, Errors) {
  const Tensor a = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("ConcatV2", {}, {a, a, Tensor::Scalar<int32_t>(2)}),
            "ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2");
  EXPECT_EQ(ErrorOf("ConcatV2", {}, {a, Iota<float>(Shape({3})), Tensor::Scalar<int32_t>(0)}),
            "ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. "
            "shape[1] = [3]");
  EXPECT_EQ(ErrorOf("ConcatV2", {}, {a, Iota<float>(Shape({3, 2})), Tensor::Scalar<int32_t>(0)}),
            "ConcatOp : Dimensions of inputs should match: shape[0] = [2,3] vs. "
            "shape[1] = [3,2]");
  EXPECT_EQ(ErrorOf("ConcatV2", {}, {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2),
                                     Tensor::Scalar<int32_t>(0)}),
            "ConcatOp : Expected concatenating dimensions in the range [0, 0), but got 0");
  EXPECT_EQ(ErrorOf("ConcatV2", {}, {a, a, Vec<int32_t>({0})}),
            "axis tensor should be a scalar integer, but got shape [1]");
}

TEST(PackOpTest, ScalarsEmptyAndSingleInput) {
  ExpectEqual(Run1("Pack", {}, {Tensor::Scalar<int64_t>(1), Tensor::Scalar<int64_t>(2),
                                Tensor::Scalar<int64_t>(3)}),
              Vec<int64_t>({1, 2, 3}));
  ExpectEqual(Run1("Pack", {{"axis", AttrI(1)}},
                   {Mat<float>({}, Shape({0})), Mat<float>({}, Shape({0}))}),
              Mat<float>({}, Shape({0, 2})));
  const Tensor x = Iota<float>(Shape({2, 3}));
  const Tensor one = Run1("Pack", {{"axis", AttrI(-1)}}, {x});
  ExpectEqual(one, Iota<float>(Shape({2, 3, 1})));
  EXPECT_TRUE(one.SharesBufferWith(x));
  ExpectEqual(Run1("Pack", {{"axis", AttrI(1)}}, {Vec<float>({1, 2}), Vec<float>({3, 4})}),
              Mat<float>({1, 3, 2, 4}, Shape({2, 2})));
}

TEST(PackOpTest, Errors) {
  EXPECT_EQ(ErrorOf("Pack", {}, {Vec<float>({1, 2}), Vec<float>({1, 2, 3})}),
            "Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]");
  EXPECT_EQ(ErrorOf("Pack", {{"axis", AttrI(2)}}, {Vec<float>({1}), Vec<float>({2})}),
            "axis = 2 not in [-2, 2)");
  EXPECT_EQ(ErrorOf("Pack", {{"axis", AttrI(-3)}}, {Vec<float>({1}), Vec<float>({2})}),
            "axis = -3 not in [-2, 2)");
}

TEST(SplitUnpackTest, AlignedRowsShareTheInputBuffer) {
  // 16 floats per row: each piece starts on a 64-byte boundary.
  const Tensor x = Iota<float>(Shape({4, 16}));
  auto parts = RunOp("Split", {{"num_split", AttrI(2)}}, {Tensor::Scalar<int32_t>(0), x});
  ASSERT_TRUE(parts.ok()) << parts.status();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE((*parts)[i].SharesBufferWith(x));
    ExpectEqual((*parts)[i], RefPiece<float>(x, 0, i, 2, true));
  }
  auto rows = RunOp("Unpack", {{"num", AttrI(4)}}, {x});
  ASSERT_TRUE(rows.ok()) << rows.status();
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE((*rows)[i].SharesBufferWith(x));
    ExpectEqual((*rows)[i], RefPiece<float>(x, 0, i, 4, false));
  }
  // 3 floats per row: unaligned, so copied (and still right).
  const Tensor y = Iota<float>(Shape({4, 3}));
  auto copies = RunOp("Unpack", {{"num", AttrI(4)}}, {y});
  ASSERT_TRUE(copies.ok());
  EXPECT_FALSE((*copies)[1].SharesBufferWith(y));
  ExpectEqual((*copies)[1], Vec<float>({3, 4, 5}));
}

TEST(SplitUnpackTest, OneWayEmptyAndBig) {
  const Tensor x = Iota<int32_t>(Shape({2, 3}));
  auto one = RunOp("Split", {{"num_split", AttrI(1)}}, {Tensor::Scalar<int32_t>(1), x});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE((*one)[0].SharesBufferWith(x));
  auto empty = RunOp("Split", {{"num_split", AttrI(3)}},
                     {Tensor::Scalar<int32_t>(1), Mat<int32_t>({}, Shape({0, 6}))});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[2].shape(), Shape({0, 2}));
  auto none = RunOp("Unpack", {{"num", AttrI(0)}}, {Mat<int32_t>({}, Shape({2, 0}))});
  ASSERT_FALSE(none.ok());  // axis 0 has size 2, not 0
  auto zero = RunOp("Unpack", {{"num", AttrI(0)}, {"axis", AttrI(1)}},
                    {Mat<int32_t>({}, Shape({2, 0}))});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(zero->empty());
  const Tensor big = Iota<double>(Shape({300, 200}));
  auto halves = RunOp("Split", {{"num_split", AttrI(2)}}, {Tensor::Scalar<int32_t>(1), big});
  ASSERT_TRUE(halves.ok());
  ExpectEqual((*halves)[1], RefPiece<double>(big, 1, 1, 2, true));
}

TEST(SplitUnpackTest, Errors) {
  const Tensor x = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("Split", {{"num_split", AttrI(2)}}, {Tensor::Scalar<int32_t>(1), x}),
            "Number of ways to split should evenly divide the split dimension, but got "
            "split_dim 1 (size = 3) and num_split 2");
  EXPECT_EQ(ErrorOf("Split", {{"num_split", AttrI(2)}}, {Tensor::Scalar<int32_t>(2), x}),
            "-input rank(-2) <= split_dim < input rank (2), but got 2");
  EXPECT_EQ(ErrorOf("Split", {{"num_split", AttrI(2)}}, {Vec<int32_t>({0}), x}),
            "split_dim must be a scalar but has rank 1");
  EXPECT_EQ(ErrorOf("Unpack", {{"num", AttrI(3)}}, {x}),
            "Input shape axis 0 must equal 3, got shape [2,3]");
  EXPECT_EQ(ErrorOf("Unpack", {{"num", AttrI(2)}, {"axis", AttrI(2)}}, {x}),
            "axis = 2 not in [-2, 2)");
  EXPECT_EQ(ErrorOf("Unpack", {{"num", AttrI(1)}}, {Tensor::Scalar<float>(1)}),
            "axis = 0 not in [0, 0)");
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
