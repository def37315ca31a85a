// The windowed ops' gradients on CPU, NHWC (TensorFlow's CPU kernels take
// only NHWC too): MaxPoolGrad (max_pooling_op.cc: each window's gradient
// goes to its first maximum in row-major scan order, the gradients of the
// windows added in output order), AvgPoolGrad (avgpooling_op.cc, with its
// GetBroadcastSize clipping) and Conv2DBackpropFilter (dilations, strides,
// SAME / VALID / EXPLICIT padding): float and double above 64^3 multiply-adds
// as im2col patches^T * out_backprop on Gemm (gemm.h), else and for half and
// bfloat16 a direct loop, each filter row (kh, kw, ci) summed by one thread.
// Sums of half and bfloat16 run in float. Float undilated ones run on
// oneDNN's backward weights instead (conv_onednn_backward.h) unless
// GRAPHRUN_CONV2D_LIBRARY=eigen.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"
#include "kernels/cpu/channel_sums.h"
#include "kernels/cpu/conv_onednn_backward.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/narrow_conv.h"
#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/window.h"

namespace graphrun {
namespace {

using op_shapes::Padding;

template <typename T>
using AccumulatorOf =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

// A pooling op has a ksize attr; a convolution's window is its filter.
enum class WindowKind { kPool, kConv };

// The attrs of a 4-D NHWC windowed op and its geometry on one input.
struct WindowAttrs {
  std::vector<int64_t> ksize = {1, 1, 1, 1};  // all ones for convolutions
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::vector<int64_t> explicit_paddings;
  Padding padding = Padding::kValid;

  absl::Status Read(OpKernelConstruction* ctx, WindowKind kind) {
    std::string data_format = "NHWC", padding_str;
    GR_RETURN_IF_ERROR(ctx->GetAttr("data_format", &data_format));
    if (data_format != "NHWC") {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->def().op(), " only supports NHWC on device type ", kDeviceCpu));
    }
    if (kind == WindowKind::kPool) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("ksize", &ksize));
      if (ksize.size() != 4) {
        return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
      }
      for (int64_t k : ksize) {
        if (k <= 0) return absl::InvalidArgumentError("Sliding window ksize must be positive");
      }
    }
    GR_RETURN_IF_ERROR(ctx->GetAttr("strides", &strides));
    if (strides.size() != 4) {
      return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
    }
    if (ctx->attrs().Find("dilations") != nullptr) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("dilations", &dilations));
      if (dilations.size() != 4) {
        return absl::InvalidArgumentError(
            "Sliding window dilations field must specify 4 dimensions");
      }
    }
    if (ksize[0] != 1 || strides[0] != 1 || dilations[0] != 1 || ksize[3] != 1 || strides[3] != 1 ||
        dilations[3] != 1) {
      return absl::UnimplementedError(
          absl::StrCat(ctx->def().op(), " is not yet supported on the batch or depth dimensions."));
    }
    GR_RETURN_IF_ERROR(ctx->GetAttr("padding", &padding_str));
    GR_ASSIGN_OR_RETURN(padding, op_shapes::ParsePadding(padding_str));
    if (ctx->attrs().Find("explicit_paddings") != nullptr) {
      GR_RETURN_IF_ERROR(ctx->GetAttr("explicit_paddings", &explicit_paddings));
    }
    return windowed::CheckExplicitPaddings(padding, explicit_paddings, 3);
  }

  // The rows (d = 1) or columns (d = 2) of the window over `input` of them.
  absl::StatusOr<windowed::Window> Along(int d, int64_t input, int64_t window) const {
    windowed::Window w;
    if (padding == Padding::kExplicit) {
      w.pad_before = explicit_paddings[2 * d];
      w.pad_after = explicit_paddings[2 * d + 1];
    }
    GR_RETURN_IF_ERROR(
        windowed::ComputeWindow(input, window, dilations[d], strides[d], padding, &w));
    return w;
  }
};

