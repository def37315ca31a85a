// More neural-network activations (Softplus, Softsign, Selu, LeakyRelu) and
// BiasAddV1, the NHWC-only BiasAdd of old graphs. Names, inputs, outputs and
// attrs are TensorFlow's (core/ops/nn_ops.cc). Relu, Relu6, Elu, Softmax and
// BiasAdd are in nn_ops.cc.
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kFloatTypesAttr[] = "T: {half, bfloat16, float, double}";

// value: rank >= 2; bias: a vector as long as value's last dimension.
absl::Status BiasAddV1Shape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape value,
                      op_shapes::InputWithRankAtLeast(*c, "BiasAddV1", 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape bias,
                      op_shapes::InputWithRank(*c, "BiasAddV1", 1, 1));
  if (value.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = value.dims();
  GR_ASSIGN_OR_RETURN(
      dims.back(),
      op_shapes::MergeDims(*c, "BiasAddV1", dims.back(), bias.dim(0)));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace

// log(1 + exp(x)).
REGISTER_OP("Softplus")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(shape_fns::UnchangedShape);

// x / (1 + |x|).
REGISTER_OP("Softsign")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(shape_fns::UnchangedShape);

// scale * x for x > 0, else scale * alpha * (exp(x) - 1), with the constants
// of Klambauer et al. (2017).
REGISTER_OP("Selu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kFloatTypesAttr)
    .SetShapeFn(shape_fns::UnchangedShape);

// x for x > 0, else alpha * x.
REGISTER_OP("LeakyRelu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("BiasAddV1")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, complex64, int64, "
        "qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, "
        "complex128, half, uint32, uint64}")
    .SetShapeFn(BiasAddV1Shape);

}  // namespace graphrun
