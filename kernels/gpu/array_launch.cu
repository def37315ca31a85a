// gpu_launch.h's data-movement, reduction, pooling and batch-norm launchers:
// plain CUDA kernels over grid-stride loops (cuDNN's convolutions are in
// cudnn_launch.cu). Compiled by nvcc on every build with the toolkit.
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/gpu/cuda_util.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {
namespace {

using cuda_util::Blocks;
using cuda_util::FromCuda;
using cuda_util::kRowThreads;
using cuda_util::Launched;
using cuda_util::UseStreamDevice;

constexpr int kThreads = 256;

// A stream to queue on, its GPU made current.
absl::Status Begin(void* stream, cudaStream_t* s) {
  *s = static_cast<cudaStream_t>(stream);
  return UseStreamDevice(*s);
}

// ------------------------------------------------------------ copies

template <typename E>
__global__ void StridedCopyKernel(const E* src, E* dst, int64_t n, StridedCopyPlan p) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, from = p.src_offset, to = p.dst_offset;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.dims[d];
      rest /= p.dims[d];
      from += coord * p.src_strides[d];
      to += coord * p.dst_strides[d];
    }
    dst[to] = src[from];
  }
}

template <typename E>
__global__ void FillKernel(E* dst, int64_t n, E value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    dst[i] = value;
  }
}

template <typename E, typename I>
__global__ void GatherKernel(const E* params, const I* indices, E* out, int64_t n, int64_t outer,
                             int64_t limit, int64_t num_indices, int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t k = i % inner;
    int64_t rest = i / inner;
    const int64_t j = rest % num_indices;
    rest /= num_indices;
    const int64_t o = rest % outer;
    const int64_t b = rest / outer;
    const int64_t index = static_cast<int64_t>(indices[b * num_indices + j]);
    out[i] = index >= 0 && index < limit ? params[((b * outer + o) * limit + index) * inner + k]
                                         : E(0);
  }
}

// Calls fn(E{}) with the unsigned type of `element_bytes` bytes.
template <typename Fn>
absl::Status BySize(int element_bytes, Fn&& fn) {
  switch (element_bytes) {
    case 1: fn(uint8_t{}); return absl::OkStatus();
    case 2: fn(uint16_t{}); return absl::OkStatus();
    case 4: fn(uint32_t{}); return absl::OkStatus();
    case 8: fn(uint64_t{}); return absl::OkStatus();
    default:
      return absl::InvalidArgumentError("no GPU copy of " + std::to_string(element_bytes) +
                                        "-byte elements");
  }
}

// ------------------------------------------------------------ reductions

__device__ __forceinline__ float MaxNaN(float a, float b) { return (isnan(a) || a > b) ? a : b; }
__device__ __forceinline__ float MinNaN(float a, float b) { return (isnan(a) || a < b) ? a : b; }

template <ReduceOp kOp>
struct Reducer {
  __device__ static float Init() {
    if constexpr (kOp == ReduceOp::kProd) return 1.0f;
    if constexpr (kOp == ReduceOp::kMax) return -INFINITY;
    if constexpr (kOp == ReduceOp::kMin) return INFINITY;
    return 0.0f;
  }
  __device__ float operator()(float a, float b) const {
    if constexpr (kOp == ReduceOp::kProd) return a * b;
    if constexpr (kOp == ReduceOp::kMax) return MaxNaN(a, b);
    if constexpr (kOp == ReduceOp::kMin) return MinNaN(a, b);
    return a + b;
  }
  __device__ static float Finish(float v, int64_t r) {
    if constexpr (kOp == ReduceOp::kMean) return v / static_cast<float>(r);  // 0/0: NaN
    return v;
  }
};

// inner == 1: one block per output, the row reduced in shared memory.
template <ReduceOp kOp>
__global__ void ReduceRowsKernel(const float* in, float* out, int64_t r) {
  __shared__ float shared[kRowThreads];
  const Reducer<kOp> op;
  const float* row = in + blockIdx.x * r;
  float acc = Reducer<kOp>::Init();
  for (int64_t j = threadIdx.x; j < r; j += blockDim.x) acc = op(acc, row[j]);
  acc = cuda_util::BlockReduce(acc, shared, op);
  if (threadIdx.x == 0) out[blockIdx.x] = Reducer<kOp>::Finish(acc, r);
}

// inner > 1: a thread per output, walking its column (neighbouring threads
// read neighbouring elements).
template <ReduceOp kOp>
__global__ void ReduceColumnsKernel(const float* in, float* out, int64_t outer, int64_t r,
                                    int64_t inner) {
  const Reducer<kOp> op;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < outer * inner;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t o = i / inner, k = i % inner;
    const float* p = in + o * r * inner + k;
    float acc = Reducer<kOp>::Init();
    for (int64_t j = 0; j < r; ++j) acc = op(acc, p[j * inner]);
    out[i] = Reducer<kOp>::Finish(acc, r);
  }
}

