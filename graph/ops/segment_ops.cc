// Segment reductions (TensorFlow's core/ops/math_ops.cc): the sorted forms
// SegmentSum/Mean/Max/Min/Prod, the unsorted forms UnsortedSegmentSum/Max/
// Min/Prod, and the sparse forms SparseSegmentSum/Mean/SqrtN with and
// without num_segments. Names, inputs, outputs, attrs and defaults are
// TensorFlow's; the shape functions give the output's trailing dims (its
// first dim when num_segments is a constant).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kNumberTypes[] =
    "T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, "
    "complex128, half, uint32, uint64}";
constexpr char kRealNumberTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
    "uint64}";
constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";

// [first] + data.shape[skip:], with skip = the rank of input `ids_input`
// (1 for the sorted and sparse forms).
absl::Status SegmentOutput(InferenceContext* c, const char* op, int ids_input,
                           int64_t first) {
  const PartialShape& data = c->input(0);
  const PartialShape& ids = c->input(ids_input);
  if (data.unknown_rank() || ids.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  if (ids.rank() > data.rank()) {
    return op_shapes::ShapeError(*c, op, "segment_ids must be a prefix of data's shape");
  }
  std::vector<int64_t> dims = {first};
  for (int i = ids.rank(); i < data.rank(); ++i) dims.push_back(data.dim(i));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// SegmentSum...: segment_ids a vector as long as data's first dim; the
// number of segments is known only when the ids are.
ShapeFn SortedShape(const char* op) {
  return [op](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape ids, op_shapes::InputWithRank(*c, op, 1, 1));
    const PartialShape& data = c->input(0);
    if (!data.unknown_rank()) {
      if (data.rank() < 1) return op_shapes::ShapeError(*c, op, "data must have rank >= 1");
      GR_RETURN_IF_ERROR(op_shapes::MergeDims(*c, op, data.dim(0), ids.dim(0)).status());
    }
    return SegmentOutput(c, op, 1, -1);
  };
}

// UnsortedSegment*: [num_segments] + data.shape[rank(segment_ids):], where
// segment_ids' shape is a prefix of data's.
ShapeFn UnsortedShape(const char* op) {
  return [op](InferenceContext* c) -> absl::Status {
    GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, op, 2, 0).status());
    int64_t num_segments = -1;
    if (!c->ConstantScalar(2, &num_segments)) num_segments = -1;
    if (num_segments < -1) {
      return op_shapes::ShapeError(*c, op, "num_segments must be non-negative");
    }
    const PartialShape& data = c->input(0);
    const PartialShape& ids = c->input(1);
    if (!data.unknown_rank() && !ids.unknown_rank() && ids.rank() <= data.rank()) {
      for (int i = 0; i < ids.rank(); ++i) {
        GR_RETURN_IF_ERROR(op_shapes::MergeDims(*c, op, data.dim(i), ids.dim(i)).status());
      }
    }
    return SegmentOutput(c, op, 1, num_segments);
  };
}

// SparseSegment*: indices and segment_ids vectors of one length; output
// [segments] + data.shape[1:], segments = num_segments (input 3) if given.
ShapeFn SparseShape(const char* op, bool with_num_segments) {
  return [op, with_num_segments](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape indices, op_shapes::InputWithRank(*c, op, 1, 1));
    GR_ASSIGN_OR_RETURN(PartialShape ids, op_shapes::InputWithRank(*c, op, 2, 1));
    GR_RETURN_IF_ERROR(op_shapes::MergeDims(*c, op, indices.dim(0), ids.dim(0)).status());
    int64_t segments = -1;
    if (with_num_segments) {
      GR_RETURN_IF_ERROR(op_shapes::InputWithRank(*c, op, 3, 0).status());
      if (!c->ConstantScalar(3, &segments)) segments = -1;
    }
    const PartialShape& data = c->input(0);
    if (data.unknown_rank()) {
      c->set_output(0, PartialShape());
      return absl::OkStatus();
    }
    if (data.rank() < 1) return op_shapes::ShapeError(*c, op, "data must have rank >= 1");
    std::vector<int64_t> dims = {segments};
    for (int i = 1; i < data.rank(); ++i) dims.push_back(data.dim(i));
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

}  // namespace

#define GR_SORTED_SEGMENT_OP(NAME, TYPES)      \
  REGISTER_OP(NAME)                            \
      .Input("data: T")                        \
      .Input("segment_ids: Tindices")          \
      .Output("output: T")                     \
      .Attr(TYPES)                             \
      .Attr("Tindices: {int32, int64}")        \
      .SetShapeFn(SortedShape(NAME))
GR_SORTED_SEGMENT_OP("SegmentSum", kNumberTypes);
GR_SORTED_SEGMENT_OP("SegmentMean", kNumberTypes);
GR_SORTED_SEGMENT_OP("SegmentProd", kNumberTypes);
GR_SORTED_SEGMENT_OP("SegmentMax", kRealNumberTypes);
GR_SORTED_SEGMENT_OP("SegmentMin", kRealNumberTypes);
#undef GR_SORTED_SEGMENT_OP

#define GR_UNSORTED_SEGMENT_OP(NAME, TYPES)              \
  REGISTER_OP(NAME)                                      \
      .Input("data: T")                                  \
      .Input("segment_ids: Tindices")                    \
      .Input("num_segments: Tnumsegments")               \
      .Output("output: T")                               \
      .Attr(TYPES)                                       \
      .Attr("Tindices: {int32, int64}")                  \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")   \
      .SetShapeFn(UnsortedShape(NAME))
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentSum", kNumberTypes);
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentProd", kNumberTypes);
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentMax", kRealNumberTypes);
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentMin", kRealNumberTypes);
#undef GR_UNSORTED_SEGMENT_OP

#define GR_SPARSE_SEGMENT_OP(NAME, TYPES)                  \
  REGISTER_OP(NAME)                                        \
      .Input("data: T")                                    \
      .Input("indices: Tidx")                              \
      .Input("segment_ids: Tsegmentids")                   \
      .Output("output: T")                                 \
      .Attr(TYPES)                                         \
      .Attr("Tidx: {int32, int64} = DT_INT32")             \
      .Attr("Tsegmentids: {int32, int64} = DT_INT32")      \
      .Attr("sparse_gradient: bool = false")               \
      .SetShapeFn(SparseShape(NAME, false));               \
  REGISTER_OP(NAME "WithNumSegments")                      \
      .Input("data: T")                                    \
      .Input("indices: Tidx")                              \
      .Input("segment_ids: Tsegmentids")                   \
      .Input("num_segments: Tnumsegments")                 \
      .Output("output: T")                                 \
      .Attr(TYPES)                                         \
      .Attr("Tidx: {int32, int64} = DT_INT32")             \
      .Attr("Tnumsegments: {int32, int64} = DT_INT32")     \
      .Attr("Tsegmentids: {int32, int64} = DT_INT32")      \
      .Attr("sparse_gradient: bool = false")               \
      .SetShapeFn(SparseShape(NAME "WithNumSegments", true))
GR_SPARSE_SEGMENT_OP("SparseSegmentSum", kRealNumberTypes);
GR_SPARSE_SEGMENT_OP("SparseSegmentMean", kFloatTypes);
GR_SPARSE_SEGMENT_OP("SparseSegmentSqrtN", kFloatTypes);
#undef GR_SPARSE_SEGMENT_OP

}  // namespace graphrun