// A 4-D shape from an int32 vector input (orig_input_shape, filter_sizes).
absl::StatusOr<TensorShape> ShapeFromInput(const Tensor& t, const char* name) {
  if (t.dims() != 1 || t.NumElements() != 4 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a 1-D int32 tensor of 4 elements, got shape ", t.shape().DebugString()));
  }
  std::vector<int64_t> dims;
  for (int32_t d : t.flat<int32_t>()) dims.push_back(d);
  return TensorShape::FromDims(dims);
}

absl::Status CheckShape(const Tensor& t, const char* name, const std::vector<int64_t>& want) {
  if (t.dims() == 4 && t.dim_size(0) == want[0] && t.dim_size(1) == want[1] &&
      t.dim_size(2) == want[2] && t.dim_size(3) == want[3]) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(name, " has shape ", t.shape().DebugString(),
                                                 " where the window's geometry gives [",
                                                 absl::StrJoin(want, ","), "]"));
}

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
    auto run = [&](int i) {
      Images(x, dy, dx, batch * i / pieces, batch * (i + 1) / pieces, rows, cols, depth, *wr,
             *wc, sums.data());
    };
    if (pieces <= 1) {
      run(0);
    } else {
      cpu::RunPieces(pool, pieces, run);
    }
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

// One Conv2DBackpropFilter's sizes, NHWC, filter [kh, kw, in_depth, out_depth].
struct FilterGradGeometry {
  int64_t batch, rows, cols, depth;
  int64_t kh, kw, out_depth;
  int64_t out_rows, out_cols;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;

  int64_t filter_rows() const { return kh * kw * depth; }
  // The input row (column) that filter tap `f` meets at output row (column) `o`.
  int64_t InputRow(int64_t o, int64_t f) const { return o * stride_h - pad_h + f * dilation_h; }
  int64_t InputCol(int64_t o, int64_t f) const { return o * stride_w - pad_w + f * dilation_w; }
};

// Filter rows [first, last) (each a tap (fh, fw, ci)): x * dy summed over the
// batch and the output pixels whose window puts the tap inside the input,
// in Acc.
template <typename T>
void FilterGradRows(const FilterGradGeometry& g, const T* x, const T* dy, T* dw, int64_t first,
                    int64_t last) {
  using Acc = AccumulatorOf<T>;
  std::vector<Acc> acc(g.out_depth);
  for (int64_t r = first; r < last; ++r) {
    const int64_t fh = r / (g.kw * g.depth), fw = (r / g.depth) % g.kw, ci = r % g.depth;
    std::fill(acc.begin(), acc.end(), Acc(0));
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t oh = 0; oh < g.out_rows; ++oh) {
        const int64_t h = g.InputRow(oh, fh);
        if (h < 0 || h >= g.rows) continue;
        for (int64_t ow = 0; ow < g.out_cols; ++ow) {
          const int64_t w = g.InputCol(ow, fw);
          if (w < 0 || w >= g.cols) continue;
          const Acc v = static_cast<Acc>(x[((b * g.rows + h) * g.cols + w) * g.depth + ci]);
          const T* grad = dy + ((b * g.out_rows + oh) * g.out_cols + ow) * g.out_depth;
          for (int64_t co = 0; co < g.out_depth; ++co) {
            acc[co] += v * static_cast<Acc>(grad[co]);
          }
        }
      }
    }
    for (int64_t co = 0; co < g.out_depth; ++co) dw[r * g.out_depth + co] = static_cast<T>(acc[co]);
  }
}

// Bytes of im2col patches FilterGradByGemm builds at a time.
constexpr int64_t kPatchChunkBytes = 16 << 20;

