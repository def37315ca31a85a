// The gradient launchers of gpu_launch.h that are CUDA kernels: MaxPoolGrad
// and AvgPoolGrad, the activation gradients and the softmax cross
// entropies, float.
//
// The pooling gradients gather rather than scatter: one thread per input
// element visits the windows that cover it in output order and adds the
// gradients that are its own, so no two threads write one element and the
// sums never depend on scheduling (deterministic, and for MaxPoolGrad the
// CPU kernel's sums bit for bit). MaxPoolGrad recomputes each covering
// window's first maximum (a window of k elements read once per element it
// covers: k^2 reads per element for stride 1, about k^2 / s^2 for stride s).
// The element-wise gradients round every step on its own (__f*_rn) in the
// CPU kernels' association. The cross entropies take one block per row.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {
namespace {

using cuda_util::BlockReduce;
using cuda_util::Blocks;
using cuda_util::kRowThreads;
using cuda_util::Launched;
using cuda_util::MaxOp;
using cuda_util::SumOp;
using cuda_util::UseStreamDevice;

constexpr int kThreads = 256;

#define GR_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

// Element i of a pooling's input in g's layout as (n, h, w, c), and the
// offsets of an image's (h, w) and of an output (n, oh, ow, c).
struct PoolIndex {
  int64_t n, h, w, c;
  __device__ PoolIndex(const PoolGeometry& g, int64_t i) {
    if (g.nchw) {
      w = i % g.w;
      h = (i / g.w) % g.h;
      c = (i / (g.w * g.h)) % g.c;
      n = i / (g.w * g.h * g.c);
    } else {
      c = i % g.c;
      w = (i / g.c) % g.w;
      h = (i / (g.c * g.w)) % g.h;
      n = i / (g.c * g.w * g.h);
    }
  }
  __device__ int64_t In(const PoolGeometry& g, int64_t ih, int64_t iw) const {
    return g.nchw ? ((n * g.c + c) * g.h + ih) * g.w + iw : ((n * g.h + ih) * g.w + iw) * g.c + c;
  }
  __device__ int64_t Out(const PoolGeometry& g, int64_t oh, int64_t ow) const {
    return g.nchw ? ((n * g.c + c) * g.out_h + oh) * g.out_w + ow
                  : ((n * g.out_h + oh) * g.out_w + ow) * g.c + c;
  }
};

// The outputs [*first, *last) whose windows (size k, stride s, starting at
// o * s - pad) cover input position p.
__device__ void Covering(int64_t p, int64_t k, int64_t s, int64_t pad, int64_t out,
                         int64_t* first, int64_t* last) {
  const int64_t q = p + pad;  // >= 0
  *first = q < k ? 0 : (q - k) / s + 1;
  const int64_t l = q / s + 1;
  *last = l < out ? l : out;
}

__global__ void MaxPoolGradKernel(const float* in, const float* grad, float* dx, PoolGeometry g,
                                  int64_t total) {
  GR_GRID_STRIDE(i, total) {
    const PoolIndex at(g, i);
    int64_t oh0, oh1, ow0, ow1;
    Covering(at.h, g.window_h, g.stride_h, g.pad_top, g.out_h, &oh0, &oh1);
    Covering(at.w, g.window_w, g.stride_w, g.pad_left, g.out_w, &ow0, &ow1);
    float acc = 0.0f;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t h0 = oh * g.stride_h - g.pad_top;
      const int64_t hb = h0 > 0 ? h0 : 0;
      const int64_t he = h0 + g.window_h < g.h ? h0 + g.window_h : g.h;
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const int64_t w0 = ow * g.stride_w - g.pad_left;
        const int64_t wb = w0 > 0 ? w0 : 0;
        const int64_t we = w0 + g.window_w < g.w ? w0 + g.window_w : g.w;
        // The window's first maximum in row-major order.
        float best = in[at.In(g, hb, wb)];
        int64_t best_h = hb, best_w = wb;
        for (int64_t h = hb; h < he; ++h) {
          for (int64_t w = (h == hb ? wb + 1 : wb); w < we; ++w) {
            const float v = in[at.In(g, h, w)];
            if (best < v) {
              best = v;
              best_h = h;
              best_w = w;
            }
          }
        }
        if (best_h == at.h && best_w == at.w) acc = __fadd_rn(acc, grad[at.Out(g, oh, ow)]);
      }
    }
    dx[i] = acc;
  }
}

