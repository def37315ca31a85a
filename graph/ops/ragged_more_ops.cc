// Ragged tensor ops beyond the text ones: RaggedRange, RaggedGather,
// RaggedTensorToSparse and the variant encoding pair RaggedTensorToVariant /
// RaggedTensorFromVariant (TensorFlow's core/ops/ragged_math_ops.cc,
// ragged_array_ops.cc, ragged_conversion_ops.cc). A ragged tensor is its
// row splits, outermost first (each a vector), and its dense values. Names,
// inputs, outputs, attrs and defaults are TensorFlow's.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// InvalidArgument when `shape` has a known rank above `rank`.
absl::Status RankAtMost(const PartialShape& shape, int rank, const char* what) {
  if (shape.rank() > rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Shape must be at most rank ", rank, " but is rank ", shape.rank(), " for ", what));
  }
  return absl::OkStatus();
}

// Checks that inputs [0, count) (nested splits) are vectors.
absl::Status SplitsAreVectors(InferenceContext* c, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    GR_RETURN_IF_ERROR(c->WithRank(c->input(static_cast<int>(i)), 1, "row splits").status());
  }
  return absl::OkStatus();
}

// starts, limits and deltas: scalars or vectors of one length (the rows).
absl::Status RaggedRangeShape(InferenceContext* c) {
  int64_t rows = -1;
  bool all_scalars = true;
  for (int i = 0; i < 3; ++i) {
    const PartialShape& in = c->input(i);
    GR_RETURN_IF_ERROR(RankAtMost(in, 1, "RaggedRange's starts, limits and deltas"));
    if (in.rank() != 0) all_scalars = false;
    if (in.rank() == 1) {
      GR_ASSIGN_OR_RETURN(rows, InferenceContext::MergeDim(rows, in.dim(0)));
    }
  }
  const int64_t splits = rows >= 0 ? rows + 1 : (all_scalars ? 2 : -1);
  c->set_output(0, PartialShape({splits}));
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

// Outputs: OUTPUT_RAGGED_RANK splits vectors, then values of the params'
// value shape with an unknown first dim. indices has rank
// OUTPUT_RAGGED_RANK - PARAMS_RAGGED_RANK + 1.
absl::Status RaggedGatherShape(InferenceContext* c) {
  int64_t params_rank = 0, output_rank = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("PARAMS_RAGGED_RANK", &params_rank));
  GR_RETURN_IF_ERROR(c->GetAttr("OUTPUT_RAGGED_RANK", &output_rank));
  const int64_t indices_rank = output_rank - params_rank + 1;
  if (indices_rank < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OUTPUT_RAGGED_RANK (", output_rank, ") must be at least PARAMS_RAGGED_RANK - 1 (",
        params_rank - 1, ")"));
  }
  const int values = static_cast<int>(params_rank);
  GR_RETURN_IF_ERROR(c->WithRank(c->input(values + 1), static_cast<int>(indices_rank),
                                 "indices").status());
  GR_RETURN_IF_ERROR(SplitsAreVectors(c, params_rank));
  GR_ASSIGN_OR_RETURN(PartialShape dense,
                      c->WithRankAtLeast(c->input(values), 1, "params_dense_values"));
  for (int64_t i = 0; i < output_rank; ++i) c->set_output(static_cast<int>(i), PartialShape({-1}));
  PartialShape out;  // unknown rank unless the params' values rank is known
  if (!dense.unknown_rank()) {
    std::vector<int64_t> dims = dense.dims();
    dims[0] = -1;
    out = PartialShape(std::move(dims));
  }
  c->set_output(static_cast<int>(output_rank), out);
  return absl::OkStatus();
}

// indices [values, rank], values [values], dense_shape [rank], where rank is
// RAGGED_RANK + the values' rank and `values` their element count.
absl::Status RaggedTensorToSparseShape(InferenceContext* c) {
  int64_t ragged_rank = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("RAGGED_RANK", &ragged_rank));
  if (ragged_rank < 1) return absl::InvalidArgumentError("Requires RAGGED_RANK>0");
  GR_ASSIGN_OR_RETURN(PartialShape dense,
                      c->WithRankAtLeast(c->input(static_cast<int>(ragged_rank)), 1,
                                         "rt_dense_values"));
  GR_RETURN_IF_ERROR(SplitsAreVectors(c, ragged_rank));
  const int64_t rank = dense.unknown_rank() ? -1 : dense.rank() + ragged_rank;
  const int64_t n = dense.num_elements();
  c->set_output(0, PartialShape({n, rank}));
  c->set_output(1, PartialShape({n}));
  c->set_output(2, PartialShape({rank}));
  return absl::OkStatus();
}

