// NumPy broadcasting of two shapes for the GPU's binary kernels: the
// output's shape, and each input's element strides per output dim (0 where
// that input is broadcast), with runs of dims that broadcast alike merged
// so that any rank fits gpu::kMaxBroadcastDims. Host code, tested on CPU.
#ifndef GRAPHRUN_KERNELS_GPU_BROADCAST_H_
#define GRAPHRUN_KERNELS_GPU_BROADCAST_H_

#include "absl/status/statusor.h"
#include "graph/tensor_shape.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {

struct Broadcast {
  TensorShape output;
  BroadcastShape shape;  // merged dims, rank >= 1
};

// InvalidArgument naming both shapes when they are incompatible, or when
// even merged they need more than kMaxBroadcastDims dims.
absl::StatusOr<Broadcast> MakeBroadcast(const TensorShape& x, const TensorShape& y);
// The same for SelectV2's three inputs: the condition's strides in
// shape.c_strides.
absl::StatusOr<Broadcast> MakeBroadcast3(const TensorShape& cond, const TensorShape& x,
                                         const TensorShape& y);

// A (batched) matrix product as cuBLAS runs it: C[batch, m, n] from
// A[batch, m, k] (transposed: [batch, k, m]) and B[batch, k, n] ([batch, n,
// k]), strides in elements (0 for a side that is a single matrix).
struct MatMulShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  TensorShape output;
};
// MatMul (`batched` false: both rank 2) or BatchMatMul(V2): batch dims
// broadcast as TensorFlow's BatchMatMulV2 (right-aligned, 1 stretches).
// InvalidArgument as TensorFlow words it for bad shapes; Unimplemented for
// broadcasts other than equal batches or one side a single matrix (the GPU
// kernel's strided batches cannot express them).
absl::StatusOr<MatMulShape> MatMulShapes(const TensorShape& a, const TensorShape& b,
                                         bool transpose_a, bool transpose_b, bool batched);

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_BROADCAST_H_
