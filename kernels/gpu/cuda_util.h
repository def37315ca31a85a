// What the .cu files of kernels/gpu share: CUDA errors as Status, the
// stream's GPU made current, grid sizes for grid-stride loops, and a block
// reduction in shared memory. Included only by nvcc-compiled sources.
#ifndef GRAPHRUN_KERNELS_GPU_CUDA_UTIL_H_
#define GRAPHRUN_KERNELS_GPU_CUDA_UTIL_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace graphrun {
namespace gpu {
namespace cuda_util {

inline std::string CudaError(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

inline absl::Status FromCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  if (err == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(std::string(what) + ": " + CudaError(err));
  }
  return absl::InternalError(std::string(what) + ": " + CudaError(err));
}

// Makes the stream's GPU current on this thread: executor threads run
// kernels of several GPUs.
inline absl::Status UseStreamDevice(cudaStream_t stream) {
  int device = 0;
  cudaError_t err = cudaStreamGetDevice(stream, &device);
  if (err == cudaSuccess) err = cudaSetDevice(device);
  return FromCuda(err, "selecting the stream's GPU");
}

// Blocks for a grid-stride loop over n items (at least 1, at most 2^19).
inline int Blocks(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

// The launch error of the last kernel queued on this thread, if any.
inline absl::Status Launched(const char* what) { return FromCuda(cudaGetLastError(), what); }

// Threads of the one-block-per-row kernels (a power of two).
constexpr int kRowThreads = 256;

// Combines every thread's `v` by `op` (associative) through `shared`
// (blockDim.x floats, blockDim.x a power of two); every thread gets the
// result.
template <typename Op>
__device__ float BlockReduce(float v, float* shared, Op op) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

}  // namespace cuda_util
}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_CUDA_UTIL_H_
