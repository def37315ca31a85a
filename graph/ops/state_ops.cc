// Variables (TensorFlow's core/ops/state_ops.cc and resource_variable_ops.cc):
// ref variables (VariableV2, whose Ref(dtype) output Assign, AssignAdd and
// the Apply* optimizers update in place) and resource variables
// (VarHandleOp's DT_RESOURCE handle, read and written by the *VariableOp
// ops). Names, inputs, outputs, attrs and shape functions are TensorFlow's;
// every one is stateful here, so no optimizer pass merges, folds or prunes a
// read or an update.
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {


absl::Status ShapeAttr(InferenceContext* c) {
  PartialShape shape;
  GR_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

// Assign: the value's shape, merged with the variable's when validated.
absl::Status AssignShape(InferenceContext* c) {
  bool validate = true;
  GR_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate));
  if (!validate) {
    c->set_output(0, c->input(1));
    return absl::OkStatus();
  }
  GR_ASSIGN_OR_RETURN(PartialShape merged, InferenceContext::Merge(c->input(0), c->input(1)));
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

// AssignAdd/AssignSub: the variable's and the value's shapes agree.
absl::Status UpdateShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape merged, InferenceContext::Merge(c->input(0), c->input(1)));
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

// A resource handle is a scalar.
absl::Status ScalarHandle(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("VariableV2")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(ShapeAttr);

REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetIsStateful()
    .SetShapeFn(AssignShape);

REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr(absl::StrCat("T: {", op_shapes::kNumberTypes, "}"))
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .SetShapeFn(UpdateShape);

REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr(absl::StrCat("T: {", op_shapes::kNumberTypes, "}"))
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .SetShapeFn(UpdateShape);

REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("debug_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetIsStateful()
    .SetShapeFn(ScalarHandle);

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

// Turns off a resource variable's copy-on-read mode (its saves read it
// without a copy); TensorFlow 2's save functions run it on each variable.
REGISTER_OP("DisableCopyOnRead")
    .Input("resource: resource")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("VariableShape")
    .Input("input: resource")
    .Output("output: out_type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Attr("batch_dims: int = 0")
    .Attr("validate_indices: bool = true")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("Tindices: {int32,int64}")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("ResourceScatterAdd")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Input("updates: dtype")
    .Attr(absl::StrCat("dtype: {", op_shapes::kNumberTypes, "}"))
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("ResourceScatterUpdate")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Input("updates: dtype")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

}  // namespace graphrun
