// Assert (TensorFlow's core/ops/logging_ops.cc): fails the step with its
// data tensors printed when `condition` is false. Stateful, so no pass may
// drop or fold it; it has no outputs, graphs hang it on control edges.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {

REGISTER_OP("Assert")
    .Input("condition: bool")
    .Input("data: T")
    .Attr("T: list(type)")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

}  // namespace graphrun
