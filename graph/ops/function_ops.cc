// _Arg and _Retval: how a step's feeds enter a graph and its fetches leave
// (TensorFlow's call-frame convention, used by its DirectSession).
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {
namespace {

REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

}  // namespace
}  // namespace graphrun
