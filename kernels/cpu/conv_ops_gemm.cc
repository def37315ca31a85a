// Conv3D, Conv2DBackpropInput and Conv3DBackpropInputV2 on CPU, as GEMMs (gemm.h) around a
// patch matrix, over up to three spatial dims (a 2-D convolution has a
// depth of 1).
//
// Conv3D, as TensorFlow's Conv3DOp: im2col (each output voxel's receptive
// field, channel runs copied, zeros in the padding) chunk by chunk of
// output voxels, times the filter viewed as [taps * in_depth, out_depth].
// Strides, dilations, SAME / VALID; NCDHW is transposed to NDHWC and back.
//
// Conv2DBackpropInput (the gradient of Conv2D with respect to its input,
// which Keras' Conv2DTranspose runs forward), as TensorFlow's kernel:
// out_backprop [pixels, out_depth] times the filter transposed gives each
// output pixel's contribution to its receptive field ([pixels, taps *
// in_depth]); col2im adds those into the zeroed input gradient. Strides,
// dilations, SAME / VALID / EXPLICIT, NCHW by transposes. Float NHWC
// undilated ones run on oneDNN instead (conv_onednn_backward.h).
//
// half and bfloat16 compute in float. Grouped convolutions (input depth a
// multiple of the filter's) are refused, as on TensorFlow's CPU.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/conv_onednn_backward.h"
#include "kernels/cpu/cpu_kernel_util.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using cpu::ComputeWindow;
using cpu::Window;
using op_shapes::Padding;

// The patch buffer holds at most this many elements (or one row).
constexpr int64_t kMaxPatchElements = int64_t{4} << 20;

// One spatial dim.
struct SpatialDim {
  int64_t in = 1, filter = 1, stride = 1, dilation = 1;
  Window window;  // window.out: the output size
};

// A convolution in channels-last terms: in [batch, spatial..., in_depth],
// filter [spatial..., in_depth, out_depth], out [batch, spatial...,
// out_depth]; spatial dims outermost first, unused leading ones of size 1.
struct ConvGeometry {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  std::array<SpatialDim, 3> dims;

  int64_t InPixels() const { return dims[0].in * dims[1].in * dims[2].in; }
  int64_t OutPixels() const {
    return dims[0].window.out * dims[1].window.out * dims[2].window.out;
  }
  int64_t Taps() const {
    return dims[0].filter * dims[1].filter * dims[2].filter;
  }
  int64_t PatchSize() const { return Taps() * in_depth; }
  // A 1x1(x1) stride-1 unpadded convolution is one GEMM over the pixels.
  bool IsPointwise() const {
    for (const SpatialDim& d : dims) {
      if (d.filter != 1 || d.stride != 1 || d.window.pad_before != 0 ||
          d.window.out != d.in) {
        return false;
      }
    }
    return true;
  }
};

// Calls fn(input_pixel_offset or -1, patch_column) for each tap of output
// pixel `p` (numbered over batch * out pixels); the offset counts pixels
// from the start of the batch.
template <typename Fn>
void ForEachTap(const ConvGeometry& g, int64_t p, Fn fn) {
  const int64_t out_pixels = g.OutPixels();
  const int64_t b = p / out_pixels;
  int64_t rest = p % out_pixels;
  int64_t o[3];
  for (int k = 2; k >= 0; --k) {
    o[k] = rest % g.dims[k].window.out;
    rest /= g.dims[k].window.out;
  }
  int64_t column = 0;
  for (int64_t i = 0; i < g.dims[0].filter; ++i) {
    const SpatialDim& d0 = g.dims[0];
    const int64_t x0 = o[0] * d0.stride + i * d0.dilation - d0.window.pad_before;
    const bool in0 = x0 >= 0 && x0 < d0.in;
    for (int64_t j = 0; j < g.dims[1].filter; ++j) {
      const SpatialDim& d1 = g.dims[1];
      const int64_t x1 =
          o[1] * d1.stride + j * d1.dilation - d1.window.pad_before;
      const bool in1 = in0 && x1 >= 0 && x1 < d1.in;
      for (int64_t k = 0; k < g.dims[2].filter; ++k, ++column) {
        const SpatialDim& d2 = g.dims[2];
        const int64_t x2 =
            o[2] * d2.stride + k * d2.dilation - d2.window.pad_before;
        const bool inside = in1 && x2 >= 0 && x2 < d2.in;
        fn(inside ? ((b * d0.in + x0) * d1.in + x1) * d2.in + x2 : -1, column);
      }
    }
  }
}

