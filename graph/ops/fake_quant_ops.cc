// Fake quantization (TensorFlow's core/ops/array_ops.cc):
// FakeQuantWithMinMaxArgs (range in attrs), FakeQuantWithMinMaxVars (range
// as scalar inputs) and FakeQuantWithMinMaxVarsPerChannel (one range per
// last-dim channel), as quantization-aware training leaves them in frozen
// graphs. Names, inputs, outputs, attrs and defaults are TensorFlow's.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {

REGISTER_OP("FakeQuantWithMinMaxArgs")
    .Input("inputs: float")
    .Output("outputs: float")
    .Attr("min: float = -6.0")
    .Attr("max: float = 6.0")
    .Attr("num_bits: int = 8")
    .Attr("narrow_range: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape);

// Vars: min and max scalars; PerChannel: vectors over the last dim.
#define GR_FAKE_QUANT_VARS(NAME)                \
  REGISTER_OP(NAME)                             \
      .Input("inputs: float")                   \
      .Input("min: float")                      \
      .Input("max: float")                      \
      .Output("outputs: float")                 \
      .Attr("num_bits: int = 8")                \
      .Attr("narrow_range: bool = false")       \
      .SetShapeFn(shape_fns::UnchangedShape)
GR_FAKE_QUANT_VARS("FakeQuantWithMinMaxVars");
GR_FAKE_QUANT_VARS("FakeQuantWithMinMaxVarsPerChannel");
#undef GR_FAKE_QUANT_VARS

}  // namespace graphrun
