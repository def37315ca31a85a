// Shape functions for the slicing and gathering array ops: Slice,
// StridedSlice, Gather, GatherV2 (declared in array_shapes.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/array_shapes.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace array_shapes {

using op_shapes::CanonicalAxis;
using op_shapes::ConstantInts;
using op_shapes::ShapeError;
using op_shapes::UnknownDims;

absl::Status SliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::optional<std::vector<int64_t>> begin = ConstantInts(*c, 1);
  std::optional<std::vector<int64_t>> size = ConstantInts(*c, 2);
  int rank = in.rank();
  for (int i : {1, 2}) {
    const PartialShape& s = c->input(i);
    if (!s.unknown_rank() && s.rank() != 1) {
      return ShapeError(*c, "Slice", "begin and size must be vectors");
    }
    if (rank < 0 && !s.unknown_rank()) {
      GR_ASSIGN_OR_RETURN(rank, op_shapes::RankFromLength(
                                    s.dim(0), i == 1 ? "begin" : "size"));
    }
  }
  if (begin && size && begin->size() != size->size()) {
    return ShapeError(*c, "Slice", "begin and size must have the same length");
  }
  for (const auto* v : {&begin, &size}) {
    if (v->has_value() && rank >= 0 &&
        static_cast<int>((*v)->size()) != rank) {
      return ShapeError(
          *c, "Slice",
          absl::StrCat("Length of begin and size must equal the rank of the "
                       "input: ", (*v)->size(), " vs. ", rank));
    }
  }
  if (!size.has_value()) {
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  std::vector<int64_t> dims(size->size(), -1);
  for (size_t i = 0; i < size->size(); ++i) {
    const int64_t s = (*size)[i];
    const int64_t b = begin ? (*begin)[i] : -1;
    const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
    if (begin && b < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: begin[", i, "] must be >= 0, but is ", b));
    }
    if (s < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: size[", i, "] must be >= -1, but is ", s));
    }
    if (s == -1) {
      if (begin && d >= 0) {
        if (b > d) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Slice: begin[", i, "] = ", b, " is past dimension ", d));
        }
        dims[i] = d - b;
      }
      continue;
    }
    // b + s > d, written so that huge b and s cannot overflow.
    if (begin && d >= 0 && (b > d || s > d - b)) {
      return ShapeError(
          *c, "Slice",
          absl::StrCat("Expected begin[", i, "] + size[", i, "] <= ", d,
                       ", but got ", b, " + ", s));
    }
    dims[i] = s;
  }
  PartialShape out(std::move(dims));
  GR_RETURN_IF_ERROR(op_shapes::CheckShapeSize(out, "Slice output shape"));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

namespace {

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// Output size of one strided dim of known size `d`, as TensorFlow's
// ValidateStridedSliceOp computes it for a non-shrinking dim.
int64_t StridedDimSize(int64_t d, int64_t begin, int64_t end, int64_t stride,
                       bool begin_masked, bool end_masked) {
  const int64_t lower = stride > 0 ? 0 : -1;
  const int64_t upper = stride > 0 ? d : d - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_begin) {
    if (masked) return (stride > 0) == is_begin ? lower : upper;
    if (x < 0) x += d;
    return std::min(std::max(x, lower), upper);
  };
  const int64_t b = canonical(begin, begin_masked, true);
  const int64_t e = canonical(end, end_masked, false);
  const int64_t interval = e - b;
  if (interval == 0 || (interval < 0) != (stride < 0)) return 0;
  return interval / stride + (interval % stride != 0 ? 1 : 0);
}

}  // namespace

