// Array ops of TensorFlow 1 era graphs and their relatives (TensorFlow's
// core/ops/array_ops.cc, math_ops.cc): Concat (the axis first), SplitV,
// BatchMatMul (equal batch dims), MatrixDiagPart (the main diagonal),
// MatrixDiagV2 and MatrixDiagPartV2, the MatrixSetDiag family, and
// ReverseSequence. Names, inputs, outputs, attrs and defaults are
// TensorFlow's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/array_shapes.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::CanonicalAxis;
using op_shapes::ConstantInts;
using op_shapes::ShapeError;
using op_shapes::UnknownDims;
using op_shapes::UnknownDimsLike;

// Concat: the values' rank, the axis dim summed when every value is known.
absl::Status ConcatShape(InferenceContext* c) {
  int rank = -1;
  for (int i = 1; i < c->num_inputs(); ++i) {
    if (!c->input(i).unknown_rank()) rank = c->input(i).rank();
  }
  std::optional<std::vector<int64_t>> axis = ConstantInts(*c, 0);
  if (rank < 0 || !axis.has_value() || axis->size() != 1) {
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  GR_ASSIGN_OR_RETURN(int a, CanonicalAxis((*axis)[0], rank, "Concat dimension"));
  std::vector<int64_t> dims(rank, -1);
  int64_t total = 0;
  for (int i = 1; i < c->num_inputs(); ++i) {
    const PartialShape& s = c->input(i);
    if (s.unknown_rank() || s.rank() != rank) {
      if (!s.unknown_rank()) {
        return ShapeError(*c, "Concat", "Ranks of all input tensors should match");
      }
      total = -1;
      continue;
    }
    for (int j = 0; j < rank; ++j) {
      if (j != a && dims[j] < 0) dims[j] = s.dim(j);
    }
    total = (total < 0 || s.dim(a) < 0) ? -1 : total + s.dim(a);
  }
  dims[a] = total;
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// SplitV: value's shape with the split dim set from size_splits (one entry
// may be -1, the rest of the dim) when the sizes and the axis are constant.
absl::Status SplitVShape(InferenceContext* c) {
  const PartialShape& value = c->input(0);
  const int n = c->num_outputs();
  std::optional<std::vector<int64_t>> sizes = ConstantInts(*c, 1);
  std::optional<std::vector<int64_t>> axis = ConstantInts(*c, 2);
  for (int i = 0; i < n; ++i) c->set_output(i, UnknownDimsLike(value));
  if (value.unknown_rank() || !sizes.has_value() || !axis.has_value() || axis->size() != 1) {
    return absl::OkStatus();
  }
  if (static_cast<int>(sizes->size()) != n) {
    return ShapeError(*c, "SplitV",
                      absl::StrCat("Length of size_splits should be equal to num_split: ",
                                   sizes->size(), " vs ", n));
  }
  GR_ASSIGN_OR_RETURN(int a, CanonicalAxis((*axis)[0], value.rank(), "Split dimension"));
  const int64_t dim = value.dim(a);
  int64_t known = 0, unknown = -1;
  for (int i = 0; i < n; ++i) {
    if ((*sizes)[i] == -1 && unknown < 0) {
      unknown = i;
    } else if ((*sizes)[i] < 0) {
      return ShapeError(*c, "SplitV", "size_splits must be non-negative but for one -1");
    } else {
      known += (*sizes)[i];
    }
  }
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> dims = value.dims();
    dims[a] = i == unknown ? (dim < 0 ? -1 : dim - known) : (*sizes)[i];
    c->set_output(i, PartialShape(std::move(dims)));
  }
  return absl::OkStatus();
}

// BatchMatMul: x [..., r, k] times y [..., k, c] (adjoints swap the last
// two dims): x's batch dims + [r, c].
absl::Status BatchMatMulShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape x, op_shapes::InputWithRankAtLeast(*c, "BatchMatMul", 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape y, op_shapes::InputWithRankAtLeast(*c, "BatchMatMul", 1, 2));
  bool adj_x = false, adj_y = false;
  GR_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  GR_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  if (x.unknown_rank() || y.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end() - 2);
  dims.push_back(x.dim(x.rank() - (adj_x ? 1 : 2)));
  dims.push_back(y.dim(y.rank() - (adj_y ? 2 : 1)));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// MatrixDiagPart: input [..., r, c] -> [..., min(r, c)].
absl::Status MatrixDiagPartShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape in,
                      op_shapes::InputWithRankAtLeast(*c, "MatrixDiagPart", 0, 2));
  if (in.unknown_rank()) return absl::OkStatus();
  const int64_t r = in.dim(in.rank() - 2), cols = in.dim(in.rank() - 1);
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end() - 2);
  dims.push_back(r < 0 || cols < 0 ? -1 : std::min(r, cols));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Concat")
    .Input("concat_dim: int32")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .SetShapeFn(ConcatShape);

REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int8, int32, int64} = DT_INT64")
    .SetShapeFn(SplitVShape);

REGISTER_OP("BatchMatMul")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .SetShapeFn(BatchMatMulShape);

REGISTER_OP("MatrixDiagPart")
    .Input("input: T")
    .Output("diagonal: T")
    .Attr("T: type")
    .SetShapeFn(MatrixDiagPartShape);

// MatrixDiagV3 and MatrixDiagPartV3 before their `align` attr: every
// diagonal packed to the left (LEFT_LEFT).
REGISTER_OP("MatrixDiagV2")
    .Input("diagonal: T")
    .Input("k: int32")
    .Input("num_rows: int32")
    .Input("num_cols: int32")
    .Input("padding_value: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(array_shapes::MatrixDiagV3Shape);

REGISTER_OP("MatrixDiagPartV2")
    .Input("input: T")
    .Input("k: int32")
    .Input("padding_value: T")
    .Output("diagonal: T")
    .Attr("T: type")
    .SetShapeFn(array_shapes::MatrixDiagPartV3Shape);

// MatrixSetDiag (the main diagonal), MatrixSetDiagV2 (LEFT_LEFT) and
// MatrixSetDiagV3: the input's shape.
REGISTER_OP("MatrixSetDiag")
    .Input("input: T")
    .Input("diagonal: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("MatrixSetDiagV2")
    .Input("input: T")
    .Input("diagonal: T")
    .Input("k: int32")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("MatrixSetDiagV3")
    .Input("input: T")
    .Input("diagonal: T")
    .Input("k: int32")
    .Output("output: T")
    .Attr("T: type")
    .Attr("align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("ReverseSequence")
    .Input("input: T")
    .Input("seq_lengths: Tlen")
    .Output("output: T")
    .Attr("seq_dim: int")
    .Attr("batch_dim: int = 0")
    .Attr("T: type")
    .Attr("Tlen: {int32, int64} = DT_INT64")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
