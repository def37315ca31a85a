// Shape functions of the array ops registered in array_ops.cc and
// sort_scan_ops.cc (those longer than a few lines). Each follows
// TensorFlow's function for the op of the same name: constant inputs
// (shapes, axes, begin/end...) are used when known, unknown ranks and dims
// stay unknown, impossible inputs give InvalidArgument. Stateless;
// thread-safe.
#ifndef GRAPHRUN_GRAPH_OPS_ARRAY_SHAPES_H_
#define GRAPHRUN_GRAPH_OPS_ARRAY_SHAPES_H_

#include "absl/status/status.h"
#include "graph/shape_inference.h"

namespace graphrun {
namespace array_shapes {

absl::Status ConstShape(InferenceContext* c);
absl::Status ReshapeShape(InferenceContext* c);
absl::Status TransposeShape(InferenceContext* c);
absl::Status FillShape(InferenceContext* c);
absl::Status PackShape(InferenceContext* c);
absl::Status UnpackShape(InferenceContext* c);
absl::Status ConcatV2Shape(InferenceContext* c);
absl::Status SplitShape(InferenceContext* c);
absl::Status SliceShape(InferenceContext* c);
absl::Status StridedSliceShape(InferenceContext* c);
absl::Status SqueezeShape(InferenceContext* c);
absl::Status ExpandDimsShape(InferenceContext* c);
absl::Status TileShape(InferenceContext* c);
absl::Status GatherShape(InferenceContext* c);
absl::Status GatherV2Shape(InferenceContext* c);
absl::Status OneHotShape(InferenceContext* c);
absl::Status RangeShape(InferenceContext* c);
absl::Status SelectShape(InferenceContext* c);
absl::Status SelectV2Shape(InferenceContext* c);
absl::Status BroadcastToShape(InferenceContext* c);

// layout_shapes.cc: padding and element rearrangement.
absl::Status PadShape(InferenceContext* c);  // Pad, PadV2, MirrorPad
absl::Status RollShape(InferenceContext* c);
absl::Status SpaceToBatchNDShape(InferenceContext* c);
absl::Status BatchToSpaceNDShape(InferenceContext* c);
absl::Status DepthToSpaceShape(InferenceContext* c);
absl::Status SpaceToDepthShape(InferenceContext* c);

// index_shapes.cc: index-producing and index-consuming ops.
absl::Status EnsureShapeShape(InferenceContext* c);
absl::Status WhereShape(InferenceContext* c);
absl::Status GatherNdShape(InferenceContext* c);
absl::Status ScatterNdShape(InferenceContext* c);
absl::Status BroadcastArgsShape(InferenceContext* c);
absl::Status UniqueShape(InferenceContext* c);
absl::Status InvertPermutationShape(InferenceContext* c);
absl::Status MatrixBandPartShape(InferenceContext* c);
absl::Status MatrixDiagShape(InferenceContext* c);
absl::Status MatrixDiagV3Shape(InferenceContext* c);
absl::Status MatrixDiagPartV3Shape(InferenceContext* c);
absl::Status CumulativeShape(InferenceContext* c);  // Cumsum, Cumprod
absl::Status TopKV2Shape(InferenceContext* c);
absl::Status LinSpaceShape(InferenceContext* c);

}  // namespace array_shapes
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OPS_ARRAY_SHAPES_H_
