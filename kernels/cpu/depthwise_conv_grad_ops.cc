// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
// on CPU: the gradients of DepthwiseConv2dNative (depthwise_conv_op.cc) with
// respect to its input and its filter, as TensorFlow's ops. With input
// [batch, rows, cols, depth], filter [fh, fw, depth, multiplier] and
// out_backprop g [batch, out_rows, out_cols, depth * multiplier]:
//   input_backprop[b, r, s, c] = sum of g[b, y, x, c * m + q] * filter[i, j, c, q]
//     over the (y, x, i, j, q) whose window tap (i, j) reads pixel (r, s)
//   filter_backprop[i, j, c, q] = sum of input[b, r, s, c] * g[b, y, x, c * m + q]
//     over the (b, y, x), (r, s) the pixel tap (i, j) of output (y, x) reads.
// Strides, dilations and SAME / VALID / EXPLICIT padding as the forward op
// (rows and columns may differ, which TensorFlow's Eigen CPU kernels refuse).
//
// The input gradient gathers, per input pixel, the out_backprop pixels
// whose windows cover it: input rows are spread over the intra-op pool and
// no two write the same element. The filter gradient splits the output rows
// into one piece per pool thread, each summing into its own filter-sized
// buffer, and adds the buffers in piece order. Both vectorize over the
// depth vector of a pixel (Eigen arrays; with a multiplier, a [depth,
// multiplier] block). half and bfloat16 compute in float, double in double.
// NCHW (which TensorFlow's Eigen kernels refuse) is transposed to NHWC and
// back.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/window.h"

namespace graphrun {
namespace {

using op_shapes::Padding;
using windowed::Window;

// NHWC terms whatever the data format.
struct Geometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, multiplier = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  Window rows, cols;
  int64_t out_depth() const { return depth * multiplier; }
};

// The compute type: double for double, float for float, half and bfloat16.
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The input gradient of images rows [begin, end) (b * in_rows + r), NHWC.
template <typename CT>
void InputRows(const Geometry& d, const CT* g, const CT* filter, CT* dx, int64_t begin,
               int64_t end) {
  using Vec = Eigen::Array<CT, Eigen::Dynamic, 1>;
  using Block = Eigen::Array<CT, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t depth = d.depth, mult = d.multiplier, out_depth = d.out_depth();
  for (int64_t br = begin; br < end; ++br) {
    const int64_t b = br / d.in_rows, r = br % d.in_rows;
    for (int64_t s = 0; s < d.in_cols; ++s) {
      Eigen::Map<Vec> acc(dx + (br * d.in_cols + s) * depth, depth);
      acc.setZero();
      for (int64_t i = 0; i < d.filter_rows; ++i) {
        // Output row y reads input row y * stride - pad + i * dilation.
        const int64_t t = r + d.rows.pad_before - i * d.dilation_rows;
        if (t < 0 || t % d.stride_rows != 0 || t / d.stride_rows >= d.rows.out) continue;
        const int64_t y = t / d.stride_rows;
        for (int64_t j = 0; j < d.filter_cols; ++j) {
          const int64_t u = s + d.cols.pad_before - j * d.dilation_cols;
          if (u < 0 || u % d.stride_cols != 0 || u / d.stride_cols >= d.cols.out) continue;
          const int64_t x = u / d.stride_cols;
          const CT* gp = g + ((b * d.rows.out + y) * d.cols.out + x) * out_depth;
          const CT* tap = filter + (i * d.filter_cols + j) * out_depth;
          if (mult == 1) {
            acc += Eigen::Map<const Vec>(gp, depth) * Eigen::Map<const Vec>(tap, depth);
          } else {
            acc += (Eigen::Map<const Block>(gp, depth, mult) *
                    Eigen::Map<const Block>(tap, depth, mult))
                       .rowwise()
                       .sum();
          }
        }
      }
    }
  }
}

// Adds the filter gradient of output rows [begin, end) (b * out_rows + y)
// to `acc` ([fh, fw, depth, multiplier]), NHWC.
template <typename CT>
void FilterRows(const Geometry& d, const CT* in, const CT* g, CT* acc, int64_t begin,
                int64_t end) {
  using Vec = Eigen::Array<CT, Eigen::Dynamic, 1>;
  using Block = Eigen::Array<CT, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t depth = d.depth, mult = d.multiplier, out_depth = d.out_depth();
  for (int64_t by = begin; by < end; ++by) {
    const int64_t b = by / d.rows.out, y = by % d.rows.out;
    const CT* image = in + b * d.in_rows * d.in_cols * depth;
    const int64_t r0 = y * d.stride_rows - d.rows.pad_before;
    for (int64_t x = 0; x < d.cols.out; ++x) {
      const CT* gp = g + (by * d.cols.out + x) * out_depth;
      const int64_t s0 = x * d.stride_cols - d.cols.pad_before;
      for (int64_t i = 0; i < d.filter_rows; ++i) {
        const int64_t r = r0 + i * d.dilation_rows;
        if (r < 0 || r >= d.in_rows) continue;
        for (int64_t j = 0; j < d.filter_cols; ++j) {
          const int64_t s = s0 + j * d.dilation_cols;
          if (s < 0 || s >= d.in_cols) continue;
          const CT* px = image + (r * d.in_cols + s) * depth;
          CT* tap = acc + (i * d.filter_cols + j) * out_depth;
          if (mult == 1) {
            Eigen::Map<Vec>(tap, depth) +=
                Eigen::Map<const Vec>(px, depth) * Eigen::Map<const Vec>(gp, depth);
          } else {
            Eigen::Map<Block>(tap, depth, mult) +=
                Eigen::Map<const Block>(gp, depth, mult).colwise() *
                Eigen::Map<const Vec>(px, depth);
          }
        }
      }
    }
  }
}

// A 4-D shape from a 1-D int32 input (input_sizes, filter_sizes), with
// TensorFlow's messages.
absl::StatusOr<TensorShape> ShapeFromSizes(const Tensor& t, const char* label, const char* name) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": ", name, " input must be 1-dim, not ", t.dims()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int32_t v = t.flat<int32_t>()[i];
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dimension ", i, " of ", name, " must be >= 0"));
    }
    dims.push_back(v);
  }
  return TensorShape::FromDims(dims);
}

