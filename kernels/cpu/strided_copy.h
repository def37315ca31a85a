// Strided gathers and sums over N-d tensors for the CPU kernels that
// rearrange data between library calls (Einsum around its GEMMs; NCHW and
// NCDHW convolutions and pooling around their NHWC loops). Plain loops over
// runs of the innermost dim: one instantiation per element type, whatever
// the rank. Big work is split over the intra-op pool. Thread-safe.
//
//   // out = transpose(in, {0, 2, 1, 3})
//   Permute<float>(ctx, in, {b, s, h, d}, {0, 2, 1, 3}, out);
#ifndef GRAPHRUN_KERNELS_CPU_STRIDED_COPY_H_
#define GRAPHRUN_KERNELS_CPU_STRIDED_COPY_H_

#include <cstdint>

#include "absl/types/span.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace cpu {

// Walks `out` row-major over `dims`; element at index (i_0, ..., i_n-1) is
//   sum over (r_0, ...) in reduce_dims of
//     in[sum_k i_k * strides[k] + sum_k r_k * reduce_strides[k]].
// Strides are in elements and may be 0 (broadcast) or repeat (diagonals).
// With no reduce dims this is a gather (transpose, diagonal, broadcast);
// an empty reduction writes zeros. `ctx` may be nullptr (calling thread).
// Defined for float and double.
template <typename T>
void StridedSum(const OpKernelContext* ctx, const T* in,
                absl::Span<const int64_t> dims,
                absl::Span<const int64_t> strides,
                absl::Span<const int64_t> reduce_dims,
                absl::Span<const int64_t> reduce_strides, T* out);

// out = transpose(in, perm): out's dim k is in's dim perm[k]. Defined for
// float and double.
template <typename T>
void Permute(const OpKernelContext* ctx, const T* in,
             absl::Span<const int64_t> in_dims, absl::Span<const int> perm,
             T* out);

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_STRIDED_COPY_H_
