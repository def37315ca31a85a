// How the GPU's array, reduction and nn kernels lay their work out: each
// op's shapes and host-memory arguments become the plain descriptions the
// launchers of gpu_launch.h take (strided copies, [outer, r, inner]
// reductions, gather extents, pooling and cuDNN convolution geometry), with
// TensorFlow's checks and messages. Host code, no CUDA: the *OnHost
// functions run a description on host memory exactly as the CUDA kernels
// read it, so the descriptions are tested on CPU against the CPU kernels.
#ifndef GRAPHRUN_KERNELS_GPU_ARRAY_PLANS_H_
#define GRAPHRUN_KERNELS_GPU_ARRAY_PLANS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/ops/einsum_equation.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {

// A copy of `dims` from src to dst with these element strides, size-1 dims
// dropped and neighbours that are contiguous on both sides merged;
// Unimplemented when more than kMaxCopyDims dims remain.
absl::StatusOr<StridedCopyPlan> MakeCopyPlan(absl::Span<const int64_t> dims,
                                             absl::Span<const int64_t> src_strides,
                                             absl::Span<const int64_t> dst_strides,
                                             int64_t src_offset = 0, int64_t dst_offset = 0);

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);

// out = transpose(in, perm), out's dim k being in's dim perm[k].
absl::StatusOr<StridedCopyPlan> TransposePlan(const TensorShape& in, absl::Span<const int64_t> perm,
                                              TensorShape* out);

// Slice(in, begin, size) (size -1: to the end).
absl::StatusOr<StridedCopyPlan> SlicePlan(const TensorShape& in, absl::Span<const int64_t> begin,
                                          absl::Span<const int64_t> size, TensorShape* out);

// StridedSlice from its validated spec (kernels/cpu/array_strided_slice.h's
// processing dims, begin and strides); the output is spec's final shape.
absl::StatusOr<StridedCopyPlan> StridedSlicePlan(const TensorShape& in,
                                                 absl::Span<const int64_t> begin,
                                                 absl::Span<const int64_t> strides,
                                                 absl::Span<const int64_t> processing_dims);

// ConcatV2 of `inputs` along `axis` (negative counts from the end): one
// copy per non-empty input into its place in the output.
absl::StatusOr<std::vector<StridedCopyPlan>> ConcatPlans(const std::vector<TensorShape>& inputs,
                                                         int64_t axis, TensorShape* out);

// Pad / PadV2 in constant mode: `paddings` is the [rank, 2] matrix
// row-major; the plan copies the input into the output's interior (the
// rest is filled with the constant first).
absl::StatusOr<StridedCopyPlan> PadPlan(const TensorShape& in, const TensorShape& paddings_shape,
                                        absl::Span<const int64_t> paddings, TensorShape* out);

// GatherV2 as [batch, outer, limit, inner] params and [batch,
// num_indices] indices (batch: the first batch_dims dims of both).
struct GatherExtent {
  int64_t batch = 1, outer = 1, limit = 0, num_indices = 0, inner = 1;
  TensorShape output;
};
absl::StatusOr<GatherExtent> GatherPlan(const TensorShape& params, const TensorShape& indices,
                                        int64_t axis, int64_t batch_dims);

// A reduction of `in` over `axes`: the input (first transposed by
// `transpose` into `transposed` when the reduced dims are not one run) seen
// as [outer, r, inner], reduced over r.
struct ReducePlan {
  bool needs_transpose = false;
  StridedCopyPlan transpose;
  TensorShape transposed;
  int64_t outer = 1, r = 1, inner = 1;
  TensorShape output;  // with keep_dims' 1s or without the reduced dims
};
absl::StatusOr<ReducePlan> PlanReduce(const TensorShape& in, absl::Span<const int64_t> axes,
                                      bool keep_dims);

// MaxPool / AvgPool (4-D, NHWC or NCHW): ksize and strides of 4 values,
// explicit_paddings of 8 when padding is EXPLICIT.
absl::StatusOr<PoolGeometry> PoolPlan(const TensorShape& in, absl::Span<const int64_t> ksize,
                                      absl::Span<const int64_t> strides, op_shapes::Padding padding,
                                      absl::Span<const int64_t> explicit_paddings, bool nchw,
                                      TensorShape* out);

// Conv2D (filter [kh, kw, in_c / groups, out_c]) or DepthwiseConv2dNative
// (filter [kh, kw, in_c, multiplier]) as cuDNN runs it. cuDNN pads both
// sides alike: where TensorFlow's padding differs before and after, the
// input is first copied into a zeroed `padded_input` (its extra rows and
// columns by `pad_input`) and cuDNN pads the smaller amount. The filter is
// copied by `filter_copy` into cuDNN's layout (`filter_layout`).
struct ConvAttrs {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  op_shapes::Padding padding = op_shapes::Padding::kValid;
  std::vector<int64_t> explicit_paddings;
  bool nchw = false;
};
struct ConvPlan {
  ConvGeometry geometry;  // on the (padded) input
  bool pad_input = false;
  TensorShape padded_input;
  StridedCopyPlan input_copy;  // input into padded_input, when pad_input
  TensorShape filter_layout;
  StridedCopyPlan filter_copy;
  TensorShape output;
};
absl::StatusOr<ConvPlan> PlanConv2D(const TensorShape& input, const TensorShape& filter,
                                    const ConvAttrs& attrs, bool depthwise);

// A two-input Einsum as one (batched) GEMM: each operand copied into
// [batch, m, k] / [batch, k, n] order (or their transposes) only where it
// is not already, C = [batch, m, n], copied into the output's order only
// where that differs; of the ways to pair the operands with cuBLAS' A and
// B, the one that copies the fewest elements. Dims of size 1 are dropped
// first (they broadcast). Unimplemented for a label repeated within an
// input (a diagonal) or summed within one input alone.
struct EinsumPlan {
  bool swap = false;  // cuBLAS' A is input 1
  bool copy_a = false, copy_b = false, copy_out = false;
  StridedCopyPlan a_copy, b_copy, out_copy;  // each when copied
  TensorShape a_layout, b_layout, product;   // the copies' and C's shapes
  bool transpose_a = false, transpose_b = false;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  TensorShape output;
};
// `equation` is parsed for two inputs (ParseEinsumEquation), once per node.
absl::StatusOr<EinsumPlan> PlanEinsum(const EinsumEquation& equation, const TensorShape& x,
                                      const TensorShape& y);

// ---------------------------------------------------- host references

// Runs `plan` on host memory, as StridedCopy does on a GPU.
void StridedCopyOnHost(const StridedCopyPlan& plan, int element_bytes, const void* src, void* dst);
// As Gather on a GPU (out-of-range indices give zeros).
void GatherOnHost(const GatherExtent& e, int element_bytes, const void* params,
                  const int64_t* indices, void* out);
// As Reduce on a GPU, over in already laid out as [outer, r, inner].
void ReduceOnHost(ReduceOp op, const float* in, float* out, int64_t outer, int64_t r,
                  int64_t inner);
// As Pool on a GPU.
void PoolOnHost(bool max, const float* in, float* out, const PoolGeometry& g);
// A whole EinsumPlan on host memory (float): the copies, the product (as
// gpu::Gemm computes it), the output's copy.
void EinsumOnHost(const EinsumPlan& plan, const float* x, const float* y, float* out);
// As cuDNN's cross-correlation of `g`: in and out in g's order, filter in
// cuDNN's layout for it.
void Conv2DOnHost(const ConvGeometry& g, const float* in, const float* filter, float* out);

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_ARRAY_PLANS_H_
