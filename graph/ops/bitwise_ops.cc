// Bitwise and integer-bit ops (TensorFlow's core/ops/bitwise_ops.cc:
// BitwiseAnd/Or/Xor, LeftShift, RightShift, Invert, PopulationCount), the
// inverse hyperbolic functions, CheckNumerics and ComplexAbs. Names, inputs,
// outputs, attrs and defaults are TensorFlow's; binary ops broadcast.
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"

namespace graphrun {

#define GR_INT_TYPES "{int8, int16, int32, int64, uint8, uint16, uint32, uint64}"

#define GR_BITWISE_BINARY(NAME)                                        \
  REGISTER_OP(NAME)                                                    \
      .Input("x: T")                                                   \
      .Input("y: T")                                                   \
      .Output("z: T")                                                  \
      .Attr("T: " GR_INT_TYPES)                                        \
      .SetShapeFn(op_shapes::BroadcastBinaryShapeFor(NAME))
GR_BITWISE_BINARY("BitwiseAnd").SetIsCommutative();
GR_BITWISE_BINARY("BitwiseOr").SetIsCommutative();
GR_BITWISE_BINARY("BitwiseXor").SetIsCommutative();
GR_BITWISE_BINARY("LeftShift");
GR_BITWISE_BINARY("RightShift");
#undef GR_BITWISE_BINARY

REGISTER_OP("Invert")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: " GR_INT_TYPES)
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("PopulationCount")
    .Input("x: T")
    .Output("y: uint8")
    .Attr("T: " GR_INT_TYPES)
    .SetShapeFn(shape_fns::UnchangedShape);
#undef GR_INT_TYPES

#define GR_INVERSE_HYPERBOLIC(NAME)                                               \
  REGISTER_OP(NAME)                                                               \
      .Input("x: T")                                                              \
      .Output("y: T")                                                             \
      .Attr("T: {bfloat16, half, float, double, complex64, complex128}")          \
      .SetShapeFn(shape_fns::UnchangedShape)
GR_INVERSE_HYPERBOLIC("Asinh");
GR_INVERSE_HYPERBOLIC("Acosh");
GR_INVERSE_HYPERBOLIC("Atanh");
#undef GR_INVERSE_HYPERBOLIC

REGISTER_OP("CheckNumerics")
    .Input("tensor: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("message: string")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("ComplexAbs")
    .Input("x: T")
    .Output("y: Tout")
    .Attr("T: {complex64, complex128} = DT_COMPLEX64")
    .Attr("Tout: {float, double} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
