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
__device__ __forceinline__ float ApplyUnary(float x, float alpha = 0.0f) {
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
  if constexpr (kOp == UnaryOp::kErf) return erff(x);
  if constexpr (kOp == UnaryOp::kErfc) return erfcf(x);
  if constexpr (kOp == UnaryOp::kFloor) return floorf(x);
  if constexpr (kOp == UnaryOp::kCeil) return ceilf(x);
  if constexpr (kOp == UnaryOp::kRint) return rintf(x);
  if constexpr (kOp == UnaryOp::kSign) return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
  if constexpr (kOp == UnaryOp::kLog1p) return log1pf(x);
  if constexpr (kOp == UnaryOp::kExpm1) return expm1f(x);
  if constexpr (kOp == UnaryOp::kSin) return sinf(x);
  if constexpr (kOp == UnaryOp::kCos) return cosf(x);
  if constexpr (kOp == UnaryOp::kSoftsign) return x / (1.0f + fabsf(x));
  if constexpr (kOp == UnaryOp::kSelu) {
    return x > 0.0f ? 1.0507009873554804934f * x
                    : 1.0507009873554804934f * 1.6732632423543772848f * expm1f(x);
  }
  if constexpr (kOp == UnaryOp::kLeakyRelu) return x > 0.0f ? x : x * alpha;
  return x;
}

template <UnaryOp kOp>
__global__ void UnaryKernel(const float* in, float* out, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = ApplyUnary<kOp>(in[i], alpha);
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
  if constexpr (kOp == BinaryOp::kFloorDiv) return floorf(x / y);
  if constexpr (kOp == BinaryOp::kFloorMod) {
    const float r = fmodf(x, y);
    return r != 0.0f && ((y < 0.0f) != (r < 0.0f)) ? r + y : r;
  }
  if constexpr (kOp == BinaryOp::kDivNoNan) return y == 0.0f ? 0.0f : x / y;
  return x;
}

// The element offsets of output element i in x, y (and the condition).
__device__ __forceinline__ void Offsets(int64_t i, const BroadcastShape& shape, int64_t* xi,
                                        int64_t* yi, int64_t* ci) {
  int64_t rest = i;
  *xi = *yi = *ci = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const int64_t coord = rest % shape.dims[d];
    rest /= shape.dims[d];
    *xi += coord * shape.x_strides[d];
    *yi += coord * shape.y_strides[d];
    *ci += coord * shape.c_strides[d];
  }
}

template <CompareOp kOp>
__global__ void CompareKernel(const float* x, const float* y, bool* out, int64_t n,
                              BroadcastShape shape) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t xi, yi, ci;
    Offsets(i, shape, &xi, &yi, &ci);
    const float a = x[xi], b = y[yi];
    bool r = false;
    if constexpr (kOp == CompareOp::kLess) r = a < b;
    if constexpr (kOp == CompareOp::kLessEqual) r = a <= b;
    if constexpr (kOp == CompareOp::kGreater) r = a > b;
    if constexpr (kOp == CompareOp::kGreaterEqual) r = a >= b;
    if constexpr (kOp == CompareOp::kEqual) r = a == b;
    if constexpr (kOp == CompareOp::kNotEqual) r = a != b;
    out[i] = r;
  }
}

__global__ void LogicalKernel(const bool* x, const bool* y, bool* out, int64_t n,
                              BroadcastShape shape, bool is_and) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t xi, yi, ci;
    Offsets(i, shape, &xi, &yi, &ci);
    out[i] = is_and ? (x[xi] && y[yi]) : (x[xi] || y[yi]);
  }
}

__global__ void LogicalNotKernel(const bool* x, bool* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = !x[i];
  }
}

__global__ void SelectKernel(const bool* cond, const float* x, const float* y, float* out,
                             int64_t n, BroadcastShape shape) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t xi, yi, ci;
    Offsets(i, shape, &xi, &yi, &ci);
    out[i] = cond[ci] ? x[xi] : y[yi];
  }
}

