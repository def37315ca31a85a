// The bytes a fake GPU launcher (fake_gpu_launch.cc) checks through each
// pointer before its host loop: the extents of broadcast inputs, batched
// matrices, strided copies, and the sizes of the launchers' element types.
#ifndef GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_SPANS_H_
#define GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_SPANS_H_

#include <cstdint>

#include "graph/types.h"
#include "kernels/gpu/gpu_launch.h"
#include "runtime/gpu/testing/fake_launch_util.h"

namespace graphrun {
namespace gpu {
namespace fake {

// The elements of an input of `s` read at `strides` (its x_, y_ or
// c_strides, 0 where it broadcasts): one past its largest offset, its own
// shape's element count.
inline int64_t InputElements(const BroadcastShape& s, const int64_t* strides) {
  int64_t last = 0;
  for (int d = 0; d < s.rank; ++d) last += (s.dims[d] - 1) * strides[d];
  return last + 1;
}

// The bytes of one element of `t`.
inline int64_t ElementBytes(ElementType t) {
  return t == ElementType::kFloat ? sizeof(float)
                                  : (t == ElementType::kHalf ? sizeof(half) : sizeof(bfloat16));
}

// The elements of `batch` matrices of `matrix` elements, `stride` apart.
inline int64_t Batched(int64_t batch, int64_t stride, int64_t matrix) {
  return (batch - 1) * stride + matrix;
}

// What `plan` touches at `base` through `strides` from `offset`, elements
// of `element_bytes`: from its lowest offset to its highest (strides may
// be negative or 0).
inline DeviceSpan CopySpan(const void* base, const StridedCopyPlan& plan, const int64_t* strides,
                    int64_t offset, int element_bytes) {
  int64_t lo = offset, hi = offset;
  for (int d = 0; d < plan.rank; ++d) {
    const int64_t reach = (plan.dims[d] - 1) * strides[d];
    if (reach < 0) {
      lo += reach;
    } else {
      hi += reach;
    }
  }
  return {static_cast<const char*>(base) + lo * element_bytes, (hi - lo + 1) * element_bytes};
}

// The bytes of one index of `t`.
inline int64_t IndexBytes(IndexType t) {
  return t == IndexType::kInt64 ? sizeof(int64_t) : sizeof(int32_t);
}

}  // namespace fake
}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_SPANS_H_
