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

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_BROADCAST_H_
