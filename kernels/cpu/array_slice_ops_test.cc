// Tests for Slice and StridedSlice (array_slice_ops.cc,
// array_strided_slice.cc). StridedSlice specs are written as NumPy indexing
// (x[1:-1], x[..., 0], x[:, None]...), encoded into begin/end/strides and
// masks as TensorFlow's Python front end does, and checked against an
// independent NumPy-semantics reference.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrI;

// One item of a NumPy index expression.
struct Item {
  enum Kind { kSlice, kIndex, kNewAxis, kEllipsis } kind;
  std::optional<int64_t> start, stop, step;  // kSlice
  int64_t index = 0;                         // kIndex
};
Item S(std::optional<int64_t> start = std::nullopt,
       std::optional<int64_t> stop = std::nullopt,
       std::optional<int64_t> step = std::nullopt) {
  return {Item::kSlice, start, stop, step, 0};
}
Item I(int64_t i) { return {Item::kIndex, {}, {}, {}, i}; }
const Item kNew = {Item::kNewAxis, {}, {}, {}, 0};
const Item kEll = {Item::kEllipsis, {}, {}, {}, 0};
constexpr std::nullopt_t _ = std::nullopt;

// TensorFlow's _slice_helper: the op's inputs and mask attrs for `items`.
struct Encoded {
  std::vector<int32_t> begin, end, strides;
  Attrs attrs;
};
Encoded Encode(const std::vector<Item>& items) {
  Encoded e;
  int64_t begin_mask = 0, end_mask = 0, ellipsis = 0, new_axis = 0, shrink = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const int64_t bit = int64_t{1} << i;
    int32_t b = 0, en = 0, s = 1;
    switch (it.kind) {
      case Item::kSlice:
        if (it.start) b = static_cast<int32_t>(*it.start); else begin_mask |= bit;
        if (it.stop) en = static_cast<int32_t>(*it.stop); else end_mask |= bit;
        if (it.step) s = static_cast<int32_t>(*it.step);
        break;
      case Item::kIndex:
        b = static_cast<int32_t>(it.index);
        en = b + 1;
        shrink |= bit;
        break;
      case Item::kNewAxis: new_axis |= bit; break;
      case Item::kEllipsis: ellipsis |= bit; break;
    }
    e.begin.push_back(b);
    e.end.push_back(en);
    e.strides.push_back(s);
  }
  e.attrs = {{"begin_mask", AttrI(begin_mask)}, {"end_mask", AttrI(end_mask)},
             {"ellipsis_mask", AttrI(ellipsis)}, {"new_axis_mask", AttrI(new_axis)},
             {"shrink_axis_mask", AttrI(shrink)}};
  return e;
}

// Python's slice(start, stop, step).indices(n), as the list of indices.
std::vector<int64_t> SliceIndices(const Item& it, int64_t n) {
  const int64_t step = it.step.value_or(1);
  auto fix = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::max(lo, std::min(hi, x));
  };
  std::vector<int64_t> out;
  if (step > 0) {
    const int64_t start = fix(it.start, 0, 0, n), stop = fix(it.stop, n, 0, n);
    for (int64_t i = start; i < stop; i += step) out.push_back(i);
  } else {
    const int64_t start = fix(it.start, n - 1, -1, n - 1);
    const int64_t stop = fix(it.stop, -1, -1, n - 1);
    for (int64_t i = start; i > stop; i += step) out.push_back(i);
  }
  return out;
}

// NumPy's x[items] for in-range indices.
template <typename T>
Tensor NumpyIndex(const Tensor& x, const std::vector<Item>& items) {
  std::vector<Item> full;
  int consuming = 0;
  bool has_ellipsis = false;
  for (const Item& it : items) {
    if (it.kind == Item::kSlice || it.kind == Item::kIndex) ++consuming;
    if (it.kind == Item::kEllipsis) has_ellipsis = true;
  }
  for (const Item& it : items) {
    if (it.kind == Item::kEllipsis) {
      for (int k = 0; k < x.dims() - consuming; ++k) full.push_back(S());
    } else {
      full.push_back(it);
    }
  }
  if (!has_ellipsis) {
    for (int k = consuming; k < x.dims(); ++k) full.push_back(S());
  }
  std::vector<std::vector<int64_t>> picks;  // per input dim
  std::vector<int64_t> out_dims;
  int dim = 0;
  for (const Item& it : full) {
    if (it.kind == Item::kNewAxis) {
      out_dims.push_back(1);
    } else if (it.kind == Item::kIndex) {
      const int64_t n = x.dim_size(dim++);
      picks.push_back({it.index < 0 ? it.index + n : it.index});
    } else {
      picks.push_back(SliceIndices(it, x.dim_size(dim++)));
      out_dims.push_back(static_cast<int64_t>(picks.back().size()));
    }
  }
  std::vector<int64_t> pick_dims;
  for (const auto& p : picks) pick_dims.push_back(static_cast<int64_t>(p.size()));
  const TensorShape pick_shape = Shape(pick_dims);
  const std::vector<int64_t> strides = Strides(x.shape());
  const Tensor flat = Remap<T>(x, pick_shape, [&](int64_t i) {
    const std::vector<int64_t> idx = Unravel(pick_shape, i);
    int64_t offset = 0;
    for (size_t d = 0; d < idx.size(); ++d) offset += picks[d][idx[d]] * strides[d];
    return offset;
  });
  return *flat.Reshaped(Shape(out_dims));
}

