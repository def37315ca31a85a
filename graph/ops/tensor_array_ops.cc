// TensorArray ops, version 3 (TensorFlow's core/ops/data_flow_ops.cc): the
// arrays v1 dynamic_rnn and tf.while_loop carry sequences in. TensorArrayV3
// creates an array and returns a DT_RESOURCE handle to it plus a float
// "flow" scalar; the other ops take the handle and a flow input, and those
// that change the array return a new flow, so data edges order the
// accesses. Names, inputs, outputs, attrs and shape functions are
// TensorFlow's (its static shape for the handle is [2], a leftover of the
// string handles of version 1; the kernels produce a scalar, as
// TensorFlow's do).
#include <vector>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status CheckHandle(const InferenceContext& c, int input) {
  GR_ASSIGN_OR_RETURN(PartialShape handle, c.WithRank(c.input(input), 1, "handle"));
  if (handle.dim(0) != -1 && handle.dim(0) != 2) {
    return absl::InvalidArgumentError(
        "Shape of the TensorArray handle must be [2], but is " +
        handle.DebugString());
  }
  return absl::OkStatus();
}

absl::Status CheckScalar(const InferenceContext& c, int input, const char* what) {
  return c.WithRank(c.input(input), 0, what).status();
}

absl::Status TensorArrayShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckScalar(*c, 0, "size"));
  c->set_output(0, PartialShape({2}));
  c->set_output(1, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status WriteShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 1, "index"));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 3, "flow_in"));
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ReadShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 1, "index"));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 2, "flow_in"));
  c->set_output(0, PartialShape());
  return absl::OkStatus();
}

// [len(indices)] + element_shape.
absl::Status GatherShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_ASSIGN_OR_RETURN(PartialShape indices, c->WithRank(c->input(1), 1, "indices"));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 2, "flow_in"));
  PartialShape element;
  GR_RETURN_IF_ERROR(c->GetAttr("element_shape", &element));
  if (element.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = {indices.dim(0)};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status ScatterShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, "indices").status());
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(2), 1, "value").status());
  GR_RETURN_IF_ERROR(CheckScalar(*c, 3, "flow_in"));
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ConcatShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_RETURN_IF_ERROR(CheckScalar(*c, 1, "flow_in"));
  c->set_output(0, PartialShape());
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

absl::Status SplitShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(1), 1, "value").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, "lengths").status());
  GR_RETURN_IF_ERROR(CheckScalar(*c, 3, "flow_in"));
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status SizeShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(CheckHandle(*c, 0));
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status CloseShape(InferenceContext* c) { return CheckHandle(*c, 0); }

}  // namespace

REGISTER_OP("TensorArrayV3")
    .Input("size: int32")
    .Output("handle: resource")
    .Output("flow: float")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .Attr("dynamic_size: bool = false")
    .Attr("clear_after_read: bool = true")
    .Attr("identical_element_shapes: bool = false")
    .Attr("tensor_array_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(TensorArrayShape);

REGISTER_OP("TensorArrayWriteV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(WriteShape);

REGISTER_OP("TensorArrayReadV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(ReadShape);

REGISTER_OP("TensorArrayGatherV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .SetIsStateful()
    .SetShapeFn(GatherShape);

REGISTER_OP("TensorArrayScatterV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(ScatterShape);

REGISTER_OP("TensorArrayConcatV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Output("lengths: int64")
    .Attr("dtype: type")
    .Attr("element_shape_except0: shape = { unknown_rank: true }")
    .SetIsStateful()
    .SetShapeFn(ConcatShape);

REGISTER_OP("TensorArraySplitV3")
    .Input("handle: resource")
    .Input("value: T")
    .Input("lengths: int64")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(SplitShape);

REGISTER_OP("TensorArraySizeV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(SizeShape);

REGISTER_OP("TensorArrayCloseV3")
    .Input("handle: resource")
    .SetIsStateful()
    .SetShapeFn(CloseShape);

}  // namespace graphrun