// What the two gradients share: the forward op's attrs and the geometry
// checks of TensorFlow's kernels (same messages).
template <typename T>
class DepthwiseGradOp : public OpKernel {
 public:
  DepthwiseGradOp(OpKernelConstruction* ctx, const char* label) : OpKernel(ctx), label_(label) {
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
                absl::InvalidArgumentError(absl::StrCat("attr 'data_format' is '", data_format,
                                                        "': ", label_,
                                                        " supports NHWC and NCHW")));
    nchw_ = data_format == "NCHW";
    OP_REQUIRES(ctx, strides_.size() == 4,
                absl::InvalidArgumentError("Sliding window strides field must specify 4 "
                                           "dimensions"));
    OP_REQUIRES(ctx, dilations_.size() == 4,
                absl::InvalidArgumentError("Sliding window dilations field must specify 4 "
                                           "dimensions"));
    const int c = nchw_ ? 1 : 3;
    OP_REQUIRES(ctx, strides_[0] == 1 && strides_[c] == 1,
                absl::InvalidArgumentError("Current implementation does not yet support "
                                           "strides in the batch and depth dimensions."));
    OP_REQUIRES(ctx, dilations_[0] == 1 && dilations_[c] == 1,
                absl::InvalidArgumentError("Current implementation does not yet support "
                                           "dilations in the batch and depth dimensions."));
    OP_REQUIRES_OK(ctx, windowed::CheckExplicitPaddings(padding_, explicit_paddings_, c));
  }

 protected:
  using CT = ComputeType<T>;

  // The geometry of input `input_shape`, filter `filter_shape` and
  // out_backprop `grad`, all in the op's data format.
  absl::Status MakeGeometry(const TensorShape& input_shape, const TensorShape& filter_shape,
                            const Tensor& grad, Geometry* d) const {
    const std::string label = label_;
    if (input_shape.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": input must be 4-dimensional"));
    }
    if (filter_shape.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": filter must be 4-dimensional"));
    }
    if (grad.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": out_backprop must be 4-dimensional"));
    }
    const int c = nchw_ ? 1 : 3, h = nchw_ ? 2 : 1, w = nchw_ ? 3 : 2;
    d->batch = input_shape.dim_size(0);
    if (d->batch != grad.dim_size(0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": input and out_backprop must have the same batch size"));
    }
    d->in_rows = input_shape.dim_size(h);
    d->in_cols = input_shape.dim_size(w);
    d->depth = input_shape.dim_size(c);
    if (d->depth != filter_shape.dim_size(2)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": input and filter must have the same in_depth"));
    }
    d->filter_rows = filter_shape.dim_size(0);
    d->filter_cols = filter_shape.dim_size(1);
    d->multiplier = filter_shape.dim_size(3);
    if (d->out_depth() != grad.dim_size(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": depth_multiplier * in_depth not equal to out_depth"));
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
    GR_RETURN_IF_ERROR(windowed::ComputeWindow(d->in_rows, d->filter_rows, d->dilation_rows,
                                               d->stride_rows, padding_, &d->rows));
    GR_RETURN_IF_ERROR(windowed::ComputeWindow(d->in_cols, d->filter_cols, d->dilation_cols,
                                               d->stride_cols, padding_, &d->cols));
    if (grad.dim_size(h) != d->rows.out) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": Number of rows of out_backprop doesn't match computed: actual = ",
          grad.dim_size(h), ", computed = ", d->rows.out));
    }
    if (grad.dim_size(w) != d->cols.out) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, ": Number of cols of out_backprop doesn't match computed: actual = ",
          grad.dim_size(w), ", computed = ", d->cols.out));
    }
    return absl::OkStatus();
  }

  // The elements of `t` (4-D, in the op's data format) as CT, in NHWC when
  // `transpose`: t's own buffer when it already is that, else one that
  // `scratch` holds.
  absl::StatusOr<const CT*> AsNhwc(OpKernelContext* ctx, const Tensor& t, bool transpose,
                                   Tensor* scratch) const {
    const CT* data = nullptr;
    Tensor wide;
    if constexpr (std::is_same_v<T, CT>) {
      data = t.flat<T>().data();
    } else {
      GR_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<CT>::value, t.shape(), &wide));
      const T* src = t.flat<T>().data();
      CT* dst = wide.flat<CT>().data();
      for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = static_cast<CT>(src[i]);
      data = dst;
    }
    if (!transpose) {
      if (!std::is_same_v<T, CT>) *scratch = wide;
      return data;
    }
    GR_RETURN_IF_ERROR(ctx->allocate_temp(DataTypeToEnum<CT>::value, t.shape(), scratch));
    cpu::Permute<CT>(ctx, data, {t.dim_size(0), t.dim_size(1), t.dim_size(2), t.dim_size(3)},
                     {0, 2, 3, 1}, scratch->flat<CT>().data());
    return static_cast<const CT*>(scratch->flat<CT>().data());
  }

  // Runs fn(first, last) over [0, n) on the pool when `work` is big.
  void ParallelFor(OpKernelContext* ctx, int64_t n, double work_per_unit,
                   const std::function<void(Eigen::Index, Eigen::Index)>& fn) const {
    if (work_per_unit * n > kParallelElements) {
      ctx->eigen_cpu_device().parallelFor(
          n, Eigen::TensorOpCost(work_per_unit * sizeof(CT), 0, 2 * work_per_unit), fn);
    } else {
      fn(0, n);
    }
  }

  bool nchw_ = false;

 private:
  const char* label_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> dilations_;
  std::vector<int64_t> explicit_paddings_;
  Padding padding_ = Padding::kValid;
};