template <typename T>
Tensor StridedSlice(const Tensor& x, const std::vector<Item>& items) {
  const Encoded e = Encode(items);
  return Run1("StridedSlice", e.attrs,
              {x, Vec<int32_t>(e.begin), Vec<int32_t>(e.end), Vec<int32_t>(e.strides)});
}

std::string StridedSliceError(const Tensor& x, const std::vector<Item>& items) {
  const Encoded e = Encode(items);
  return ErrorOf("StridedSlice", e.attrs,
                 {x, Vec<int32_t>(e.begin), Vec<int32_t>(e.end), Vec<int32_t>(e.strides)});
}

// x has shape [4, 5, 6].
const std::vector<std::vector<Item>>& Specs3d() {
  static const auto* specs = new std::vector<std::vector<Item>>{
      {S(1, -1)},                       // x[1:-1]
      {S(_, _, -1)},                    // x[::-1]
      {kEll, I(0)},                     // x[..., 0]
      {S(), kNew},                      // x[:, None]
      {I(2)},                           // x[2]
      {I(-1)},                          // x[-1]
      {S(1, 3), S(_, _, 2), S(-2)},     // x[1:3, ::2, -2:]
      {S(_, _, -2), S(4, 0, -2)},       // x[::-2, 4:0:-2]
      {kEll, kNew, S(1, 3)},            // x[..., None, 1:3]
      {kNew, kEll, kNew},               // x[None, ..., None]
      {S(), I(-1), S(_, _, -3)},        // x[:, -1, ::-3]
      {S(10)},                          // x[10:]
      {S(-10, 2)},                      // x[-10:2]
      {S(3, 1)},                        // x[3:1]
      {S(_, _, -1), S(_, _, -1), S(_, _, -1)},  // x[::-1, ::-1, ::-1]
      {I(0), I(0), I(0)},               // x[0, 0, 0]
      {I(1), kEll, I(-2)},              // x[1, ..., -2]
      {S(), S(), S(), kNew},            // x[:, :, :, None]
      {S(_, 2), kEll},                  // x[:2, ...]
      {S(1, 2)},                        // x[1:2]
      {S(-1, -5, -1), S(1, 4), I(3)},   // x[-1:-5:-1, 1:4, 3]
      {S(5, _, -2)},                    // x[5::-2]
      {S(_, -7, -1)},                   // x[:-7:-1]
      {I(1), S(2, 100), S(-100, 100, 4)},  // x[1, 2:100, -100:100:4]
      {kEll},                           // x[...]
  };
  return *specs;
}

template <typename T>
class StridedSliceTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(StridedSliceTypedTest, AllTypes);

TYPED_TEST(StridedSliceTypedTest, MatchesNumpyIndexing) {
  using T = TypeParam;
  const Tensor x = Distinct<T>(Shape({4, 5, 6}));
  for (size_t i = 0; i < Specs3d().size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "spec " << i);
    ExpectEqual(StridedSlice<T>(x, Specs3d()[i]), NumpyIndex<T>(x, Specs3d()[i]));
  }
}

TYPED_TEST(StridedSliceTypedTest, SliceMatchesReference) {
  using T = TypeParam;
  const Tensor x = Distinct<T>(Shape({4, 5, 6}));
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 2, 3}, {2, 3, 3}}, {{0, 0, 0}, {4, 5, 6}}, {{3, 0, 0}, {-1, -1, -1}},
      {{0, 4, 1}, {4, 1, 2}}, {{2, 0, 0}, {1, 5, 6}}, {{1, 1, 6}, {2, 2, 0}}};
  for (const auto& [begin, size] : cases) {
    std::vector<int64_t> out_dims;
    std::vector<Item> items;
    for (int d = 0; d < 3; ++d) {
      const int64_t s = size[d] == -1 ? x.dim_size(d) - begin[d] : size[d];
      out_dims.push_back(s);
      items.push_back(S(begin[d], begin[d] + s));
    }
    ExpectEqual(Run1("Slice", {}, {x, Vec<int64_t>(begin), Vec<int64_t>(size)}),
                NumpyIndex<T>(x, items));
  }
}