__global__ void AvgPoolGradKernel(const float* grad, float* dx, PoolGeometry g, int64_t total) {
  GR_GRID_STRIDE(i, total) {
    const PoolIndex at(g, i);
    int64_t oh0, oh1, ow0, ow1;
    Covering(at.h, g.window_h, g.stride_h, g.pad_top, g.out_h, &oh0, &oh1);
    Covering(at.w, g.window_w, g.stride_w, g.pad_left, g.out_w, &ow0, &ow1);
    float acc = 0.0f;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t h0 = oh * g.stride_h - g.pad_top;
      const int64_t rows = (h0 + g.window_h < g.h ? h0 + g.window_h : g.h) - (h0 > 0 ? h0 : 0);
      for (int64_t ow = ow0; ow < ow1; ++ow) {
        const int64_t w0 = ow * g.stride_w - g.pad_left;
        const int64_t cols = (w0 + g.window_w < g.w ? w0 + g.window_w : g.w) - (w0 > 0 ? w0 : 0);
        const float coeff = static_cast<float>(1.0 / static_cast<double>(rows * cols));
        acc = __fadd_rn(acc, __fmul_rn(grad[at.Out(g, oh, ow)], coeff));
      }
    }
    dx[i] = acc;
  }
}

__device__ float GradOf(GradOp op, float a, float b, float alpha) {
  switch (op) {
    case GradOp::kRelu:
      return __fmul_rn(a, b > 0.0f ? 1.0f : 0.0f);
    case GradOp::kRelu6:
      return __fmul_rn(a, __fmul_rn(b > 0.0f ? 1.0f : 0.0f, b < 6.0f ? 1.0f : 0.0f));
    case GradOp::kElu:
      return b < 0.0f ? __fmul_rn(__fadd_rn(b, 1.0f), a) : a;
    case GradOp::kSelu:
      return b < 0.0f ? __fmul_rn(a, __fadd_rn(b, 1.7580993408473768599402175208123f))
                      : __fmul_rn(a, 1.0507009873554804934193349852946f);
    case GradOp::kLeakyRelu:
      return b > 0.0f ? a : __fmul_rn(a, alpha);
    case GradOp::kSoftplus:
      return __fdiv_rn(a, __fadd_rn(expf(-b), 1.0f));
    case GradOp::kSoftsign: {
      const float d = __fadd_rn(fabsf(b), 1.0f);
      return __fdiv_rn(a, __fmul_rn(d, d));
    }
    case GradOp::kSigmoid:
      return __fmul_rn(b, __fmul_rn(a, __fsub_rn(1.0f, a)));
    case GradOp::kTanh:
      return __fmul_rn(b, __fsub_rn(1.0f, __fmul_rn(a, a)));
    case GradOp::kRsqrt:
      return __fmul_rn(__fmul_rn(__fmul_rn(b, a), -0.5f), __fmul_rn(a, a));
    case GradOp::kSqrt:
      return __fmul_rn(__fdiv_rn(0.5f, a), b);
    case GradOp::kReciprocal:
      return -__fmul_rn(b, __fmul_rn(a, a));
  }
  return 0.0f;
}

__global__ void ActivationGradKernel(GradOp op, const float* a, const float* b, float* out,
                                     int64_t n, float alpha) {
  GR_GRID_STRIDE(i, n) { out[i] = GradOf(op, a[i], b[i], alpha); }
}

