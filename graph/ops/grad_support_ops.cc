// Ops TensorFlow's gradients emit beside the forward ops' own (core/ops/
// data_flow_ops.cc and array_ops.cc): the stacks that carry each forward
// iteration's values to the backward loop (StackV2 made before the loop,
// StackPushV2 in the forward loop, StackPopV2 in the backward one, last in
// first out); ConcatOffset, which ConcatV2's gradient uses to cut its
// incoming gradient; DynamicStitch, which the gradients of reductions over
// axes known only at run time use to build the reduced shape; and
// StridedSliceGrad. Names, inputs, attrs and shape functions are
// TensorFlow's.
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

REGISTER_OP("StackV2")
    .Input("max_size: int32")
    .Output("handle: resource")
    .Attr("elem_type: type")
    .Attr("stack_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("StackPushV2")
    .Input("handle: resource")
    .Input("elem: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("swap_memory: bool = false")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    });

REGISTER_OP("StackPopV2")
    .Input("handle: resource")
    .Output("elem: elem_type")
    .Attr("elem_type: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("StackCloseV2")
    .Input("handle: resource")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

// Each output is a vector as long as the shapes: where that input starts in
// the concatenation.
REGISTER_OP("ConcatOffset")
    .Input("concat_dim: int32")
    .Input("shape: N * shape_type")
    .Output("offset: N * shape_type")
    .Attr("N: int >= 2")
    .Attr("shape_type: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, "concat_dim").status());
      for (int i = 1; i < c->num_inputs(); ++i) {
        GR_ASSIGN_OR_RETURN(PartialShape s, c->WithRank(c->input(i), 1, "shape"));
        c->set_output(i - 1, s);
      }
      return absl::OkStatus();
    });

// merged[indices[m][i, ...], ...] = data[m][i, ...], later inputs winning;
// ParallelDynamicStitch is the same op for indices that do not overlap.
#define GR_STITCH_OP(NAME)                \
  REGISTER_OP(NAME)                       \
      .Input("indices: N * int32")        \
      .Input("data: N * T")               \
      .Output("merged: T")                \
      .Attr("N : int >= 1")               \
      .Attr("T : type")                   \
      .SetShapeFn(shape_fns::UnknownShape)
GR_STITCH_OP("DynamicStitch");
GR_STITCH_OP("ParallelDynamicStitch");
#undef GR_STITCH_OP

// A zero tensor of `shape` with dy written where StridedSlice(shape, begin,
// end, strides) would have read it.
REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace graphrun
