// gpu_launch.h over cuBLAS and CUDA kernels; compiled by nvcc on every
// build with the toolkit.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <type_traits>

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

absl::Status FromCublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = std::string(what) + ": " + cublasGetStatusName(s) + " (" +
                              cublasGetStatusString(s) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  if (s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_NOT_SUPPORTED) {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(message);
}

// One cuBLAS handle per (GPU, stream), made on first use, kept for the
// process: a stream made later at a freed stream's address on the same GPU
// gets that handle (rebound to it), never another GPU's.
absl::Status HandleFor(cudaStream_t stream, cublasHandle_t* handle) {
  int device = 0;
  cudaGetDevice(&device);
  static std::mutex mu;
  static auto* handles = new std::map<std::pair<int, cudaStream_t>, cublasHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find({device, stream});
  if (it != handles->end()) {
    *handle = it->second;
    return absl::OkStatus();
  }
  cublasHandle_t h;
  absl::Status s = FromCublas(cublasCreate(&h), "cublasCreate");
  if (!s.ok()) return s;
  s = FromCublas(cublasSetStream(h, stream), "cublasSetStream");
  if (!s.ok()) {
    cublasDestroy(h);
    return s;
  }
  (*handles)[{device, stream}] = h;
  *handle = h;
  return absl::OkStatus();
}

// ------------------------------------------------------------ elementwise

template <UnaryOp kOp>
__device__ __forceinline__ float ApplyUnary(float x) {
  if constexpr (kOp == UnaryOp::kNeg) return -x;
  if constexpr (kOp == UnaryOp::kAbs) return fabsf(x);
  if constexpr (kOp == UnaryOp::kSquare) return x * x;
  if constexpr (kOp == UnaryOp::kSqrt) return sqrtf(x);
  if constexpr (kOp == UnaryOp::kRsqrt) return rsqrtf(x);
  if constexpr (kOp == UnaryOp::kExp) return expf(x);
  if constexpr (kOp == UnaryOp::kLog) return logf(x);
  if constexpr (kOp == UnaryOp::kTanh) return tanhf(x);
  if constexpr (kOp == UnaryOp::kSigmoid) return 1.0f / (1.0f + expf(-x));
  if constexpr (kOp == UnaryOp::kRelu) return x > 0.0f ? x : 0.0f;
  if constexpr (kOp == UnaryOp::kRelu6) return fminf(fmaxf(x, 0.0f), 6.0f);
  if constexpr (kOp == UnaryOp::kElu) return x > 0.0f ? x : expm1f(x);
  if constexpr (kOp == UnaryOp::kSoftplus) return x > 20.0f ? x : log1pf(expf(x));
  if constexpr (kOp == UnaryOp::kReciprocal) return 1.0f / x;
  return x;
}

template <UnaryOp kOp>
__global__ void UnaryKernel(const float* in, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = ApplyUnary<kOp>(in[i]);
  }
}

template <BinaryOp kOp>
__device__ __forceinline__ float ApplyBinary(float x, float y) {
  if constexpr (kOp == BinaryOp::kAdd) return x + y;
  if constexpr (kOp == BinaryOp::kSub) return x - y;
  if constexpr (kOp == BinaryOp::kMul) return x * y;
  if constexpr (kOp == BinaryOp::kDiv) return x / y;
  if constexpr (kOp == BinaryOp::kMaximum) return fmaxf(x, y);
  if constexpr (kOp == BinaryOp::kMinimum) return fminf(x, y);
  if constexpr (kOp == BinaryOp::kSquaredDifference) return (x - y) * (x - y);
  if constexpr (kOp == BinaryOp::kPow) return powf(x, y);
  return x;
}

template <BinaryOp kOp>
__global__ void BinarySameShapeKernel(const float* x, const float* y, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = ApplyBinary<kOp>(x[i], y[i]);
  }
}

template <BinaryOp kOp>
__global__ void BinaryBroadcastKernel(const float* x, const float* y, float* out, int64_t n,
                                      BroadcastShape shape) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, xi = 0, yi = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % shape.dims[d];
      rest /= shape.dims[d];
      xi += coord * shape.x_strides[d];
      yi += coord * shape.y_strides[d];
    }
    out[i] = ApplyBinary<kOp>(x[xi], y[yi]);
  }
}

