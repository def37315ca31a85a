// Conv2D on CPU, as TensorFlow's Conv2DOp. float NHWC ungrouped undilated
// SAME / VALID convolutions run on oneDNN (conv_onednn.h), 1.1-3.6x faster
// than the Eigen path below on most Keras-model shapes (bench/conv_benchmark.cc);
// GRAPHRUN_CONV2D_LIBRARY=eigen forces the Eigen path. A grayscale first
// layer (one input channel, 4 or 8 filters) runs on narrow_conv.h instead,
// 1.4x faster than oneDNN there. Everything else:
// im2col (each output pixel's
// receptive field copied channel-run by channel-run into a buffer of at most
// kMaxPatchElements, chunk by chunk of output pixels), then a GEMM (Eigen
// tensor contraction) against the filter viewed as
// [filter_rows * filter_cols * in_depth, out_depth]. (Eigen's
// extract_image_patches computes the same patches several times slower.) 1x1 unpadded stride-1
// convolutions and filters covering the whole unpadded input are a plain
// GEMM. Grouped convolutions (input depth a multiple of the filter's) run
// one GEMM per group. half and bfloat16 compute in float. NCHW input is
// transposed to NHWC and back (TensorFlow's CPU kernel refuses NCHW).
//
// _FusedConv2D (float) is the same kernel with a bias and an activation
// (bias_activation.h) applied before the output is written: by oneDNN
// itself on the oneDNN path, else to each block of output rows right after
// the GEMM that computed it.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/conv_onednn.h"
#include "kernels/cpu/narrow_conv.h"
#include "kernels/cpu/skinny_gemm.h"
#include "kernels/cpu/cpu_kernel_util.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using op_shapes::Padding;

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
// GEMMs doing more multiply-adds than this run on the intra-op pool.
constexpr double kParallelGemmWork = 64.0 * 64.0 * 64.0;
// Copies (im2col, casts, transposes) of more than kParallelElements
// (cpu_kernel_util.h) elements run on it too.
// The im2col buffer holds at most this many elements (or one row).
constexpr int64_t kMaxPatchElements = int64_t{4} << 20;

template <typename T>
using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>>;
template <typename T>
using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
template <typename T>
using Tensor4 = Eigen::TensorMap<Eigen::Tensor<T, 4, Eigen::RowMajor>>;
template <typename T>
using ConstTensor4 =
    Eigen::TensorMap<Eigen::Tensor<const T, 4, Eigen::RowMajor>>;

// The type the arithmetic runs in: float for the 16-bit floats.
template <typename T>
struct ComputeTypeFor {
  using type = T;
};
template <>
struct ComputeTypeFor<half> {
  using type = float;
};
template <>
struct ComputeTypeFor<bfloat16> {
  using type = float;
};

using cpu::Assign;
using cpu::ComputeWindow;
using cpu::kParallelElements;
using cpu::Window;

// Everything Compute needs, in NHWC terms whatever the data format.
struct ConvDims {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, patch_depth = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  int64_t groups = 1;
  Window rows, cols;

  bool Unpadded() const {
    return rows.pad_before == 0 && rows.pad_after == 0 &&
           cols.pad_before == 0 && cols.pad_after == 0;
  }
};

// im2col: row r of `patches` ([rows, fh * fw * patch_depth]) is the
// receptive field of output pixel first_row + r (pixels numbered over
// [batch, out_rows, out_cols]), channels [channel_offset, + patch_depth) of
// NHWC `in`, zeros where the window leaves the input.
template <typename CT>
void Im2Col(const ConvDims& d, const CT* in, int64_t channel_offset,
            int64_t first_row, int64_t rows, CT* patches) {
  const int64_t pd = d.patch_depth;
  const int64_t pixels = d.rows.out * d.cols.out;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t p = first_row + r;
    const int64_t b = p / pixels;
    const int64_t y = (p % pixels) / d.cols.out;
    const int64_t x = p % d.cols.out;
    const CT* image = in + b * d.in_rows * d.in_cols * d.in_depth;
    for (int64_t i = 0; i < d.filter_rows; ++i) {
      const int64_t iy = y * d.stride_rows + i * d.dilation_rows -
                         d.rows.pad_before;
      const bool row_inside = iy >= 0 && iy < d.in_rows;
      for (int64_t j = 0; j < d.filter_cols; ++j, patches += pd) {
        const int64_t ix = x * d.stride_cols + j * d.dilation_cols -
                           d.cols.pad_before;
        if (row_inside && ix >= 0 && ix < d.in_cols) {
          std::copy_n(image + (iy * d.in_cols + ix) * d.in_depth +
                          channel_offset,
                      pd, patches);
        } else {
          std::fill_n(patches, pd, CT(0));
        }
      }
    }
  }
}