absl::Status StridedSliceShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
          shrink_mask = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("begin_mask", &begin_mask));
  GR_RETURN_IF_ERROR(c->GetAttr("end_mask", &end_mask));
  GR_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &ellipsis_mask));
  GR_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &new_axis_mask));
  GR_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &shrink_mask));
  std::optional<std::vector<int64_t>> begin = ConstantInts(*c, 1);
  std::optional<std::vector<int64_t>> end = ConstantInts(*c, 2);
  std::optional<std::vector<int64_t>> strides = ConstantInts(*c, 3);
  if (begin && end && strides &&
      (begin->size() != end->size() || begin->size() != strides->size())) {
    return ShapeError(*c, "StridedSlice",
                      "Expected begin, end, and strides to be 1D equal size "
                      "tensors");
  }
  if (strides) {
    for (size_t i = 0; i < strides->size(); ++i) {
      if ((*strides)[i] == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("strides[", i, "] must be non-zero"));
      }
    }
  }
  // Best effort: only the all-constant case with a known input rank.
  if (!begin || !end || !strides || in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int n = static_cast<int>(begin->size());
  const int rank = in.rank();
  // Spec entries that consume an input dim (not ellipsis, not new axis).
  int consumed = 0;
  bool has_ellipsis = false;
  for (int i = 0; i < n; ++i) {
    if (Bit(ellipsis_mask, i)) {
      if (has_ellipsis) {
        return absl::InvalidArgumentError(
            "Multiple ellipses in slice spec not allowed");
      }
      has_ellipsis = true;
    } else if (!Bit(new_axis_mask, i)) {
      ++consumed;
    }
  }
  if (consumed > rank) {
    return ShapeError(
        *c, "StridedSlice",
        absl::StrCat("Index out of range using input dim ", rank,
                     "; input has only ", rank, " dims"));
  }
  std::vector<int64_t> dims;
  int in_dim = 0;
  for (int i = 0; i < n; ++i) {
    if (Bit(ellipsis_mask, i)) {
      for (int k = 0; k < rank - consumed; ++k) dims.push_back(in.dim(in_dim++));
      continue;
    }
    if (Bit(new_axis_mask, i)) {
      dims.push_back(1);
      continue;
    }
    const int64_t d = in.dim(in_dim);
    const int64_t b = (*begin)[i], e = (*end)[i], s = (*strides)[i];
    if (Bit(shrink_mask, i)) {
      if (d >= 0 && (b < -d || b >= d)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "slice index ", b, " of dimension ", in_dim, " out of bounds."));
      }
    } else if (d < 0) {
      dims.push_back(-1);
    } else {
      dims.push_back(StridedDimSize(d, b, e, s, Bit(begin_mask, i),
                                    Bit(end_mask, i)));
    }
    ++in_dim;
  }
  // No ellipsis: the remaining input dims are kept whole.
  while (in_dim < rank) dims.push_back(in.dim(in_dim++));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status GatherShape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(params, 1, "params").status());
  if (params.unknown_rank() || indices.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.end(), params.dims().begin() + 1, params.dims().end());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status GatherV2Shape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(params, 1, "params").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "axis").status());
  int64_t batch_dims = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  if (params.unknown_rank() || indices.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int prank = params.rank(), irank = indices.rank();
  if (batch_dims < -irank || batch_dims > irank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims (", batch_dims, ") must be in range [", -irank, ", ",
        irank, "]"));
  }
  if (batch_dims < 0) batch_dims += irank;
  if (batch_dims >= prank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims (", batch_dims, ") must be less than rank(params) (",
        prank, ")"));
  }
  int64_t axis_value = 0;
  if (!c->ConstantScalar(2, &axis_value)) {
    c->set_output(0, UnknownDims(prank + irank - 1 - batch_dims));
    return absl::OkStatus();
  }
  GR_ASSIGN_OR_RETURN(int axis, CanonicalAxis(axis_value, prank, "axis"));
  if (batch_dims > axis) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims (", batch_dims, ") must be less than or equal to axis (",
        axis, ")"));
  }
  std::vector<int64_t> dims(params.dims().begin(),
                            params.dims().begin() + axis);
  for (int i = 0; i < batch_dims; ++i) {
    GR_ASSIGN_OR_RETURN(dims[i], op_shapes::MergeDims(*c, "GatherV2", dims[i],
                                                      indices.dim(i)));
  }
  dims.insert(dims.end(), indices.dims().begin() + batch_dims,
              indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1,
              params.dims().end());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace graphrun
