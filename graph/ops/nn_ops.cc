// Neural-network ops: activations, softmax, BiasAdd, Conv2D, pooling and
// fused batch norm. Names, inputs, outputs and attrs are TensorFlow's
// (core/ops/nn_ops.cc, 2.x: a superset of 1.15).
#include <string>
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
using op_shapes::InputWithRankAtLeast;
using op_shapes::MergeDims;
using op_shapes::Padding;
using op_shapes::ShapeError;

constexpr char kRealNumberTypes[] =
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
    "uint32, uint64";
constexpr char kNumberTypes[] =
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, "
    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, "
    "uint32, uint64";

// Softmax, LogSoftmax: rank >= 1, shape unchanged.
ShapeFn SoftmaxShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape logits,
                        InputWithRankAtLeast(*c, op, 0, 1));
    c->set_output(0, std::move(logits));
    return absl::OkStatus();
  };
}

absl::Status BiasAddShape(InferenceContext* c) {
  std::string data_format;
  GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  const bool nchw = data_format == "NCHW";
  GR_ASSIGN_OR_RETURN(PartialShape value,
                      InputWithRankAtLeast(*c, "BiasAdd", 0, nchw ? 3 : 2));
  GR_ASSIGN_OR_RETURN(PartialShape bias, InputWithRank(*c, "BiasAdd", 1, 1));
  if (value.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = value.dims();
  // NCHW: channels are third from last (batch dims may lead); else last.
  const int channel = nchw ? value.rank() - 3 : value.rank() - 1;
  GR_ASSIGN_OR_RETURN(dims[channel],
                      MergeDims(*c, "BiasAdd", dims[channel], bias.dim(0)));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

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

absl::Status Conv2DShape(InferenceContext* c) {
  std::string data_format;
  GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  GR_ASSIGN_OR_RETURN(ImageLayout layout, op_shapes::LayoutFor(data_format));
  GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, "Conv2D", 0, 4));
  GR_ASSIGN_OR_RETURN(PartialShape filter, InputWithRank(*c, "Conv2D", 1, 4));
  std::vector<int64_t> strides, dilations, pads;
  GR_RETURN_IF_ERROR(ReadWindowAttr(*c, "Conv2D", "strides", 4, &strides));
  GR_RETURN_IF_ERROR(ReadWindowAttr(*c, "Conv2D", "dilations", 4, &dilations));
  Padding padding;
  GR_RETURN_IF_ERROR(ReadPadding(*c, 4, &padding, &pads));

  const int64_t in_depth = in.dim(layout.channel);
  const int64_t filter_depth = filter.dim(2);
  if (in_depth >= 0 && filter_depth >= 0) {
    if (filter_depth == 0 || in_depth % filter_depth != 0) {
      return ShapeError(
          *c, "Conv2D",
          absl::StrCat("Depth of input (", in_depth,
                       ") is not a multiple of input depth of filter (",
                       filter_depth, ")"));
    }
  }
  std::vector<int64_t> dims(4, -1);
  dims[layout.batch] = in.dim(layout.batch);
  dims[layout.channel] = filter.dim(3);
  for (int i = 0; i < 2; ++i) {
    const int d = layout.spatial[i];
    GR_ASSIGN_OR_RETURN(
        dims[d], op_shapes::WindowedOutputSize(
                     in.dim(d), filter.dim(i), dilations[d], strides[d],
                     padding, pads[2 * d], pads[2 * d + 1]));
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// MaxPool, AvgPool: every dim is windowed by ksize/strides (batch and
// depth windows are normally 1).
ShapeFn PoolShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    std::string data_format;
    GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    if (data_format == "NCHW_VECT_C") {
      c->set_output(0, op_shapes::UnknownDims(5));
      return absl::OkStatus();
    }
    GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, op, 0, 4));
    std::vector<int64_t> ksize, strides, pads;
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "ksize", 4, &ksize));
    GR_RETURN_IF_ERROR(ReadWindowAttr(*c, op, "strides", 4, &strides));
    Padding padding;
    GR_RETURN_IF_ERROR(ReadPadding(*c, 4, &padding, &pads));
    std::vector<int64_t> dims(4, -1);
    for (int d = 0; d < 4; ++d) {
      GR_ASSIGN_OR_RETURN(
          dims[d], op_shapes::WindowedOutputSize(in.dim(d), ksize[d], 1,
                                                 strides[d], padding,
                                                 pads[2 * d], pads[2 * d + 1]));
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

// FusedBatchNorm, FusedBatchNormV3: y has x's shape; the statistics are
// vectors of the channel count.
ShapeFn FusedBatchNormShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    std::string data_format;
    bool is_training = true;
    float exponential_avg_factor = 1.0f;
    GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
    GR_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
    GR_RETURN_IF_ERROR(
        c->GetAttr("exponential_avg_factor", &exponential_avg_factor));
    GR_ASSIGN_OR_RETURN(ImageLayout layout, op_shapes::LayoutFor(data_format));
    GR_ASSIGN_OR_RETURN(PartialShape x, InputWithRank(*c, op, 0, layout.rank));
    int64_t channels = x.dim(layout.channel);
    // Training with the default factor ignores mean and variance.
    const int num_params =
        (is_training && exponential_avg_factor == 1.0f) ? 3 : 5;
    for (int i = 1; i < num_params; ++i) {
      GR_ASSIGN_OR_RETURN(PartialShape p, InputWithRank(*c, op, i, 1));
      GR_ASSIGN_OR_RETURN(channels, MergeDims(*c, op, channels, p.dim(0)));
    }
    std::vector<int64_t> y = x.dims();
    y[layout.channel] = channels;
    c->set_output(0, PartialShape(std::move(y)));
    const PartialShape vec(std::vector<int64_t>{channels});
    for (int i = 1; i <= 4; ++i) c->set_output(i, vec);
    if (c->num_outputs() > 5) c->set_output(5, PartialShape());
    return absl::OkStatus();
  };
}

std::string TypeAttr(const char* types) {
  return absl::StrCat("T: {", types, "}");
}

}  // namespace

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(absl::StrCat("T: {", kRealNumberTypes, ", qint8}"))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr(TypeAttr(kRealNumberTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Elu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShapeFor("Softmax"));

REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShapeFor("LogSoftmax"));

REGISTER_OP("BiasAdd")
    .Attr(TypeAttr(kNumberTypes))
    .Input("value: T")
    .Input("bias: T")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Output("output: T")
    .SetShapeFn(BiasAddShape);

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
    .SetShapeFn(Conv2DShape);

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

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShapeFor("AvgPool"));

REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShapeFor("FusedBatchNorm"));

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {bfloat16, float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShapeFor("FusedBatchNormV3"));

}  // namespace graphrun