// Called with output pixels [first, first + n) once they hold their final
// value (an empty function: nothing to do).
using RowsDone = std::function<void(int64_t first, int64_t n)>;

// NHWC convolution in the compute type CT: in [batch, rows, cols, depth],
// filter [fh, fw, depth / groups, out_depth], out [batch, oh, ow, out_depth].
template <typename CT>
absl::Status ConvNHWC(OpKernelContext* ctx, const ConvDims& d, const CT* in,
                      const CT* filter, CT* out, const RowsDone& rows_done) {
  using Index = Eigen::Index;
  const int64_t groups = d.groups;
  const int64_t group_out = d.out_depth / groups;
  const int64_t k = d.filter_rows * d.filter_cols * d.patch_depth;
  const int64_t m = d.batch * d.rows.out * d.cols.out;
  const bool parallel_gemm = static_cast<double>(m) * group_out * k * groups >
                             kParallelGemmWork;
  const Eigen::array<Eigen::IndexPair<Index>, 1> contract_dims = {
      Eigen::IndexPair<Index>(1, 0)};
  Matrix<CT> output(out, m, d.out_depth);

  if (groups == 1 && d.Unpadded()) {
    // A 1x1 stride-1 convolution is a GEMM over all pixels; a filter that
    // covers the whole input is a GEMM over the batch.
    if (d.filter_rows == 1 && d.filter_cols == 1 && d.stride_rows == 1 &&
        d.stride_cols == 1) {
      ConstMatrix<CT> a(in, m, d.in_depth);
      ConstMatrix<CT> b(filter, d.in_depth, d.out_depth);
      Assign(*ctx, parallel_gemm, output, a.contract(b, contract_dims));
      if (rows_done) rows_done(0, m);
      return absl::OkStatus();
    }
    if (d.filter_rows == d.in_rows && d.filter_cols == d.in_cols &&
        d.dilation_rows == 1 && d.dilation_cols == 1) {
      ConstMatrix<CT> a(in, d.batch, k);
      ConstMatrix<CT> b(filter, k, d.out_depth);
      Assign(*ctx, parallel_gemm, output, a.contract(b, contract_dims));
      if (rows_done) rows_done(0, m);
      return absl::OkStatus();
    }
  }

  const int64_t chunk_rows =
      std::clamp<int64_t>(kMaxPatchElements / std::max<int64_t>(k, 1), 1, m);
  Tensor patches_buf;
  absl::Status s = ctx->allocate_temp(DataTypeToEnum<CT>::value,
                                      TensorShape({chunk_rows, k}),
                                      &patches_buf);
  if (!s.ok()) return s;
  Tensor group_filter_buf;
  if (groups > 1) {
    s = ctx->allocate_temp(DataTypeToEnum<CT>::value,
                           TensorShape({k, group_out}), &group_filter_buf);
    if (!s.ok()) return s;
  }
  ConstMatrix<CT> full_filter(filter, k, d.out_depth);
  CT* patches = patches_buf.flat<CT>().data();
  for (int64_t g = 0; g < groups; ++g) {
    const CT* group_filter = filter;
    if (groups > 1) {
      Matrix<CT> dst(group_filter_buf.flat<CT>().data(), k, group_out);
      Assign(*ctx, false, dst,
             full_filter.slice(Eigen::DSizes<Index, 2>(0, g * group_out),
                               Eigen::DSizes<Index, 2>(k, group_out)));
      group_filter = dst.data();
    }
    ConstMatrix<CT> b(group_filter, k, group_out);
    for (int64_t r0 = 0; r0 < m; r0 += chunk_rows) {
      const int64_t rows = std::min(chunk_rows, m - r0);
      auto fill = [&](Index begin, Index end) {
        Im2Col(d, in, g * d.patch_depth, r0 + begin, end - begin,
               patches + begin * k);
      };
      if (rows * k > kParallelElements) {
        ctx->eigen_cpu_device().parallelFor(
            rows, Eigen::TensorOpCost(k * sizeof(CT), k * sizeof(CT), k),
            fill);
      } else {
        fill(0, rows);
      }
      Matrix<CT> a(patches, rows, k);
      if (groups == 1) {
        Matrix<CT> dst(out + r0 * d.out_depth, rows, d.out_depth);
        Assign(*ctx, parallel_gemm, dst, a.contract(b, contract_dims));
        if (rows_done) rows_done(r0, rows);
      } else {
        Assign(*ctx, parallel_gemm,
               output.slice(Eigen::DSizes<Index, 2>(r0, g * group_out),
                            Eigen::DSizes<Index, 2>(rows, group_out)),
               a.contract(b, contract_dims));
      }
    }
  }
  if (groups > 1 && rows_done) rows_done(0, m);
  return absl::OkStatus();
}

