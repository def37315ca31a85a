// The gradient launchers of kernels/gpu/gpu_launch.h over FakeGpuPlatform:
// the convolutions' backward data and filter, MaxPoolGrad, AvgPoolGrad,
// the activation gradients and the softmax cross entropies, each queued on
// the fake stream it is given after checking that the bytes it touches
// through each pointer are inside one block of the fake GPU's device
// memory. Plain host loops written from the launchers' contracts: the
// convolutions summed in double (as Conv2DOnHost), the pooling gradients
// scattered window by window in output order (the order the CUDA kernels
// gather in).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/gpu_launch.h"
#include "runtime/gpu/testing/fake_launch_util.h"

namespace graphrun {
namespace gpu {
namespace {

using fake::DeviceSpan;
using fake::OnDevice;
using fake::Queue;
using fake::SpanOf;

// The elements of the filter of `g` (cuDNN's layout for it).
int64_t FilterElements(const ConvGeometry& g) {
  return g.out_c * g.kh * g.kw * (g.groups > 0 ? g.c / g.groups : 0);
}

// The elements of the input of `g` (images, rows, columns, channels).
int64_t InputElements(const ConvGeometry& g) { return g.n * g.c * g.h * g.w; }

// The elements of the output of `g`.
int64_t OutputElements(const ConvGeometry& g) { return g.n * g.out_c * g.out_h * g.out_w; }

// Calls fn(input offset, filter offset, output offset) for every product
// of the convolution `g` (cuDNN's cross-correlation; in and out in g's
// order, the filter in cuDNN's layout for it).
void ForEachProduct(const ConvGeometry& g,
                    const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  const int64_t cg = g.c / g.groups, kg = g.out_c / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        for (int64_t k = 0; k < g.out_c; ++k) {
          const int64_t o = g.nchw ? ((n * g.out_c + k) * g.out_h + oh) * g.out_w + ow
                                   : ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + k;
          for (int64_t r = 0; r < g.kh; ++r) {
            const int64_t ih = oh * g.stride_h - g.pad_h + r * g.dilation_h;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t s = 0; s < g.kw; ++s) {
              const int64_t iw = ow * g.stride_w - g.pad_w + s * g.dilation_w;
              if (iw < 0 || iw >= g.w) continue;
              for (int64_t ci = 0; ci < cg; ++ci) {
                const int64_t c = (k / kg) * cg + ci;
                fn(g.nchw ? ((n * g.c + c) * g.h + ih) * g.w + iw
                          : ((n * g.h + ih) * g.w + iw) * g.c + c,
                   g.nchw ? ((k * cg + ci) * g.kh + r) * g.kw + s
                          : ((k * g.kh + r) * g.kw + s) * cg + ci,
                   o);
              }
            }
          }
        }
      }
    }
  }
}

// Calls fn(output offset, hb, he, wb, we, at) for each window of the
// pooling `g` in output order: rows [hb, he) and columns [wb, we) of the
// input inside it, at(h, w) the input offset of (h, w) in its image and
// channel.
template <typename Fn>
void ForEachWindow(const PoolGeometry& g, Fn fn) {
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
          const int64_t hb = std::max<int64_t>(h0, 0), wb = std::max<int64_t>(w0, 0);
          const int64_t he = std::min(h0 + g.window_h, g.h), we = std::min(w0 + g.window_w, g.w);
          const int64_t o = g.nchw ? ((n * g.c + c) * g.out_h + oh) * g.out_w + ow
                                   : ((n * g.out_h + oh) * g.out_w + ow) * g.c + c;
          auto at = [&](int64_t h, int64_t w) {
            return g.nchw ? ((n * g.c + c) * g.h + h) * g.w + w : ((n * g.h + h) * g.w + w) * g.c + c;
          };
          fn(o, hb, he, wb, we, at);
        }
      }
    }
  }
}

}  // namespace

