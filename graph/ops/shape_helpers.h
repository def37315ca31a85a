// Building blocks for the shape functions in graph/ops/*.cc: axis checks,
// shapes read from constant shape tensors, windowed (conv/pool) output
// sizes, image layouts and TensorFlow-style error messages. Unknown ranks
// and dims (-1) pass through as unknown. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_OPS_SHAPE_HELPERS_H_
#define GRAPHRUN_GRAPH_OPS_SHAPE_HELPERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace op_shapes {

// TensorFlow's "numbertype", expanded (for attrs like "T: {...}").
inline constexpr char kNumberTypes[] =
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, "
    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, "
    "uint32, uint64";

// "[2,3], [4,5]": the shapes of all inputs, for error messages.
std::string InputShapesString(const InferenceContext& c);

// InvalidArgument with `message` + " for <op> with input shapes <shapes>".
absl::Status ShapeError(const InferenceContext& c, absl::string_view op,
                        absl::string_view message);

// Merges two dims (-1 = unknown). When both are known and differ:
// "Dimensions must be equal, but are 3 and 4 for MatMul with input shapes
// [2,3], [4,5]".
absl::StatusOr<int64_t> MergeDims(const InferenceContext& c,
                                  absl::string_view op, int64_t a, int64_t b);

// Input `input` as a shape of rank `rank` (unknown rank becomes `rank`
// unknown dims); otherwise "Shape must be rank 2 but is rank 1 for MatMul
// with input shapes [3], [3,4]".
absl::StatusOr<PartialShape> InputWithRank(const InferenceContext& c,
                                           absl::string_view op, int input,
                                           int rank);
// Same for "at least `rank`"; unknown rank stays unknown.
absl::StatusOr<PartialShape> InputWithRankAtLeast(const InferenceContext& c,
                                                  absl::string_view op,
                                                  int input, int rank);

// NumPy/TensorFlow broadcasting of `a` and `b`; when impossible:
// "Dimensions must be equal, but are 3 and 4 for Add with input shapes ...".
absl::StatusOr<PartialShape> BroadcastShapes(const InferenceContext& c,
                                             absl::string_view op,
                                             const PartialShape& a,
                                             const PartialShape& b);
// A shape function: output 0 = BroadcastShapes(input 0, input 1).
ShapeFn BroadcastBinaryShapeFor(std::string op);

// Maps `axis` in [-rank, rank) to [0, rank); InvalidArgument otherwise,
// naming `what` ("axis", "dimension"...).
absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank,
                                  absl::string_view what);

// Checked size arithmetic for shape functions. Operands are dims: >= 0, or
// -1 for unknown, which gives -1. InvalidArgument "<what> is too large:
// <a> * <b> is more than 2^48" when the result would pass kMaxElements (so
// the int64 arithmetic never overflows).
absl::StatusOr<int64_t> MultiplyDims(int64_t a, int64_t b,
                                     absl::string_view what);
absl::StatusOr<int64_t> AddDims(int64_t a, int64_t b, absl::string_view what);

// OK unless `shape`'s known dims break TensorShape's invariant (a product of
// non-zero dims past kMaxElements): "<what> [a,b,c] is too large (more than
// 2^48 elements)".
absl::Status CheckShapeSize(const PartialShape& shape, absl::string_view what);

// A rank read from a dim (the length of a shape or multiples vector):
// -1 stays -1 (unknown); past kMaxRank is InvalidArgument "<what> has <n>
// entries: rank out of range (at most 254)".
absl::StatusOr<int> RankFromLength(int64_t length, absl::string_view what);

// Reads a constant int32/int64 input holding at most one dimension (a
// scalar is read as one value). nullopt when the input is not constant.
std::optional<std::vector<int64_t>> ConstantInts(const InferenceContext& c,
                                                 int input);

// The shape that 1-D int input `input` describes (Fill's dims, Reshape's
// shape, BroadcastTo's shape). Constant: its values, -1 read as an unknown
// dim and anything below -1 an error. Not constant: as many unknown dims as
// the input has elements when that is known, else unknown rank.
absl::StatusOr<PartialShape> ShapeFromShapeTensor(const InferenceContext& c,
                                                  int input);

// `shape` with every dim unknown (same rank; unknown stays unknown).
PartialShape UnknownDimsLike(const PartialShape& shape);
// A shape of `rank` unknown dims; unknown rank when rank < 0.
PartialShape UnknownDims(int rank);

enum class Padding { kSame, kValid, kExplicit };
absl::StatusOr<Padding> ParsePadding(absl::string_view padding);

// Output size of a conv/pool window along one dim, as TensorFlow's
// GetWindowedOutputSizeVerbose: SAME ceil(in/stride), VALID
// ceil((in - effective_window + 1)/stride), EXPLICIT with the given pads.
// -1 when `input` is unknown.
absl::StatusOr<int64_t> WindowedOutputSize(int64_t input, int64_t window,
                                           int64_t dilation, int64_t stride,
                                           Padding padding, int64_t pad_before,
                                           int64_t pad_after);

// Where the batch, channel and spatial dims sit for a data_format
// ("NHWC", "NCHW", "NDHWC", "NCDHW").
struct ImageLayout {
  int rank = 4;
  int batch = 0;
  int channel = 3;
  std::vector<int> spatial;  // outermost first
};
absl::StatusOr<ImageLayout> LayoutFor(absl::string_view data_format);

// Sum, Mean, Prod, Max, Min: input 0 reduced over the axes in input 1,
// keeping size-1 dims when the keep_dims attr is true.
absl::Status ReductionShape(InferenceContext* c);

}  // namespace op_shapes
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OPS_SHAPE_HELPERS_H_