template <typename T>
class Conv2DOp : public OpKernel {
 public:
  explicit Conv2DOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
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
                absl::InvalidArgumentError("Invalid data format"));
    nchw_ = data_format == "NCHW";
    library_ = cpu::Conv2DLibraryFromEnv();
    narrow_ = library_ == cpu::Conv2DLibrary::kAuto && cpu::NarrowConvFromEnv();
    OP_REQUIRES(ctx, dilations_.size() == 4,
                absl::InvalidArgumentError("Sliding window dilations field "
                                           "must specify 4 dimensions"));
    OP_REQUIRES(ctx, strides_.size() == 4,
                absl::InvalidArgumentError("Sliding window strides field must "
                                           "specify 4 dimensions"));
    const int c = nchw_ ? 1 : 3, h = nchw_ ? 2 : 1, w = nchw_ ? 3 : 2;
    OP_REQUIRES(ctx, strides_[0] == 1 && strides_[c] == 1,
                absl::InvalidArgumentError(
                    "Current implementation does not yet support strides in "
                    "the batch and depth dimensions."));
    OP_REQUIRES(ctx, strides_[h] > 0 && strides_[w] > 0,
                absl::InvalidArgumentError(
                    "Row and column strides should be larger than 0."));
    OP_REQUIRES(ctx, dilations_[0] == 1 && dilations_[c] == 1,
                absl::InvalidArgumentError(
                    "Current implementation does not yet support dilations "
                    "in the batch and depth dimensions."));
    OP_REQUIRES(ctx, dilations_[h] > 0 && dilations_[w] > 0,
                absl::InvalidArgumentError(
                    "Dilated rates should be larger than 0."));
    if (padding_ == Padding::kExplicit) {
      OP_REQUIRES(ctx, explicit_paddings_.size() == 8,
                  absl::InvalidArgumentError(absl::StrCat(
                      "explicit_paddings attribute must contain 8 values, but "
                      "got: ",
                      explicit_paddings_.size())));
      for (int64_t p : explicit_paddings_) {
        OP_REQUIRES(ctx, p >= 0,
                    absl::InvalidArgumentError("All elements of "
                                               "explicit_paddings must be "
                                               "nonnegative"));
        OP_REQUIRES(ctx, p <= kIntMax,
                    absl::InvalidArgumentError("filter too large"));
      }
      OP_REQUIRES(ctx,
                  explicit_paddings_[0] == 0 && explicit_paddings_[1] == 0 &&
                      explicit_paddings_[2 * c] == 0 &&
                      explicit_paddings_[2 * c + 1] == 0,
                  absl::InvalidArgumentError(
                      "Nonzero explicit padding in the batch or depth "
                      "dimensions is not supported"));
    } else {
      OP_REQUIRES(ctx, explicit_paddings_.empty(),
                  absl::InvalidArgumentError(
                      "explicit_paddings attribute must be empty if the "
                      "padding attribute is not EXPLICIT"));
    }
  }

  void Compute(OpKernelContext* ctx) override { ComputeConv(ctx, nullptr); }

 protected:
  // Output 0 = inputs 0 and 1 convolved; with `fused` (float only), then
  // plus fused->bias and through fused->epilogue's activation.
  void ComputeConv(OpKernelContext* ctx, const cpu::OneDnnConvBias* fused) {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ConvDims d;
    OP_REQUIRES_OK(ctx, ComputeDims(input, filter, &d));
    TensorShape out_shape =
        nchw_ ? TensorShape({d.batch, d.out_depth, d.rows.out, d.cols.out})
              : TensorShape({d.batch, d.rows.out, d.cols.out, d.out_depth});
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &output));
    if (out_shape.num_elements() == 0) return;
    using CT = typename ComputeTypeFor<T>::type;
    Tensor4<T> out(output->flat<T>().data(), out_shape.dim_size(0),
                   out_shape.dim_size(1), out_shape.dim_size(2),
                   out_shape.dim_size(3));
    if (input.NumElements() == 0 && fused == nullptr) {
      // Every window lies in explicit padding: a sum of nothing. (Fused,
      // the Eigen path below computes the zeros and adds the bias.)
      Assign(*ctx, false, out, out.constant(T(0)));
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (RunSkinny(ctx, d, input, filter, output, fused)) return;
      if (RunNarrow(ctx, d, input, filter, output, fused)) return;
      const std::optional<cpu::OneDnnConvGeometry> g =
          UseOneDnn(d) ? cpu::OneDnnGeometryOf(d, d.out_depth) : std::nullopt;
      if (g.has_value()) {
        absl::Status s = onednn_.Run(*g, filter, input.flat<float>().data(),
                                     output->flat<float>().data(),
                                     ctx->eigen_cpu_device(), fused);
        // Without a oneDNN primitive for the geometry, the Eigen path runs.
        if (!absl::IsUnimplemented(s)) {
          OP_REQUIRES_OK(ctx, s);
          return;
        }
      }
    }
    const bool parallel = input.NumElements() > kParallelElements;
    const bool convert = nchw_ || !std::is_same_v<T, CT>;
    // Input and output in NHWC and the compute type (maybe temporaries).
    Tensor in_tmp, filter_tmp, out_tmp;
    const CT* in_data = nullptr;
    const CT* filter_data = nullptr;
    CT* out_data = nullptr;
    if (convert) {
      const TensorShape in_nhwc({d.batch, d.in_rows, d.in_cols, d.in_depth});
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value,
                                             in_nhwc, &in_tmp));
      ConstTensor4<T> in(input.flat<T>().data(), input.dim_size(0),
                         input.dim_size(1), input.dim_size(2),
                         input.dim_size(3));
      Tensor4<CT> dst(in_tmp.flat<CT>().data(), d.batch, d.in_rows, d.in_cols,
                      d.in_depth);
      if (nchw_) {
        Assign(*ctx, parallel, dst,
               in.shuffle(Eigen::array<int, 4>{0, 2, 3, 1}).template cast<CT>());
      } else {
        Assign(*ctx, parallel, dst, in.template cast<CT>());
      }
      in_data = dst.data();
      const TensorShape out_nhwc(
          {d.batch, d.rows.out, d.cols.out, d.out_depth});
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value,
                                             out_nhwc, &out_tmp));
      out_data = out_tmp.flat<CT>().data();
    } else {
      in_data = reinterpret_cast<const CT*>(input.flat<T>().data());
      out_data = reinterpret_cast<CT*>(output->flat<T>().data());
    }
    if constexpr (!std::is_same_v<T, CT>) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<CT>::value,
                                             filter.shape(), &filter_tmp));
      Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>> f(
          filter.flat<T>().data(), filter.NumElements());
      Eigen::TensorMap<Eigen::Tensor<CT, 1, Eigen::RowMajor>> dst(
          filter_tmp.flat<CT>().data(), filter.NumElements());
      Assign(*ctx, filter.NumElements() > kParallelElements, dst,
             f.template cast<CT>());
      filter_data = dst.data();
    } else {
      filter_data = filter.flat<T>().data();
    }

    // Fused: bias and activation on each block of NHWC output pixels once
    // the GEMM has computed it.
    RowsDone rows_done;
    if constexpr (std::is_same_v<T, float>) {
      if (fused != nullptr) {
        rows_done = [ctx, fused, out_data, depth = d.out_depth](int64_t first,
                                                                int64_t n) {
          fused->epilogue.Apply(&ctx->eigen_cpu_device(), fused->bias, depth,
                                out_data + first * depth, n);
        };
      }
    }
    OP_REQUIRES_OK(ctx, ConvNHWC<CT>(ctx, d, in_data, filter_data, out_data,
                                     rows_done));

    if (convert) {
      ConstTensor4<CT> result(out_data, d.batch, d.rows.out, d.cols.out,
                              d.out_depth);
      const bool parallel_out = out_shape.num_elements() > kParallelElements;
      if (nchw_) {
        Assign(*ctx, parallel_out, out,
               result.shuffle(Eigen::array<int, 4>{0, 3, 1, 2})
                   .template cast<T>());
      } else {
        Assign(*ctx, parallel_out, out, result.template cast<T>());
      }
    }
  }

 private:
  // TensorFlow's ComputeConv2DDimension and the CPU launcher's checks.
  absl::Status ComputeDims(const Tensor& input, const Tensor& filter,
                           ConvDims* d) const {
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input must be 4-dimensional", input.shape().DebugString()));
    }
    if (filter.dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter must be 4-dimensional: ", filter.shape().DebugString()));
    }
    for (int i = 0; i < 4; ++i) {
      if (filter.dim_size(i) > kIntMax) {
        return absl::InvalidArgumentError("filter too large");
      }
    }
    const int c = nchw_ ? 1 : 3, h = nchw_ ? 2 : 1, w = nchw_ ? 3 : 2;
    d->batch = input.dim_size(0);
    d->in_rows = input.dim_size(h);
    d->in_cols = input.dim_size(w);
    d->in_depth = input.dim_size(c);
    if (d->in_depth > kIntMax) {
      return absl::InvalidArgumentError("Input depth too large");
    }
    if (d->in_rows > kIntMax) {
      return absl::InvalidArgumentError("Input rows too large");
    }
    if (d->in_cols > kIntMax) {
      return absl::InvalidArgumentError("Input cols too large");
    }
    if (d->batch > kIntMax) {
      return absl::InvalidArgumentError("batch is too large");
    }
    d->filter_rows = filter.dim_size(0);
    d->filter_cols = filter.dim_size(1);
    d->patch_depth = filter.dim_size(2);
    d->out_depth = filter.dim_size(3);
    if (d->patch_depth <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter depth must be stricly positive, got ", d->patch_depth));
    }
    if (d->in_depth % d->patch_depth != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input depth must be evenly divisible by filter depth: ",
          d->in_depth, " vs ", d->patch_depth));
    }
    if (filter.NumElements() <= 0) {
      return absl::InvalidArgumentError(
          "filter must not have zero elements (i.e. all dimensions must be "
          "non-zero)");
    }
    d->groups = d->in_depth / d->patch_depth;
    if (d->groups <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "number of groups must be stricly positive, got ", d->groups));
    }
    if (d->out_depth % d->groups != 0 || d->out_depth < d->groups) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output depth must be evenly divisible by number of groups: ",
          d->out_depth, " vs ", d->groups));
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
    s = ComputeWindow(d->in_cols, d->filter_cols, d->dilation_cols,
                      d->stride_cols, padding_, &d->cols);
    if (!s.ok()) return s;
    // Rejects outputs too big to hold (huge explicit paddings).
    return TensorShape::FromDims(
               {d->batch, d->rows.out, d->cols.out, d->out_depth})
        .status();
  }

  // A float NHWC convolution with a few output pixels as a product that
  // streams the filter once (skinny_gemm.h); false when it is not one.
  bool RunSkinny(OpKernelContext* ctx, const ConvDims& d, const Tensor& input,
                 const Tensor& filter, Tensor* output, const cpu::OneDnnConvBias* fused) {
    if (library_ != cpu::Conv2DLibrary::kAuto || nchw_ || d.groups != 1) return false;
    const int64_t pixels = d.batch * d.rows.out * d.cols.out;
    // (The whole filter bounds the taps that will be found to meet the
    // input: a filter too small even whole is turned down before that.)
    if (pixels > cpu::kSkinnyMaxRows ||
        !cpu::SkinnyWorthIt(pixels, d.in_depth, d.out_depth, d.filter_rows * d.filter_cols)) {
      return false;
    }
    const float* in = input.flat<float>().data();
    const int64_t tap_size = d.in_depth * d.out_depth;
    absl::InlinedVector<cpu::SkinnyTap, 9> taps;
    for (int64_t r = 0; r < d.filter_rows; ++r) {
      for (int64_t c = 0; c < d.filter_cols; ++c) {
        cpu::SkinnyTap tap;
        tap.weights = filter.flat<float>().data() + (r * d.filter_cols + c) * tap_size;
        int p = 0;
        for (int64_t b = 0; b < d.batch; ++b) {
          for (int64_t orow = 0; orow < d.rows.out; ++orow) {
            for (int64_t ocol = 0; ocol < d.cols.out; ++ocol, ++p) {
              const int64_t irow = orow * d.stride_rows - d.rows.pad_before + r * d.dilation_rows;
              const int64_t icol = ocol * d.stride_cols - d.cols.pad_before + c * d.dilation_cols;
              if (irow < 0 || irow >= d.in_rows || icol < 0 || icol >= d.in_cols) continue;
              tap.rows.emplace_back(p, in + ((b * d.in_rows + irow) * d.in_cols + icol) * d.in_depth);
            }
          }
        }
        if (!tap.rows.empty()) taps.push_back(std::move(tap));
      }
    }
    if (!cpu::SkinnyWorthIt(pixels, d.in_depth, d.out_depth, static_cast<int64_t>(taps.size()))) {
      return false;
    }
    float* out = output->flat<float>().data();
    cpu::SkinnyGemm(&ctx->eigen_cpu_device(), taps, d.in_depth, d.out_depth, pixels, out);
    if (fused != nullptr) {
      fused->epilogue.Apply(&ctx->eigen_cpu_device(), fused->bias, d.out_depth, out, pixels);
    }
    return true;
  }

  // A float NHWC convolution with few input and output channels on the
  // narrow kernels (narrow_conv.h); false when it is not one.
  bool RunNarrow(OpKernelContext* ctx, const ConvDims& d, const Tensor& input,
                 const Tensor& filter, Tensor* output, const cpu::OneDnnConvBias* fused) {
    if (!narrow_ || nchw_ || d.groups != 1 || d.dilation_rows != 1 || d.dilation_cols != 1) {
      return false;
    }
    const cpu::NarrowConvGeometry g{d.batch,       d.in_rows,        d.in_cols,
                                    d.in_depth,    d.filter_rows,    d.filter_cols,
                                    d.out_depth,   d.rows.out,       d.cols.out,
                                    d.stride_rows, d.stride_cols,    d.rows.pad_before,
                                    d.cols.pad_before};
    if (!cpu::NarrowConvApplies(g)) return false;
    cpu::NarrowConvForward(&ctx->eigen_cpu_device(), g, input.flat<float>().data(),
                           filter.flat<float>().data(), fused ? &fused->epilogue : nullptr,
                           fused ? fused->bias : nullptr, output->flat<float>().data());
    return true;
  }

  // float NHWC, one group (and, OneDnnGeometryOf, no dilation and padding
  // smaller than the window); the others stay on the Eigen path.
  bool UseOneDnn(const ConvDims& d) const {
    return library_ != cpu::Conv2DLibrary::kEigen && !nchw_ && d.groups == 1;
  }

  std::vector<int64_t> strides_;
  std::vector<int64_t> dilations_;
  std::vector<int64_t> explicit_paddings_;
  Padding padding_ = Padding::kValid;
  bool nchw_ = false;
  cpu::Conv2DLibrary library_ = cpu::Conv2DLibrary::kAuto;
  bool narrow_ = false;  // narrow_conv.h
  cpu::OneDnnConv2D onednn_;
};