// out = act(in + bias) per row; in may be out. The activations are the
// unary kernels' (LeakyRelu, with its slope, aside).
__global__ void BiasActivationKernel(const float* in, const float* bias, float* out, int64_t rows,
                                     int64_t cols, Activation act, float alpha) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    float v = in[i] + bias[i % cols];
    switch (act) {
      case Activation::kNone: break;
      case Activation::kRelu: v = ApplyUnary<UnaryOp::kRelu>(v); break;
      case Activation::kRelu6: v = ApplyUnary<UnaryOp::kRelu6>(v); break;
      case Activation::kElu: v = ApplyUnary<UnaryOp::kElu>(v); break;
      case Activation::kLeakyRelu: v = v > 0.0f ? v : v * alpha; break;
      case Activation::kTanh: v = ApplyUnary<UnaryOp::kTanh>(v); break;
      case Activation::kSigmoid: v = ApplyUnary<UnaryOp::kSigmoid>(v); break;
    }
    out[i] = v;
  }
}

__global__ void SoftmaxKernel(const float* in, float* out, int64_t cols, bool log) {
  __shared__ float shared[kRowThreads];
  const float* row = in + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = cuda_util::BlockReduce(m, shared, cuda_util::MaxOp());
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
  sum = cuda_util::BlockReduce(sum, shared, cuda_util::SumOp());
  const float log_sum = logf(sum);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    dst[c] = log ? row[c] - m - log_sum : expf(row[c] - m) / sum;
  }
}

template <typename From, typename To>
__device__ __forceinline__ To Convert(From x) {
  if constexpr (std::is_same_v<From, To>) return x;
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, __half>) {
    return __float2half_rn(x);
  }
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  }
  if constexpr (std::is_same_v<From, __half> && std::is_same_v<To, float>) {
    return __half2float(x);
  }
  if constexpr (std::is_same_v<From, __nv_bfloat16> && std::is_same_v<To, float>) {
    return __bfloat162float(x);
  }
  if constexpr (std::is_same_v<From, __half> && std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(__half2float(x));
  }
  if constexpr (std::is_same_v<From, __nv_bfloat16> && std::is_same_v<To, __half>) {
    return __float2half_rn(__bfloat162float(x));
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, To* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = Convert<From, To>(in[i]);
  }
}

template <typename From>
absl::Status CastFrom(cudaStream_t s, ElementType to, const void* in, void* out, int64_t n) {
  const int threads = 256;
  const From* src = static_cast<const From*>(in);
  switch (to) {
    case ElementType::kFloat:
      CastKernel<From, float><<<Blocks(n, threads), threads, 0, s>>>(src, static_cast<float*>(out), n);
      break;
    case ElementType::kHalf:
      CastKernel<From, __half><<<Blocks(n, threads), threads, 0, s>>>(src, static_cast<__half*>(out), n);
      break;
    case ElementType::kBfloat16:
      CastKernel<From, __nv_bfloat16>
          <<<Blocks(n, threads), threads, 0, s>>>(src, static_cast<__nv_bfloat16*>(out), n);
      break;
  }
  return Launched("Cast");
}

}  // namespace

