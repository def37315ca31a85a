// The GPU binary kernels' index arithmetic, checked on CPU: for every
// output element, the input elements the merged strides pick must be the
// ones NumPy's broadcasting rules pick.
#include "kernels/gpu/broadcast.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace gpu {
namespace {

TensorShape Shape(const std::vector<int64_t>& dims) {
  TensorShape s;
  for (int64_t d : dims) s.AddDim(d);
  return s;
}

// The flat index into `in` (right-aligned against `out`) for output
// coordinates `coord`, by NumPy's rule: a size-1 dim reads index 0.
int64_t NaiveIndex(const TensorShape& in, const TensorShape& out,
                   const std::vector<int64_t>& coord) {
  int64_t index = 0;
  const int offset = out.dims() - in.dims();
  for (int i = 0; i < in.dims(); ++i) {
    const int64_t c = in.dim_size(i) == 1 ? 0 : coord[offset + i];
    index = index * in.dim_size(i) + c;
  }
  return index;
}

void Check(const std::vector<int64_t>& xd, const std::vector<int64_t>& yd) {
  const TensorShape x = Shape(xd), y = Shape(yd);
  absl::StatusOr<Broadcast> b = MakeBroadcast(x, y);
  ASSERT_TRUE(b.ok()) << b.status();
  const TensorShape& out = b->output;
  const int64_t n = out.num_elements();
  std::vector<int64_t> coord(out.dims(), 0);
  for (int64_t i = 0; i < n; ++i) {
    // The kernel's arithmetic: i -> merged coordinates -> strided offsets.
    int64_t rest = i, xi = 0, yi = 0;
    for (int d = b->shape.rank - 1; d >= 0; --d) {
      const int64_t c = rest % b->shape.dims[d];
      rest /= b->shape.dims[d];
      xi += c * b->shape.x_strides[d];
      yi += c * b->shape.y_strides[d];
    }
    ASSERT_EQ(xi, NaiveIndex(x, out, coord)) << x.DebugString() << " " << y.DebugString() << " at " << i;
    ASSERT_EQ(yi, NaiveIndex(y, out, coord)) << x.DebugString() << " " << y.DebugString() << " at " << i;
    for (int d = out.dims() - 1; d >= 0; --d) {
      if (++coord[d] < out.dim_size(d)) break;
      coord[d] = 0;
    }
  }
}

TEST(BroadcastTest, PicksTheElementsNumPyPicks) {
  Check({2, 3}, {2, 3});
  Check({2, 3}, {3});
  Check({4, 1, 5}, {3, 1});
  Check({}, {7});
  Check({1}, {1});
  // Rank 7, merged into 3 dims (x whole / y broadcast, the reverse, both
  // whole).
  Check({2, 3, 4, 1, 1, 5, 6}, {1, 1, 1, 7, 8, 5, 6});
}

TEST(BroadcastTest, RandomShapes) {
  std::mt19937 rng(3);
  for (int t = 0; t < 300; ++t) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> xd(rank), yd;
    for (int64_t& d : xd) d = 1 + rng() % 4;
    const int yrank = 1 + static_cast<int>(rng() % rank);
    for (int i = rank - yrank; i < rank; ++i) yd.push_back(rng() % 2 ? xd[i] : 1);
    if (rng() % 2) std::swap(xd, yd);
    Check(xd, yd);
  }
}

TEST(BroadcastTest, IncompatibleShapesAreRefused) {
  absl::StatusOr<Broadcast> b = MakeBroadcast(Shape({2, 3}), Shape({4}));
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("[2,3]"), std::string::npos) << b.status();
  // Broadcasting that alternates in every dim cannot be merged below 9.
  b = MakeBroadcast(Shape({2, 1, 3, 1, 2, 1, 3, 1, 2}), Shape({1, 2, 1, 3, 1, 2, 1, 3, 1}));
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("at most 6"), std::string::npos) << b.status();
}

TEST(MatMulShapesTest, MatricesAndTransposes) {
  absl::StatusOr<MatMulShape> s = MatMulShapes(Shape({3, 4}), Shape({5, 4}), false, true, false);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->m, 3);
  EXPECT_EQ(s->n, 5);
  EXPECT_EQ(s->k, 4);
  EXPECT_EQ(s->batch, 1);
  EXPECT_EQ(s->output, Shape({3, 5}));
  s = MatMulShapes(Shape({3, 4}), Shape({3, 4}), false, false, false);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("Matrix size-incompatible"), std::string::npos);
  s = MatMulShapes(Shape({2, 3, 4}), Shape({4, 5}), false, false, false);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);  // MatMul takes matrices
}

TEST(MatMulShapesTest, BatchesBroadcastAsBatchMatMulV2) {
  // Equal batches, right-aligned against implicit 1s.
  absl::StatusOr<MatMulShape> s =
      MatMulShapes(Shape({2, 3, 4, 5}), Shape({2, 3, 5, 6}), false, false, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->output, Shape({2, 3, 4, 6}));
  EXPECT_EQ(s->batch, 6);
  EXPECT_EQ(s->stride_a, 20);
  EXPECT_EQ(s->stride_b, 30);
  EXPECT_EQ(s->stride_c, 24);
  // One side a single matrix (rank 2, or batch dims of 1): stride 0.
  s = MatMulShapes(Shape({7, 4, 5}), Shape({1, 5, 6}), false, false, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->output, Shape({7, 4, 6}));
  EXPECT_EQ(s->stride_b, 0);
  s = MatMulShapes(Shape({4, 5}), Shape({2, 3, 5, 6}), false, false, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->output, Shape({2, 3, 4, 6}));
  EXPECT_EQ(s->stride_a, 0);
  // An empty batch gives an empty output, whichever side is the matrix.
  s = MatMulShapes(Shape({0, 4, 5}), Shape({5, 6}), false, false, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->output, Shape({0, 4, 6}));
  EXPECT_EQ(s->output.num_elements(), 0);
  // Same element count, different batch shapes: refused, as TensorFlow.
  s = MatMulShapes(Shape({2, 3, 4, 5}), Shape({3, 2, 5, 6}), false, false, true);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  s = MatMulShapes(Shape({2, 3, 4, 5}), Shape({6, 5, 6}), false, false, true);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  // Broadcasts both ways: valid for TensorFlow, not for strided batches.
  s = MatMulShapes(Shape({2, 1, 4, 5}), Shape({1, 3, 5, 6}), false, false, true);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  // k = 0: an output of zeros (the kernel fills it).
  s = MatMulShapes(Shape({3, 0}), Shape({0, 2}), false, false, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->k, 0);
  EXPECT_EQ(s->output, Shape({3, 2}));
}

}  // namespace
}  // namespace gpu
}  // namespace graphrun
