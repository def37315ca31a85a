// Gemm: the CPU matrix product behind MatMul, BatchMatMulV2, Einsum and the
// GEMM-based convolutions, exposed so benchmarks can call the exact library
// path the kernels use. BatchGemm multiplies broadcast batches of matrices.
//
//   C[m,n] = op(A) * op(B), op(X) = X or X^T (no conjugation), all row-major.
//
// A is m x k (k x m when transpose_a), B is k x n (n x k when transpose_b),
// C is m x n and is overwritten. float runs on oneDNN's sgemm (1.3-2.6x
// Eigen's contraction here; GRAPHRUN_MATMUL_LIBRARY=eigen forces Eigen),
// other types on Eigen's tensor contraction. Problems with m*n*k >
// kGemmThreadedMinWork run on `device`'s thread pool, smaller ones (or any,
// when `device` is nullptr) on the calling thread. half and bfloat16 are
// computed in float and rounded once. k == 0 gives zeros.
// Thread-safe: concurrent calls may share a device.
#ifndef GRAPHRUN_KERNELS_CPU_GEMM_H_
#define GRAPHRUN_KERNELS_CPU_GEMM_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {

// m*n*k above which Gemm uses the thread pool: 2.5e6 multiply-adds, 5
// MFLOP, as convolutions (conv_onednn.cc). It was 64^3; on an AVX-512
// machine a product of a few MFLOP cut in two took longer than whole (the
// BERT-style encoder's step 0.49 -> 0.37 ms with this, the LSTMs and the
// MLPs unchanged).
inline constexpr double kGemmThreadedMinWork = 2.5e6;

// m*n*k below which a recurrent cell's per-step product is better run on
// the calling thread: waking the pool every step of a small cell costs
// more than it saves (a 64-unit LSTM cell at batch 2 spent a fifth of its
// time in futex wake-ups).
inline constexpr double kStepThreadedMinWork = 2e6;

// Defined for float, double, half, bfloat16, int16_t, int32_t, int64_t,
// complex64, complex128.
template <typename T>
void Gemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
          bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
          const T* b, T* c);

// What to do to each block of a product's C once it is final: rows [m0, m0
// + mc), columns [n0, n0 + nc), all of C's blocks disjoint and covering it.
using GemmEpilogue = absl::FunctionRef<void(int64_t m0, int64_t mc, int64_t n0, int64_t nc)>;

// Gemm<float>, then `epilogue` over every block of C, each on the thread
// that computed the block right after computing it (one call over all of C
// when the product ran whole). Blocks may be done concurrently.
void GemmWithEpilogue(const Eigen::ThreadPoolDevice* device, bool transpose_a,
                      bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                      const float* b, float* c, GemmEpilogue epilogue);

// The batch dims of a batched product whose operands' batch dims broadcast
// (NumPy rules, as TensorFlow's MatMulBCast): the output's batch dims and,
// for each output matrix (row-major over them), the index of the a and b
// matrix it multiplies.
struct MatMulBatch {
  std::vector<int64_t> dims;
  std::vector<int64_t> a_index;
  std::vector<int64_t> b_index;
  int64_t size() const { return static_cast<int64_t>(a_index.size()); }
};

// InvalidArgument "batch dimensions [2,3] and [4] do not broadcast" (or too
// many output elements) when they do not.
absl::StatusOr<MatMulBatch> BroadcastMatMulBatch(
    absl::Span<const int64_t> a_dims, absl::Span<const int64_t> b_dims);

// c[i] = op(a[batch.a_index[i]]) * op(b[batch.b_index[i]]) for each output
// matrix i, matrices as in Gemm (a's are m*k apart, b's k*n, c's m*n).
// Many small products are spread over `device`'s pool one per task; big
// ones use the pool inside Gemm. Same types as Gemm.
template <typename T>
void BatchGemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
               bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
               const T* b, const MatMulBatch& batch, T* c);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_GEMM_H_