// Rows [first, first + rows) of the patch matrix of `in`.
template <typename T>
void Im2Col(const ConvGeometry& g, const T* in, int64_t first, int64_t rows,
            T* patches) {
  const int64_t c = g.in_depth;
  for (int64_t r = 0; r < rows; ++r) {
    T* row = patches + r * g.PatchSize();
    ForEachTap(g, first + r, [&](int64_t pixel, int64_t column) {
      if (pixel >= 0) {
        std::copy_n(in + pixel * c, c, row + column * c);
      } else {
        std::fill_n(row + column * c, c, T(0));
      }
    });
  }
}

// Adds rows [first, first + rows) of a patch matrix into `in`.
template <typename T>
void Col2Im(const ConvGeometry& g, const T* patches, int64_t first,
            int64_t rows, T* in) {
  const int64_t c = g.in_depth;
  using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = patches + r * g.PatchSize();
    ForEachTap(g, first + r, [&](int64_t pixel, int64_t column) {
      if (pixel >= 0) {
        Eigen::Map<Vec>(in + pixel * c, c) +=
            Eigen::Map<const Vec>(row + column * c, c);
      }
    });
  }
}

template <typename T>
absl::Status ForwardConv(OpKernelContext* ctx, const ConvGeometry& g,
                         const T* in, const T* filter, T* out) {
  const Eigen::ThreadPoolDevice* device = ctx->device()->eigen_cpu_device();
  const int64_t m = g.batch * g.OutPixels();
  const int64_t k = g.PatchSize();
  if (g.IsPointwise()) {
    Gemm<T>(device, false, false, m, g.out_depth, k, in, filter, out);
    return absl::OkStatus();
  }
  const int64_t chunk = std::clamp<int64_t>(kMaxPatchElements / k, 1, m);
  Tensor buf;
  absl::Status s = ctx->allocate_temp(DataTypeToEnum<T>::value,
                                      TensorShape({chunk, k}), &buf);
  if (!s.ok()) return s;
  T* patches = buf.flat<T>().data();
  for (int64_t r0 = 0; r0 < m; r0 += chunk) {
    const int64_t rows = std::min(chunk, m - r0);
    auto fill = [&](Eigen::Index begin, Eigen::Index end) {
      Im2Col(g, in, r0 + begin, end - begin, patches + begin * k);
    };
    if (rows * k > cpu::kParallelElements) {
      ctx->eigen_cpu_device().parallelFor(
          rows, Eigen::TensorOpCost(k * sizeof(T), k * sizeof(T), k), fill);
    } else {
      fill(0, rows);
    }
    Gemm<T>(device, false, false, rows, g.out_depth, k, patches, filter,
            out + r0 * g.out_depth);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status BackpropInput(OpKernelContext* ctx, const ConvGeometry& g,
                           const T* grad, const T* filter, T* in_grad) {
  const Eigen::ThreadPoolDevice* device = ctx->device()->eigen_cpu_device();
  const int64_t k = g.PatchSize();
  const int64_t pixels = g.OutPixels();
  if (g.IsPointwise()) {
    Gemm<T>(device, false, true, g.batch * pixels, k, g.out_depth, grad,
            filter, in_grad);
    return absl::OkStatus();
  }
  std::fill_n(in_grad, g.batch * g.InPixels() * g.in_depth, T(0));
  const int64_t chunk = std::clamp<int64_t>(kMaxPatchElements / k, 1, pixels);
  Tensor buf;
  absl::Status s = ctx->allocate_temp(DataTypeToEnum<T>::value,
                                      TensorShape({chunk, k}), &buf);
  if (!s.ok()) return s;
  T* patches = buf.flat<T>().data();
  // Rows of one image only per chunk: col2im of different images could run
  // in parallel, within an image they overlap.
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t r0 = 0; r0 < pixels; r0 += chunk) {
      const int64_t rows = std::min(chunk, pixels - r0);
      const int64_t first = b * pixels + r0;
      Gemm<T>(device, false, true, rows, k, g.out_depth,
              grad + first * g.out_depth, filter, patches);
      Col2Im(g, patches, first, rows, in_grad);
    }
  }
  return absl::OkStatus();
}

// Reads and checks strides / dilations / padding for a convolution of
// `rank` dims with the channel at `channel`.
struct WindowAttrs {
  std::vector<int64_t> strides, dilations, explicit_paddings;
  Padding padding = Padding::kValid;
};