template <ReduceOp kOp>
void LaunchReduce(cudaStream_t s, const float* in, float* out, int64_t outer, int64_t r,
                  int64_t inner) {
  if (inner == 1) {
    ReduceRowsKernel<kOp><<<static_cast<unsigned>(outer), kRowThreads, 0, s>>>(in, out, r);
  } else {
    ReduceColumnsKernel<kOp>
        <<<Blocks(outer * inner, kThreads), kThreads, 0, s>>>(in, out, outer, r, inner);
  }
}

// ------------------------------------------------------------ pooling

__global__ void PoolKernel(const float* in, float* out, int64_t n_out, PoolGeometry g, bool max) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n_out;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t n, c, oh, ow;
    if (g.nchw) {
      ow = i % g.out_w;
      oh = (i / g.out_w) % g.out_h;
      c = (i / (g.out_w * g.out_h)) % g.c;
      n = i / (g.out_w * g.out_h * g.c);
    } else {
      c = i % g.c;
      ow = (i / g.c) % g.out_w;
      oh = (i / (g.c * g.out_w)) % g.out_h;
      n = i / (g.c * g.out_w * g.out_h);
    }
    const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
    const int64_t h_begin = h0 < 0 ? 0 : h0, w_begin = w0 < 0 ? 0 : w0;
    const int64_t h_end = min(h0 + g.window_h, g.h), w_end = min(w0 + g.window_w, g.w);
    // As the CPU's MaxPool: from the lowest float, `acc < v ? v : acc` (a
    // NaN input is passed over; a window with nothing inside gives lowest).
    float acc = max ? -FLT_MAX : 0.0f;
    for (int64_t h = h_begin; h < h_end; ++h) {
      for (int64_t w = w_begin; w < w_end; ++w) {
        const int64_t at = g.nchw ? ((n * g.c + c) * g.h + h) * g.w + w
                                  : ((n * g.h + h) * g.w + w) * g.c + c;
        const float v = in[at];
        acc = max ? (acc < v ? v : acc) : acc + v;
      }
    }
    if (!max) {
      const int64_t count = (h_end - h_begin) * (w_end - w_begin);
      acc = count > 0 ? acc / static_cast<float>(count) : 0.0f;
    }
    out[i] = acc;
  }
}

// ------------------------------------------------------------ batch norm

__global__ void NormalizeKernel(const float* x, const float* scale, const float* offset,
                                const float* mean, const float* variance, float epsilon,
                                float* y, int64_t n, ChannelView v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / v.inner) % v.channels;
    const float scaling = rsqrtf(variance[c] + epsilon) * scale[c];
    y[i] = (x[i] - mean[c]) * scaling + offset[c];
  }
}

// One block per channel: the mean, then the biased variance (two passes, as
// the CPU kernel), then the batch statistics TensorFlow returns.
__global__ void MomentsKernel(const float* x, const float* old_mean, const float* old_variance,
                              float factor, float* batch_mean, float* batch_variance,
                              float* saved_mean, float* saved_variance, ChannelView v) {
  __shared__ float shared[kRowThreads];
  const int64_t c = blockIdx.x;
  const int64_t count = v.outer * v.inner;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const int64_t o = j / v.inner, k = j % v.inner;
    sum += x[(o * v.channels + c) * v.inner + k];
  }
  const float mean = cuda_util::BlockReduce(sum, shared, cuda_util::SumOp()) /
                     static_cast<float>(count);
  float squares = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const int64_t o = j / v.inner, k = j % v.inner;
    const float d = x[(o * v.channels + c) * v.inner + k] - mean;
    squares += d * d;
  }
  const float var = cuda_util::BlockReduce(squares, shared, cuda_util::SumOp()) /
                    static_cast<float>(count);
  if (threadIdx.x != 0) return;
  saved_mean[c] = mean;
  saved_variance[c] = var;
  if (count == 0) {  // NaN statistics, as TensorFlow
    batch_mean[c] = batch_variance[c] = NAN;
    return;
  }
  const float adjust = static_cast<float>(count) / static_cast<float>(count > 1 ? count - 1 : 1);
  if (factor == 1.0f) {
    batch_mean[c] = mean;
    batch_variance[c] = var * adjust;
  } else {
    batch_mean[c] = old_mean[c] * (1.0f - factor) + mean * factor;
    batch_variance[c] = old_variance[c] * (1.0f - factor) + var * (factor * adjust);
  }
}

}  // namespace

absl::Status StridedCopy(void* stream, int element_bytes, const void* src, void* dst,
                         const StridedCopyPlan& plan) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  if (plan.rank < 0 || plan.rank > kMaxCopyDims) {
    return absl::InvalidArgumentError("a strided copy of rank " + std::to_string(plan.rank));
  }
  int64_t n = 1;
  for (int d = 0; d < plan.rank; ++d) n *= plan.dims[d];
  if (n == 0) return absl::OkStatus();
  status = BySize(element_bytes, [&](auto zero) {
    using E = decltype(zero);
    StridedCopyKernel<E><<<Blocks(n, kThreads), kThreads, 0, s>>>(
        static_cast<const E*>(src), static_cast<E*>(dst), n, plan);
  });
  if (!status.ok()) return status;
  return Launched("a strided copy");
}

