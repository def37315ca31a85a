// DepthwiseConv2dNative on CPU, as TensorFlow's DepthwiseConv2dNativeOp:
// input [batch, rows, cols, depth], filter [fh, fw, depth, multiplier],
// output channel c * multiplier + q = sum over the window of
// input[.., c] * filter[i, j, c, q]. Strides, dilations and SAME / VALID /
// EXPLICIT padding.
//
// Float NHWC, undilated, with padding narrower than the window, runs on
// oneDNN's convolution with a group per input channel (conv_onednn.h;
// MobileNet 0.90x, EfficientNetB0 0.94x, Xception 0.89x of the direct loop,
// bench/step_ab). Everything else, and everything under
// GRAPHRUN_CONV2D_LIBRARY=eigen, takes a direct loop: each output pixel's
// depth vector accumulates one tap at a time as an element-wise multiply-add
// of the input pixel's depth vector and the tap's filter row (Eigen arrays,
// vectorized over channels; with a multiplier, a [depth, multiplier] block
// scaled row by row). Output rows are spread over the intra-op pool. half
// and bfloat16 compute in float. NCHW (which TensorFlow's CPU kernel
// refuses) is transposed to NHWC and back.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/conv_onednn.h"
#include "kernels/cpu/cpu_kernel_util.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using cpu::ComputeWindow;
using cpu::Window;
using op_shapes::Padding;

// NHWC terms whatever the data format.
struct DepthwiseDims {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, multiplier = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  Window rows, cols;
  int64_t out_depth() const { return in_depth * multiplier; }
};

template <typename T>
void DepthwiseNHWC(const OpKernelContext& ctx, const DepthwiseDims& d,
                   const T* in, const T* filter, T* out) {
  using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
  using Block = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t depth = d.in_depth;
  const int64_t mult = d.multiplier;
  const int64_t out_depth = d.out_depth();
  // Multiplier 1: each output pixel is accumulated 16 channels at a time
  // in registers over all its taps and stored once (the general loop
  // below reads and writes the output row once per tap).
  auto rows_m1 = [&](Eigen::Index begin, Eigen::Index end) {
    using Chunk = Eigen::Array<T, 16, 1>;
    const int64_t full = depth / 16 * 16;
    std::vector<std::pair<int64_t, int64_t>> taps;
    taps.reserve(d.filter_rows * d.filter_cols);
    for (Eigen::Index br = begin; br < end; ++br) {
      const int64_t b = br / d.rows.out, y = br % d.rows.out;
      const T* image = in + b * d.in_rows * d.in_cols * depth;
      T* out_row = out + br * d.cols.out * depth;
      const int64_t y0 = y * d.stride_rows - d.rows.pad_before;
      for (int64_t x = 0; x < d.cols.out; ++x) {
        const int64_t x0 = x * d.stride_cols - d.cols.pad_before;
        // The taps inside the image: input pixel and filter tap offsets.
        taps.clear();
        for (int64_t i = 0; i < d.filter_rows; ++i) {
          const int64_t iy = y0 + i * d.dilation_rows;
          if (iy < 0 || iy >= d.in_rows) continue;
          for (int64_t j = 0; j < d.filter_cols; ++j) {
            const int64_t ix = x0 + j * d.dilation_cols;
            if (ix < 0 || ix >= d.in_cols) continue;
            taps.emplace_back((iy * d.in_cols + ix) * depth, (i * d.filter_cols + j) * depth);
          }
        }
        T* o = out_row + x * depth;
        for (int64_t c = 0; c < full; c += 16) {
          Chunk acc = Chunk::Zero();
          for (const auto& [px, tap] : taps) {
            acc += Eigen::Map<const Chunk>(image + px + c) * Eigen::Map<const Chunk>(filter + tap + c);
          }
          Eigen::Map<Chunk>(o + c) = acc;
        }
        for (int64_t c = full; c < depth; ++c) {
          T acc = T(0);
          for (const auto& [px, tap] : taps) acc += image[px + c] * filter[tap + c];
          o[c] = acc;
        }
      }
    }
  };
  auto rows = [&](Eigen::Index begin, Eigen::Index end) {
    if (mult == 1) {
      rows_m1(begin, end);
      return;
    }
    for (Eigen::Index br = begin; br < end; ++br) {
      const int64_t b = br / d.rows.out, y = br % d.rows.out;
      const T* image = in + b * d.in_rows * d.in_cols * depth;
      T* out_row = out + br * d.cols.out * out_depth;
      const int64_t y0 = y * d.stride_rows - d.rows.pad_before;
      for (int64_t x = 0; x < d.cols.out; ++x) {
        T* o_data = out_row + x * out_depth;
        Eigen::Map<Vec> o(o_data, out_depth);
        o.setZero();
        const int64_t x0 = x * d.stride_cols - d.cols.pad_before;
        for (int64_t i = 0; i < d.filter_rows; ++i) {
          const int64_t iy = y0 + i * d.dilation_rows;
          if (iy < 0 || iy >= d.in_rows) continue;
          for (int64_t j = 0; j < d.filter_cols; ++j) {
            const int64_t ix = x0 + j * d.dilation_cols;
            if (ix < 0 || ix >= d.in_cols) continue;
            const T* px = image + (iy * d.in_cols + ix) * depth;
            const T* tap = filter + (i * d.filter_cols + j) * out_depth;
            if (mult == 1) {
              o += Eigen::Map<const Vec>(px, depth) *
                   Eigen::Map<const Vec>(tap, depth);
            } else {
              Eigen::Map<Block>(o_data, depth, mult) +=
                  Eigen::Map<const Block>(tap, depth, mult).colwise() *
                  Eigen::Map<const Vec>(px, depth);
            }
          }
        }
      }
    }
  };
  const Eigen::Index n = d.batch * d.rows.out;
  const double per_row = static_cast<double>(d.cols.out) * d.filter_rows *
                         d.filter_cols * out_depth;
  if (per_row * n > cpu::kParallelElements) {
    ctx.eigen_cpu_device().parallelFor(
        n,
        Eigen::TensorOpCost(per_row * sizeof(T),
                            d.cols.out * out_depth * sizeof(T), 2 * per_row),
        rows);
  } else {
    rows(0, n);
  }
}

