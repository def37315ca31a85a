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
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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
  kSoftplus, kReciprocal, kErf, kErfc, kFloor, kCeil, kRint, kSign, kLog1p, kExpm1, kSin, kCos,
  kSoftsign, kSelu, kLeakyRelu,
};
// out[i] = op(in[i]), float; `alpha` is LeakyRelu's slope (unused by the
// others). kRint rounds half to even (TensorFlow's Round and Rint).
absl::Status Unary(void* stream, UnaryOp op, const float* in, float* out, int64_t n,
                   float alpha = 0.0f);

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kSquaredDifference, kPow, kFloorDiv, kFloorMod,
  kDivNoNan,
};
// Up to kMaxBroadcastDims dims; `dims` the output's, `*_strides` each
// input's element strides per output dim (0 where broadcast); c_strides
// only for Select's condition.
inline constexpr int kMaxBroadcastDims = 6;
struct BroadcastShape {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t x_strides[kMaxBroadcastDims] = {};
  int64_t y_strides[kMaxBroadcastDims] = {};
  int64_t c_strides[kMaxBroadcastDims] = {};
};
// out = x op y with broadcasting, float.
absl::Status Binary(void* stream, BinaryOp op, const float* x, const float* y, float* out,
                    const BroadcastShape& shape);

// out = x op y with broadcasting, float x and y, bool out (1 byte).
enum class CompareOp { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };
absl::Status Compare(void* stream, CompareOp op, const float* x, const float* y, bool* out,
                     const BroadcastShape& shape);

// out = x && y (or x || y) with broadcasting; out = !x.
absl::Status Logical(void* stream, bool is_and, const bool* x, const bool* y, bool* out,
                     const BroadcastShape& shape);
absl::Status LogicalNot(void* stream, const bool* x, bool* out, int64_t n);

// out = cond ? x : y with broadcasting of all three (SelectV2), float.
absl::Status Select(void* stream, const bool* cond, const float* x, const float* y, float* out,
                    const BroadcastShape& shape);

// out[r, c] = in[r, c] + bias[c] for `rows` rows of `cols`, float.
absl::Status BiasAdd(void* stream, const float* in, const float* bias, float* out, int64_t rows,
                     int64_t cols);

// A tensor seen as [outer, channels, inner]: channels last (NHWC: inner 1)
// or after the batch (NCHW: outer N, inner H*W).
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 1;
};

// The epilogue of _FusedMatMul: in place, x[r, c] = act(x[r, c] + bias[c]).
enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };
absl::Status BiasActivation(void* stream, float* x, const float* bias, int64_t rows,
                            int64_t cols, Activation act, float leakyrelu_alpha);

// The same over any channel view (NCHW's BiasAdd and fused convolution):
// out[o, c, i] = act(in[o, c, i] + bias[c]); out may be in.
absl::Status ChannelBiasActivation(void* stream, const float* in, const float* bias, float* out,
                                   const ChannelView& v, Activation act, float leakyrelu_alpha);

// Softmax (or LogSoftmax) over the last dim of [rows, cols], float.
absl::Status Softmax(void* stream, const float* in, float* out, int64_t rows, int64_t cols,
                     bool log);

// `bytes` zero bytes at `ptr`.
absl::Status Zero(void* stream, void* ptr, int64_t bytes);

// Cast between float, half, bfloat16 (round to nearest even, or toward
// zero with `truncate`: Cast's Truncate attr), double, int32, int64 and
// bool, as static_cast does (float to int truncates; to bool: x != 0).
enum class CastType { kFloat, kHalf, kBfloat16, kDouble, kInt32, kInt64, kBool };
absl::Status Cast(void* stream, CastType from, CastType to, const void* in, void* out, int64_t n,
                  bool truncate = false);

// ------------------------------------------------------ data movement
// The launchers below move elements of 1, 2, 4 or 8 bytes bitwise, so one
// kernel serves every dtype of that size (array_launch.cu).

inline constexpr int kMaxCopyDims = 8;
// For every index (i_0, ..., i_rank-1) below dims:
//   dst[dst_offset + sum i_d * dst_strides[d]] =
//       src[src_offset + sum i_d * src_strides[d]]
// Strides and offsets in elements; source strides may be negative or 0.
// rank 0 copies one element. Made by array_plans.h.
struct StridedCopyPlan {
  int rank = 0;
  int64_t dims[kMaxCopyDims] = {};
  int64_t src_strides[kMaxCopyDims] = {};
  int64_t dst_strides[kMaxCopyDims] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};