absl::Status Conv2DBackpropInput(void* stream, const ConvGeometry& g, const float* filter,
                                 const float* out_backprop, float* in_backprop,
                                 const WorkspaceFn& workspace) {
  const int64_t n = InputElements(g);
  absl::Status s = OnDevice(stream, n, "Conv2DBackpropInput",
                            {SpanOf(filter, FilterElements(g)),
                             SpanOf(out_backprop, OutputElements(g)), SpanOf(in_backprop, n)});
  if (!s.ok() || n == 0) return s;
  absl::StatusOr<void*> ws = workspace(256);  // as cuDNN's algorithms ask
  if (!ws.ok()) return ws.status();
  return Queue(stream, [=] {
    std::vector<double> acc(static_cast<size_t>(n), 0.0);
    ForEachProduct(g, [&](int64_t i, int64_t f, int64_t o) {
      acc[i] += static_cast<double>(filter[f]) * out_backprop[o];
    });
    for (int64_t i = 0; i < n; ++i) in_backprop[i] = static_cast<float>(acc[i]);
  });
}

absl::Status Conv2DBackpropFilter(void* stream, const ConvGeometry& g, const float* in,
                                  const float* out_backprop, float* filter_backprop,
                                  const WorkspaceFn& workspace) {
  const int64_t n = FilterElements(g);
  absl::Status s = OnDevice(stream, n, "Conv2DBackpropFilter",
                            {SpanOf(in, InputElements(g)), SpanOf(out_backprop, OutputElements(g)),
                             SpanOf(filter_backprop, n)});
  if (!s.ok() || n == 0) return s;
  absl::StatusOr<void*> ws = workspace(256);
  if (!ws.ok()) return ws.status();
  return Queue(stream, [=] {
    std::vector<double> acc(static_cast<size_t>(n), 0.0);
    ForEachProduct(g, [&](int64_t i, int64_t f, int64_t o) {
      acc[f] += static_cast<double>(in[i]) * out_backprop[o];
    });
    for (int64_t i = 0; i < n; ++i) filter_backprop[i] = static_cast<float>(acc[i]);
  });
}

absl::Status MaxPoolGrad(void* stream, const float* in, const float* grad, float* in_backprop,
                         const PoolGeometry& g) {
  const int64_t n = g.n * g.c * g.h * g.w;
  absl::Status s = OnDevice(stream, n, "MaxPoolGrad",
                            {SpanOf(in, n), SpanOf(grad, g.n * g.c * g.out_h * g.out_w),
                             SpanOf(in_backprop, n)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    std::fill(in_backprop, in_backprop + n, 0.0f);
    ForEachWindow(g, [&](int64_t o, int64_t hb, int64_t he, int64_t wb, int64_t we, auto at) {
      if (hb >= he || wb >= we) return;
      int64_t where = at(hb, wb);
      float best = in[where];
      for (int64_t h = hb; h < he; ++h) {
        for (int64_t w = wb; w < we; ++w) {
          if (best < in[at(h, w)]) {
            best = in[at(h, w)];
            where = at(h, w);
          }
        }
      }
      in_backprop[where] += grad[o];
    });
  });
}

absl::Status AvgPoolGrad(void* stream, const float* grad, float* in_backprop,
                         const PoolGeometry& g) {
  const int64_t n = g.n * g.c * g.h * g.w;
  absl::Status s = OnDevice(stream, n, "AvgPoolGrad",
                            {SpanOf(grad, g.n * g.c * g.out_h * g.out_w), SpanOf(in_backprop, n)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    std::fill(in_backprop, in_backprop + n, 0.0f);
    ForEachWindow(g, [&](int64_t o, int64_t hb, int64_t he, int64_t wb, int64_t we, auto at) {
      if (hb >= he || wb >= we) return;
      const float coeff = static_cast<float>(1.0 / static_cast<double>((he - hb) * (we - wb)));
      for (int64_t h = hb; h < he; ++h) {
        for (int64_t w = wb; w < we; ++w) in_backprop[at(h, w)] += grad[o] * coeff;
      }
    });
  });
}