// _FusedConv2D on float: Conv2D's attrs and checks, then
// act(convolution + bias) per fused_ops. Other fused_ops (FusedBatchNorm,
// residual adds) are refused when the kernel is built.
class FusedConv2DOp : public Conv2DOp<float> {
 public:
  explicit FusedConv2DOp(OpKernelConstruction* ctx) : Conv2DOp<float>(ctx) {
    auto epilogue = cpu::BiasActivation::FromAttrs(ctx);
    OP_REQUIRES_OK(ctx, epilogue.status());
    epilogue_ = *epilogue;
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_REQUIRES(ctx, filter.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 4-dimensional: ", filter.shape().DebugString())));
    OP_REQUIRES(ctx, bias.dims() == 1 && bias.dim_size(0) == filter.dim_size(3),
                absl::InvalidArgumentError(absl::StrCat(
                    "_FusedConv2D: bias must be a vector of the filter's ",
                    filter.dim_size(3), " output channels, got ",
                    bias.shape().DebugString())));
    cpu::OneDnnConvBias fused;
    fused.bias = bias.flat<float>().data();
    fused.epilogue = epilogue_;
    ComputeConv(ctx, &fused);
  }

 private:
  cpu::BiasActivation epilogue_;
};

REGISTER_KERNEL(KernelDefBuilder("_FusedConv2D").Device(kDeviceCpu).TypeConstraint<float>("T"),
                FusedConv2DOp);

#define GR_REGISTER_CONV2D(T)                                     \
  REGISTER_KERNEL(KernelDefBuilder("Conv2D")                      \
                      .Device(kDeviceCpu)                         \
                      .TypeConstraint("T", {DataTypeToEnum<T>::value}), \
                  Conv2DOp<T>)

GR_REGISTER_CONV2D(float);
GR_REGISTER_CONV2D(double);
GR_REGISTER_CONV2D(half);
GR_REGISTER_CONV2D(bfloat16);
GR_REGISTER_CONV2D(int32_t);
#undef GR_REGISTER_CONV2D

}  // namespace
}  // namespace graphrun
