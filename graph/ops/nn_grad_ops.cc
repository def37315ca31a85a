// The ops TensorFlow's gradients emit for MLP and CNN training graphs: the
// activation grads (ReluGrad ... SoftsignGrad, SigmoidGrad, TanhGrad),
// BiasAddGrad, BroadcastGradientArgs, ShapeN, MaxPoolGrad, AvgPoolGrad,
// Conv2DBackpropFilter, the depthwise convolution's two gradients and the
// fused batch norm gradients. Names,
// inputs, outputs, attrs and shape functions are TensorFlow's
// (core/ops/nn_ops.cc, math_grad.cc, array_ops.cc, math_ops.cc).
// Conv2DBackpropInput is in nn_conv_ops.cc, UnsortedSegmentSum in
// segment_ops.cc.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kFloatTypesAttr[] = "T: {half, bfloat16, float, double}";
constexpr char kRealNumberTypesAttr[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";

// Output 0: inputs 0 and 1 merged (TensorFlow's MergeBothInputsShapeFn).
ShapeFn MergeBothInputsShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    const PartialShape& a = c->input(0);
    const PartialShape& b = c->input(1);
    if (a.unknown_rank() || b.unknown_rank()) {
      c->set_output(0, a.unknown_rank() ? b : a);
      return absl::OkStatus();
    }
    if (a.rank() != b.rank()) {
      return op_shapes::ShapeError(
          *c, op, absl::StrCat("Shapes must be equal rank, but are ", a.rank(), " and ", b.rank()));
    }
    std::vector<int64_t> dims(a.rank());
    for (int i = 0; i < a.rank(); ++i) {
      GR_ASSIGN_OR_RETURN(dims[i], op_shapes::MergeDims(*c, op, a.dim(i), b.dim(i)));
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

// BiasAddGrad: a vector as long as out_backprop's channel dimension.
absl::Status BiasAddGradShape(InferenceContext* c) {
  std::string data_format;
  GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRankAtLeast(*c, "BiasAddGrad", 0, 2));
  if (in.unknown_rank()) {
    c->set_output(0, op_shapes::UnknownDims(1));
  } else if (data_format == "NCHW") {
    c->set_output(0, PartialShape({in.dim(1)}));
  } else {
    c->set_output(0, PartialShape({in.dim(in.rank() - 1)}));
  }
  return absl::OkStatus();
}

// BroadcastGradientArgs: two vectors of unknown length.
absl::Status BroadcastGradientArgsShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, "BroadcastGradientArgs", 0, 1).status());
  GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, "BroadcastGradientArgs", 1, 1).status());
  c->set_output(0, op_shapes::UnknownDims(1));
  c->set_output(1, op_shapes::UnknownDims(1));
  return absl::OkStatus();
}

// ShapeN: output i is a vector as long as input i's rank.
absl::Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& in = c->input(i);
    c->set_output(i, PartialShape({in.unknown_rank() ? int64_t{-1} : int64_t{in.rank()}}));
  }
  return absl::OkStatus();
}

// MaxPoolGrad: orig_input's shape (rank 4).
absl::Status MaxPoolGradShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRank(*c, "MaxPoolGrad", 0, 4));
  c->set_output(0, std::move(in));
  return absl::OkStatus();
}

absl::Status FusedMaxPoolGradShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRank(*c, "_FusedMaxPoolGrad", 0, 4));
  c->set_output(1, PartialShape({in.dim(3)}));
  c->set_output(0, std::move(in));
  return absl::OkStatus();
}

// AvgPoolGrad, Conv2DBackpropFilter and the depthwise convolution's
// gradients: the shape that int32 input `input` holds, of rank 4.
ShapeFn ShapeFromInputFor(std::string op, int input) {
  return [op = std::move(op), input](InferenceContext* c) -> absl::Status {
    GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, op, input, 1).status());
    GR_ASSIGN_OR_RETURN(PartialShape shape, op_shapes::ShapeFromShapeTensor(*c, input));
    if (shape.unknown_rank()) {
      c->set_output(0, op_shapes::UnknownDims(4));
      return absl::OkStatus();
    }
    if (shape.rank() != 4) {
      return op_shapes::ShapeError(*c, op,
                                   absl::StrCat("Shape must be rank 4 but is rank ", shape.rank()));
    }
    c->set_output(0, std::move(shape));
    return absl::OkStatus();
  };
}

