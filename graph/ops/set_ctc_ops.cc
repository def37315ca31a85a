// Set operations along the last dimension and greedy CTC decoding
// (TensorFlow's core/ops/set_ops.cc and ctc_ops.cc): SetSize,
// DenseToDenseSetOperation, DenseToSparseSetOperation,
// SparseToSparseSetOperation and CTCGreedyDecoder. Names, inputs, outputs,
// attrs and defaults are TensorFlow's; so are the shape functions: a set
// operation's result is a SparseTensor [?, rank] / [?] / [rank].
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::InputWithRank;
using op_shapes::InputWithRankAtLeast;
using op_shapes::ShapeError;

constexpr char kSetTypes[] = "T: {int8, int16, int32, int64, uint8, uint16, string}";

// Checks the (indices [N, rank], values [N], shape [rank]) triple at inputs
// `first`..`first + 2` and returns the rank the shape vector holds (-1 when
// unknown).
absl::StatusOr<int64_t> SparseTripleRank(const InferenceContext& c, absl::string_view op,
                                         int first) {
  GR_ASSIGN_OR_RETURN(PartialShape indices, InputWithRank(c, op, first, 2));
  GR_ASSIGN_OR_RETURN(PartialShape values, InputWithRank(c, op, first + 1, 1));
  GR_ASSIGN_OR_RETURN(PartialShape shape, InputWithRank(c, op, first + 2, 1));
  if (indices.dim(0) >= 0 && values.dim(0) >= 0 && indices.dim(0) != values.dim(0)) {
    return ShapeError(c, op,
                      absl::StrCat("Number of elements in index (", indices.dim(0),
                                   ") and values (", values.dim(0), ") do not match."));
  }
  if (indices.dim(1) >= 0 && shape.dim(0) >= 0 && indices.dim(1) != shape.dim(0)) {
    return ShapeError(c, op,
                      absl::StrCat("Index rank (", indices.dim(1), ") and shape rank (",
                                   shape.dim(0), ") do not match."));
  }
  return shape.dim(0);
}

// The three outputs of a set operation whose result has `rank` dims (-1:
// unknown).
absl::Status SetSparseResult(InferenceContext* c, int64_t rank) {
  c->set_output(0, PartialShape({-1, rank}));
  c->set_output(1, PartialShape({-1}));
  c->set_output(2, PartialShape({rank}));
  return absl::OkStatus();
}

// A known rank `rank` must equal `want`.
absl::Status RankMustBe(const InferenceContext& c, absl::string_view op, int64_t rank,
                        int64_t want) {
  if (rank >= 0 && rank != want) {
    return ShapeError(c, op,
                      absl::StrCat("Dimension must be ", want, " but is ", rank));
  }
  return absl::OkStatus();
}

// DenseToDenseSetOperation: both ranks >= 2 and equal; all but the last
// dims must agree.
absl::Status DenseToDenseShape(InferenceContext* c) {
  constexpr absl::string_view kOp = "DenseToDenseSetOperation";
  GR_ASSIGN_OR_RETURN(PartialShape a, InputWithRankAtLeast(*c, kOp, 0, 2));
  if (a.unknown_rank()) {
    GR_ASSIGN_OR_RETURN(PartialShape b, InputWithRankAtLeast(*c, kOp, 1, 2));
    return SetSparseResult(c, b.rank());
  }
  GR_ASSIGN_OR_RETURN(PartialShape b, InputWithRank(*c, kOp, 1, a.rank()));
  for (int i = 0; i + 1 < a.rank(); ++i) {
    GR_RETURN_IF_ERROR(op_shapes::MergeDims(*c, kOp, a.dim(i), b.dim(i)).status());
  }
  return SetSparseResult(c, a.rank());
}

