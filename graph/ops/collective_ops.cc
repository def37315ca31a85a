// TensorFlow's collective ops (collective_ops.cc there), with its inputs,
// attrs and defaults. An instance whose members the graph holds all is
// lowered to plain edges at import (graph/lower_collectives.h) and never
// reaches these definitions; the members of an instance spread over the
// graphs of several clients (between-graph) run as kernels that meet at
// run time (kernels/collective.h).
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// Gather: the members' inputs stacked along dimension 0, whose size only
// the meeting knows.
absl::Status GatherShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.unknown_rank() && in.rank() >= 1) {
    std::vector<int64_t> dims = in.dims();
    dims[0] = -1;
    c->set_output(0, PartialShape(dims));
  } else {
    c->set_output(0, PartialShape());
  }
  return absl::OkStatus();
}

// BcastRecvV2: the shape input's value.
absl::Status BcastRecvV2Shape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape out, op_shapes::ShapeFromShapeTensor(*c, 3));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// The v1 forms: the `shape` attr.
absl::Status ShapeAttrShape(InferenceContext* c) {
  PartialShape shape;
  GR_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("CollectiveReduceV2")
    .Input("input: T")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("ordering_token: Nordering_token * resource")
    .Output("data: T")
    .Attr("T: {bfloat16, float, half, double, int32, int64}")
    .Attr("merge_op: {'Min', 'Max', 'Mul', 'Add'}")
    .Attr("final_op: {'Id', 'Div'}")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .Attr("is_stateless: bool = false")
    .Attr("Nordering_token: int >= 0 = 0")
    .Attr("max_subdivs_per_device: int = -1")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("CollectiveGatherV2")
    .Input("input: T")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("ordering_token: Nordering_token * resource")
    .Output("data: T")
    .Attr("T: {float, half, double, int32, int64}")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .Attr("is_stateless: bool = false")
    .Attr("Nordering_token: int >= 0 = 0")
    .SetIsStateful()
    .SetShapeFn(GatherShape);

REGISTER_OP("CollectiveBcastSendV2")
    .Input("input: T")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("CollectiveBcastRecvV2")
    .Input("group_size: int32")
    .Input("group_key: int32")
    .Input("instance_key: int32")
    .Input("shape: Tshape")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(BcastRecvV2Shape);

REGISTER_OP("CollectiveReduce")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {bfloat16, float, half, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("merge_op: {'Min', 'Max', 'Mul', 'Add'}")
    .Attr("final_op: {'Id', 'Div'}")
    .Attr("subdiv_offsets: list(int)")
    .Attr("wait_for: list(int) = []")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("CollectiveGather")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, half, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(GatherShape);

REGISTER_OP("CollectiveBcastSend")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("CollectiveBcastRecv")
    .Output("data: T")
    .Attr("T: {bool, float, half, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("communication_hint: string = 'auto'")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .SetShapeFn(ShapeAttrShape);

}  // namespace graphrun