absl::Status StridedCopy(void* stream, int element_bytes, const void* src, void* dst,
                         const StridedCopyPlan& plan);

// n elements of `element_bytes` each set to the low bytes of `bits`.
absl::Status Fill(void* stream, int element_bytes, uint64_t bits, void* dst, int64_t n);

// `bytes` bytes from src to dst, both device memory, on the stream.
absl::Status CopyOnDevice(void* stream, const void* src, void* dst, int64_t bytes);

// out[b, o, j, k] = params[b, o, indices[b, j], k] for params [batch,
// outer, limit, inner] and indices [batch, num_indices]; an index outside
// [0, limit) gives zeros (TensorFlow's GPU Gather).
enum class IndexType { kInt32, kInt64 };
absl::Status Gather(void* stream, int element_bytes, const void* params, IndexType index_type,
                    const void* indices, void* out, int64_t batch, int64_t outer, int64_t limit,
                    int64_t num_indices, int64_t inner);

// out[o, k] = reduce over j of in[o, j, k], float. An empty reduction gives
// the op's identity (sum 0, prod 1, max -inf, min +inf; mean NaN); a NaN
// in a max or min gives NaN, as on CPU.
enum class ReduceOp { kSum, kMean, kMax, kMin, kProd };
absl::Status Reduce(void* stream, ReduceOp op, const float* in, float* out, int64_t outer,
                    int64_t r, int64_t inner);

// ------------------------------------------------------------ nn

// 2-D max or average pooling of float NHWC (or NCHW) input, any padding:
// windows start at -pad_top / -pad_left, and the average counts only the
// elements inside the input (TensorFlow's AvgPool).
struct PoolGeometry {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t window_h = 1, window_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_h = 0, out_w = 0;
};
absl::Status Pool(void* stream, bool max, const float* in, float* out, const PoolGeometry& g);

// y = (x - mean) * rsqrt(variance + epsilon) * scale + offset; y may be x.
absl::Status BatchNormInference(void* stream, const float* x, const float* scale,
                                const float* offset, const float* mean, const float* variance,
                                float epsilon, float* y, const ChannelView& v);
// The batch's mean and biased variance into saved_mean / saved_variance, y
// normalized with them, and batch_mean / batch_variance: the mean and the
// unbiased variance, blended into old_mean / old_variance by
// (1 - factor, factor) when factor != 1 (old_* may be null when it is 1).
absl::Status BatchNormTraining(void* stream, const float* x, const float* scale,
                               const float* offset, const float* old_mean,
                               const float* old_variance, float epsilon, float factor, float* y,
                               float* batch_mean, float* batch_variance, float* saved_mean,
                               float* saved_variance, const ChannelView& v);

// A 2-D convolution as cuDNN runs it (cudnn_launch.cu): float input
// [n, c, h, w] in NHWC or NCHW order, the filter [out_c, kh, kw, c/groups]
// (NHWC) or [out_c, c/groups, kh, kw] (NCHW), symmetric zero padding
// pad_h / pad_w, output [n, out_c, out_h, out_w] in the input's order.
// `groups` = c for a depthwise convolution. Made by array_plans.h, which
// also says how TensorFlow's asymmetric padding is brought to this.
struct ConvGeometry {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t out_c = 0, kh = 1, kw = 1, groups = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t out_h = 0, out_w = 0;
};
// `workspace(bytes)` gives device scratch for cuDNN's algorithm (valid
// until the work on the stream is done, as a kernel's temp tensor is).
using WorkspaceFn = std::function<absl::StatusOr<void*>(int64_t bytes)>;
absl::Status Conv2D(void* stream, const ConvGeometry& g, const float* in, const float* filter,
                    float* out, const WorkspaceFn& workspace);

// ------------------------------------------------------------ gradients
// (cudnn_launch.cu and nn_grad_launch.cu.)

// The convolution `g` (as Conv2D runs it) backward on cuDNN: in_backprop
// [n, c, h, w] (g's order) from the filter (cuDNN's layout) and
// out_backprop [n, out_c, out_h, out_w]; filter_backprop (cuDNN's layout)
// from the input and out_backprop. Both overwrite their output.
absl::Status Conv2DBackpropInput(void* stream, const ConvGeometry& g, const float* filter,
                                 const float* out_backprop, float* in_backprop,
                                 const WorkspaceFn& workspace);
absl::Status Conv2DBackpropFilter(void* stream, const ConvGeometry& g, const float* in,
                                  const float* out_backprop, float* filter_backprop,
                                  const WorkspaceFn& workspace);