TEST(StridedSliceOpTest, OneDimensionalAndScalarInputs) {
  const Tensor v = Iota<int32_t>(Shape({10}));
  for (const std::vector<Item>& spec :
       std::vector<std::vector<Item>>{{S(5, 1, -1)}, {S(-3)}, {S(_, _, 3)}, {S(_, _, -4)},
                                      {I(9)}, {S(2, 8, 2)}, {kNew, S(7)}, {S(0, 0)}}) {
    ExpectEqual(StridedSlice<int32_t>(v, spec), NumpyIndex<int32_t>(v, spec));
  }
  const Tensor s = Tensor::Scalar<float>(3);
  ExpectEqual(StridedSlice<float>(s, {kEll}), s);
  ExpectEqual(StridedSlice<float>(s, {kNew}), Vec<float>({3}));
  ExpectEqual(StridedSlice<float>(s, {kNew, kEll, kNew}), Mat<float>({3}, Shape({1, 1})));
}

TEST(StridedSliceOpTest, Int64SpecsAndEmptyInputs) {
  const Tensor x = Iota<float>(Shape({3, 0, 2}));
  const Encoded e = Encode({S(1), S(), S(_, _, -1)});
  const Tensor out = Run1("StridedSlice", e.attrs,
                          {x, Vec<int64_t>({1, 0, 0}), Vec<int64_t>({0, 0, 0}),
                           Vec<int64_t>({1, 1, -1})});
  EXPECT_EQ(out.shape(), Shape({2, 0, 2}));
}

TEST(StridedSliceOpTest, WholeAndAlignedDim0SlicesShareTheBuffer) {
  const Tensor x = Iota<float>(Shape({4, 16}));
  const Tensor all = StridedSlice<float>(x, {kEll});
  EXPECT_TRUE(all.SharesBufferWith(x));
  const Tensor rows = StridedSlice<float>(x, {S(1, 3)});
  EXPECT_TRUE(rows.SharesBufferWith(x));
  ExpectEqual(rows, NumpyIndex<float>(x, {S(1, 3)}));
  const Tensor row = StridedSlice<float>(x, {I(2)});
  EXPECT_TRUE(row.SharesBufferWith(x));
  ExpectEqual(row, NumpyIndex<float>(x, {I(2)}));
  // Unaligned rows are copied.
  const Tensor y = Iota<float>(Shape({4, 3}));
  const Tensor copy = StridedSlice<float>(y, {S(1, 3)});
  EXPECT_FALSE(copy.SharesBufferWith(y));
  ExpectEqual(copy, NumpyIndex<float>(y, {S(1, 3)}));
  const Tensor sliced = Run1("Slice", {}, {x, Vec<int32_t>({2, 0}), Vec<int32_t>({-1, -1})});
  EXPECT_TRUE(sliced.SharesBufferWith(x));
  ExpectEqual(sliced, NumpyIndex<float>(x, {S(2)}));
}

