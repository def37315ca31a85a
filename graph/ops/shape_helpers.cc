#include "graph/ops/shape_helpers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace op_shapes {

std::string InputShapesString(const InferenceContext& c) {
  std::vector<std::string> parts;
  for (int i = 0; i < c.num_inputs(); ++i) {
    parts.push_back(c.input(i).DebugString());
  }
  return absl::StrJoin(parts, ", ");
}

absl::Status ShapeError(const InferenceContext& c, absl::string_view op,
                        absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(
      message, " for ", op, " with input shapes ", InputShapesString(c)));
}

absl::StatusOr<int64_t> MergeDims(const InferenceContext& c,
                                  absl::string_view op, int64_t a, int64_t b) {
  if (a < 0) return b < 0 ? -1 : b;
  if (b < 0 || a == b) return a;
  return ShapeError(c, op, absl::StrCat("Dimensions must be equal, but are ",
                                        a, " and ", b));
}

absl::StatusOr<PartialShape> InputWithRank(const InferenceContext& c,
                                           absl::string_view op, int input,
                                           int rank) {
  const PartialShape& s = c.input(input);
  if (s.unknown_rank()) return UnknownDims(rank);
  if (s.rank() != rank) {
    return ShapeError(c, op, absl::StrCat("Shape must be rank ", rank,
                                          " but is rank ", s.rank()));
  }
  return s;
}

absl::StatusOr<PartialShape> InputWithRankAtLeast(const InferenceContext& c,
                                                  absl::string_view op,
                                                  int input, int rank) {
  const PartialShape& s = c.input(input);
  if (!s.unknown_rank() && s.rank() < rank) {
    return ShapeError(c, op, absl::StrCat("Shape must be at least rank ", rank,
                                          " but is rank ", s.rank()));
  }
  return s;
}

absl::StatusOr<PartialShape> BroadcastShapes(const InferenceContext& c,
                                             absl::string_view op,
                                             const PartialShape& a,
                                             const PartialShape& b) {
  absl::StatusOr<PartialShape> out = InferenceContext::Broadcast(a, b);
  if (!out.ok()) return ShapeError(c, op, out.status().message());
  return out;
}

ShapeFn BroadcastBinaryShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape out,
                        BroadcastShapes(*c, op, c->input(0), c->input(1)));
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  };
}

absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank,
                                  absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for a tensor of rank ",
                     rank, " (must be in [", -rank, ", ", rank, "))"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<int64_t> MultiplyDims(int64_t a, int64_t b,
                                     absl::string_view what) {
  if (a < 0 || b < 0) return -1;
  if (b != 0 && a > kMaxElements / b) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is too large: ", a, " * ", b, " is more than 2^48"));
  }
  return a * b;
}

absl::StatusOr<int64_t> AddDims(int64_t a, int64_t b, absl::string_view what) {
  if (a < 0 || b < 0) return -1;
  if (a > kMaxElements - b) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is too large: ", a, " + ", b, " is more than 2^48"));
  }
  return a + b;
}

absl::Status CheckShapeSize(const PartialShape& shape, absl::string_view what) {
  if (shape.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> known;
  for (int64_t d : shape.dims()) {
    if (d > 0) known.push_back(d);
  }
  if (NonZeroDimProduct(known) < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", shape.DebugString(),
        " is too large (more than 2^48 elements)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> RankFromLength(int64_t length, absl::string_view what) {
  if (length < 0) return -1;
  if (length > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has ", length, " entries: rank out of range (at most ",
                     kMaxRank, ")"));
  }
  return static_cast<int>(length);
}

std::optional<std::vector<int64_t>> ConstantInts(const InferenceContext& c,
                                                 int input) {
  std::vector<int64_t> values;
  if (!c.ConstantVector(input, &values)) return std::nullopt;
  return values;
}

absl::StatusOr<PartialShape> ShapeFromShapeTensor(const InferenceContext& c,
                                                  int input) {
  const PartialShape& s = c.input(input);
  if (!s.unknown_rank() && s.rank() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Shape must be rank 1 but is rank ", s.rank(), " (shape ",
        s.DebugString(), ") for a shape tensor"));
  }
  if (std::optional<std::vector<int64_t>> v = ConstantInts(c, input)) {
    for (size_t i = 0; i < v->size(); ++i) {
      if ((*v)[i] < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Dimension ", i, " of the shape tensor must be >= -1, "
                         "but is ", (*v)[i]));
      }
    }
    GR_RETURN_IF_ERROR(
        RankFromLength(static_cast<int64_t>(v->size()), "the shape tensor")
            .status());
    PartialShape shape(*std::move(v));
    GR_RETURN_IF_ERROR(CheckShapeSize(shape, "shape"));
    return shape;
  }
  if (!s.unknown_rank() && s.rank() == 1) {
    GR_ASSIGN_OR_RETURN(int rank, RankFromLength(s.dim(0), "the shape tensor"));
    return UnknownDims(rank);
  }
  return PartialShape();
}

