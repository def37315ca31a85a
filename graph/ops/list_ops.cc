// TensorList ops (TensorFlow's core/ops/list_ops.cc): a list handle is a
// DT_VARIANT scalar holding a TensorList (kernels/cpu/tensor_list.h); TF2
// while loops carry sequences in them. Names, inputs, outputs and attrs are
// TensorFlow's. TensorFlow's shape functions also read the element shape a
// handle carries from op to op ("handle data"); graphrun's InferenceContext
// has no handle data, so shapes here come from the element_shape inputs and
// the attrs alone, and are unknown where TensorFlow would use handle data.
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// The element shape that int input `input` describes, as TensorFlow's
// MakeShapeFromShapeTensorTreatScalarAsUnknownShape: a scalar (it must be
// -1) is an unknown shape, a vector lists dims with -1 for unknown.
absl::StatusOr<PartialShape> ElementShapeInput(const InferenceContext& c,
                                               int input) {
  if (c.input(input).rank() == 0) {
    int64_t value = -1;
    if (c.ConstantScalar(input, &value) && value != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input tensor must be rank 1, or if its rank 0 it must have value -1 "
          "(representing an unknown shape).  Saw value: ",
          value));
    }
    return PartialShape();
  }
  return op_shapes::ShapeFromShapeTensor(c, input);
}

// [leading] + element (unknown rank when element's rank is unknown).
PartialShape Prepend(int64_t leading, const PartialShape& element) {
  if (element.unknown_rank()) return PartialShape();
  std::vector<int64_t> dims = {leading};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  return PartialShape(std::move(dims));
}

// Ops whose only output is a new list handle (a scalar). The element shape
// input, when there is one, must be a valid shape.
absl::Status ListHandleShape(InferenceContext* c, int element_shape_input) {
  if (element_shape_input >= 0) {
    GR_RETURN_IF_ERROR(ElementShapeInput(*c, element_shape_input).status());
  }
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status EmptyTensorListShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "max_num_elements").status());
  return ListHandleShape(c, 0);
}

absl::Status ReserveShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "num_elements").status());
  return ListHandleShape(c, 0);
}

absl::Status FromTensorShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, "tensor").status());
  GR_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(*c, 1));
  const PartialShape& t = c->input(0);
  if (!t.unknown_rank()) {
    PartialShape rows(std::vector<int64_t>(t.dims().begin() + 1, t.dims().end()));
    GR_RETURN_IF_ERROR(InferenceContext::Merge(rows, element).status());
  }
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

// GetItem and PopBack: an element shaped as the element_shape input says.
absl::Status GetItemShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "index").status());
  GR_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(*c, 2));
  c->set_output(0, element);
  return absl::OkStatus();
}

absl::Status SetItemShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "index").status());
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status StackShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(*c, 1));
  int64_t num_elements = -1;
  GR_RETURN_IF_ERROR(c->GetAttr("num_elements", &num_elements));
  c->set_output(0, Prepend(num_elements < 0 ? -1 : num_elements, element));
  return absl::OkStatus();
}

absl::Status PopBackShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ElementShapeInput(*c, 1).status());
  c->set_output(0, PartialShape::Scalar());
  c->set_output(1, PartialShape());
  return absl::OkStatus();
}

absl::Status GatherShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(*c, 2));
  const PartialShape& indices = c->input(1);
  if (indices.unknown_rank() || element.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status ScatterShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, "tensor").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, "indices").status());
  return ListHandleShape(c, 2);
}

// Concat: [?] + element_shape[1:], and the lengths vector.
absl::Status ConcatShapeFrom(InferenceContext* c, const PartialShape& element) {
  if (element.unknown_rank()) {
    c->set_output(0, PartialShape());
  } else {
    if (element.rank() < 1) {
      return absl::InvalidArgumentError(
          "Concat requires elements to be at least vectors, found scalars "
          "instead.");
    }
    std::vector<int64_t> dims = element.dims();
    dims[0] = -1;
    c->set_output(0, PartialShape(std::move(dims)));
  }
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

absl::Status ConcatShape(InferenceContext* c) {
  PartialShape element;
  GR_RETURN_IF_ERROR(c->GetAttr("element_shape", &element));
  return ConcatShapeFrom(c, element);
}

absl::Status ConcatV2Shape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(*c, 1));
  return ConcatShapeFrom(c, element);
}

absl::Status SplitShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, "tensor").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, "lengths").status());
  return ListHandleShape(c, 1);
}

absl::Status ResizeShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "size").status());
  return ListHandleShape(c, -1);
}

// A shape vector of unknown length, or -1 for an unknown rank.
absl::Status ElementShapeShape(InferenceContext* c) {
  c->set_output(0, PartialShape());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("EmptyTensorList")
    .Input("element_shape: shape_type")
    .Input("max_num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(EmptyTensorListShape);

REGISTER_OP("TensorListReserve")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ReserveShape);

REGISTER_OP("TensorListFromTensor")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(FromTensorShape);

REGISTER_OP("TensorListLength")
    .Input("input_handle: variant")
    .Output("length: int32")
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("TensorListElementShape")
    .Input("input_handle: variant")
    .Output("element_shape: shape_type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ElementShapeShape);

REGISTER_OP("TensorListPushBack")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .SetShapeFn([](InferenceContext* c) { return ListHandleShape(c, -1); });

REGISTER_OP("TensorListPopBack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("output_handle: variant")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(PopBackShape);

REGISTER_OP("TensorListGetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("element_shape: int32")
    .Output("item: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(GetItemShape);

REGISTER_OP("TensorListSetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("item: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("resize_if_index_out_of_bounds: bool = false")
    .SetShapeFn(SetItemShape);

REGISTER_OP("TensorListStack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .Attr("num_elements: int = -1")
    .SetShapeFn(StackShape);

REGISTER_OP("TensorListGather")
    .Input("input_handle: variant")
    .Input("indices: int32")
    .Input("element_shape: int32")
    .Output("values: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(GatherShape);

REGISTER_OP("TensorListScatter")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ScatterShape);

REGISTER_OP("TensorListScatterV2")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ScatterShape);

REGISTER_OP("TensorListConcat")
    .Input("input_handle: variant")
    .Output("tensor: element_dtype")
    .Output("lengths: int64")
    .Attr("element_dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .SetShapeFn(ConcatShape);

REGISTER_OP("TensorListConcatV2")
    .Input("input_handle: variant")
    .Input("element_shape: shape_type")
    .Input("leading_dims: int64")
    .Output("tensor: element_dtype")
    .Output("lengths: int64")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ConcatV2Shape);

REGISTER_OP("TensorListSplit")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Input("lengths: int64")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(SplitShape);

REGISTER_OP("TensorListResize")
    .Input("input_handle: variant")
    .Input("size: int32")
    .Output("output_handle: variant")
    .SetShapeFn(ResizeShape);

}  // namespace graphrun