// A scalar, or with batched_input one element per row: [splits[0] - 1].
absl::Status RaggedTensorToVariantShape(InferenceContext* c) {
  int64_t ragged_rank = 0;
  bool batched = false;
  GR_RETURN_IF_ERROR(c->GetAttr("RAGGED_RANK", &ragged_rank));
  GR_RETURN_IF_ERROR(c->GetAttr("batched_input", &batched));
  GR_RETURN_IF_ERROR(
      c->WithRankAtLeast(c->input(static_cast<int>(ragged_rank)), 1, "rt_dense_values").status());
  GR_RETURN_IF_ERROR(SplitsAreVectors(c, ragged_rank));
  if (batched && ragged_rank == 0) {
    return absl::InvalidArgumentError(
        "ragged_rank=0 is not currently supported when batched_input=true.");
  }
  if (batched) {
    const int64_t splits = c->input(0).dim(0);
    c->set_output(0, PartialShape({splits < 0 ? -1 : splits - 1}));
  } else {
    c->set_output(0, PartialShape::Scalar());
  }
  return absl::OkStatus();
}

// The encoded tensor has rank output_ragged_rank - input_ragged_rank (when
// input_ragged_rank is given); output_ragged_rank splits vectors, then
// values of unknown shape.
absl::Status RaggedTensorFromVariantShape(InferenceContext* c) {
  int64_t input_rank = 0, output_rank = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("input_ragged_rank", &input_rank));
  GR_RETURN_IF_ERROR(c->GetAttr("output_ragged_rank", &output_rank));
  if (!c->input(0).unknown_rank() && input_rank >= 0) {
    if (output_rank - input_rank < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output_ragged_rank (", output_rank, ") is below input_ragged_rank (", input_rank, ")"));
    }
    GR_RETURN_IF_ERROR(c->WithRank(c->input(0), static_cast<int>(output_rank - input_rank),
                                   "encoded_ragged").status());
  }
  for (int64_t i = 0; i < output_rank; ++i) c->set_output(static_cast<int>(i), PartialShape({-1}));
  c->set_output(static_cast<int>(output_rank), PartialShape());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("RaggedRange")
    .Input("starts: T")
    .Input("limits: T")
    .Input("deltas: T")
    .Output("rt_nested_splits: Tsplits")
    .Output("rt_dense_values: T")
    .Attr("T: {bfloat16, float, double, int32, int64} = DT_INT32")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .SetShapeFn(RaggedRangeShape);

REGISTER_OP("RaggedGather")
    .Input("params_nested_splits: PARAMS_RAGGED_RANK * Tsplits")
    .Input("params_dense_values: Tvalues")
    .Input("indices: Tindices")
    .Output("output_nested_splits: OUTPUT_RAGGED_RANK * Tsplits")
    .Output("output_dense_values: Tvalues")
    .Attr("Tvalues: type")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Attr("PARAMS_RAGGED_RANK: int >= 1")
    .Attr("OUTPUT_RAGGED_RANK: int >= 0")
    .SetShapeFn(RaggedGatherShape);

REGISTER_OP("RaggedTensorToSparse")
    .Input("rt_nested_splits: RAGGED_RANK * Tsplits")
    .Input("rt_dense_values: T")
    .Output("sparse_indices: int64")
    .Output("sparse_values: T")
    .Output("sparse_dense_shape: int64")
    .Attr("RAGGED_RANK: int >= 1")
    .Attr("T: type")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .SetShapeFn(RaggedTensorToSparseShape);

REGISTER_OP("RaggedTensorToVariant")
    .Input("rt_nested_splits: RAGGED_RANK * Tsplits")
    .Input("rt_dense_values: Tvalues")
    .Output("encoded_ragged: variant")
    .Attr("RAGGED_RANK: int >= 0")
    .Attr("Tvalues: type")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Attr("batched_input: bool")
    .SetShapeFn(RaggedTensorToVariantShape);

REGISTER_OP("RaggedTensorFromVariant")
    .Input("encoded_ragged: variant")
    .Output("output_nested_splits: output_ragged_rank * Tsplits")
    .Output("output_dense_values: Tvalues")
    .Attr("input_ragged_rank: int >= -1")
    .Attr("output_ragged_rank: int >= 0")
    .Attr("Tvalues: type")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .SetShapeFn(RaggedTensorFromVariantShape);

}  // namespace graphrun