// One block per row: the row's maximum, the sum of exp(shifted), then the
// loss and backprop. `label_of(c)` is the label of class c; `nan_row`
// (an out-of-range sparse label) makes the row's loss and backprop NaN.
template <typename LabelFn>
__device__ void XentRow(const float* logits, int64_t stride, int64_t cols, LabelFn label_of,
                        float* loss, float* backprop, bool nan_row) {
  __shared__ float shared[kRowThreads];
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, logits[c * stride]);
  m = BlockReduce(m, shared, MaxOp());
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    s += expf(logits[c * stride] - m);
  }
  s = BlockReduce(s, shared, SumOp());
  const float log_sum = logf(s);
  float l = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float shifted = logits[c * stride] - m;
    const float label = label_of(c);
    l += label * (log_sum - shifted);
    backprop[c] = nan_row ? NAN : expf(shifted) / s - label;
  }
  l = BlockReduce(l, shared, SumOp());
  if (threadIdx.x == 0) *loss = nan_row ? NAN : l;
}

__global__ void XentKernel(const float* logits, const float* labels, float* loss,
                           float* backprop, XentShape x) {
  for (int64_t r = blockIdx.x; r < x.rows; r += gridDim.x) {
    const float* lrow = labels + r * x.labels_row_stride;
    XentRow(
        logits + r * x.logits_row_stride, x.logits_col_stride, x.cols,
        [&](int64_t c) { return lrow[c * x.labels_col_stride]; }, loss + r,
        backprop + r * x.cols, false);
  }
}

template <typename Index>
__global__ void SparseXentKernel(const float* logits, const Index* labels, float* loss,
                                 float* backprop, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t label = static_cast<int64_t>(labels[r]);
    XentRow(
        logits + r * cols, 1, cols, [&](int64_t c) { return c == label ? 1.0f : 0.0f; }, loss + r,
        backprop + r * cols, label < 0 || label >= cols);
  }
}

#undef GR_GRID_STRIDE

int RowBlocks(int64_t rows) { return static_cast<int>(rows < 65535 * 8 ? rows : 65535 * 8); }

}  // namespace

absl::Status MaxPoolGrad(void* stream, const float* in, const float* grad, float* in_backprop,
                         const PoolGeometry& g) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  const int64_t total = g.n * g.h * g.w * g.c;
  if (total == 0) return absl::OkStatus();
  MaxPoolGradKernel<<<Blocks(total, kThreads), kThreads, 0, s>>>(in, grad, in_backprop, g, total);
  return Launched("MaxPoolGrad");
}

absl::Status AvgPoolGrad(void* stream, const float* grad, float* in_backprop,
                         const PoolGeometry& g) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  const int64_t total = g.n * g.h * g.w * g.c;
  if (total == 0) return absl::OkStatus();
  AvgPoolGradKernel<<<Blocks(total, kThreads), kThreads, 0, s>>>(grad, in_backprop, g, total);
  return Launched("AvgPoolGrad");
}

absl::Status ActivationGrad(void* stream, GradOp op, const float* a, const float* b, float* out,
                            int64_t n, float alpha) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  ActivationGradKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(op, a, b, out, n, alpha);
  return Launched("ActivationGrad");
}

absl::Status SoftmaxCrossEntropy(void* stream, const float* logits, const float* labels,
                                 float* loss, float* backprop, const XentShape& shape) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (shape.rows == 0) return absl::OkStatus();
  XentKernel<<<RowBlocks(shape.rows), kRowThreads, 0, s>>>(logits, labels, loss, backprop, shape);
  return Launched("SoftmaxCrossEntropy");
}

absl::Status SparseSoftmaxCrossEntropy(void* stream, const float* logits, IndexType label_type,
                                       const void* labels, float* loss, float* backprop,
                                       int64_t rows, int64_t cols) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (rows == 0) return absl::OkStatus();
  if (label_type == IndexType::kInt64) {
    SparseXentKernel<int64_t><<<RowBlocks(rows), kRowThreads, 0, s>>>(
        logits, static_cast<const int64_t*>(labels), loss, backprop, rows, cols);
  } else {
    SparseXentKernel<int32_t><<<RowBlocks(rows), kRowThreads, 0, s>>>(
        logits, static_cast<const int32_t*>(labels), loss, backprop, rows, cols);
  }
  return Launched("SparseSoftmaxCrossEntropy");
}

}  // namespace gpu
}  // namespace graphrun
