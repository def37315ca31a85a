// Neural-network ops: activations, softmax, BiasAdd, fused batch norm, LRN,
// L2Loss and the softmax cross-entropy losses (convolution and pooling are
// in nn_conv_ops.cc). Names, inputs, outputs and attrs are TensorFlow's
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
using op_shapes::ShapeError;

constexpr char kRealNumberTypes[] =
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
    "uint32, uint64";
using op_shapes::kNumberTypes;

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

// SoftmaxCrossEntropyWithLogits: features and labels are [batch, classes],
// or broadcast to that; loss is [batch], backprop [batch, classes].
absl::Status SoftmaxXentShape(InferenceContext* c) {
  constexpr char kOp[] = "SoftmaxCrossEntropyWithLogits";
  GR_ASSIGN_OR_RETURN(PartialShape broadcast,
                      op_shapes::BroadcastShapes(*c, kOp, c->input(0),
                                                 c->input(1)));
  if (!broadcast.unknown_rank() && broadcast.rank() != 2) {
    return ShapeError(*c, kOp,
                      "logits and labels must be either 2-dimensional, or "
                      "broadcasted to be 2-dimensional");
  }
  const PartialShape both =
      broadcast.unknown_rank() ? op_shapes::UnknownDims(2) : broadcast;
  c->set_output(0, PartialShape(std::vector<int64_t>{both.dim(0)}));
  c->set_output(1, std::move(both));
  return absl::OkStatus();
}

// SparseSoftmaxCrossEntropyWithLogits: features [batch, classes], labels
// [batch]; loss [batch], backprop [batch, classes].
absl::Status SparseSoftmaxXentShape(InferenceContext* c) {
  constexpr char kOp[] = "SparseSoftmaxCrossEntropyWithLogits";
  GR_ASSIGN_OR_RETURN(PartialShape features, InputWithRank(*c, kOp, 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape labels, InputWithRank(*c, kOp, 1, 1));
  GR_ASSIGN_OR_RETURN(const int64_t batch,
                      MergeDims(*c, kOp, features.dim(0), labels.dim(0)));
  c->set_output(0, PartialShape(std::vector<int64_t>{batch}));
  c->set_output(1, PartialShape(std::vector<int64_t>{batch, features.dim(1)}));
  return absl::OkStatus();
}

absl::Status LrnShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, "LRN", 0, 4));
  c->set_output(0, std::move(in));
  return absl::OkStatus();
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

REGISTER_OP("FusedBatchNormV2")
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
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShapeFor("FusedBatchNormV2"));

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

REGISTER_OP("LRN")
    .Input("input: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .SetShapeFn(LrnShape);

REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxXentShape);

REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseSoftmaxXentShape);

}  // namespace graphrun