PartialShape UnknownDimsLike(const PartialShape& shape) {
  return UnknownDims(shape.rank());
}

PartialShape UnknownDims(int rank) {
  if (rank < 0) return PartialShape();
  return PartialShape(std::vector<int64_t>(rank, -1));
}

absl::StatusOr<Padding> ParsePadding(absl::string_view padding) {
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return absl::InvalidArgumentError(
      absl::StrCat("Invalid padding '", padding,
                   "': must be 'SAME', 'VALID' or 'EXPLICIT'"));
}

absl::StatusOr<int64_t> WindowedOutputSize(int64_t input, int64_t window,
                                           int64_t dilation, int64_t stride,
                                           Padding padding, int64_t pad_before,
                                           int64_t pad_after) {
  if (stride <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Stride must be > 0, but got ", stride));
  }
  if (dilation < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dilation rate must be >= 1, but got ", dilation));
  }
  if (input < 0) return -1;
  // Attrs may hold any int64: each step below is kept in range.
  if (padding == Padding::kSame) {
    return input / stride + (input % stride != 0 ? 1 : 0);
  }
  if (window < 0) return -1;
  if (window == 0) {
    return absl::InvalidArgumentError("Window size must be > 0, but got 0");
  }
  if (pad_before < 0 || pad_after < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Padding must be >= 0, but got ", pad_before, " and ", pad_after));
  }
  GR_ASSIGN_OR_RETURN(const int64_t dilated,
                      MultiplyDims(window - 1, dilation, "the dilated window"));
  const int64_t effective = dilated + 1;
  int64_t padded = input;
  if (padding == Padding::kExplicit) {
    GR_ASSIGN_OR_RETURN(padded, AddDims(padded, pad_before, "the padded input"));
    GR_ASSIGN_OR_RETURN(padded, AddDims(padded, pad_after, "the padded input"));
  }
  // (padded - effective + stride) / stride, TensorFlow's formula, without
  // overflowing for a huge stride.
  const int64_t diff = padded - effective;
  const int64_t out = diff >= 0 ? diff / stride + 1 : (diff + stride) / stride;
  if (out < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Computed output size would be negative: ", out,
        " [input_size: ", input, ", effective_filter_size: ", effective,
        ", stride: ", stride, "]"));
  }
  return out;
}

absl::StatusOr<ImageLayout> LayoutFor(absl::string_view data_format) {
  ImageLayout l;
  if (data_format == "NHWC") {
    l = {4, 0, 3, {1, 2}};
  } else if (data_format == "NCHW") {
    l = {4, 0, 1, {2, 3}};
  } else if (data_format == "NDHWC") {
    l = {5, 0, 4, {1, 2, 3}};
  } else if (data_format == "NCDHW") {
    l = {5, 0, 1, {2, 3, 4}};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid data format '", data_format, "'"));
  }
  return l;
}

absl::Status ReductionShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  bool keep_dims = false;
  GR_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  std::optional<std::vector<int64_t>> axes = ConstantInts(*c, 1);
  if (!axes.has_value() || in.unknown_rank()) {
    c->set_output(0, keep_dims ? UnknownDimsLike(in) : PartialShape());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction dimension ", axis, " for input with ",
                       rank, " dimensions"));
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      dims.push_back(in.dim(i));
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace op_shapes
}  // namespace graphrun