TEST(StridedSliceOpTest, BigAndHighRankSlices) {
  const Tensor x = Iota<float>(Shape({300, 300}));
  ExpectEqual(StridedSlice<float>(x, {S(), S(_, _, -1)}),
              NumpyIndex<float>(x, {S(), S(_, _, -1)}));
  ExpectEqual(StridedSlice<float>(x, {S(1, -1), S(2, -3)}),
              NumpyIndex<float>(x, {S(1, -1), S(2, -3)}));
  // Rank 9: whole trailing dims merge, so Eigen sees rank 2.
  const Tensor h = Iota<int64_t>(Shape(std::vector<int64_t>(9, 2)));
  ExpectEqual(StridedSlice<int64_t>(h, {S(_, _, -1)}), NumpyIndex<int64_t>(h, {S(_, _, -1)}));
  ExpectEqual(StridedSlice<int64_t>(h, {I(1), S(1)}), NumpyIndex<int64_t>(h, {I(1), S(1)}));
  // Rank 9 strided in every dim: beyond Eigen's ranks, as in TensorFlow.
  const std::vector<Item> every(9, S(_, _, -1));
  const Encoded e = Encode(every);
  auto out = testing::RunOp("StridedSlice", e.attrs,
                            {h, Vec<int32_t>(e.begin), Vec<int32_t>(e.end),
                             Vec<int32_t>(e.strides)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(StridedSliceOpTest, Errors) {
  const Tensor x = Iota<float>(Shape({4, 5, 6}));
  EXPECT_EQ(StridedSliceError(x, {I(4)}), "slice index 4 of dimension 0 out of bounds.");
  EXPECT_EQ(StridedSliceError(x, {S(), I(-6)}),
            "slice index -1 of dimension 1 out of bounds.");
  EXPECT_EQ(StridedSliceError(x, {I(0), I(0), I(0), I(0)}),
            "Index out of range using input dim 3; input has only 3 dims");
  EXPECT_EQ(StridedSliceError(Tensor::Scalar<float>(1), {I(0)}),
            "Attempting to slice scalar input.");
  EXPECT_EQ(StridedSliceError(x, {S(_, _, 0)}), "strides[0] must be non-zero");
  Encoded ell = Encode({kEll, kEll});
  EXPECT_EQ(ErrorOf("StridedSlice", ell.attrs,
                    {x, Vec<int32_t>(ell.begin), Vec<int32_t>(ell.end),
                     Vec<int32_t>(ell.strides)}),
            "Multiple ellipses in slice spec not allowed");
  Encoded shrink = Encode({I(1)});
  EXPECT_EQ(ErrorOf("StridedSlice", shrink.attrs,
                    {x, Vec<int32_t>({1}), Vec<int32_t>({2}), Vec<int32_t>({-1})}),
            "only stride 1 allowed on non-range indexing.");
  EXPECT_EQ(ErrorOf("StridedSlice", {},
                    {x, Vec<int32_t>({0, 0}), Vec<int32_t>({1}), Vec<int32_t>({1, 1})}),
            "Expected begin, end, and strides to be 1D equal size tensors, but got "
            "shapes [2], [1], and [2] instead.");
}

TEST(StridedSliceOpTest, Int64Extremes) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor x = Iota<float>(Shape({3, 2}));
  const Tensor all = Run1("StridedSlice", {},
                          {x, Vec<int64_t>({kMin}), Vec<int64_t>({kMax}), Vec<int64_t>({1})});
  ExpectEqual(all, x);
  const Tensor rev = Run1("StridedSlice", {},
                          {x, Vec<int64_t>({kMax}), Vec<int64_t>({kMin}), Vec<int64_t>({-1})});
  ExpectEqual(rev, NumpyIndex<float>(x, {S(_, _, -1)}));
  EXPECT_EQ(ErrorOf("StridedSlice", {{"shrink_axis_mask", AttrI(1)}},
                    {x, Vec<int64_t>({kMax}), Vec<int64_t>({kMin}), Vec<int64_t>({1})}),
            "slice index 9223372036854775807 of dimension 0 out of bounds.");
  EXPECT_EQ(ErrorOf("Slice", {}, {x, Vec<int64_t>({kMin, 0}), Vec<int64_t>({-1, -1})}),
            "Expected begin[0] in [0, 3], but got -9223372036854775808");
}

TEST(SliceOpTest, EmptyDimsAndErrors) {
  const Tensor e = Mat<float>({}, Shape({0, 3}));
  EXPECT_EQ(Run1("Slice", {}, {e, Vec<int32_t>({0, 1}), Vec<int32_t>({-1, 2})}).shape(),
            Shape({0, 2}));
  EXPECT_EQ(ErrorOf("Slice", {}, {e, Vec<int32_t>({1, 0}), Vec<int32_t>({0, 1})}),
            "Expected begin[0] == 0 (got 1) and size[0] == 0 (got 0) when "
            "input.dim_size(0) == 0");
  const Tensor x = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("Slice", {}, {x, Vec<int32_t>({0}), Vec<int32_t>({1, 1})}),
            "Expected begin and size arguments to be 1-D tensors of size 2, but got "
            "shapes [1] and [2] instead.");
  EXPECT_EQ(ErrorOf("Slice", {}, {x, Vec<int32_t>({0, 4}), Vec<int32_t>({1, -1})}),
            "Expected begin[1] in [0, 3], but got 4");
  EXPECT_EQ(ErrorOf("Slice", {}, {x, Vec<int32_t>({1, 0}), Vec<int32_t>({2, 1})}),
            "Expected size[0] in [0, 1], but got 2");
  EXPECT_EQ(ErrorOf("Slice", {}, {x, Vec<int32_t>({0, 0}), Vec<int32_t>({1, -2})}),
            "Expected size[1] in [0, 3], but got -2");
  // A scalar input with empty begin and size is the whole input.
  ExpectEqual(Run1("Slice", {}, {Tensor::Scalar<int32_t>(5), Vec<int32_t>({}), Vec<int32_t>({})}),
              Tensor::Scalar<int32_t>(5));
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
