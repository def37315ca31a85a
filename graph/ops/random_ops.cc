// Random number ops (TensorFlow's core/ops/random_ops.cc and
// stateless_random_ops_v2.cc): the stateful initializer ops of v1 graphs
// (RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt;
// seeded by their seed/seed2 attrs, drawing on as the session runs them) and
// the counter-based ops Keras 3 initializers export
// (StatelessRandomGetKeyCounter feeding StatelessRandomUniformV2 /
// StatelessRandomNormalV2 / StatelessTruncatedNormalV2). Names, inputs,
// attrs and shape functions are TensorFlow's. Kernels: kernels/cpu/random_ops.cc.
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kRealDtype[] = "dtype: {half, bfloat16, float, double}";

// Output 0 has the shape that input 0 (a shape vector) describes.
absl::Status RandomShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "shape").status());
  GR_ASSIGN_OR_RETURN(PartialShape out, op_shapes::ShapeFromShapeTensor(*c, 0));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// RandomUniformInt: scalar bounds.
absl::Status RandomIntShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "minval").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "maxval").status());
  return RandomShape(c);
}

// The V2 stateless ops: a key vector, a counter vector and a scalar alg.
absl::Status StatelessV2Shape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, "key").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, "counter").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, "alg").status());
  return RandomShape(c);
}

// A seed of two elements to a key [1], a counter [2] (and an alg scalar).
absl::Status KeyCounterShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape seed, c->WithRank(c->input(0), 1, "seed"));
  GR_RETURN_IF_ERROR(InferenceContext::Merge(seed, PartialShape({2})).status());
  c->set_output(0, PartialShape({1}));
  c->set_output(1, PartialShape({2}));
  if (c->num_outputs() > 2) c->set_output(2, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ScalarOutput(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("RandomUniform")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr(kRealDtype)
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape);

REGISTER_OP("RandomStandardNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr(kRealDtype)
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape);

REGISTER_OP("TruncatedNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr(kRealDtype)
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape);

REGISTER_OP("RandomUniformInt")
    .Input("shape: T")
    .Input("minval: Tout")
    .Input("maxval: Tout")
    .Output("output: Tout")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("Tout: {int32, int64}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomIntShape);

REGISTER_OP("StatelessRandomUniformV2")
    .Input("shape: Tshape")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Output("output: dtype")
    .Attr("dtype: {half, bfloat16, float, double} = DT_FLOAT")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(StatelessV2Shape);

REGISTER_OP("StatelessRandomNormalV2")
    .Input("shape: Tshape")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Output("output: dtype")
    .Attr("dtype: {half, bfloat16, float, double} = DT_FLOAT")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(StatelessV2Shape);

REGISTER_OP("StatelessTruncatedNormalV2")
    .Input("shape: Tshape")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Output("output: dtype")
    .Attr("dtype: {half, bfloat16, float, double} = DT_FLOAT")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(StatelessV2Shape);

// Stateful in TensorFlow because the algorithm chosen depends on the device.
REGISTER_OP("StatelessRandomGetKeyCounter")
    .Input("seed: Tseed")
    .Output("key: uint64")
    .Output("counter: uint64")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .SetIsStateful()
    .SetShapeFn(KeyCounterShape);

REGISTER_OP("StatelessRandomGetKeyCounterAlg")
    .Input("seed: Tseed")
    .Output("key: uint64")
    .Output("counter: uint64")
    .Output("alg: int32")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .SetIsStateful()
    .SetShapeFn(KeyCounterShape);

REGISTER_OP("StatelessRandomGetAlg").Output("alg: int32").SetIsStateful().SetShapeFn(ScalarOutput);

}  // namespace graphrun
