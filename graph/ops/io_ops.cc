// Checkpoint ops (TensorFlow's core/ops/io_ops.cc): SaveV2 writes tensors to
// a V2 checkpoint, RestoreV2 reads them back, as a graph's own Saver does.
// Names, inputs, attrs and shape functions are TensorFlow's.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status CheckNamesAndSlices(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, "prefix").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, "tensor_names").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, "shape_and_slices").status());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(CheckNamesAndSlices);

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(CheckNamesAndSlices(c));
      return shape_fns::UnknownShape(c);
    });

}  // namespace graphrun
