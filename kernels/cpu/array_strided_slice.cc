#include "kernels/cpu/array_strided_slice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_movement.h"

namespace graphrun {
namespace array_kernels {
namespace {

constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// The spec with the ellipsis expanded: one entry per input dim.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, shrink_axis_mask = 0;
  // Per output dim of the expanded spec: the input dim it comes from,
  // kNewAxis or kShrinkAxis.
  std::vector<int> final_shape_gather_indices;
};

absl::StatusOr<DenseSpec> BuildDenseSpec(int dense_dims,
                                         const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& end,
                                         const std::vector<int64_t>& strides,
                                         const StridedSliceMasks& masks) {
  // Count new axes after the ellipsis; without one, append it at the end.
  int sparse_dims = static_cast<int>(strides.size());
  int num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  int64_t ellipsis_mask = masks.ellipsis;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && Bit(masks.new_axis, i)) ++num_add_axis_after_ellipsis;
    if (Bit(ellipsis_mask, i)) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    ellipsis_mask |= int64_t{1} << sparse_dims;
    ++sparse_dims;
  }
  DenseSpec dense;
  dense.begin.assign(dense_dims, 0);
  dense.end.assign(dense_dims, 0);
  dense.strides.assign(dense_dims, 0);
  int full_index = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (Bit(ellipsis_mask, i)) {
      const int next_index =
          std::min(dense_dims - (sparse_dims - i) + 1 +
                       num_add_axis_after_ellipsis,
                   dense_dims);
      for (; full_index < next_index; ++full_index) {
        dense.strides[full_index] = 1;
        dense.begin_mask |= int64_t{1} << full_index;
        dense.end_mask |= int64_t{1} << full_index;
        dense.final_shape_gather_indices.push_back(full_index);
      }
    } else if (Bit(masks.new_axis, i)) {
      dense.final_shape_gather_indices.push_back(kNewAxis);
    } else {
      if (full_index == dense_dims) {
        if (dense_dims == 0) {
          return absl::InvalidArgumentError("Attempting to slice scalar input.");
        }
        return absl::InvalidArgumentError(
            absl::StrCat("Index out of range using input dim ", full_index,
                         "; input has only ", dense_dims, " dims"));
      }
      dense.begin[full_index] = begin[i];
      dense.end[full_index] = end[i];
      dense.strides[full_index] = strides[i];
      if (Bit(masks.begin, i)) dense.begin_mask |= int64_t{1} << full_index;
      if (Bit(masks.end, i)) dense.end_mask |= int64_t{1} << full_index;
      if (Bit(masks.shrink_axis, i)) {
        dense.final_shape_gather_indices.push_back(kShrinkAxis);
        dense.shrink_axis_mask |= int64_t{1} << full_index;
      } else {
        dense.final_shape_gather_indices.push_back(full_index);
      }
      ++full_index;
    }
  }
  return dense;
}

}  // namespace

absl::StatusOr<StridedSliceSpec> ValidateStridedSlice(
    const TensorShape& input_shape, const Tensor& begin_t, const Tensor& end_t,
    const Tensor& strides_t, const StridedSliceMasks& masks) {
  const int64_t n = strides_t.NumElements();
  auto wrong = [n](const Tensor& t) {
    return !(t.dims() == 1 && t.NumElements() == n && t.NumElements() < 32);
  };
  if (wrong(begin_t) || wrong(end_t) || strides_t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected begin, end, and strides to be 1D equal size tensors, but "
        "got shapes ", begin_t.shape().DebugString(), ", ",
        end_t.shape().DebugString(), ", and ", strides_t.shape().DebugString(),
        " instead."));
  }
  if (masks.ellipsis != 0 && (masks.ellipsis & (masks.ellipsis - 1)) != 0) {
    return absl::InvalidArgumentError(
        "Multiple ellipses in slice spec not allowed");
  }
  const int rank = input_shape.dims();
  absl::StatusOr<DenseSpec> dense_or =
      BuildDenseSpec(rank, IntValues(begin_t), IntValues(end_t),
                     IntValues(strides_t), masks);
  if (!dense_or.ok()) return dense_or.status();
  DenseSpec& dense = *dense_or;

  StridedSliceSpec spec;
  spec.is_identity = true;
  spec.is_simple_slice = true;
  spec.slice_dim0 = true;
  for (int i = 0; i < rank; ++i) {
    int64_t& b = dense.begin[i];
    int64_t& e = dense.end[i];
    const int64_t s = dense.strides[i];
    const int64_t dim = input_shape.dim_size(i);
    if (s == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("strides[", i, "] must be non-zero"));
    }
    const bool shrink = Bit(dense.shrink_axis_mask, i);
    const bool begin_masked = Bit(dense.begin_mask, i);
    const bool end_masked = Bit(dense.end_mask, i);
    const int64_t lo = s > 0 ? 0 : -1;
    const int64_t hi = s > 0 ? dim : dim - 1;
    // begin (is_begin) or end, made non-negative and clamped to [lo, hi].
    auto canonical = [&](int64_t x, bool is_begin) {
      if (is_begin ? begin_masked : end_masked) {
        return (s > 0) == is_begin ? lo : hi;
      }
      const int64_t fwd = x < 0 ? dim + x : x;
      return std::clamp(fwd, lo, hi);
    };
    if (shrink && s <= 0) {
      return absl::InvalidArgumentError(
          "only stride 1 allowed on non-range indexing.");
    }
    spec.is_simple_slice &= s == 1;
    if (shrink) {
      // foo[-1] has begin -1, end 0: end is begin + 1 once begin is known.
      const int64_t fwd = b < 0 ? dim + b : b;
      if (fwd < 0 || fwd >= dim) {
        return absl::InvalidArgumentError(absl::StrCat(
            "slice index ", fwd, " of dimension ", i, " out of bounds."));
      }
      b = fwd;
      e = fwd + 1;
    } else {
      b = canonical(b, true);
      e = canonical(e, false);
    }
    const bool take_all = s == 1 && b == 0 && e == dim;
    spec.is_identity &= take_all;
    spec.slice_dim0 &= (i == 0 && s == 1) || take_all;
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && (interval < 0) == (s < 0)) {
      size = interval / s + (interval % s != 0 ? 1 : 0);
    }
    spec.processing_dims.push_back(size);
  }
  std::vector<int64_t> final_dims;
  for (int g : dense.final_shape_gather_indices) {
    if (g >= 0) {
      final_dims.push_back(spec.processing_dims[g]);
    } else if (g == kNewAxis) {
      final_dims.push_back(1);
    }
  }
  absl::StatusOr<TensorShape> final_shape = TensorShape::FromDims(final_dims);
  if (!final_shape.ok()) return final_shape.status();
  spec.final_shape = *std::move(final_shape);
  spec.begin = std::move(dense.begin);
  spec.end = std::move(dense.end);
  spec.strides = std::move(dense.strides);
  return spec;
}

}  // namespace array_kernels
}  // namespace graphrun
