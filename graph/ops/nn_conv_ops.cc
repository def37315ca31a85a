// Convolution and pooling ops: Conv2D, _FusedConv2D, DepthwiseConv2dNative,
// _FusedDepthwiseConv2dNative,
// Conv3D, Conv2DBackpropInput, Conv3DBackpropInputV2, MaxPool (V2, with
// argmax), AvgPool, MaxPool3D and AvgPool3D.
// Names, inputs, outputs and attrs are TensorFlow's (core/ops/nn_ops.cc);
// the shape functions follow its common_shape_fns (same output sizes,
// InvalidArgument for inconsistent inputs; the importer adds the node's
// name).
#include <optional>
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

using op_shapes::ImageLayout;
using op_shapes::InputWithRank;
using op_shapes::MergeDims;
using op_shapes::Padding;
using op_shapes::ShapeError;

// Reads `padding` and `explicit_paddings` (absent on some ops) and checks
// that explicit paddings are given exactly when padding is EXPLICIT.
absl::Status ReadPadding(const InferenceContext& c, int rank,
                         Padding* padding, std::vector<int64_t>* pads) {
  std::string padding_str;
  GR_RETURN_IF_ERROR(c.GetAttr("padding", &padding_str));
  GR_ASSIGN_OR_RETURN(*padding, op_shapes::ParsePadding(padding_str));
  pads->clear();
  if (c.attrs().Find("explicit_paddings") != nullptr) {
    GR_RETURN_IF_ERROR(c.GetAttr("explicit_paddings", pads));
  }
  if (*padding == Padding::kExplicit) {
    if (static_cast<int>(pads->size()) != 2 * rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit_paddings attribute must contain ", 2 * rank,
          " values, but got: ", pads->size()));
    }
  } else if (!pads->empty()) {
    return absl::InvalidArgumentError(
        "explicit_paddings attribute must be empty if the padding attribute "
        "is not EXPLICIT");
  }
  pads->resize(2 * rank, 0);
  return absl::OkStatus();
}

// Reads list(int) attr `name` and checks it has `n` entries.
absl::Status ReadWindowAttr(const InferenceContext& c, absl::string_view op,
                            absl::string_view name, int n,
                            std::vector<int64_t>* values) {
  GR_RETURN_IF_ERROR(c.GetAttr(name, values));
  if (static_cast<int>(values->size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, " requires the ", name, " attribute to contain ", n,
                     " values, but got: ", values->size()));
  }
  return absl::OkStatus();
}

enum class ConvKind { kRegular, kDepthwise };

