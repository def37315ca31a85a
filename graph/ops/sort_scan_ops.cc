// Scans, top-k, evenly spaced values and bucketing: Cumsum, Cumprod,
// TopKV2, LinSpace, Bucketize. TensorFlow defines them in math_ops.cc and
// nn_ops.cc; their kernels live with the array kernels (kernels/cpu/
// array_scan_ops.cc, array_index_ops.cc). Names, inputs, outputs and attrs
// are TensorFlow's; shape functions are in index_shapes.cc.
#include "graph/op_registry.h"
#include "graph/ops/array_shapes.h"
#include "graph/shape_inference.h"

namespace graphrun {

REGISTER_OP("Cumsum")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, "
        "qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, "
        "complex128, half, uint32, uint64}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(array_shapes::CumulativeShape);

REGISTER_OP("Cumprod")
    .Input("x: T")
    .Input("axis: Tidx")
    .Output("out: T")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, "
        "qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, "
        "complex128, half, uint32, uint64}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(array_shapes::CumulativeShape);

REGISTER_OP("TopKV2")
    .Input("input: T")
    .Input("k: Tk")
    .Output("values: T")
    .Output("indices: index_type")
    .Attr("sorted: bool = true")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
        "uint16, half, uint32, uint64}")
    .Attr("Tk: {int16, int32, int64} = DT_INT32")
    .Attr("index_type: {int16, int32, int64} = DT_INT32")
    .SetShapeFn(array_shapes::TopKV2Shape);

REGISTER_OP("LinSpace")
    .Input("start: T")
    .Input("stop: T")
    .Input("num: Tidx")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(array_shapes::LinSpaceShape);

REGISTER_OP("Bucketize")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: {int32, int64, float, double}")
    .Attr("boundaries: list(float)")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
