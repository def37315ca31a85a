// Queues and conditional accumulators: the ops TensorFlow's
// SyncReplicasOptimizer brings (a token queue, one accumulator per
// variable) and the FIFOQueue family input pipelines and hand-written
// synchronisation use. Names, inputs, attrs and shape functions are
// TensorFlow's (core/ops/data_flow_ops.cc); the kernels are in
// kernels/cpu/queue_ops.cc and kernels/cpu/accumulator_ops.cc.
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// TensorFlow's "dtype: numbertype".
const std::string kDtypeAttr = absl::StrCat("dtype: {", op_shapes::kNumberTypes, "}");

// Input `i` must be a scalar.
absl::Status ScalarInput(InferenceContext* c, int i, const char* what) {
  return c->WithRank(c->input(i), 0, what).status();
}

absl::Status HandleOnly(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarInput(c, 0, "handle"));
  return shape_fns::NoOutputs(c);
}

absl::Status HandleToScalar(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarInput(c, 0, "handle"));
  return shape_fns::ScalarShape(c);
}

}  // namespace

REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(HandleOnly);

REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(HandleOnly);

REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("QueueDequeueUpToV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .SetShapeFn(HandleOnly);

REGISTER_OP("QueueIsClosedV2")
    .Input("handle: resource")
    .Output("is_closed: bool")
    .SetIsStateful()
    .SetShapeFn(HandleToScalar);

REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(HandleToScalar);

REGISTER_OP("ResourceConditionalAccumulator")
    .Output("handle: resource")
    .Attr(kDtypeAttr)
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

REGISTER_OP("ResourceAccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr(kDtypeAttr)
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR(ScalarInput(c, 1, "local_step"));
      return HandleOnly(c);
    });

REGISTER_OP("ResourceAccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .SetShapeFn(HandleToScalar);

REGISTER_OP("ResourceAccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR(ScalarInput(c, 1, "new_global_step"));
      return HandleOnly(c);
    });

REGISTER_OP("ResourceAccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr(kDtypeAttr)
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR(ScalarInput(c, 1, "num_required"));
      return shape_fns::UnknownShape(c);
    });

}  // namespace graphrun
