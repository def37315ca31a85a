// Optimizer updates (TensorFlow's core/ops/training_ops.cc): the Apply*
// forms update ref variables in place and pass the variable's ref on; the
// ResourceApply* forms update resource variables and have no outputs.
// Names, inputs, attrs and shape functions are TensorFlow's; all are
// stateful here, so no optimizer pass merges or prunes an update.
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

std::string NumberTypeAttr() { return absl::StrCat("T: {", op_shapes::kNumberTypes, "}"); }

// The variable's shape, merged with each same-shaped input's (accumulators
// and the gradient); `scalars` are the inputs that must be scalars.
ShapeFn ApplyShape(std::vector<int> same, std::vector<int> scalars, bool has_output) {
  return [same, scalars, has_output](InferenceContext* c) -> absl::Status {
    PartialShape shape = c->input(0);
    for (int i : same) {
      GR_ASSIGN_OR_RETURN(shape, InferenceContext::Merge(shape, c->input(i)));
    }
    for (int i : scalars) {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, "a hyperparameter").status());
    }
    if (has_output) c->set_output(0, shape);
    return absl::OkStatus();
  };
}

}  // namespace

REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .SetShapeFn(ApplyShape({2}, {1}, true));

REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("ApplyMomentum")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Output("out: Ref(T)")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(ApplyShape({1, 3}, {2, 4}, true));

REGISTER_OP("ResourceApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("ApplyAdam")
    .Input("var: Ref(T)")
    .Input("m: Ref(T)")
    .Input("v: Ref(T)")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(ApplyShape({1, 2, 9}, {3, 4, 5, 6, 7, 8}, true));

REGISTER_OP("ResourceApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr(NumberTypeAttr())
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

}  // namespace graphrun