template <typename T>
class DepthwiseConv2dNativeBackpropInputOp : public DepthwiseGradOp<T> {
 public:
  using Base = DepthwiseGradOp<T>;
  using CT = typename Base::CT;
  explicit DepthwiseConv2dNativeBackpropInputOp(OpKernelConstruction* ctx)
      : Base(ctx, "DepthwiseConv2DBackpropInput") {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    auto input_shape =
        ShapeFromSizes(ctx->input(0), "DepthwiseConv2DBackpropInput", "input_sizes");
    OP_REQUIRES_OK(ctx, input_shape.status());
    Geometry d;
    OP_REQUIRES_OK(ctx, this->MakeGeometry(*input_shape, filter.shape(), grad, &d));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *input_shape, &output));
    const int64_t n = output->NumElements();
    if (n == 0) return;
    if (grad.NumElements() == 0 || filter.NumElements() == 0) {
      T* out = output->flat<T>().data();
      std::fill(out, out + n, static_cast<T>(0));
      return;
    }
    Tensor g_scratch, f_scratch, out_scratch;
    auto g = this->AsNhwc(ctx, grad, this->nchw_, &g_scratch);
    OP_REQUIRES_OK(ctx, g.status());
    auto f = this->AsNhwc(ctx, filter, false, &f_scratch);
    OP_REQUIRES_OK(ctx, f.status());
    // Written in place when the output is CT in NHWC.
    CT* dx = nullptr;
    if constexpr (std::is_same_v<T, CT>) {
      if (!this->nchw_) dx = output->flat<T>().data();
    }
    const bool direct = dx != nullptr;
    if (!direct) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value, output->shape(),
                                             &out_scratch));
      dx = out_scratch.flat<CT>().data();
    }
    const double per_row = static_cast<double>(d.in_cols) * d.filter_rows * d.filter_cols *
                           d.out_depth();
    this->ParallelFor(ctx, d.batch * d.in_rows, per_row,
                      [&](Eigen::Index begin, Eigen::Index end) {
                        InputRows<CT>(d, *g, *f, dx, begin, end);
                      });
    if (direct) return;
    const CT* result = dx;
    Tensor nchw;
    if (this->nchw_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value, output->shape(), &nchw));
      cpu::Permute<CT>(ctx, dx, {d.batch, d.in_rows, d.in_cols, d.depth}, {0, 3, 1, 2},
                       nchw.flat<CT>().data());
      result = nchw.flat<CT>().data();
    }
    T* out = output->flat<T>().data();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(result[i]);
  }
};