// The pooling `g` backward, float, in g's layout; each input element's
// gradient gathered over the windows that cover it, in output order (no
// atomics: deterministic). MaxPoolGrad: each window's gradient goes to its
// first maximum in row-major scan order (a later element only when
// greater, so a NaN first stays and a later NaN never wins). AvgPoolGrad:
// each window's gradient divided by the count of its elements inside the
// input.
absl::Status MaxPoolGrad(void* stream, const float* in, const float* grad, float* in_backprop,
                         const PoolGeometry& g);
absl::Status AvgPoolGrad(void* stream, const float* grad, float* in_backprop,
                         const PoolGeometry& g);

// out[i] = op's gradient from a[i], b[i], float, as the CPU kernels:
// kRelu g * (f > 0) (a NaN or infinite g times 0 stays NaN, as on CPU);
// kRelu6 g * (0 < f < 6); kElu (g, y) y < 0 ? g * (y + 1) : g; kSelu (g, y)
// y < 0 ? g * (y + 1.7580993...) : g * 1.0507009...; kLeakyRelu f > 0 ? g :
// g * alpha; kSoftplus g / (exp(-f) + 1); kSoftsign g / (|f| + 1)^2;
// kSigmoid (y, dy) dy * (y * (1 - y)); kTanh (y, dy) dy * (1 - y * y);
// kRsqrt (y, dy) (dy * y * -0.5) * (y * y); kSqrt (y, dy) (0.5 / y) * dy;
// kReciprocal (y, dy) -(dy * (y * y)). a and b are the op's inputs 0 and 1.
enum class GradOp {
  kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign, kSigmoid, kTanh, kRsqrt, kSqrt,
  kReciprocal,
};
absl::Status ActivationGrad(void* stream, GradOp op, const float* a, const float* b, float* out,
                            int64_t n, float alpha = 0.0f);

// Softmax cross entropy per row of [rows, cols] logits, float: shifted =
// logits - max, sum = sum(exp(shifted)), loss[r] = sum(labels * (log(sum) -
// shifted)), backprop = exp(shifted) / sum - labels. The dense labels (and
// logits) are read at row * *_row_stride + col * *_col_stride (0 where they
// broadcast); logits' strides likewise. The sparse form's labels are class
// indices; one outside [0, cols) makes its row's loss and backprop NaN (as
// TensorFlow's GPU kernel).
struct XentShape {
  int64_t rows = 0, cols = 0;
  int64_t logits_row_stride = 0, logits_col_stride = 1;
  int64_t labels_row_stride = 0, labels_col_stride = 1;
};
absl::Status SoftmaxCrossEntropy(void* stream, const float* logits, const float* labels,
                                 float* loss, float* backprop, const XentShape& shape);
absl::Status SparseSoftmaxCrossEntropy(void* stream, const float* logits, IndexType label_type,
                                       const void* labels, float* loss, float* backprop,
                                       int64_t rows, int64_t cols);

// ------------------------------------------------------------ training
// (training_launch.cu.) Every sum, product, quotient and square root is
// rounded on its own (no fused multiply-add), in TensorFlow's order, so
// the results are the CPU kernels' bit for bit.

// The optimizer updates in place, over n elements, float. The
// hyperparameters are device pointers to one float each.
// var -= grad * alpha.
absl::Status ApplyGradientDescent(void* stream, float* var, const float* alpha,
                                  const float* grad, int64_t n);
// accum = accum * momentum + grad; var -= accum * lr, or with Nesterov
// var -= grad * lr + accum * momentum * lr.
absl::Status ApplyMomentum(void* stream, float* var, float* accum, const float* lr,
                           const float* grad, const float* momentum, bool nesterov, int64_t n);
// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m += (grad - m) * (1 - beta1); v += (grad * grad - v) * (1 - beta2);
// var -= m * alpha / (sqrt(v) + epsilon), or with Nesterov
// var -= (grad * (1 - beta1) + beta1 * m) * alpha / (sqrt(v) + epsilon).
struct AdamHyper {
  const float* beta1_power = nullptr;
  const float* beta2_power = nullptr;
  const float* lr = nullptr;
  const float* beta1 = nullptr;
  const float* beta2 = nullptr;
  const float* epsilon = nullptr;
};
absl::Status ApplyAdam(void* stream, float* var, float* m, float* v, const AdamHyper& hyper,
                       const float* grad, bool nesterov, int64_t n);

}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_GPU_GPU_LAUNCH_H_
