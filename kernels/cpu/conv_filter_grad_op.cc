// Conv2DBackpropFilter on CPU, NHWC (TensorFlow's CPU kernel takes only
// NHWC too), with dilations, strides and SAME / VALID / EXPLICIT padding:
// float and double above 64^3 multiply-adds as im2col patches^T *
// out_backprop on Gemm (gemm.h), else and for half and bfloat16 a direct
// loop, each filter row (kh, kw, ci) summed by one thread. Sums of half and
// bfloat16 run in float. Float undilated ones run on oneDNN's backward
// weights instead (conv_onednn_backward.h) unless
// GRAPHRUN_CONV2D_LIBRARY=eigen, and a grayscale first layer's on the
// narrow kernels (narrow_conv.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/conv_onednn_backward.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/narrow_conv.h"
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

#define REGISTER_FILTER_GRAD(T)                                                           \
  REGISTER_KERNEL(                                                                        \
      KernelDefBuilder("Conv2DBackpropFilter").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      Conv2DBackpropFilterOp<T>)
REGISTER_FILTER_GRAD(float);
REGISTER_FILTER_GRAD(double);
REGISTER_FILTER_GRAD(half);
REGISTER_FILTER_GRAD(bfloat16);
#undef REGISTER_FILTER_GRAD

}  // namespace
}  // namespace graphrun