// Elements of a broadcast's output, and whether x and y are both laid out
// as the output (no broadcasting).
int64_t OutputElements(const BroadcastShape& shape, bool* same) {
  int64_t n = 1, contiguous = 1;
  *same = true;
  for (int d = shape.rank - 1; d >= 0; --d) {
    n *= shape.dims[d];
    *same = *same && (shape.dims[d] == 1 ||
                      (shape.x_strides[d] == contiguous && shape.y_strides[d] == contiguous));
    contiguous *= shape.dims[d];
  }
  return n;
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
    int64_t xi, yi, ci;
    Offsets(i, shape, &xi, &yi, &ci);
    out[i] = ApplyBinary<kOp>(x[xi], y[yi]);
  }
}

// out = act(in + bias) per channel of [outer, channels, inner]; in may be
// out. The activations are the unary kernels' (LeakyRelu, with its slope,
// aside).
__global__ void BiasActivationKernel(const float* in, const float* bias, float* out,
                                     ChannelView view, Activation act, float alpha) {
  const int64_t n = view.outer * view.channels * view.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    float v = in[i] + bias[(i / view.inner) % view.channels];
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

// Conversions through float for the 16-bit types, static_cast otherwise.
template <typename T>
__device__ __forceinline__ float ToFloat(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  if constexpr (!std::is_same_v<T, __half> && !std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<float>(x);
  }
}

template <typename From, typename To>
__device__ __forceinline__ To Convert(From x, bool truncate) {
  constexpr bool kFrom16 = std::is_same_v<From, __half> || std::is_same_v<From, __nv_bfloat16>;
  if constexpr (std::is_same_v<From, To>) {
    return x;
  } else if constexpr (std::is_same_v<To, __half>) {
    return truncate ? __float2half_rz(ToFloat(x)) : __float2half_rn(ToFloat(x));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return truncate ? __float2bfloat16_rz(ToFloat(x)) : __float2bfloat16_rn(ToFloat(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return ToFloat(x) != 0.0f;
  } else if constexpr (kFrom16) {
    return static_cast<To>(ToFloat(x));
  } else {
    return static_cast<To>(x);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, To* out, int64_t n, bool truncate) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = Convert<From, To>(in[i], truncate);
  }
}

// Calls fn(T{}) with the C++ type of a CastType.
template <typename Fn>
void VisitCastType(CastType t, Fn&& fn) {
  switch (t) {
    case CastType::kFloat: fn(float{}); break;
    case CastType::kHalf: fn(__half{}); break;
    case CastType::kBfloat16: fn(__nv_bfloat16{}); break;
    case CastType::kDouble: fn(double{}); break;
    case CastType::kInt32: fn(int32_t{}); break;
    case CastType::kInt64: fn(int64_t{}); break;
    case CastType::kBool: fn(bool{}); break;
  }
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

absl::Status Unary(void* stream, UnaryOp op, const float* in, float* out, int64_t n,
                   float alpha) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  const int blocks = Blocks(n, threads);
  switch (op) {
#define GR_UNARY_CASE(name) \
  case UnaryOp::name:       \
    UnaryKernel<UnaryOp::name><<<blocks, threads, 0, s>>>(in, out, n, alpha); \
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
    GR_UNARY_CASE(kErf)
    GR_UNARY_CASE(kErfc)
    GR_UNARY_CASE(kFloor)
    GR_UNARY_CASE(kCeil)
    GR_UNARY_CASE(kRint)
    GR_UNARY_CASE(kSign)
    GR_UNARY_CASE(kLog1p)
    GR_UNARY_CASE(kExpm1)
    GR_UNARY_CASE(kSin)
    GR_UNARY_CASE(kCos)
    GR_UNARY_CASE(kSoftsign)
    GR_UNARY_CASE(kSelu)
    GR_UNARY_CASE(kLeakyRelu)
#undef GR_UNARY_CASE
  }
  return Launched("a unary kernel");
}

absl::Status Binary(void* stream, BinaryOp op, const float* x, const float* y, float* out,
                    const BroadcastShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  bool same = true;
  const int64_t n = OutputElements(shape, &same);
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
    GR_BINARY_CASE(kFloorDiv)
    GR_BINARY_CASE(kFloorMod)
    GR_BINARY_CASE(kDivNoNan)
#undef GR_BINARY_CASE
  }
  return Launched("a binary kernel");
}

absl::Status Compare(void* stream, CompareOp op, const float* x, const float* y, bool* out,
                     const BroadcastShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  bool same = true;
  const int64_t n = OutputElements(shape, &same);
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  const int blocks = Blocks(n, threads);
  switch (op) {
#define GR_COMPARE_CASE(name)                                                      \
  case CompareOp::name:                                                            \
    CompareKernel<CompareOp::name><<<blocks, threads, 0, s>>>(x, y, out, n, shape); \
    break;
    GR_COMPARE_CASE(kLess)
    GR_COMPARE_CASE(kLessEqual)
    GR_COMPARE_CASE(kGreater)
    GR_COMPARE_CASE(kGreaterEqual)
    GR_COMPARE_CASE(kEqual)
    GR_COMPARE_CASE(kNotEqual)
#undef GR_COMPARE_CASE
  }
  return Launched("a comparison");
}

absl::Status Logical(void* stream, bool is_and, const bool* x, const bool* y, bool* out,
                     const BroadcastShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  bool same = true;
  const int64_t n = OutputElements(shape, &same);
  if (n == 0) return absl::OkStatus();
  LogicalKernel<<<Blocks(n, 256), 256, 0, s>>>(x, y, out, n, shape, is_and);
  return Launched(is_and ? "LogicalAnd" : "LogicalOr");
}

absl::Status LogicalNot(void* stream, const bool* x, bool* out, int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok() || n == 0) return status;
  LogicalNotKernel<<<Blocks(n, 256), 256, 0, s>>>(x, out, n);
  return Launched("LogicalNot");
}