absl::Status Fill(void* stream, int element_bytes, uint64_t bits, void* dst, int64_t n) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  status = BySize(element_bytes, [&](auto zero) {
    using E = decltype(zero);
    E value;
    std::memcpy(&value, &bits, sizeof(E));  // the low bytes (little-endian)
    FillKernel<E><<<Blocks(n, kThreads), kThreads, 0, s>>>(static_cast<E*>(dst), n, value);
  });
  if (!status.ok()) return status;
  return Launched("a fill");
}

absl::Status CopyOnDevice(void* stream, const void* src, void* dst, int64_t bytes) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok() || bytes == 0) return status;
  return FromCuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, s),
                  "cudaMemcpyAsync (device to device)");
}

absl::Status Gather(void* stream, int element_bytes, const void* params, IndexType index_type,
                    const void* indices, void* out, int64_t batch, int64_t outer, int64_t limit,
                    int64_t num_indices, int64_t inner) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  const int64_t n = batch * outer * num_indices * inner;
  if (n == 0) return absl::OkStatus();
  status = BySize(element_bytes, [&](auto zero) {
    using E = decltype(zero);
    const E* p = static_cast<const E*>(params);
    E* o = static_cast<E*>(out);
    if (index_type == IndexType::kInt32) {
      GatherKernel<E, int32_t><<<Blocks(n, kThreads), kThreads, 0, s>>>(
          p, static_cast<const int32_t*>(indices), o, n, outer, limit, num_indices, inner);
    } else {
      GatherKernel<E, int64_t><<<Blocks(n, kThreads), kThreads, 0, s>>>(
          p, static_cast<const int64_t*>(indices), o, n, outer, limit, num_indices, inner);
    }
  });
  if (!status.ok()) return status;
  return Launched("Gather");
}

absl::Status Reduce(void* stream, ReduceOp op, const float* in, float* out, int64_t outer,
                    int64_t r, int64_t inner) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  if (outer * inner == 0) return absl::OkStatus();
  if (inner == 1 && outer > 2147483647) {
    return absl::InvalidArgumentError("a reduction into more than 2^31 - 1 rows");
  }
  switch (op) {
    case ReduceOp::kSum: LaunchReduce<ReduceOp::kSum>(s, in, out, outer, r, inner); break;
    case ReduceOp::kMean: LaunchReduce<ReduceOp::kMean>(s, in, out, outer, r, inner); break;
    case ReduceOp::kMax: LaunchReduce<ReduceOp::kMax>(s, in, out, outer, r, inner); break;
    case ReduceOp::kMin: LaunchReduce<ReduceOp::kMin>(s, in, out, outer, r, inner); break;
    case ReduceOp::kProd: LaunchReduce<ReduceOp::kProd>(s, in, out, outer, r, inner); break;
  }
  return Launched("a reduction");
}

absl::Status Pool(void* stream, bool max, const float* in, float* out, const PoolGeometry& g) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  const int64_t n = g.n * g.c * g.out_h * g.out_w;
  if (n == 0) return absl::OkStatus();
  PoolKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(in, out, n, g, max);
  return Launched(max ? "MaxPool" : "AvgPool");
}

absl::Status BatchNormInference(void* stream, const float* x, const float* scale,
                                const float* offset, const float* mean, const float* variance,
                                float epsilon, float* y, const ChannelView& v) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  const int64_t n = v.outer * v.channels * v.inner;
  if (n == 0) return absl::OkStatus();
  NormalizeKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(x, scale, offset, mean, variance,
                                                           epsilon, y, n, v);
  return Launched("FusedBatchNorm");
}

absl::Status BatchNormTraining(void* stream, const float* x, const float* scale,
                               const float* offset, const float* old_mean,
                               const float* old_variance, float epsilon, float factor, float* y,
                               float* batch_mean, float* batch_variance, float* saved_mean,
                               float* saved_variance, const ChannelView& v) {
  cudaStream_t s;
  absl::Status status = Begin(stream, &s);
  if (!status.ok()) return status;
  if (v.channels == 0) return absl::OkStatus();
  if (v.channels > 2147483647) return absl::InvalidArgumentError("too many channels");
  MomentsKernel<<<static_cast<unsigned>(v.channels), kRowThreads, 0, s>>>(
      x, old_mean, old_variance, factor, batch_mean, batch_variance, saved_mean, saved_variance,
      v);
  status = Launched("FusedBatchNorm (statistics)");
  if (!status.ok()) return status;
  const int64_t n = v.outer * v.channels * v.inner;
  if (n == 0) return absl::OkStatus();
  NormalizeKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(x, scale, offset, saved_mean,
                                                           saved_variance, epsilon, y, n, v);
  return Launched("FusedBatchNorm");
}

}  // namespace gpu
}  // namespace graphrun