// DenseToSparseSetOperation: set1 of rank >= 2; set2's shape vector as long
// as that rank.
absl::Status DenseToSparseShape(InferenceContext* c) {
  constexpr absl::string_view kOp = "DenseToSparseSetOperation";
  GR_ASSIGN_OR_RETURN(int64_t sparse_rank, SparseTripleRank(*c, kOp, 1));
  GR_ASSIGN_OR_RETURN(PartialShape a, InputWithRankAtLeast(*c, kOp, 0, 2));
  if (!a.unknown_rank()) {
    GR_RETURN_IF_ERROR(RankMustBe(*c, kOp, sparse_rank, a.rank()));
    return SetSparseResult(c, a.rank());
  }
  return SetSparseResult(c, sparse_rank);
}

// SparseToSparseSetOperation: both shape vectors the same length, >= 2.
absl::Status SparseToSparseShape(InferenceContext* c) {
  constexpr absl::string_view kOp = "SparseToSparseSetOperation";
  GR_ASSIGN_OR_RETURN(int64_t rank1, SparseTripleRank(*c, kOp, 0));
  GR_ASSIGN_OR_RETURN(int64_t rank2, SparseTripleRank(*c, kOp, 3));
  if (rank1 >= 0) {
    if (rank1 < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input 0, expected rank >= 2, got ", rank1, "."));
    }
    GR_RETURN_IF_ERROR(RankMustBe(*c, kOp, rank2, rank1));
    return SetSparseResult(c, rank1);
  }
  if (rank2 >= 0 && rank2 < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input 1, expected rank >= 2, got ", rank2, "."));
  }
  return SetSparseResult(c, rank2);
}

// CTCGreedyDecoder: inputs [max_time, batch, classes], sequence_length
// [batch]; decoded [?, 2] / [?] / [2], log_probability [batch, 1].
absl::Status CtcGreedyDecoderShape(InferenceContext* c) {
  constexpr absl::string_view kOp = "CTCGreedyDecoder";
  GR_ASSIGN_OR_RETURN(PartialShape inputs, InputWithRank(*c, kOp, 0, 3));
  GR_ASSIGN_OR_RETURN(PartialShape lengths, InputWithRank(*c, kOp, 1, 1));
  GR_ASSIGN_OR_RETURN(int64_t batch,
                      op_shapes::MergeDims(*c, kOp, inputs.dim(1), lengths.dim(0)));
  c->set_output(0, PartialShape({-1, 2}));
  c->set_output(1, PartialShape({-1}));
  c->set_output(2, PartialShape({2}));
  c->set_output(3, PartialShape({batch, 1}));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("SetSize")
    .Input("set_indices: int64")
    .Input("set_values: T")
    .Input("set_shape: int64")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Output("size: int32")
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("DenseToDenseSetOperation")
    .Input("set1: T")
    .Input("set2: T")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .SetShapeFn(DenseToDenseShape);

REGISTER_OP("DenseToSparseSetOperation")
    .Input("set1: T")
    .Input("set2_indices: int64")
    .Input("set2_values: T")
    .Input("set2_shape: int64")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .SetShapeFn(DenseToSparseShape);

REGISTER_OP("SparseToSparseSetOperation")
    .Input("set1_indices: int64")
    .Input("set1_values: T")
    .Input("set1_shape: int64")
    .Input("set2_indices: int64")
    .Input("set2_values: T")
    .Input("set2_shape: int64")
    .Attr("set_operation: string")
    .Attr("validate_indices: bool = true")
    .Attr(kSetTypes)
    .Output("result_indices: int64")
    .Output("result_values: T")
    .Output("result_shape: int64")
    .SetShapeFn(SparseToSparseShape);

REGISTER_OP("CTCGreedyDecoder")
    .Input("inputs: T")
    .Input("sequence_length: int32")
    .Attr("merge_repeated: bool = false")
    .Attr("blank_index: int = -1")
    .Output("decoded_indices: int64")
    .Output("decoded_values: int64")
    .Output("decoded_shape: int64")
    .Output("log_probability: T")
    .Attr("T: {float, double} = DT_FLOAT")
    .SetShapeFn(CtcGreedyDecoderShape);

}  // namespace graphrun