// FusedBatchNormGrad, V2, V3: x_backprop has y_backprop's shape with the
// channel dim merged with x's and with those of scale, reserve_space_1 and
// reserve_space_2 (vectors); scale_backprop and offset_backprop are vectors
// of the channels; reserve_space_4/5 (3/4 before V3) are empty vectors.
ShapeFn FusedBatchNormGradShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    std::string data_format;
    GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    GR_ASSIGN_OR_RETURN(op_shapes::ImageLayout layout, op_shapes::LayoutFor(data_format));
    GR_ASSIGN_OR_RETURN(PartialShape dy, op_shapes::InputWithRank(*c, op, 0, layout.rank));
    GR_ASSIGN_OR_RETURN(PartialShape x, op_shapes::InputWithRank(*c, op, 1, layout.rank));
    GR_ASSIGN_OR_RETURN(
        int64_t channels,
        op_shapes::MergeDims(*c, op, dy.dim(layout.channel), x.dim(layout.channel)));
    for (int i = 2; i < 5; ++i) {
      GR_ASSIGN_OR_RETURN(PartialShape v, op_shapes::InputWithRank(*c, op, i, 1));
      GR_ASSIGN_OR_RETURN(channels, op_shapes::MergeDims(*c, op, channels, v.dim(0)));
    }
    std::vector<int64_t> dims = dy.dims();
    dims[layout.channel] = channels;
    c->set_output(0, PartialShape(std::move(dims)));
    c->set_output(1, PartialShape({channels}));
    c->set_output(2, PartialShape({channels}));
    c->set_output(3, PartialShape({int64_t{0}}));
    c->set_output(4, PartialShape({int64_t{0}}));
    return absl::OkStatus();
  };
}

}  // namespace

REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kRealNumberTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("ReluGrad"));

REGISTER_OP("Relu6Grad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kRealNumberTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("Relu6Grad"));

REGISTER_OP("EluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("EluGrad"));

REGISTER_OP("SeluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("SeluGrad"));

REGISTER_OP("LeakyReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .SetShapeFn(MergeBothInputsShapeFor("LeakyReluGrad"));

REGISTER_OP("SoftplusGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("SoftplusGrad"));

REGISTER_OP("SoftsignGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(MergeBothInputsShapeFor("SoftsignGrad"));

// dy * y * (1 - y), for y = sigmoid(x).
REGISTER_OP("SigmoidGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShapeFor("SigmoidGrad"));

// dy * (1 - y * y), for y = tanh(x).
REGISTER_OP("TanhGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShapeFor("TanhGrad"));

// (-0.5 * (dy * y)) * (y * y), for y = rsqrt(x).
REGISTER_OP("RsqrtGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShapeFor("RsqrtGrad"));

// (0.5 / y) * dy, for y = sqrt(x).
REGISTER_OP("SqrtGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShapeFor("SqrtGrad"));

// -(dy * (y * y)), for y = 1 / x.
REGISTER_OP("ReciprocalGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShapeFor("ReciprocalGrad"));

REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
        "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddGradShape);

// The axes along which each of two broadcast operands' gradients is summed.
REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShape);

REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeNShape);

REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64} = DT_FLOAT")
    .SetShapeFn(MaxPoolGradShape);

// MaxPoolGrad with ReluGrad of orig_input applied to its output
// (fused_ops ["ReluGrad"]): what the graph optimizer makes of a
// relu -> max_pool block's gradient (graph/optimize/fuse_pool_grad.cc).
// With fused_ops ["ReluGrad", "BiasAddGrad"], bias_backprop is the sum of
// output over all but its channels (BiasAddGrad of it); else zeros.
REGISTER_OP("_FusedMaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Output("bias_backprop: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC'} = 'NHWC'")
    .Attr("fused_ops: list(string) = []")
    .Attr("T: {float, double, half, bfloat16} = DT_FLOAT")
    .SetShapeFn(FusedMaxPoolGradShape);

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(ShapeFromInputFor("AvgPoolGrad", 0));

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr(kFloatTypesAttr)
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(ShapeFromInputFor("Conv2DBackpropFilter", 1));

REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(ShapeFromInputFor("DepthwiseConv2dNativeBackpropInput", 0));

REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(ShapeFromInputFor("DepthwiseConv2dNativeBackpropFilter", 1));

REGISTER_OP("FusedBatchNormGrad")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: T")
    .Input("reserve_space_1: T")
    .Input("reserve_space_2: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: T")
    .Output("offset_backprop: T")
    .Output("reserve_space_3: T")
    .Output("reserve_space_4: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShapeFor("FusedBatchNormGrad"));

REGISTER_OP("FusedBatchNormGradV2")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_3: U")
    .Output("reserve_space_4: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShapeFor("FusedBatchNormGradV2"));

// reserve_space_3 (FusedBatchNormV3's, a scalar on CPU) is not read.
REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShapeFor("FusedBatchNormGradV3"));

}  // namespace graphrun