absl::Status ReadWindowAttrs(OpKernelConstruction* ctx, int rank, int channel,
                             WindowAttrs* a) {
  std::string padding;
  absl::Status s = ctx->GetAttr("strides", &a->strides);
  if (s.ok()) s = ctx->GetAttr("dilations", &a->dilations);
  if (s.ok()) s = ctx->GetAttr("padding", &padding);
  if (s.ok() && ctx->attrs().Find("explicit_paddings") != nullptr) {
    s = ctx->GetAttr("explicit_paddings", &a->explicit_paddings);
  }
  if (!s.ok()) return s;
  auto parsed = op_shapes::ParsePadding(padding);
  if (!parsed.ok()) return parsed.status();
  a->padding = *parsed;
  if (static_cast<int>(a->strides.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window strides field must specify ", rank, " dimensions"));
  }
  if (static_cast<int>(a->dilations.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window dilations field must specify ", rank, " dimensions"));
  }
  if (a->strides[0] != 1 || a->strides[channel] != 1) {
    return absl::InvalidArgumentError(
        "Current implementation does not yet support strides in the batch "
        "and depth dimensions.");
  }
  if (a->dilations[0] != 1 || a->dilations[channel] != 1) {
    return absl::InvalidArgumentError(
        "Current implementation does not yet support dilations in the batch "
        "and depth dimensions.");
  }
  for (int i = 0; i < rank; ++i) {
    if (a->strides[i] <= 0 || a->dilations[i] <= 0) {
      return absl::InvalidArgumentError(
          "strides and dilations must be larger than 0");
    }
  }
  if (a->padding == Padding::kExplicit) {
    if (static_cast<int>(a->explicit_paddings.size()) != 2 * rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit_paddings attribute must contain ", 2 * rank,
          " values, but got: ", a->explicit_paddings.size()));
    }
    for (int64_t p : a->explicit_paddings) {
      if (p < 0 || p > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            "All elements of explicit_paddings must be nonnegative");
      }
    }
    if (a->explicit_paddings[0] != 0 || a->explicit_paddings[1] != 0 ||
        a->explicit_paddings[2 * channel] != 0 ||
        a->explicit_paddings[2 * channel + 1] != 0) {
      return absl::InvalidArgumentError(
          "Nonzero explicit padding in the batch or depth dimensions is not "
          "supported");
    }
  } else if (!a->explicit_paddings.empty()) {
    return absl::InvalidArgumentError(
        "explicit_paddings attribute must be empty if the padding attribute "
        "is not EXPLICIT");
  }
  return absl::OkStatus();
}

