// Checkpoint ops (TensorFlow's core/ops/io_ops.cc): SaveV2 writes tensors to
// a V2 checkpoint, RestoreV2 reads them back, as a graph's own Saver does;
// a sharded Saver names one file per shard (ShardedFilename,
// ShardedFilespec) and merges the shards' bundles (MergeV2Checkpoints).
// Names, inputs, attrs and shape functions are TensorFlow's.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status CheckNamesAndSlices(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, "prefix").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, "tensor_names").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, "shape_and_slices").status());
  return absl::OkStatus();
}

absl::Status AllScalars(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    GR_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, "a scalar").status());
  }
  return shape_fns::ScalarShape(c);
}

}  // namespace

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(CheckNamesAndSlices);

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(CheckNamesAndSlices(c));
      return shape_fns::UnknownShape(c);
    });

REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "checkpoint_prefixes").status());
      GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "destination_prefix").status());
      return absl::OkStatus();
    });

// "<basename>-<shard>-of-<num_shards>", both five digits.
REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(AllScalars);

// "<basename>-?????-of-<num_shards>".
REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(AllScalars);

}  // namespace graphrun
