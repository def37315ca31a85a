// Gemm: the CPU matrix product behind MatMul and BatchMatMulV2, exposed so
// benchmarks can call the exact library path the kernels use.
//
//   C[m,n] = op(A) * op(B), op(X) = X or X^T (no conjugation), all row-major.
//
// A is m x k (k x m when transpose_a), B is k x n (n x k when transpose_b),
// C is m x n and is overwritten. Uses Eigen's tensor contraction; problems
// with m*n*k > kGemmThreadedMinWork run on `device`'s thread pool, smaller
// ones (or any, when `device` is nullptr) on the calling thread. half and
// bfloat16 are computed in float and rounded once. k == 0 gives zeros.
// Thread-safe: concurrent calls may share a device.
#ifndef GRAPHRUN_KERNELS_CPU_GEMM_H_
#define GRAPHRUN_KERNELS_CPU_GEMM_H_

#include <cstdint>

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {

// m*n*k above which Gemm uses the thread pool (64^3).
inline constexpr double kGemmThreadedMinWork = 64.0 * 64.0 * 64.0;

// Defined for float, double, half, bfloat16, int16_t, int32_t, int64_t,
// complex64, complex128.
template <typename T>
void Gemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
          bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
          const T* b, T* c);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_GEMM_H_