// Fills the spatial dims of `g` from channels-first or -last dims of
// `rank` (4 or 5); 2-D convolutions get a leading depth of 1.
absl::Status FillSpatial(const WindowAttrs& a, absl::Span<const int64_t> input,
                         absl::Span<const int64_t> filter, bool channels_first,
                         ConvGeometry* g) {
  const int rank = static_cast<int>(input.size());
  const int spatial = rank - 2;
  const int first = channels_first ? 2 : 1;
  for (int i = 0; i < 3 - spatial; ++i) g->dims[i].window.out = 1;
  for (int i = 0; i < spatial; ++i) {
    SpatialDim& d = g->dims[3 - spatial + i];
    const int axis = first + i;
    d.in = input[axis];
    d.filter = filter[i];
    d.stride = a.strides[axis];
    d.dilation = a.dilations[axis];
    if (a.padding == Padding::kExplicit) {
      d.window.pad_before = a.explicit_paddings[2 * axis];
      d.window.pad_after = a.explicit_paddings[2 * axis + 1];
    }
    absl::Status s =
        ComputeWindow(d.in, d.filter, d.dilation, d.stride, a.padding, &d.window);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

template <typename T>
using CT = std::conditional_t<std::is_same_v<T, double>, double, float>;

// `t` in the compute type: itself, or widened into `tmp`.
template <typename T>
absl::StatusOr<const CT<T>*> Widened(OpKernelContext* ctx, const Tensor& t,
                                     Tensor* tmp) {
  if constexpr (std::is_same_v<T, CT<T>>) {
    return t.flat<T>().data();
  } else {
    absl::Status s = ctx->allocate_temp(DT_FLOAT, t.shape(), tmp);
    if (!s.ok()) return s;
    const T* src = t.flat<T>().data();
    float* dst = tmp->flat<float>().data();
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      dst[i] = static_cast<float>(src[i]);
    }
    return static_cast<const float*>(dst);
  }
}

// Channels-first `data` of `dims` as channels-last into `tmp` (or itself).
template <typename C>
absl::StatusOr<const C*> ChannelsLast(OpKernelContext* ctx, const C* data,
                                      const std::vector<int64_t>& dims,
                                      bool channels_first, Tensor* tmp) {
  if (!channels_first) return data;
  absl::Status s = ctx->allocate_temp(DataTypeToEnum<C>::value,
                                      *TensorShape::FromDims(dims), tmp);
  if (!s.ok()) return s;
  std::vector<int> perm = {0};
  for (int i = 2; i < static_cast<int>(dims.size()); ++i) perm.push_back(i);
  perm.push_back(1);
  cpu::Permute<C>(ctx, data, dims, perm, tmp->flat<C>().data());
  return static_cast<const C*>(tmp->flat<C>().data());
}

// Writes channels-last `result` ([batch, spatial..., channels]) into
// `output` (channels-first when asked), narrowing to T.
template <typename T>
void Store(OpKernelContext* ctx, const CT<T>* result,
           const std::vector<int64_t>& last_dims, bool channels_first,
           Tensor* output) {
  using C = CT<T>;
  const int64_t n = output->NumElements();
  const C* src = result;
  Tensor tmp;
  if (channels_first) {
    const int rank = static_cast<int>(last_dims.size());
    std::vector<int> perm = {0, rank - 1};
    for (int i = 1; i < rank - 1; ++i) perm.push_back(i);
    if constexpr (std::is_same_v<T, C>) {
      cpu::Permute<C>(ctx, result, last_dims, perm, output->flat<T>().data());
      return;
    } else {
      absl::Status s = ctx->allocate_temp(DT_FLOAT, output->shape(), &tmp);
      if (!s.ok()) {
        ctx->SetStatus(s);
        return;
      }
      cpu::Permute<C>(ctx, result, last_dims, perm, tmp.flat<C>().data());
      src = tmp.flat<C>().data();
    }
  }
  T* dst = output->flat<T>().data();
  if (static_cast<const void*>(dst) == static_cast<const void*>(src)) return;
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}

template <typename T>
class Conv3DOp : public OpKernel {
 public:
  explicit Conv3DOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES(ctx, data_format == "NDHWC" || data_format == "NCDHW",
                absl::InvalidArgumentError(absl::StrCat(
                    "attr 'data_format' is '", data_format,
                    "': Conv3D supports NDHWC and NCDHW")));
    channels_first_ = data_format == "NCDHW";
    OP_REQUIRES_OK(ctx, ReadWindowAttrs(ctx, 5, channels_first_ ? 1 : 4,
                                        &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    using C = CT<T>;
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_REQUIRES(ctx, input.dims() == 5,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 5-dimensional", input.shape().DebugString())));
    OP_REQUIRES(ctx, filter.dims() == 5,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 5-dimensional: ",
                    filter.shape().DebugString())));
    ConvGeometry g;
    g.batch = input.dim_size(0);
    g.in_depth = input.dim_size(channels_first_ ? 1 : 4);
    g.out_depth = filter.dim_size(4);
    OP_REQUIRES(ctx, g.in_depth == filter.dim_size(3),
                absl::InvalidArgumentError(absl::StrCat(
                    "input and filter must have the same depth: ", g.in_depth,
                    " vs ", filter.dim_size(3),
                    " (grouped convolutions are not supported on CPU)")));
    OP_REQUIRES_OK(ctx, FillSpatial(attrs_, input.shape().dim_sizes(),
                                    filter.shape().dim_sizes(),
                                    channels_first_, &g));
    std::vector<int64_t> last = {g.batch, g.dims[0].window.out,
                                 g.dims[1].window.out, g.dims[2].window.out,
                                 g.out_depth};
    std::vector<int64_t> out_dims = last;
    if (channels_first_) {
      out_dims = {g.batch, g.out_depth, last[1], last[2], last[3]};
    }
    auto out_shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, out_shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &output));
    if (out_shape->num_elements() == 0) return;
    Tensor wide_in, wide_filter, last_in, result_tmp;
    auto in = Widened<T>(ctx, input, &wide_in);
    OP_REQUIRES_OK(ctx, in.status());
    auto f = Widened<T>(ctx, filter, &wide_filter);
    OP_REQUIRES_OK(ctx, f.status());
    std::vector<int64_t> in_dims(input.shape().dim_sizes().begin(),
                                 input.shape().dim_sizes().end());
    auto in_last = ChannelsLast<C>(ctx, *in, in_dims, channels_first_, &last_in);
    OP_REQUIRES_OK(ctx, in_last.status());
    C* result = nullptr;
    if (std::is_same_v<T, C> && !channels_first_) {
      result = reinterpret_cast<C*>(output->flat<T>().data());
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<C>::value,
                                             *out_shape, &result_tmp));
      result = result_tmp.flat<C>().data();
    }
    if (input.NumElements() == 0) {
      std::fill_n(result, out_shape->num_elements(), C(0));
    } else {
      OP_REQUIRES_OK(ctx, ForwardConv<C>(ctx, g, *in_last, *f, result));
    }
    Store<T>(ctx, result, last, channels_first_, output);
  }

 private:
  WindowAttrs attrs_;
  bool channels_first_ = false;
};