template <typename T>
class DepthwiseConv2dNativeOp : public OpKernel {
 public:
  explicit DepthwiseConv2dNativeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string padding, data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dilations", &dilations_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("padding", &padding));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("explicit_paddings", &explicit_paddings_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    auto parsed = op_shapes::ParsePadding(padding);
    OP_REQUIRES_OK(ctx, parsed.status());
    padding_ = *parsed;
    OP_REQUIRES(ctx, data_format == "NHWC" || data_format == "NCHW",
                absl::InvalidArgumentError(absl::StrCat(
                    "attr 'data_format' is '", data_format,
                    "': DepthwiseConv2dNative supports NHWC and NCHW")));
    nchw_ = data_format == "NCHW";
    library_ = cpu::Conv2DLibraryFromEnv();
    OP_REQUIRES(ctx, strides_.size() == 4,
                absl::InvalidArgumentError("Sliding window strides field must "
                                           "specify 4 dimensions"));
    OP_REQUIRES(ctx, dilations_.size() == 4,
                absl::InvalidArgumentError("Sliding window dilations field "
                                           "must specify 4 dimensions"));
    const int c = nchw_ ? 1 : 3;
    OP_REQUIRES(ctx, strides_[0] == 1 && strides_[c] == 1,
                absl::InvalidArgumentError(
                    "Current implementation does not yet support strides in "
                    "the batch and depth dimensions."));
    OP_REQUIRES(ctx, dilations_[0] == 1 && dilations_[c] == 1,
                absl::InvalidArgumentError(
                    "Current implementation does not yet support dilations "
                    "in the batch and depth dimensions."));
    cpu::PaddingValueRule fits_int;
    fits_int.max_value = std::numeric_limits<int>::max();
    fits_int.message =
        "All elements of explicit_paddings must be nonnegative (and fit in int)";
    OP_REQUIRES_OK(ctx, cpu::CheckExplicitPaddings(padding_, explicit_paddings_,
                                                   c, fits_int));
  }

  void Compute(OpKernelContext* ctx) override { ComputeDepthwise(ctx, nullptr); }

 protected:
  // Output 0 = inputs 0 and 1 convolved depthwise; with `fused` (float
  // NHWC only), then plus fused->bias and through its activation.
  void ComputeDepthwise(OpKernelContext* ctx, const cpu::OneDnnConvBias* fused) {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    DepthwiseDims d;
    OP_REQUIRES_OK(ctx, ComputeDims(input, filter, &d));
    const int64_t oc = d.out_depth();
    auto out_shape = TensorShape::FromDims(
        nchw_ ? std::vector<int64_t>{d.batch, oc, d.rows.out, d.cols.out}
              : std::vector<int64_t>{d.batch, d.rows.out, d.cols.out, oc});
    OP_REQUIRES_OK(ctx, out_shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &output));
    if (out_shape->num_elements() == 0) return;
    using CT = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const DataType ct = DataTypeToEnum<CT>::value;
    // Input, filter and output in NHWC and the compute type.
    Tensor wide_in, nhwc_in, wide_filter, nhwc_out;
    const CT* in = nullptr;
    const CT* f = nullptr;
    CT* out = nullptr;
    if constexpr (std::is_same_v<T, CT>) {
      in = input.flat<T>().data();
      f = filter.flat<T>().data();
      out = output->flat<T>().data();
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, input.shape(), &wide_in));
      Widen(input, wide_in.flat<CT>().data());
      in = wide_in.flat<CT>().data();
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, filter.shape(), &wide_filter));
      Widen(filter, wide_filter.flat<CT>().data());
      f = wide_filter.flat<CT>().data();
    }
    if (nchw_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, input.shape(), &nhwc_in));
      cpu::Permute<CT>(ctx, in, {d.batch, d.in_depth, d.in_rows, d.in_cols},
                       {0, 2, 3, 1}, nhwc_in.flat<CT>().data());
      in = nhwc_in.flat<CT>().data();
    }
    if (nchw_ || !std::is_same_v<T, CT>) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, *out_shape, &nhwc_out));
      out = nhwc_out.flat<CT>().data();
    }
    if (input.NumElements() == 0) {
      std::fill_n(out, out_shape->num_elements(), CT(0));
    } else if (RunOneDnn(ctx, d, input, filter, output, fused)) {
      return;
    } else {
      DepthwiseNHWC<CT>(*ctx, d, in, f, out);
    }
    if constexpr (std::is_same_v<T, float>) {
      if (fused != nullptr) {
        fused->epilogue.Apply(&ctx->eigen_cpu_device(), fused->bias, oc, out,
                              out_shape->num_elements() / oc);
      }
    }
    if constexpr (std::is_same_v<T, CT>) {
      if (nchw_) {
        cpu::Permute<CT>(ctx, out, {d.batch, d.rows.out, d.cols.out, oc},
                         {0, 3, 1, 2}, output->flat<T>().data());
      }
    } else {
      const CT* result = out;
      Tensor nchw_out;
      if (nchw_) {
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, *out_shape, &nchw_out));
        cpu::Permute<CT>(ctx, out, {d.batch, d.rows.out, d.cols.out, oc},
                         {0, 3, 1, 2}, nchw_out.flat<CT>().data());
        result = nchw_out.flat<CT>().data();
      }
      T* dst = output->flat<T>().data();
      for (int64_t i = 0; i < out_shape->num_elements(); ++i) {
        dst[i] = static_cast<T>(result[i]);
      }
    }
  }

 private:
  // Float NHWC, undilated, padding narrower than the window: oneDNN's
  // depthwise convolution (a group per input channel); false when it does
  // not apply or has no primitive for the geometry.
  bool RunOneDnn(OpKernelContext* ctx, const DepthwiseDims& d, const Tensor& input,
                 const Tensor& filter, Tensor* output, const cpu::OneDnnConvBias* fused) {
    if constexpr (!std::is_same_v<T, float>) {
      return false;
    } else {
      if (library_ == cpu::Conv2DLibrary::kEigen || nchw_) return false;
      const std::optional<cpu::OneDnnConvGeometry> g =
          cpu::OneDnnGeometryOf(d, d.out_depth(), d.multiplier);
      if (!g.has_value()) return false;
      const absl::Status s = onednn_.Run(*g, filter, input.flat<float>().data(),
                                         output->flat<float>().data(), ctx->eigen_cpu_device(),
                                         fused);
      if (absl::IsUnimplemented(s)) return false;
      // Any other failure is the node's (the output stays unwritten).
      if (!s.ok()) ctx->SetStatus(s);
      return true;
    }
  }

  template <typename CT>
  static void Widen(const Tensor& t, CT* dst) {
    const T* src = t.flat<T>().data();
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      dst[i] = static_cast<CT>(src[i]);
    }
  }

  absl::Status ComputeDims(const Tensor& input, const Tensor& filter,
                           DepthwiseDims* d) const {
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be 4-dimensional", input.shape().DebugString()));
    }
    if (filter.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter must be 4-dimensional: ", filter.shape().DebugString()));
    }
    const int c = nchw_ ? 1 : 3, h = nchw_ ? 2 : 1, w = nchw_ ? 3 : 2;
    d->batch = input.dim_size(0);
    d->in_rows = input.dim_size(h);
    d->in_cols = input.dim_size(w);
    d->in_depth = input.dim_size(c);
    if (d->in_depth != filter.dim_size(2)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input and filter must have the same depth: ", d->in_depth, " vs ",
          filter.dim_size(2)));
    }
    d->filter_rows = filter.dim_size(0);
    d->filter_cols = filter.dim_size(1);
    d->multiplier = filter.dim_size(3);
    if (filter.NumElements() == 0 && input.NumElements() > 0) {
      return absl::InvalidArgumentError(
          "filter must not have zero elements (i.e. all dimensions must be "
          "non-zero)");
    }
    d->stride_rows = strides_[h];
    d->stride_cols = strides_[w];
    d->dilation_rows = dilations_[h];
    d->dilation_cols = dilations_[w];
    if (padding_ == Padding::kExplicit) {
      d->rows.pad_before = explicit_paddings_[2 * h];
      d->rows.pad_after = explicit_paddings_[2 * h + 1];
      d->cols.pad_before = explicit_paddings_[2 * w];
      d->cols.pad_after = explicit_paddings_[2 * w + 1];
    }
    absl::Status s = ComputeWindow(d->in_rows, d->filter_rows,
                                   d->dilation_rows, d->stride_rows, padding_,
                                   &d->rows);
    if (!s.ok()) return s;
    return ComputeWindow(d->in_cols, d->filter_cols, d->dilation_cols,
                         d->stride_cols, padding_, &d->cols);
  }

  std::vector<int64_t> strides_;
  std::vector<int64_t> dilations_;
  std::vector<int64_t> explicit_paddings_;
  Padding padding_ = Padding::kValid;
  bool nchw_ = false;
  cpu::Conv2DLibrary library_ = cpu::Conv2DLibrary::kAuto;
  cpu::OneDnnConv2D onednn_;
};

