// The pooling ops' gradients on CPU, NHWC (TensorFlow's CPU kernels take
// only NHWC too): MaxPoolGrad (max_pooling_op.cc: each window's gradient
// goes to its first maximum in row-major scan order, the gradients of the
// windows added in output order), _FusedMaxPoolGrad (the same, masked by
// ReluGrad, and its channel sums as BiasAddGrad of it) and AvgPoolGrad
// (avgpooling_op.cc, with its GetBroadcastSize clipping). Sums of half and
// bfloat16 run in float.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/channel_sums.h"
#include "kernels/cpu/pieces.h"
#include "kernels/cpu/window_grad_attrs.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using window_grad::AccumulatorOf;
using window_grad::CheckShape;
using window_grad::ShapeFromInput;
using window_grad::WindowAttrs;
using window_grad::WindowKind;

template <typename T>
class MaxPoolGradOp : public OpKernel {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, attrs_.Read(ctx, WindowKind::kPool));
    if (ctx->def().op() == "_FusedMaxPoolGrad") {
      std::vector<std::string> fused;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("fused_ops", &fused));
      const bool bias = fused == std::vector<std::string>{"ReluGrad", "BiasAddGrad"};
      OP_REQUIRES(ctx, fused == std::vector<std::string>{"ReluGrad"} || bias,
                  absl::UnimplementedError(absl::StrCat(
                      "_FusedMaxPoolGrad fuses [ReluGrad] or [ReluGrad,BiasAddGrad] only, got [",
                      absl::StrJoin(fused, ","), "]")));
      relu_grad_ = true;
      fused_ = true;
      bias_grad_ = bias;
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    OP_REQUIRES(ctx, in.dims() == 4,
                absl::InvalidArgumentError("orig_input must be 4-dimensional"));
    const int64_t batch = in.dim_size(0), rows = in.dim_size(1), cols = in.dim_size(2),
                  depth = in.dim_size(3);
    auto wr = attrs_.Along(1, rows, attrs_.ksize[1]);
    OP_REQUIRES_OK(ctx, wr.status());
    auto wc = attrs_.Along(2, cols, attrs_.ksize[2]);
    OP_REQUIRES_OK(ctx, wc.status());
    OP_REQUIRES_OK(ctx, CheckShape(grad, "grad", {batch, wr->out, wc->out, depth}));
    OP_REQUIRES_OK(ctx, CheckShape(ctx->input(1), "orig_output", {batch, wr->out, wc->out, depth}));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    T* dx = out->flat<T>().data();  // zeroed image by image, in parallel
    const T* x = in.flat<T>().data();
    const T* dy = grad.flat<T>().data();
    // Images in parallel: one image's windows write only that image's
    // gradient, so the pieces never touch the same element.
    const int64_t image_cost = wr->out * wc->out * attrs_.ksize[1] * attrs_.ksize[2] * depth;
    // _FusedMaxPoolGrad's bias_backprop: each image's channel sums of its
    // gradient, taken while it is in cache, then added in image order.
    std::vector<cpu::AccumulatorOf<T>> sums(bias_grad_ ? batch * depth : 0);
    // Pieces of whole images (pieces.h: no wake-up a call), a few per
    // thread; small inputs on this thread alone.
    const Eigen::ThreadPoolDevice& pool = ctx->eigen_cpu_device();
    const int pieces = static_cast<int>(std::min<int64_t>(
        batch, batch * image_cost < (int64_t{1} << 15) ? 1 : 4 * pool.numThreads()));
    cpu::RunPieceRanges(&pool, batch, pieces, [&](int, int64_t first, int64_t last) {
      Images(x, dy, dx, first, last, rows, cols, depth, *wr, *wc, sums.data());
    });
    if (!fused_) return;
    Tensor* bias = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({depth}), &bias));
    for (int64_t c = 0; c < depth; ++c) {
      cpu::AccumulatorOf<T> total = 0;
      for (int64_t b = 0; b < batch && bias_grad_; ++b) total += sums[b * depth + c];
      bias->flat<T>()[c] = static_cast<T>(total);
    }
  }

 private:
  // The gradient of one window [h_lo, h_hi) x [w_lo, w_hi) of an image for
  // channels [c, c + kBlock): each channel's first maximum in row-major
  // scan order (windowed::KeepMaxima's rule: only a strictly greater value
  // moves it) takes g[c + j].
  //
  // kDirect (windows that do not overlap: each element lies in at most one):
  // instead of adding into a zeroed gradient, every element of the window
  // is written, g[c + j] + 0 at the maximum and 0 elsewhere (+ 0 turns a
  // -0 into the +0 that 0 + g gives, as TensorFlow's sum into zeros does),
  // in vector stores rather than one scalar add per channel.
  template <int kBlock, bool kDirect>
  static void WindowBlock(const T* __restrict xb, T* __restrict dxb, const T* __restrict g,
                          int64_t c, int64_t h_lo, int64_t h_hi, int64_t w_lo, int64_t w_hi,
                          int64_t cols, int64_t depth) {
    if constexpr (kBlock > 1 && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
      // GCC's vector types: the maxima and where they are (pixel offsets,
      // integers as wide as T so that the comparison's mask selects them)
      // stay in vector registers; written as plain loops, the compiler
      // unrolls the block and then cannot vectorize the selects.
      using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
      typedef T Vec __attribute__((vector_size(kBlock * sizeof(T))));
      typedef Int Mask __attribute__((vector_size(kBlock * sizeof(T))));
      Vec best;
      std::memcpy(&best, xb + (h_lo * cols + w_lo) * depth + c, sizeof(Vec));
      Mask where = Mask{} + static_cast<Int>((h_lo * cols + w_lo) * depth);
      for (int64_t h = h_lo; h < h_hi; ++h) {
        for (int64_t w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
          const int64_t base = (h * cols + w) * depth;
          Vec x;
          std::memcpy(&x, xb + base + c, sizeof(Vec));
          const Mask greater = best < x;
          best = greater ? x : best;
          where = greater ? Mask{} + static_cast<Int>(base) : where;
        }
      }
      if constexpr (kDirect) {
        Vec gv;
        std::memcpy(&gv, g + c, sizeof(Vec));
        gv = gv + static_cast<T>(0);
        for (int64_t h = h_lo; h < h_hi; ++h) {
          for (int64_t w = w_lo; w < w_hi; ++w) {
            const int64_t base = (h * cols + w) * depth;
            const Mask hit = where == static_cast<Int>(base);
            const Vec v = hit ? gv : Vec{};
            std::memcpy(dxb + base + c, &v, sizeof(Vec));
          }
        }
      } else {
        for (int j = 0; j < kBlock; ++j) dxb[where[j] + c + j] += g[c + j];
      }
    } else {
      T best[kBlock];
      int64_t where[kBlock];
      const int64_t first = (h_lo * cols + w_lo) * depth + c;
      for (int j = 0; j < kBlock; ++j) {
        best[j] = xb[first + j];
        where[j] = first + j;
      }
      for (int64_t h = h_lo; h < h_hi; ++h) {
        for (int64_t w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
          const int64_t base = (h * cols + w) * depth + c;
          for (int j = 0; j < kBlock; ++j) {
            const bool greater = best[j] < xb[base + j];
            best[j] = greater ? xb[base + j] : best[j];
            where[j] = greater ? base + j : where[j];
          }
        }
      }
      if constexpr (kDirect) {
        for (int64_t h = h_lo; h < h_hi; ++h) {
          for (int64_t w = w_lo; w < w_hi; ++w) {
            const int64_t base = (h * cols + w) * depth + c;
            for (int j = 0; j < kBlock; ++j) {
              dxb[base + j] = base + j == where[j] ? g[c + j] + static_cast<T>(0)
                                                   : static_cast<T>(0);
            }
          }
        }
      } else {
        for (int j = 0; j < kBlock; ++j) dxb[where[j]] += g[c + j];
      }
    }
  }

  template <typename Window>
  void Images(const T* x, const T* dy, T* dx, int64_t first, int64_t last, int64_t rows,
              int64_t cols, int64_t depth, const Window& wr_, const Window& wc_,
              cpu::AccumulatorOf<T>* sums) const {
    const Window* wr = &wr_;
    const Window* wc = &wc_;
    const int64_t image = rows * cols * depth;
    // Windows that tile the image without overlapping (stride == size, as
    // a 2x2 pooling with stride 2) write every element they cover; only
    // the rows and columns no window covers (VALID's remainder) need the
    // zeros first.
    const bool direct = attrs_.strides[1] == attrs_.ksize[1] && attrs_.strides[2] == attrs_.ksize[2];
    const bool covered = direct && wr->pad_before == 0 && wc->pad_before == 0 &&
                         wr->out * attrs_.ksize[1] >= rows && wc->out * attrs_.ksize[2] >= cols;
    for (int64_t b = first; b < last; ++b) {
      const T* xb = x + b * image;
      T* dxb = dx + b * image;
      if (!covered) std::fill(dxb, dxb + image, static_cast<T>(0));
      if (direct) {
        Windows<true>(xb, dxb, dy, b, rows, cols, depth, *wr, *wc);
      } else {
        Windows<false>(xb, dxb, dy, b, rows, cols, depth, *wr, *wc);
      }
      if (relu_grad_) {
        // ReluGrad(dx, x) while the image is in cache, as the ReluGrad
        // kernel computes it: g where x > 0, else g * 0.
        for (int64_t i = 0; i < image; ++i) {
          dxb[i] = xb[i] > static_cast<T>(0) ? dxb[i] : dxb[i] * static_cast<T>(0);
        }
      }
      if (bias_grad_) cpu::AddChannelSums(dxb, rows * cols, depth, sums + b * depth);
    }
  }

  template <bool kDirect, typename Window>
  void Windows(const T* xb, T* dxb, const T* dy, int64_t b, int64_t rows, int64_t cols,
               int64_t depth, const Window& wr_, const Window& wc_) const {
    const Window* wr = &wr_;
    const Window* wc = &wc_;
    const bool blocks = rows * cols * depth <= std::numeric_limits<int32_t>::max();
    for (int64_t oh = 0; oh < wr->out; ++oh) {
      const int64_t h0 = oh * attrs_.strides[1] - wr->pad_before;
      const int64_t h_lo = std::max<int64_t>(h0, 0);
      const int64_t h_hi = std::min(h0 + attrs_.ksize[1], rows);
      for (int64_t ow = 0; ow < wc->out; ++ow) {
        const int64_t w0 = ow * attrs_.strides[2] - wc->pad_before;
        const int64_t w_lo = std::max<int64_t>(w0, 0);
        const int64_t w_hi = std::min(w0 + attrs_.ksize[2], cols);
        if (h_lo >= h_hi || w_lo >= w_hi) continue;  // a window entirely in the padding
        const T* g = dy + ((b * wr->out + oh) * wc->out + ow) * depth;
        // Channels 8 at a time (a 256-bit vector of floats), then one
        // block of 4, then singly. The blocks keep a float image's
        // offsets in 32-bit integers.
        int64_t c = 0;
        for (; blocks && c + 8 <= depth; c += 8) {
          WindowBlock<8, kDirect>(xb, dxb, g, c, h_lo, h_hi, w_lo, w_hi, cols, depth);
        }
        if (blocks && c + 4 <= depth) {
          WindowBlock<4, kDirect>(xb, dxb, g, c, h_lo, h_hi, w_lo, w_hi, cols, depth);
          c += 4;
        }
        for (; c < depth; ++c) {
          WindowBlock<1, kDirect>(xb, dxb, g, c, h_lo, h_hi, w_lo, w_hi, cols, depth);
        }
      }
    }
  }

  WindowAttrs attrs_;
  bool relu_grad_ = false;  // _FusedMaxPoolGrad: ReluGrad by orig_input after
  bool fused_ = false;      // _FusedMaxPoolGrad: has output 1, bias_backprop
  bool bias_grad_ = false;  // ... and fuses BiasAddGrad: sums into it (else 0)
};