// dw = the sum over images of patches^T * dy: the patches of as many images
// as fit in kPatchChunkBytes laid out as rows [pixel, (fh, fw, ci)] (zeros
// where a tap falls outside the input), one Gemm per chunk, the chunks'
// products added in T. For float and double.
template <typename T>
absl::Status FilterGradByGemm(OpKernelContext* ctx, const FilterGradGeometry& g, const T* x,
                              const T* dy, T* dw) {
  const int64_t k = g.filter_rows(), pixels = g.out_rows * g.out_cols;
  const int64_t per_image = pixels * k * static_cast<int64_t>(sizeof(T));
  const int64_t images =
      std::clamp<int64_t>(kPatchChunkBytes / std::max<int64_t>(per_image, 1), 1, g.batch);
  Tensor patches, partial;
  GR_RETURN_IF_ERROR(
      ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({images * pixels, k}), &patches));
  if (images < g.batch) {
    GR_RETURN_IF_ERROR(
        ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({k, g.out_depth}), &partial));
  }
  const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
  for (int64_t b0 = 0; b0 < g.batch; b0 += images) {
    const int64_t nb = std::min(images, g.batch - b0);
    T* p = patches.flat<T>().data();
    for (int64_t b = b0; b < b0 + nb; ++b) {
      for (int64_t oh = 0; oh < g.out_rows; ++oh) {
        for (int64_t ow = 0; ow < g.out_cols; ++ow) {
          for (int64_t fh = 0; fh < g.kh; ++fh) {
            const int64_t h = g.InputRow(oh, fh);
            for (int64_t fw = 0; fw < g.kw; ++fw, p += g.depth) {
              const int64_t w = g.InputCol(ow, fw);
              if (h < 0 || h >= g.rows || w < 0 || w >= g.cols) {
                std::fill(p, p + g.depth, static_cast<T>(0));
              } else {
                const T* src = x + ((b * g.rows + h) * g.cols + w) * g.depth;
                std::copy(src, src + g.depth, p);
              }
            }
          }
        }
      }
    }
    T* c = b0 == 0 ? dw : partial.flat<T>().data();
    Gemm<T>(pool, /*transpose_a=*/true, /*transpose_b=*/false, k, g.out_depth, nb * pixels,
            patches.flat<T>().data(), dy + b0 * pixels * g.out_depth, c);
    if (b0 > 0) {
      for (int64_t i = 0; i < k * g.out_depth; ++i) dw[i] += c[i];
    }
  }
  return absl::OkStatus();
}

