// More of TensorFlow's string ops (core/ops/string_ops.cc): ReduceJoin,
// the v1 StringSplit, and the hash-bucket family StringToHashBucketFast,
// StringToHashBucketStrong and StringToHashBucket. Names, inputs, outputs,
// attrs, defaults and shape functions are TensorFlow's.
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

// Each string mapped to a bucket in [0, num_buckets): the same shape.
REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(shape_fns::UnchangedShape);

// `key` is the 128-bit hash key as two int64s.
REGISTER_OP("StringToHashBucketStrong")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Attr("key: list(int)")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("StringToHashBucket")
    .Input("string_tensor: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(shape_fns::UnchangedShape);

// Joins the strings along the reduced axes: a reduction's shape, with
// `reduction_indices` a scalar or a vector.
REGISTER_OP("ReduceJoin")
    .Input("inputs: string")
    .Input("reduction_indices: int32")
    .Attr("keep_dims: bool = false")
    .Attr("separator: string = ''")
    .Output("output: string")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& axes = c->input(1);
      if (axes.rank() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape must be at most rank 1 but is rank ", axes.rank(),
            " for ReduceJoin with input shapes ", op_shapes::InputShapesString(*c)));
      }
      return op_shapes::ReductionShape(c);
    });

// A sparse [batch, longest] result of a vector of strings split at any of
// the delimiter's characters: indices [n, 2], values [n], shape [2].
REGISTER_OP("StringSplit")
    .Input("input: string")
    .Input("delimiter: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("skip_empty: bool = true")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "input").status());
      GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "delimiter").status());
      c->set_output(0, PartialShape({-1, 2}));
      c->set_output(1, PartialShape({-1}));
      c->set_output(2, PartialShape({2}));
      return absl::OkStatus();
    });

}  // namespace graphrun