absl::Status Select(void* stream, const bool* cond, const float* x, const float* y, float* out,
                    const BroadcastShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  bool same = true;
  const int64_t n = OutputElements(shape, &same);
  if (n == 0) return absl::OkStatus();
  SelectKernel<<<Blocks(n, 256), 256, 0, s>>>(cond, x, y, out, n, shape);
  return Launched("SelectV2");
}

namespace {
absl::Status LaunchBiasActivation(void* stream, const float* in, const float* bias, float* out,
                                  const ChannelView& v, Activation act, float alpha,
                                  const char* what) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  const int64_t n = v.outer * v.channels * v.inner;
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  BiasActivationKernel<<<Blocks(n, threads), threads, 0, s>>>(in, bias, out, v, act, alpha);
  return Launched(what);
}

ChannelView Rows(int64_t rows, int64_t cols) {
  ChannelView v;
  v.outer = rows;
  v.channels = cols;
  v.inner = 1;
  return v;
}
}  // namespace

absl::Status BiasAdd(void* stream, const float* in, const float* bias, float* out, int64_t rows,
                     int64_t cols) {
  return LaunchBiasActivation(stream, in, bias, out, Rows(rows, cols), Activation::kNone, 0.0f,
                              "BiasAdd");
}

absl::Status BiasActivation(void* stream, float* x, const float* bias, int64_t rows,
                            int64_t cols, Activation act, float leakyrelu_alpha) {
  return LaunchBiasActivation(stream, x, bias, x, Rows(rows, cols), act, leakyrelu_alpha,
                              "a bias + activation epilogue");
}

absl::Status ChannelBiasActivation(void* stream, const float* in, const float* bias, float* out,
                                   const ChannelView& v, Activation act, float leakyrelu_alpha) {
  return LaunchBiasActivation(stream, in, bias, out, v, act, leakyrelu_alpha,
                              "a per-channel bias + activation");
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

absl::Status Cast(void* stream, CastType from, CastType to, const void* in, void* out, int64_t n,
                  bool truncate) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  const int threads = 256;
  VisitCastType(from, [&](auto from_zero) {
    using From = decltype(from_zero);
    VisitCastType(to, [&](auto to_zero) {
      using To = decltype(to_zero);
      CastKernel<From, To><<<Blocks(n, threads), threads, 0, s>>>(static_cast<const From*>(in),
                                                                  static_cast<To*>(out), n,
                                                                  truncate);
    });
  });
  return Launched("Cast");
}

}  // namespace gpu
}  // namespace graphrun