// Conv2D, Conv3D (filter [spatial..., in_depth / groups, out_depth]) and
// DepthwiseConv2dNative (filter [fh, fw, in_depth, multiplier], output depth
// in_depth * multiplier). `rank` is 4 or 5.
ShapeFn ConvShapeFor(std::string op, int rank, ConvKind kind) {
  return [op = std::move(op), rank, kind](InferenceContext* c) -> absl::Status {
    std::string data_format;
    GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    GR_ASSIGN_OR_RETURN(ImageLayout layout, op_shapes::LayoutFor(data_format));
    if (layout.rank != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": attr 'data_format' ", data_format, " is not a ", rank,
          "-d layout"));
    }
    GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, op, 0, rank));
    GR_ASSIGN_OR_RETURN(PartialShape filter, InputWithRank(*c, op, 1, rank));
    std::vector<int64_t> strides, dilations, pads;
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "strides", rank, &strides));
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "dilations", rank, &dilations));
    Padding padding;
    GR_RETURN_IF_ERROR(ReadPadding(*c, rank, &padding, &pads));
    if (strides[layout.batch] != 1 || strides[layout.channel] != 1) {
      return ShapeError(*c, op,
                        "strides in the batch and depth dimensions must be 1");
    }
    if (dilations[layout.batch] != 1 || dilations[layout.channel] != 1) {
      return ShapeError(
          *c, op, "dilations in the batch and depth dimensions must be 1");
    }
    const int spatial = rank - 2;
    int64_t in_depth = in.dim(layout.channel);
    const int64_t filter_depth = filter.dim(spatial);
    int64_t out_depth = filter.dim(spatial + 1);
    if (kind == ConvKind::kDepthwise) {
      GR_ASSIGN_OR_RETURN(in_depth, MergeDims(*c, op, in_depth, filter_depth));
      GR_ASSIGN_OR_RETURN(out_depth, op_shapes::MultiplyDims(
                                         in_depth, out_depth, "output depth"));
    } else if (in_depth >= 0 && filter_depth >= 0) {
      if (filter_depth == 0 || in_depth % filter_depth != 0) {
        return ShapeError(
            *c, op,
            absl::StrCat("Depth of input (", in_depth,
                         ") is not a multiple of input depth of filter (",
                         filter_depth, ")"));
      }
    }
    std::vector<int64_t> dims(rank, -1);
    dims[layout.batch] = in.dim(layout.batch);
    dims[layout.channel] = out_depth;
    for (int i = 0; i < spatial; ++i) {
      const int d = layout.spatial[i];
      GR_ASSIGN_OR_RETURN(
          dims[d], op_shapes::WindowedOutputSize(
                       in.dim(d), filter.dim(i), dilations[d], strides[d],
                       padding, pads[2 * d], pads[2 * d + 1]));
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

// Conv2DBackpropInput: the output is input_sizes, all 4 dims or (TF 2.x)
// only the 2 spatial ones, batch and depth then coming from out_backprop
// and the filter.
absl::Status Conv2DBackpropInputShape(InferenceContext* c) {
  constexpr char kOp[] = "Conv2DBackpropInput";
  std::string data_format;
  GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  GR_ASSIGN_OR_RETURN(ImageLayout layout, op_shapes::LayoutFor(data_format));
  GR_ASSIGN_OR_RETURN(PartialShape sizes_shape,
                      InputWithRank(*c, kOp, 0, 1));
  GR_ASSIGN_OR_RETURN(PartialShape filter, InputWithRank(*c, kOp, 1, 4));
  GR_ASSIGN_OR_RETURN(PartialShape grad, InputWithRank(*c, kOp, 2, 4));
  std::vector<int64_t> strides, dilations, pads;
  GR_RETURN_IF_ERROR(ReadWindowAttr(*c, kOp, "strides", 4, &strides));
  GR_RETURN_IF_ERROR(ReadWindowAttr(*c, kOp, "dilations", 4, &dilations));
  Padding padding;
  GR_RETURN_IF_ERROR(ReadPadding(*c, 4, &padding, &pads));
  // out_backprop's depth is the filter's output depth.
  GR_RETURN_IF_ERROR(
      MergeDims(*c, kOp, grad.dim(layout.channel), filter.dim(3)).status());
  GR_ASSIGN_OR_RETURN(PartialShape sizes,
                      op_shapes::ShapeFromShapeTensor(*c, 0));
  if (sizes.unknown_rank()) {
    c->set_output(0, op_shapes::UnknownDims(4));
    return absl::OkStatus();
  }
  if (sizes.rank() == 4) {
    c->set_output(0, sizes);
    return absl::OkStatus();
  }
  if (sizes.rank() == 2) {
    std::vector<int64_t> dims(4, -1);
    dims[layout.batch] = grad.dim(layout.batch);
    dims[layout.channel] = filter.dim(2);
    dims[layout.spatial[0]] = sizes.dim(0);
    dims[layout.spatial[1]] = sizes.dim(1);
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  }
  return ShapeError(*c, kOp,
                    absl::StrCat("input_sizes must have 4 or 2 elements, got ",
                                 sizes.rank()));
}

// MaxPool, AvgPool: every dim is windowed by ksize/strides (batch and
// depth windows are normally 1).
ShapeFn PoolShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    std::string data_format = "NHWC";
    if (c->attrs().Find("data_format") != nullptr) {
      GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    }
    if (data_format == "NCHW_VECT_C") {
      c->set_output(0, op_shapes::UnknownDims(5));
      return absl::OkStatus();
    }
    GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, op, 0, 4));
    std::vector<int64_t> ksize, strides, pads;
    Padding padding;
    GR_RETURN_IF_ERROR(ReadPadding(*c, 4, &padding, &pads));
    if (c->attrs().Find("ksize") != nullptr) {
      GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "ksize", 4, &ksize));
      GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "strides", 4, &strides));
    } else {
      // MaxPoolV2: the window is known when its inputs are constants.
      std::optional<std::vector<int64_t>> k = op_shapes::ConstantInts(*c, 1);
      std::optional<std::vector<int64_t>> st = op_shapes::ConstantInts(*c, 2);
      if (!k.has_value() || !st.has_value() || k->size() != 4 || st->size() != 4) {
        c->set_output(0, op_shapes::UnknownDims(4));
        return absl::OkStatus();
      }
      ksize = *k;
      strides = *st;
    }
    std::vector<int64_t> dims(4, -1);
    for (int d = 0; d < 4; ++d) {
      GR_ASSIGN_OR_RETURN(
          dims[d], op_shapes::WindowedOutputSize(in.dim(d), ksize[d], 1,
                                                 strides[d], padding,
                                                 pads[2 * d], pads[2 * d + 1]));
    }
    // MaxPoolWithArgmax: the argmax has the output's shape.
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape(dims));
    return absl::OkStatus();
  };
}