// _FusedDepthwiseConv2dNative on float NHWC: the bias and activation as
// oneDNN's bias and post-op, or applied after the direct loop.
class FusedDepthwiseConv2dNativeOp : public DepthwiseConv2dNativeOp<float> {
 public:
  explicit FusedDepthwiseConv2dNativeOp(OpKernelConstruction* ctx)
      : DepthwiseConv2dNativeOp<float>(ctx) {
    auto epilogue = cpu::BiasActivation::FromAttrs(ctx);
    OP_REQUIRES_OK(ctx, epilogue.status());
    epilogue_ = *epilogue;
    std::string data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES(ctx, data_format == "NHWC",
                absl::InvalidArgumentError(
                    "_FusedDepthwiseConv2dNative supports data_format NHWC only"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_REQUIRES(ctx, filter.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 4-dimensional: ", filter.shape().DebugString())));
    const int64_t channels = filter.dim_size(2) * filter.dim_size(3);
    OP_REQUIRES(ctx, bias.dims() == 1 && bias.dim_size(0) == channels,
                absl::InvalidArgumentError(absl::StrCat(
                    "_FusedDepthwiseConv2dNative: bias must be a vector of the ", channels,
                    " output channels, got ", bias.shape().DebugString())));
    cpu::OneDnnConvBias fused;
    fused.bias = bias.flat<float>().data();
    fused.epilogue = epilogue_;
    ComputeDepthwise(ctx, &fused);
  }

 private:
  cpu::BiasActivation epilogue_;
};

REGISTER_KERNEL(KernelDefBuilder("_FusedDepthwiseConv2dNative")
                    .Device(kDeviceCpu)
                    .TypeConstraint<float>("T"),
                FusedDepthwiseConv2dNativeOp);

#define GR_REGISTER_DEPTHWISE(T)                                        \
  REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNative")             \
                      .Device(kDeviceCpu)                               \
                      .TypeConstraint<T>("T"),                          \
                  DepthwiseConv2dNativeOp<T>)
GR_REGISTER_DEPTHWISE(float);
GR_REGISTER_DEPTHWISE(double);
GR_REGISTER_DEPTHWISE(half);
GR_REGISTER_DEPTHWISE(bfloat16);
#undef GR_REGISTER_DEPTHWISE

}  // namespace
}  // namespace graphrun