// TensorFlow's GetBroadcastSize (avgpooling_op.cc), kept as it is: where
// output `index`'s window starts in the input and how many elements it
// covers.
void BroadcastSize(int64_t index, int64_t in_size, int64_t ksize, int64_t stride, int64_t pad,
                   int64_t* bindex, int64_t* bsize) {
  *bindex = index * stride;
  *bsize = ksize;
  if (*bindex < pad) {
    *bsize = ksize + *bindex - pad;
    *bindex = 0;
  } else {
    *bindex -= pad;
  }
  if (*bindex + ksize > in_size) *bsize = std::min(in_size - *bindex, ksize);
}

template <typename T>
class AvgPoolGradOp : public OpKernel {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, attrs_.Read(ctx, WindowKind::kPool));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<TensorShape> shape = ShapeFromInput(ctx->input(0), "orig_input_shape");
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, shape->dims() == 4,
                absl::InvalidArgumentError("orig_input_shape must have 4 elements"));
    const Tensor& grad = ctx->input(1);
    const int64_t batch = shape->dim_size(0), rows = shape->dim_size(1), cols = shape->dim_size(2),
                  depth = shape->dim_size(3);
    auto wr = attrs_.Along(1, rows, attrs_.ksize[1]);
    OP_REQUIRES_OK(ctx, wr.status());
    auto wc = attrs_.Along(2, cols, attrs_.ksize[2]);
    OP_REQUIRES_OK(ctx, wc.status());
    OP_REQUIRES_OK(ctx, CheckShape(grad, "grad", {batch, wr->out, wc->out, depth}));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    T* dx = out->flat<T>().data();
    std::fill(dx, dx + out->NumElements(), static_cast<T>(0));
    const T* dy = grad.flat<T>().data();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t oh = 0; oh < wr->out; ++oh) {
        int64_t r0 = 0, rsize = 0;
        BroadcastSize(oh, rows, attrs_.ksize[1], attrs_.strides[1], wr->pad_before, &r0, &rsize);
        for (int64_t ow = 0; ow < wc->out; ++ow) {
          int64_t c0 = 0, csize = 0;
          BroadcastSize(ow, cols, attrs_.ksize[2], attrs_.strides[2], wc->pad_before, &c0, &csize);
          if (rsize <= 0 || csize <= 0) continue;
          const T coeff = static_cast<T>(1.0 / static_cast<double>(rsize * csize));
          const T* g = dy + ((b * wr->out + oh) * wc->out + ow) * depth;
          for (int64_t h = r0; h < r0 + rsize; ++h) {
            for (int64_t w = c0; w < c0 + csize; ++w) {
              T* d = dx + ((b * rows + h) * cols + w) * depth;
              for (int64_t c = 0; c < depth; ++c) d[c] += g[c] * coeff;
            }
          }
        }
      }
    }
  }

 private:
  WindowAttrs attrs_;
};

#define REGISTER_POOL_GRADS(T)                                                               \
  REGISTER_KERNEL(KernelDefBuilder("MaxPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  MaxPoolGradOp<T>);                                                         \
  REGISTER_KERNEL(                                                                           \
      KernelDefBuilder("_FusedMaxPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"),       \
      MaxPoolGradOp<T>);                                                                     \
  REGISTER_KERNEL(KernelDefBuilder("AvgPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  AvgPoolGradOp<T>)
REGISTER_POOL_GRADS(float);
REGISTER_POOL_GRADS(double);
REGISTER_POOL_GRADS(half);
REGISTER_POOL_GRADS(bfloat16);
#undef REGISTER_POOL_GRADS

}  // namespace
}  // namespace graphrun