// MaxPool3D, AvgPool3D: the three spatial dims are windowed; batch and
// depth windows and strides must be 1.
ShapeFn Pool3DShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    std::string data_format;
    GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    GR_ASSIGN_OR_RETURN(ImageLayout layout, op_shapes::LayoutFor(data_format));
    GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, op, 0, 5));
    std::vector<int64_t> ksize, strides, pads;
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "ksize", 5, &ksize));
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "strides", 5, &strides));
    Padding padding;
    GR_RETURN_IF_ERROR(ReadPadding(*c, 5, &padding, &pads));
    if (ksize[layout.batch] != 1 || ksize[layout.channel] != 1 ||
        strides[layout.batch] != 1 || strides[layout.channel] != 1) {
      return ShapeError(*c, op,
                        "Pooling across the batch or depth dimensions is not "
                        "supported (ksize and strides there must be 1)");
    }
    std::vector<int64_t> dims = in.dims();
    for (int d : layout.spatial) {
      GR_ASSIGN_OR_RETURN(dims[d], op_shapes::WindowedOutputSize(
                                       in.dim(d), ksize[d], 1, strides[d],
                                       padding, 0, 0));
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

}  // namespace

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(ConvShapeFor("Conv2D", 4, ConvKind::kRegular));

// Conv2D, then the bias and activation named by fused_ops (the optimizer's
// kernel fusion writes it; TensorFlow's grappler remapper makes the same
// node). The args are fused_ops' operands (one bias for ["BiasAdd", ...]).
REGISTER_OP("_FusedConv2D")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: num_args * T")
    .Output("output: T")
    .Attr("T: {half, float, double}")
    .Attr("num_args: int >= 0")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(ConvShapeFor("_FusedConv2D", 4, ConvKind::kRegular));

REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(ConvShapeFor("DepthwiseConv2dNative", 4, ConvKind::kDepthwise));

// DepthwiseConv2dNative, then the bias and activation named by fused_ops,
// as _FusedConv2D (TensorFlow's remapper makes the same node for oneDNN).
// TensorFlow's registration allows SAME and VALID only; this one also takes
// EXPLICIT padding, which the optimizer's pad folding gives depthwise
// convolutions before they are fused (MobileNet's ZeroPadding2D). Such a
// node exists only in graphrun's optimized graphs (RunMetadata's partition
// graphs show it).
REGISTER_OP("_FusedDepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: num_args * T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("num_args: int >= 0")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(ConvShapeFor("_FusedDepthwiseConv2dNative", 4, ConvKind::kDepthwise));

REGISTER_OP("Conv3D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int) >= 5")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
    .SetShapeFn(ConvShapeFor("Conv3D", 5, ConvKind::kRegular));

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropInputShape);

// The gradient of Conv3D for its input: input_sizes' shape (5 values).
REGISTER_OP("Conv3DBackpropInputV2")
    .Input("input_sizes: Tshape")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int) >= 5")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1, 1]")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      std::optional<std::vector<int64_t>> sizes = op_shapes::ConstantInts(*c, 0);
      if (sizes.has_value() && sizes->size() != 5) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Conv3DBackpropInputV2: input_sizes must have 5 elements, got ", sizes->size()));
      }
      c->set_output(0, sizes.has_value() ? PartialShape(*sizes) : op_shapes::UnknownDims(5));
      return absl::OkStatus();
    });

REGISTER_OP("MaxPool")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, "
          "int8, uint16, qint8} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Input("input: T")
    .Output("output: T")
    .SetShapeFn(PoolShapeFor("MaxPool"));

REGISTER_OP("MaxPoolV2")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, "
          "int8, uint16, qint8} = DT_FLOAT")
    .Input("input: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(PoolShapeFor("MaxPoolV2"));

// NHWC max pooling that also returns where each maximum was: the flat
// index (y * width + x) * channels + c, plus the batch offset with
// include_batch_in_index.
REGISTER_OP("MaxPoolWithArgmax")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("Targmax: {int32, int64} = DT_INT64")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("include_batch_in_index: bool = false")
    .Input("input: T")
    .Output("output: T")
    .Output("argmax: Targmax")
    .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
          "uint32, uint64}")
    .SetShapeFn(PoolShapeFor("MaxPoolWithArgmax"));

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShapeFor("AvgPool"));

REGISTER_OP("MaxPool3D")
    .Input("input: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
    .Attr("T: {half, bfloat16, float}")
    .SetShapeFn(Pool3DShapeFor("MaxPool3D"));

REGISTER_OP("AvgPool3D")
    .Input("input: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(Pool3DShapeFor("AvgPool3D"));

}  // namespace graphrun
