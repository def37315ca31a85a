// Scatter, partition and sparse-to-dense ops (TensorFlow's
// core/ops/array_ops.cc, data_flow_ops.cc, sparse_ops.cc, math_ops.cc):
// TensorScatterUpdate/Add/Sub/Max/Min, DynamicPartition, SparseToDense,
// UniqueWithCounts, Bincount, SparseReshape and SparseFillEmptyRows; and the
// string conversions StringToNumber
// and AsString (string_ops.cc, parsing_ops.cc). Names, inputs, outputs, attrs
// and defaults are TensorFlow's.
#include <cstdint>
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// DynamicPartition: each output [?] + data.shape[rank(partitions):].
absl::Status DynamicPartitionShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& parts = c->input(1);
  PartialShape out;
  if (!data.unknown_rank() && !parts.unknown_rank() && parts.rank() <= data.rank()) {
    std::vector<int64_t> dims = {-1};
    for (int i = parts.rank(); i < data.rank(); ++i) dims.push_back(data.dim(i));
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// SparseToDense: the shape output_shape holds, when it is a constant.
absl::Status SparseToDenseShape(InferenceContext* c) {
  absl::StatusOr<PartialShape> shape = op_shapes::ShapeFromShapeTensor(*c, 1);
  c->set_output(0, shape.ok() ? *shape : PartialShape());
  return absl::OkStatus();
}

// UniqueWithCounts: y [?], idx like x (a vector), count [?].
absl::Status UniqueWithCountsShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape x, op_shapes::InputWithRank(*c, "UniqueWithCounts", 0, 1));
  c->set_output(0, op_shapes::UnknownDims(1));
  c->set_output(1, x);
  c->set_output(2, op_shapes::UnknownDims(1));
  return absl::OkStatus();
}

// Bincount: [size] when size is a constant.
absl::Status BincountShape(InferenceContext* c) {
  int64_t size = -1;
  if (!c->ConstantScalar(1, &size)) size = -1;
  c->set_output(0, PartialShape({size}));
  return absl::OkStatus();
}

}  // namespace

#define GR_TENSOR_SCATTER_OP(NAME)                    \
  REGISTER_OP(NAME)                                   \
      .Input("tensor: T")                             \
      .Input("indices: Tindices")                     \
      .Input("updates: T")                            \
      .Output("output: T")                            \
      .Attr("T: type")                                \
      .Attr("Tindices: {int16, int32, int64, uint16}") \
      .Attr("bad_indices_policy: string = ''")        \
      .SetShapeFn(shape_fns::UnchangedShape)
GR_TENSOR_SCATTER_OP("TensorScatterUpdate");
GR_TENSOR_SCATTER_OP("TensorScatterAdd");
GR_TENSOR_SCATTER_OP("TensorScatterSub");
GR_TENSOR_SCATTER_OP("TensorScatterMax");
GR_TENSOR_SCATTER_OP("TensorScatterMin");
#undef GR_TENSOR_SCATTER_OP

REGISTER_OP("DynamicPartition")
    .Input("data: T")
    .Input("partitions: int32")
    .Output("outputs: num_partitions * T")
    .Attr("num_partitions: int")
    .Attr("T: type")
    .SetShapeFn(DynamicPartitionShape);

REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(SparseToDenseShape);

REGISTER_OP("UniqueWithCounts")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Output("count: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .SetShapeFn(UniqueWithCountsShape);

REGISTER_OP("Bincount")
    .Input("arr: int32")
    .Input("size: int32")
    .Input("weights: T")
    .Output("bins: T")
    .Attr("T: {int32, int64, float, double}")
    .SetShapeFn(BincountShape);

// SparseReshape: indices [N, rank] and shape [rank] to indices
// [N, new rank] and the new shape (-1 filled in).
REGISTER_OP("SparseReshape")
    .Input("input_indices: int64")
    .Input("input_shape: int64")
    .Input("new_shape: int64")
    .Output("output_indices: int64")
    .Output("output_shape: int64")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& idx = c->input(0);
      const PartialShape& target = c->input(2);
      c->set_output(0, PartialShape({idx.dim(0), target.dim(0)}));
      c->set_output(1, PartialShape({target.dim(0)}));
      return absl::OkStatus();
    });

REGISTER_OP("SparseFillEmptyRows")
    .Input("indices: int64")
    .Input("values: T")
    .Input("dense_shape: int64")
    .Input("default_value: T")
    .Output("output_indices: int64")
    .Output("output_values: T")
    .Output("empty_row_indicator: bool")
    .Output("reverse_index_map: int64")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& idx = c->input(0);
      c->set_output(0, PartialShape({-1, idx.dim(1)}));
      c->set_output(1, PartialShape({-1}));
      c->set_output(2, PartialShape({-1}));
      c->set_output(3, PartialShape({idx.dim(0)}));
      return absl::OkStatus();
    });

REGISTER_OP("StringToNumber")
    .Input("string_tensor: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
          "uint32, uint64, complex64, complex128, bool, string}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