// Conv2DBackpropInput (kRank 4) and Conv3DBackpropInputV2 (kRank 5).
template <typename T, int kRank>
class ConvBackpropInputOp : public OpKernel {
 public:
  explicit ConvBackpropInputOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    const char* last = kRank == 4 ? "NHWC" : "NDHWC";
    const char* first = kRank == 4 ? "NCHW" : "NCDHW";
    OP_REQUIRES(ctx, data_format == last || data_format == first,
                absl::InvalidArgumentError(absl::StrCat(
                    "attr 'data_format' is '", data_format, "': ", def().op(),
                    " supports ", last, " and ", first)));
    channels_first_ = data_format == first;
    OP_REQUIRES_OK(ctx, ReadWindowAttrs(ctx, kRank, channels_first_ ? 1 : kRank - 1, &attrs_));
    if (kRank == 4 && std::is_same_v<T, float> && !channels_first_ &&
        cpu::OneDnnConvBackpropFromEnv()) {
      onednn_ = std::make_unique<cpu::OneDnnConv2DBackpropInput>();
    }
  }

  void Compute(OpKernelContext* ctx) override {
    using C = CT<T>;
    const Tensor& sizes = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    const std::string& op = def().op();
    OP_REQUIRES(ctx, sizes.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    op, ": input_sizes input must be 1-dim, not ", sizes.dims())));
    OP_REQUIRES(ctx, filter.dims() == kRank,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be ", kRank, "-dimensional: ", filter.shape().DebugString())));
    OP_REQUIRES(ctx, grad.dims() == kRank,
                absl::InvalidArgumentError(absl::StrCat(
                    "out_backprop must be ", kRank, "-dimensional: ",
                    grad.shape().DebugString())));
    const int c = channels_first_ ? 1 : kRank - 1, h = channels_first_ ? 2 : 1;
    std::vector<int64_t> in_dims = array_kernels::IntValues(sizes);
    if (kRank == 4 && in_dims.size() == 2) {
      // Only the spatial dims: batch and depth from the other inputs.
      std::vector<int64_t> full(4);
      full[0] = grad.dim_size(0);
      full[c] = filter.dim_size(2);
      full[h] = in_dims[0];
      full[h + 1] = in_dims[1];
      in_dims = full;
    }
    OP_REQUIRES(ctx, static_cast<int>(in_dims.size()) == kRank,
                absl::InvalidArgumentError(absl::StrCat(
                    op, ": input_sizes must have ", kRank, kRank == 4 ? " or 2" : "",
                    " elements, got ", in_dims.size())));
    auto in_shape = TensorShape::FromDims(in_dims);
    OP_REQUIRES_OK(ctx, in_shape.status());
    ConvGeometry g;
    g.batch = in_dims[0];
    g.in_depth = in_dims[c];
    g.out_depth = filter.dim_size(kRank - 1);
    OP_REQUIRES(ctx, g.batch == grad.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "input and out_backprop must have the same batch size, "
                    "input batch: ",
                    g.batch, " outbackprop batch: ", grad.dim_size(0))));
    OP_REQUIRES(ctx, g.in_depth == filter.dim_size(kRank - 2),
                absl::InvalidArgumentError(absl::StrCat(
                    "input and filter must have the same depth: ", g.in_depth,
                    " vs ", filter.dim_size(kRank - 2),
                    " (grouped convolutions are not supported on CPU)")));
    OP_REQUIRES(ctx, g.out_depth == grad.dim_size(c),
                absl::InvalidArgumentError(absl::StrCat(
                    "out_backprop depth ", grad.dim_size(c),
                    " does not match the filter's output depth ",
                    g.out_depth)));
    OP_REQUIRES_OK(ctx, FillSpatial(attrs_, in_dims,
                                    filter.shape().dim_sizes(),
                                    channels_first_, &g));
    for (int i = 0; i < kRank - 2; ++i) {
      const SpatialDim& d = g.dims[5 - kRank + i];
      OP_REQUIRES(ctx, d.window.out == grad.dim_size(h + i),
                  absl::InvalidArgumentError(absl::StrCat(
                      op, ": Size of out_backprop doesn't match computed: actual = ",
                      grad.dim_size(h + i), ", computed = ", d.window.out,
                      " spatial_dim: ", h + i, " input: ", d.in,
                      " filter: ", d.filter, " output: ", grad.dim_size(h + i),
                      " stride: ", d.stride, " dilation: ", d.dilation)));
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *in_shape, &output));
    if (in_shape->num_elements() == 0) return;
    Tensor wide_grad, wide_filter, last_grad, result_tmp;
    auto gp = Widened<T>(ctx, grad, &wide_grad);
    OP_REQUIRES_OK(ctx, gp.status());
    auto f = Widened<T>(ctx, filter, &wide_filter);
    OP_REQUIRES_OK(ctx, f.status());
    std::vector<int64_t> grad_dims(grad.shape().dim_sizes().begin(),
                                   grad.shape().dim_sizes().end());
    auto grad_last =
        ChannelsLast<C>(ctx, *gp, grad_dims, channels_first_, &last_grad);
    OP_REQUIRES_OK(ctx, grad_last.status());
    C* result = nullptr;
    if (std::is_same_v<T, C> && !channels_first_) {
      result = reinterpret_cast<C*>(output->flat<T>().data());
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<C>::value,
                                             *in_shape, &result_tmp));
      result = result_tmp.flat<C>().data();
    }
    if (grad.NumElements() == 0) {
      std::fill_n(result, in_shape->num_elements(), C(0));
    } else if (!OnOneDnn(ctx, g, *f, *grad_last, result)) {
      OP_REQUIRES_OK(ctx, BackpropInput<C>(ctx, g, *grad_last, *f, result));
    }
    std::vector<int64_t> last = {g.batch, g.dims[1].in, g.dims[2].in, g.in_depth};
    if (kRank == 5) last.insert(last.begin() + 1, g.dims[0].in);
    Store<T>(ctx, result, last, channels_first_, output);
  }

 private:
  // Whether oneDNN computed `result` (else the GEMM path is to run; a
  // failure other than Unimplemented is set on `ctx`, and true returned).
  template <typename C>
  bool OnOneDnn(OpKernelContext* ctx, const ConvGeometry& g, const C* filter, const C* grad,
                C* result) {
    if constexpr (std::is_same_v<C, float>) {
      const SpatialDim& r = g.dims[1];
      const SpatialDim& c = g.dims[2];
      if (onednn_ == nullptr || r.dilation != 1 || c.dilation != 1) return false;
      const auto geometry = cpu::OneDnnBackwardGeometryIfSupported(
          {g.batch, r.in, c.in, g.in_depth, r.filter, c.filter, g.out_depth, r.stride, c.stride,
           r.window.pad_before, r.window.pad_after, c.window.pad_before, c.window.pad_after,
           r.window.out, c.window.out});
      if (!geometry.has_value()) return false;
      const absl::Status s =
          onednn_->Run(*geometry, filter, grad, result, ctx->eigen_cpu_device());
      if (absl::IsUnimplemented(s)) return false;
      if (!s.ok()) ctx->SetStatus(s);
      return true;
    } else {
      return false;
    }
  }

  WindowAttrs attrs_;
  bool channels_first_ = false;
  std::unique_ptr<cpu::OneDnnConv2DBackpropInput> onednn_;  // float NHWC only
};

#define GR_REGISTER_GEMM_CONVS(T)                                          \
  REGISTER_KERNEL(                                                         \
      KernelDefBuilder("Conv3D").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      Conv3DOp<T>);                                                        \
  REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput")                  \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ConvBackpropInputOp<T, 4>);                              \
  REGISTER_KERNEL(KernelDefBuilder("Conv3DBackpropInputV2")                \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  ConvBackpropInputOp<T, 5>)
GR_REGISTER_GEMM_CONVS(float);
GR_REGISTER_GEMM_CONVS(double);
GR_REGISTER_GEMM_CONVS(half);
GR_REGISTER_GEMM_CONVS(bfloat16);
#undef GR_REGISTER_GEMM_CONVS

}  // namespace
}  // namespace graphrun