template <typename T>
class Conv2DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv2DBackpropFilterOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, attrs_.Read(ctx, WindowKind::kConv));
    if (std::is_same_v<T, float> && cpu::OneDnnConvBackpropFromEnv()) {
      onednn_ = std::make_unique<cpu::OneDnnConv2DBackpropFilter>();
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    absl::StatusOr<TensorShape> filter = ShapeFromInput(ctx->input(1), "filter_sizes");
    OP_REQUIRES_OK(ctx, filter.status());
    OP_REQUIRES(ctx, in.dims() == 4, absl::InvalidArgumentError("input must be 4-dimensional"));
    FilterGradGeometry g;
    g.batch = in.dim_size(0);
    g.rows = in.dim_size(1);
    g.cols = in.dim_size(2);
    g.depth = in.dim_size(3);
    g.kh = filter->dim_size(0);
    g.kw = filter->dim_size(1);
    g.out_depth = filter->dim_size(3);
    OP_REQUIRES(
        ctx, filter->dim_size(2) == g.depth,
        absl::UnimplementedError(absl::StrCat(
            "Conv2DBackpropFilter: input depth ", g.depth, " and filter depth ",
            filter->dim_size(2), " differ (grouped convolutions are not supported on CPU)")));
    auto wr = attrs_.Along(1, g.rows, g.kh);
    OP_REQUIRES_OK(ctx, wr.status());
    auto wc = attrs_.Along(2, g.cols, g.kw);
    OP_REQUIRES_OK(ctx, wc.status());
    g.out_rows = wr->out;
    g.out_cols = wc->out;
    g.pad_h = wr->pad_before;
    g.pad_w = wc->pad_before;
    g.stride_h = attrs_.strides[1];
    g.stride_w = attrs_.strides[2];
    g.dilation_h = attrs_.dilations[1];
    g.dilation_w = attrs_.dilations[2];
    OP_REQUIRES_OK(
        ctx, CheckShape(grad, "out_backprop", {g.batch, g.out_rows, g.out_cols, g.out_depth}));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *filter, &out));
    T* dw = out->flat<T>().data();
    const T* x = in.flat<T>().data();
    const T* dy = grad.flat<T>().data();
    const int64_t rows = g.filter_rows();
    const double row_cost =
        2.0 * static_cast<double>(g.batch * g.out_rows * g.out_cols * g.out_depth);
    const double work = row_cost * static_cast<double>(rows);
    if constexpr (std::is_same_v<T, float>) {
      const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
      const cpu::NarrowConvGeometry narrow{g.batch, g.rows,     g.cols,     g.depth,
                                           g.kh,    g.kw,       g.out_depth, g.out_rows,
                                           g.out_cols, g.stride_h, g.stride_w, g.pad_h,
                                           g.pad_w};
      if (narrow_ && g.dilation_h == 1 && g.dilation_w == 1 && work > 0 &&
          cpu::NarrowConvApplies(narrow)) {
        cpu::NarrowConvFilterGrad(pool, narrow, x, dy, dw);
        return;
      }
      if (onednn_ != nullptr && pool != nullptr && g.dilation_h == 1 && g.dilation_w == 1 &&
          work > 0) {
        const auto geometry = cpu::OneDnnBackwardGeometryIfSupported(
            {g.batch, g.rows, g.cols, g.depth, g.kh, g.kw, g.out_depth, g.stride_h, g.stride_w,
             wr->pad_before, wr->pad_after, wc->pad_before, wc->pad_after, g.out_rows,
             g.out_cols});
        if (geometry.has_value()) {
          const absl::Status s = onednn_->Run(*geometry, x, dy, dw, *pool);
          // Unimplemented: oneDNN has no primitive for it; the paths below.
          if (!absl::IsUnimplemented(s)) {
            OP_REQUIRES_OK(ctx, s);
            return;
          }
        }
      }
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (work >= kGemmThreadedMinWork && rows > 0 && g.out_depth > 0) {
        OP_REQUIRES_OK(ctx, FilterGradByGemm<T>(ctx, g, x, dy, dw));
        return;
      }
    }
    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    if (pool == nullptr || work < 1e6) {
      FilterGradRows(g, x, dy, dw, 0, rows);
      return;
    }
    pool->parallelFor(
        rows, Eigen::TensorOpCost(row_cost * sizeof(T), g.out_depth * sizeof(T), row_cost),
        [&](Eigen::Index first, Eigen::Index last) { FilterGradRows(g, x, dy, dw, first, last); });
  }

 private:
  WindowAttrs attrs_;
  std::unique_ptr<cpu::OneDnnConv2DBackpropFilter> onednn_;  // float only
  const bool narrow_ = cpu::NarrowConvFromEnv();
};

#define REGISTER_WINDOW_GRADS(T)                                                             \
  REGISTER_KERNEL(KernelDefBuilder("MaxPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  MaxPoolGradOp<T>);                                                         \
  REGISTER_KERNEL(                                                                           \
      KernelDefBuilder("_FusedMaxPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"),       \
      MaxPoolGradOp<T>);                                                                     \
  REGISTER_KERNEL(KernelDefBuilder("AvgPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  AvgPoolGradOp<T>);                                                         \
  REGISTER_KERNEL(                                                                           \
      KernelDefBuilder("Conv2DBackpropFilter").Device(kDeviceCpu).TypeConstraint<T>("T"),    \
      Conv2DBackpropFilterOp<T>)
REGISTER_WINDOW_GRADS(float);
REGISTER_WINDOW_GRADS(double);
REGISTER_WINDOW_GRADS(half);
REGISTER_WINDOW_GRADS(bfloat16);
#undef REGISTER_WINDOW_GRADS

}  // namespace
}  // namespace graphrun
