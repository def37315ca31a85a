// What the GPU kernels queue on a device's compute stream: cuBLAS GEMMs and
// CUDA kernels, behind plain C++ declarations (no CUDA types), so the
// OpKernels that call them compile with the host compiler and the build
// works without the CUDA toolkit. With the toolkit, gpu_launch.cu implements
// them (nvcc); without it, gpu_launch_cpu.cc returns Unavailable.
//
// `stream` is DeviceContext::compute_stream() (a cudaStream_t). Pointers
// are device memory. Every call only queues work: errors of queueing come
// back here, errors of the work at the stream's next completion. Shapes are
// checked by the callers; these trust them.
#ifndef GRAPHRUN_KERNELS_GPU_GPU_LAUNCH_H_
#define GRAPHRUN_KERNELS_GPU_GPU_LAUNCH_H_

#include <cstdint>

#include "absl/status/status.h"

namespace graphrun {
namespace gpu {

// Element types the launchers take (a subset of DataType, same meaning).
enum class ElementType { kFloat, kHalf, kBfloat16 };

// Row-major C[m,n] = op(A) * op(B), op transposing when asked; A is [m,k]
// (or [k,m] transposed), B [k,n] (or [n,k]). Half and bfloat16 multiply on
// tensor cores and accumulate in float; float uses TF32 tensor cores when
// `allow_tf32`, as TensorFlow does by default on Ampere and later.
// `batch` > 1: that many matrices `stride_*` elements apart. InvalidArgument
// when a dimension passes what cuBLAS takes (2^31 - 1); m, n, k, batch >= 1.
absl::Status Gemm(void* stream, ElementType type, bool transpose_a, bool transpose_b, int64_t m,
                  int64_t n, int64_t k, const void* a, const void* b, void* c, int64_t batch = 1,
                  int64_t stride_a = 0, int64_t stride_b = 0, int64_t stride_c = 0,
                  bool allow_tf32 = true);

enum class UnaryOp {
  kNeg, kAbs, kSquare, kSqrt, kRsqrt, kExp, kLog, kTanh, kSigmoid, kRelu, kRelu6, kElu,
  kSoftplus, kReciprocal,
};
// out[i] = op(in[i]), float.
absl::Status Unary(void* stream, UnaryOp op, const float* in, float* out, int64_t n);

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kSquaredDifference, kPow };
// Up to kMaxBroadcastDims dims; `dims` the output's, `*_strides` each
// input's element strides per output dim (0 where broadcast).
inline constexpr int kMaxBroadcastDims = 6;
struct BroadcastShape {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t x_strides[kMaxBroadcastDims] = {};
  int64_t y_strides[kMaxBroadcastDims] = {};
};
// out = x op y with broadcasting, float.
absl::Status Binary(void* stream, BinaryOp op, const float* x, const float* y, float* out,
                    const BroadcastShape& shape);

// out[r, c] = in[r, c] + bias[c] for `rows` rows of `cols`, float.
absl::Status BiasAdd(void* stream, const float* in, const float* bias, float* out, int64_t rows,
                     int64_t cols);

// The epilogue of _FusedMatMul: in place, x[r, c] = act(x[r, c] + bias[c]).
enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };
absl::Status BiasActivation(void* stream, float* x, const float* bias, int64_t rows,
                            int64_t cols, Activation act, float leakyrelu_alpha);

// Softmax (or LogSoftmax) over the last dim of [rows, cols], float.
absl::Status Softmax(void* stream, const float* in, float* out, int64_t rows, int64_t cols,
                     bool log);

// Sum (or mean) over the last dim of [rows, cols] into out[rows], float.
absl::Status ReduceRows(void* stream, const float* in, float* out, int64_t rows, int64_t cols,
                        bool mean);

// `bytes` zero bytes at `ptr`.
absl::Status Zero(void* stream, void* ptr, int64_t bytes);

// float <-> half / bfloat16 (round to nearest even), and the same type.
absl::Status Cast(void* stream, ElementType from, ElementType to, const void* in, void* out,
                  int64_t n);

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_GPU_LAUNCH_H_