absl::Status Gemm(void* stream, ElementType type, bool transpose_a, bool transpose_b, int64_t m,
                  int64_t n, int64_t k, const void* a, const void* b, void* c, int64_t batch,
                  int64_t stride_a, int64_t stride_b, int64_t stride_c, bool allow_tf32) {
  constexpr int64_t kMaxInt = 2147483647;
  if (m < 1 || n < 1 || k < 1 || batch < 1 || m > kMaxInt || n > kMaxInt || k > kMaxInt ||
      batch > kMaxInt) {
    return absl::InvalidArgumentError(
        "a GEMM of m=" + std::to_string(m) + ", n=" + std::to_string(n) + ", k=" +
        std::to_string(k) + ", batch=" + std::to_string(batch) +
        " (each must be in [1, 2^31 - 1] for cuBLAS)");
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  cublasHandle_t handle;
  status = HandleFor(s, &handle);
  if (!status.ok()) return status;
  cudaDataType_t data = CUDA_R_32F;
  cublasComputeType_t compute = allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (type == ElementType::kHalf) {
    data = CUDA_R_16F;
    compute = CUBLAS_COMPUTE_32F;
  } else if (type == ElementType::kBfloat16) {
    data = CUDA_R_16BF;
    compute = CUBLAS_COMPUTE_32F;
  }
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
  // gets B first, with the row-major leading dimensions.
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ldb = transpose_b ? k : n;
  const int64_t lda = transpose_a ? m : k;
  return FromCublas(
      cublasGemmStridedBatchedEx(handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                 static_cast<int>(k), &alpha, b, data, static_cast<int>(ldb),
                                 stride_b, a, data, static_cast<int>(lda), stride_a, &beta, c,
                                 data, static_cast<int>(n), stride_c, static_cast<int>(batch),
                                 compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

absl::Status Unary(void* stream, UnaryOp op, const float* in, float* out, int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  const int blocks = Blocks(n, threads);
  switch (op) {
#define GR_UNARY_CASE(name) \
  case UnaryOp::name:       \
    UnaryKernel<UnaryOp::name><<<blocks, threads, 0, s>>>(in, out, n); \
    break;
    GR_UNARY_CASE(kNeg)
    GR_UNARY_CASE(kAbs)
    GR_UNARY_CASE(kSquare)
    GR_UNARY_CASE(kSqrt)
    GR_UNARY_CASE(kRsqrt)
    GR_UNARY_CASE(kExp)
    GR_UNARY_CASE(kLog)
    GR_UNARY_CASE(kTanh)
    GR_UNARY_CASE(kSigmoid)
    GR_UNARY_CASE(kRelu)
    GR_UNARY_CASE(kRelu6)
    GR_UNARY_CASE(kElu)
    GR_UNARY_CASE(kSoftplus)
    GR_UNARY_CASE(kReciprocal)
#undef GR_UNARY_CASE
  }
  return Launched("a unary kernel");
}

absl::Status Binary(void* stream, BinaryOp op, const float* x, const float* y, float* out,
                    const BroadcastShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  int64_t n = 1;
  bool same = true;
  int64_t contiguous = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    n *= shape.dims[d];
    same = same && (shape.dims[d] == 1 ||
                    (shape.x_strides[d] == contiguous && shape.y_strides[d] == contiguous));
    contiguous *= shape.dims[d];
  }
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  const int blocks = Blocks(n, threads);
  switch (op) {
#define GR_BINARY_CASE(name)                                                              \
  case BinaryOp::name:                                                                    \
    if (same) {                                                                           \
      BinarySameShapeKernel<BinaryOp::name><<<blocks, threads, 0, s>>>(x, y, out, n);     \
    } else {                                                                              \
      BinaryBroadcastKernel<BinaryOp::name><<<blocks, threads, 0, s>>>(x, y, out, n, shape); \
    }                                                                                     \
    break;
    GR_BINARY_CASE(kAdd)
    GR_BINARY_CASE(kSub)
    GR_BINARY_CASE(kMul)
    GR_BINARY_CASE(kDiv)
    GR_BINARY_CASE(kMaximum)
    GR_BINARY_CASE(kMinimum)
    GR_BINARY_CASE(kSquaredDifference)
    GR_BINARY_CASE(kPow)
#undef GR_BINARY_CASE
  }
  return Launched("a binary kernel");
}

namespace {
absl::Status LaunchBiasActivation(void* stream, const float* in, const float* bias, float* out,
                                  int64_t rows, int64_t cols, Activation act, float alpha,
                                  const char* what) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (rows * cols == 0) return absl::OkStatus();
  const int threads = 256;
  BiasActivationKernel<<<Blocks(rows * cols, threads), threads, 0, s>>>(in, bias, out, rows, cols,
                                                                        act, alpha);
  return Launched(what);
}
}  // namespace

absl::Status BiasAdd(void* stream, const float* in, const float* bias, float* out, int64_t rows,
                     int64_t cols) {
  return LaunchBiasActivation(stream, in, bias, out, rows, cols, Activation::kNone, 0.0f,
                              "BiasAdd");
}

absl::Status BiasActivation(void* stream, float* x, const float* bias, int64_t rows,
                            int64_t cols, Activation act, float leakyrelu_alpha) {
  return LaunchBiasActivation(stream, x, bias, x, rows, cols, act, leakyrelu_alpha,
                              "a bias + activation epilogue");
}

absl::Status Softmax(void* stream, const float* in, float* out, int64_t rows, int64_t cols,
                     bool log) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (rows == 0 || cols == 0) return absl::OkStatus();
  if (rows > 2147483647) return absl::InvalidArgumentError("Softmax: too many rows");
  SoftmaxKernel<<<static_cast<unsigned>(rows), kRowThreads, 0, s>>>(in, out, cols, log);
  return Launched("Softmax");
}

absl::Status Zero(void* stream, void* ptr, int64_t bytes) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (bytes == 0) return absl::OkStatus();
  return FromCuda(cudaMemsetAsync(ptr, 0, static_cast<size_t>(bytes), s), "cudaMemsetAsync");
}

absl::Status Cast(void* stream, ElementType from, ElementType to, const void* in, void* out,
                  int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  switch (from) {
    case ElementType::kFloat:
      return CastFrom<float>(s, to, in, out, n);
    case ElementType::kHalf:
      return CastFrom<__half>(s, to, in, out, n);
    case ElementType::kBfloat16:
      return CastFrom<__nv_bfloat16>(s, to, in, out, n);
  }
  return absl::InvalidArgumentError("Cast: unknown element type");
}

}  // namespace gpu
}  // namespace graphrun
