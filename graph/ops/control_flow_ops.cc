// v1 control flow (TensorFlow's core/ops/control_flow_ops.cc): Switch and
// Merge route a value or its deadness; Enter, Exit and NextIteration move
// values into, out of and around a while-loop frame; LoopCond marks a
// loop's predicate; ControlTrigger runs even when its inputs are dead. The
// Ref* variants take and give reference-typed values. The executor gives
// these ops their meaning (runtime/executor.cc); graph/control_flow.h
// checks that the frames they open and close are well formed.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {
namespace {

// Both outputs of a Switch carry the data input's shape; pred is a scalar.
absl::Status SwitchShape(InferenceContext* c) {
  auto pred = c->WithRank(c->input(1), 0, "pred");
  if (!pred.ok()) return pred.status();
  c->ForwardInput(0, 0);
  c->ForwardInput(0, 1);
  return absl::OkStatus();
}

// The shape every input agrees on, dim by dim (unknown where they differ);
// unknown rank if any input's rank is unknown or the ranks differ. An
// input that arrives over a loop's back edge is still unknown here.
absl::Status MergeShape(InferenceContext* c) {
  PartialShape out = c->input(0);
  for (int i = 1; i < c->num_inputs() && !out.unknown_rank(); ++i) {
    const PartialShape& in = c->input(i);
    if (in.unknown_rank() || in.rank() != out.rank()) {
      out = PartialShape();
      break;
    }
    std::vector<int64_t> dims = out.dims();
    for (int d = 0; d < out.rank(); ++d) {
      if (dims[d] != in.dim(d)) dims[d] = -1;
    }
    out = PartialShape(std::move(dims));
  }
  c->set_output(0, out);
  c->set_output(1, PartialShape::Scalar());
  return absl::OkStatus();
}

// A loop variable may change shape from one iteration to the next, so only
// a constant (loop-invariant) Enter keeps its input's shape.
absl::Status EnterShape(InferenceContext* c) {
  bool is_constant = false;
  absl::Status s = c->GetAttr("is_constant", &is_constant);
  if (!s.ok()) return s;
  if (is_constant) {
    c->ForwardInput(0, 0);
  } else {
    c->set_output(0, PartialShape());
  }
  return absl::OkStatus();
}

absl::Status LoopCondShape(InferenceContext* c) {
  auto in = c->WithRank(c->input(0), 0, "input");
  if (!in.ok()) return in.status();
  c->set_output(0, *in);
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Switch")
    .Input("data: T")
    .Input("pred: bool")
    .Output("output_false: T")
    .Output("output_true: T")
    .Attr("T: type")
    .SetShapeFn(SwitchShape);

REGISTER_OP("RefSwitch")
    .Input("data: Ref(T)")
    .Input("pred: bool")
    .Output("output_false: Ref(T)")
    .Output("output_true: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(SwitchShape);

REGISTER_OP("Merge")
    .Input("inputs: N * T")
    .Output("output: T")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape);

REGISTER_OP("RefMerge")
    .Input("inputs: Ref(N * T)")
    .Output("output: Ref(T)")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape);

REGISTER_OP("Enter")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(EnterShape);

REGISTER_OP("RefEnter")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(EnterShape);

REGISTER_OP("Exit")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("RefExit")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("NextIteration")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("RefNextIteration")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("LoopCond")
    .Input("input: bool")
    .Output("output: bool")
    .SetShapeFn(LoopCondShape);

REGISTER_OP("ControlTrigger").SetShapeFn(shape_fns::NoOutputs);

}  // namespace graphrun
