// StridedSlice's index arithmetic, as TensorFlow's ValidateStridedSliceOp
// (core/util/strided_slice_op.cc) does it: the sparse spec (begin, end,
// strides and the five masks) is expanded against the input's rank into one
// canonical [begin, end) and stride per input dim, plus the output shape.
// Used by the StridedSlice kernel (array_slice_ops.cc). Stateless.
#ifndef GRAPHRUN_KERNELS_CPU_ARRAY_STRIDED_SLICE_H_
#define GRAPHRUN_KERNELS_CPU_ARRAY_STRIDED_SLICE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace graphrun {
namespace array_kernels {

struct StridedSliceMasks {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t ellipsis = 0;
  int64_t new_axis = 0;
  int64_t shrink_axis = 0;
};

struct StridedSliceSpec {
  // One entry per input dim. begin/end are clamped as Eigen's stridedSlice
  // expects: in [0, dim] for positive strides, [-1, dim - 1] for negative.
  std::vector<int64_t> begin, end, strides;
  // The sliced size of each input dim (shrunk dims are 1).
  std::vector<int64_t> processing_dims;
  // The output: processing dims less shrunk ones, plus new axes.
  TensorShape final_shape;
  // The slice takes the whole input.
  bool is_identity = false;
  // Every stride is 1.
  bool is_simple_slice = false;
  // Only dim 0 is sliced (with stride 1): the result is contiguous.
  bool slice_dim0 = false;
};

// Validates and expands a strided slice of `input_shape`. `begin`, `end` and
// `strides` are int32 or int64 vectors. Errors are TensorFlow's, e.g.
// "Expected begin, end, and strides to be 1D equal size tensors, ...",
// "Multiple ellipses in slice spec not allowed", "strides[0] must be
// non-zero", "slice index 5 of dimension 0 out of bounds.".
absl::StatusOr<StridedSliceSpec> ValidateStridedSlice(
    const TensorShape& input_shape, const Tensor& begin, const Tensor& end,
    const Tensor& strides, const StridedSliceMasks& masks);

}  // namespace array_kernels
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_ARRAY_STRIDED_SLICE_H_