template <typename T>
class DepthwiseConv2dNativeBackpropFilterOp : public DepthwiseGradOp<T> {
 public:
  using Base = DepthwiseGradOp<T>;
  using CT = typename Base::CT;
  explicit DepthwiseConv2dNativeBackpropFilterOp(OpKernelConstruction* ctx)
      : Base(ctx, "DepthwiseConv2DBackpropFilter") {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    auto filter_shape =
        ShapeFromSizes(ctx->input(1), "DepthwiseConv2DBackpropFilter", "filter_sizes");
    OP_REQUIRES_OK(ctx, filter_shape.status());
    Geometry d;
    OP_REQUIRES_OK(ctx, this->MakeGeometry(input.shape(), *filter_shape, grad, &d));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *filter_shape, &output));
    const int64_t size = output->NumElements();
    if (size == 0) return;
    // One piece of output rows per pool thread when the work is big.
    const int64_t rows = d.batch * d.rows.out;
    const double per_row = static_cast<double>(d.cols.out) * d.filter_rows * d.filter_cols *
                           d.out_depth();
    int64_t pieces = 1;
    if (per_row * rows > kParallelElements) {
      pieces = std::max<int64_t>(
          1, std::min<int64_t>(rows, ctx->eigen_cpu_device().numThreads()));
    }
    Tensor sums;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value,
                                           TensorShape({pieces, size}), &sums));
    CT* acc = sums.flat<CT>().data();
    std::fill(acc, acc + pieces * size, CT(0));
    if (rows > 0 && input.NumElements() > 0) {
      Tensor in_scratch, g_scratch;
      auto in = this->AsNhwc(ctx, input, this->nchw_, &in_scratch);
      OP_REQUIRES_OK(ctx, in.status());
      auto g = this->AsNhwc(ctx, grad, this->nchw_, &g_scratch);
      OP_REQUIRES_OK(ctx, g.status());
      auto run = [&](Eigen::Index first, Eigen::Index last) {
        for (Eigen::Index k = first; k < last; ++k) {
          FilterRows<CT>(d, *in, *g, acc + k * size, rows * k / pieces, rows * (k + 1) / pieces);
        }
      };
      if (pieces > 1) {
        ctx->eigen_cpu_device().parallelFor(
            pieces, Eigen::TensorOpCost(0, 0, 2 * per_row * rows / pieces), run);
      } else {
        run(0, 1);
      }
    }
    using Vec = Eigen::Array<CT, Eigen::Dynamic, 1>;
    Eigen::Map<Vec> total(acc, size);
    for (int64_t k = 1; k < pieces; ++k) total += Eigen::Map<const Vec>(acc + k * size, size);
    T* out = output->flat<T>().data();
    for (int64_t i = 0; i < size; ++i) out[i] = static_cast<T>(acc[i]);
  }
};

#define GR_REGISTER_DEPTHWISE_GRAD(T)                                   \
  REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropInput")  \
                      .Device(kDeviceCpu)                                 \
                      .TypeConstraint<T>("T"),                            \
                  DepthwiseConv2dNativeBackpropInputOp<T>);               \
  REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropFilter") \
                      .Device(kDeviceCpu)                                 \
                      .TypeConstraint<T>("T"),                            \
                  DepthwiseConv2dNativeBackpropFilterOp<T>)
GR_REGISTER_DEPTHWISE_GRAD(float);
GR_REGISTER_DEPTHWISE_GRAD(double);
GR_REGISTER_DEPTHWISE_GRAD(half);
GR_REGISTER_DEPTHWISE_GRAD(bfloat16);
#undef GR_REGISTER_DEPTHWISE_GRAD

}  // namespace
}  // namespace graphrun