absl::Status ActivationGrad(void* stream, GradOp op, const float* a, const float* b, float* out,
                            int64_t n, float alpha) {
  absl::Status s =
      OnDevice(stream, n, "ActivationGrad", {SpanOf(a, n), SpanOf(b, n), SpanOf(out, n)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i], y = b[i];
      float r = 0.0f;
      switch (op) {
        case GradOp::kRelu: r = x * (y > 0.0f ? 1.0f : 0.0f); break;
        case GradOp::kRelu6: r = x * ((y > 0.0f ? 1.0f : 0.0f) * (y < 6.0f ? 1.0f : 0.0f)); break;
        case GradOp::kElu: r = y < 0.0f ? (y + 1.0f) * x : x; break;
        case GradOp::kSelu:
          r = y < 0.0f ? x * (y + 1.7580993408473768599402175208123f)
                       : x * 1.0507009873554804934193349852946f;
          break;
        case GradOp::kLeakyRelu: r = y > 0.0f ? x : x * alpha; break;
        case GradOp::kSoftplus: r = x / (std::exp(-y) + 1.0f); break;
        case GradOp::kSoftsign: r = x / ((std::fabs(y) + 1.0f) * (std::fabs(y) + 1.0f)); break;
        case GradOp::kSigmoid: r = y * (x * (1.0f - x)); break;
        case GradOp::kTanh: r = y * (1.0f - x * x); break;
        case GradOp::kRsqrt: r = (y * x * -0.5f) * (x * x); break;
        case GradOp::kSqrt: r = (0.5f / x) * y; break;
        case GradOp::kReciprocal: r = -(y * (x * x)); break;
      }
      out[i] = r;
    }
  });
}

namespace {

// One row's cross entropy: logits(c), label(c) for c < cols.
template <typename Logit, typename Label>
void XentRow(int64_t cols, Logit logit, Label label, float* loss, float* backprop) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t c = 0; c < cols; ++c) max = std::max(max, logit(c));
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += std::exp(logit(c) - max);
  const float log_sum = std::log(sum);
  float l = 0.0f;
  for (int64_t c = 0; c < cols; ++c) {
    const float shifted = logit(c) - max;
    l += label(c) * (log_sum - shifted);
    backprop[c] = std::exp(shifted) / sum - label(c);
  }
  *loss = l;
}

// The elements of a [rows, cols] operand read at row * row_stride + col *
// col_stride (0 where it broadcasts): one past its largest offset.
int64_t Strided(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  return rows > 0 && cols > 0 ? (rows - 1) * row_stride + (cols - 1) * col_stride + 1 : 0;
}

}  // namespace

absl::Status SoftmaxCrossEntropy(void* stream, const float* logits, const float* labels,
                                 float* loss, float* backprop, const XentShape& x) {
  absl::Status s = OnDevice(
      stream, x.rows, "SoftmaxCrossEntropy",
      {SpanOf(logits, Strided(x.rows, x.cols, x.logits_row_stride, x.logits_col_stride)),
       SpanOf(labels, Strided(x.rows, x.cols, x.labels_row_stride, x.labels_col_stride)),
       SpanOf(loss, x.rows), SpanOf(backprop, x.rows * x.cols)});
  if (!s.ok() || x.rows == 0) return s;
  return Queue(stream, [=] {
    for (int64_t r = 0; r < x.rows; ++r) {
      XentRow(
          x.cols, [&](int64_t c) { return logits[r * x.logits_row_stride + c * x.logits_col_stride]; },
          [&](int64_t c) { return labels[r * x.labels_row_stride + c * x.labels_col_stride]; },
          loss + r, backprop + r * x.cols);
    }
  });
}

absl::Status SparseSoftmaxCrossEntropy(void* stream, const float* logits, IndexType label_type,
                                       const void* labels, float* loss, float* backprop,
                                       int64_t rows, int64_t cols) {
  const int64_t label_bytes = label_type == IndexType::kInt64 ? sizeof(int64_t) : sizeof(int32_t);
  absl::Status s = OnDevice(stream, rows, "SparseSoftmaxCrossEntropy",
                            {SpanOf(logits, rows * cols), DeviceSpan{labels, rows * label_bytes},
                             SpanOf(loss, rows), SpanOf(backprop, rows * cols)});
  if (!s.ok() || rows == 0) return s;
  return Queue(stream, [=] {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t label = label_type == IndexType::kInt64
                                ? static_cast<const int64_t*>(labels)[r]
                                : static_cast<const int32_t*>(labels)[r];
      XentRow(
          cols, [&](int64_t c) { return logits[r * cols + c]; },
          [&](int64_t c) { return c == label ? 1.0f : 0.0f; }, loss + r, backprop + r * cols);
      if (label < 0 || label >= cols) {
        loss[r] = std::numeric_limits<float>::quiet_NaN();
        std::fill(backprop + r * cols, backprop + (r + 1) * cols, loss[r]);
      }
    }
  });
}

}  // namespace gpu
}  // namespace graphrun
