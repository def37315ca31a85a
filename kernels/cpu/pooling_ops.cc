// MaxPool (and MaxPoolV2, its window as inputs) and AvgPool on CPU, as
// TensorFlow's MaxPoolingOp / AvgPoolingOp.
// MaxPool walks each output pixel's window and takes the element-wise
// maximum of the input's depth vectors (padding skipped), as TensorFlow's
// CPU kernel does; AvgPool on float and double sums them and divides by the
// number of the window's elements inside the input (padding is not
// counted). AvgPool on half and bfloat16 takes its windows from Eigen's
// extract_image_patches (zero-padded), reduced lazily in float. MaxPool
// also pools across depth (ksize = [1, 1, 1, k], strides [.., k]) as TF's
// CPU kernel does. NCHW is transposed to NHWC and back (TensorFlow's CPU
// kernels refuse NCHW).
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernel_util.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using op_shapes::Padding;
using Index = Eigen::Index;

using cpu::kParallelElements;

template <typename T>
using Tensor4 = Eigen::TensorMap<Eigen::Tensor<T, 4, Eigen::RowMajor>>;
template <typename T>
using ConstTensor4 =
    Eigen::TensorMap<Eigen::Tensor<const T, 4, Eigen::RowMajor>>;

using cpu::Assign;
using cpu::ComputeWindow;
using cpu::Window;

enum class PoolKind { kMax, kAvg };

// Pooling in NHWC terms.
struct PoolDims {
  int64_t batch = 0, rows = 0, cols = 0, depth = 0;
  int64_t window_rows = 1, window_cols = 1, depth_window = 1;
  int64_t stride_rows = 1, stride_cols = 1;
  Window out_rows, out_cols;
  // Output depth (depth / depth_window when pooling across depth).
  int64_t out_depth = 0;
};

// The arithmetic type: float for the 16-bit floats' averages, else T.
template <typename T, PoolKind kKind>
using PoolComputeType =
    std::conditional_t<kKind == PoolKind::kAvg &&
                           (std::is_same_v<T, half> ||
                            std::is_same_v<T, bfloat16>),
                       float, T>;

// Eigen sizes image patches in float arithmetic; beyond 2^24 rows or cols
// its count can differ from TensorFlow's, and evaluating into `out` would
// then overrun it. Checks the count without evaluating anything.
template <typename Patches>
absl::Status CheckPatchCount(const Patches& patches, const PoolDims& d) {
  Eigen::DefaultDevice device;
  Eigen::TensorEvaluator<const Patches, Eigen::DefaultDevice> eval(patches,
                                                                    device);
  if (eval.dimensions()[1] != d.out_rows.out * d.out_cols.out) {
    return absl::UnimplementedError(absl::StrCat(
        "pooling output of ", d.out_rows.out, "x", d.out_cols.out,
        " windows is too large for the CPU kernel"));
  }
  return absl::OkStatus();
}

// out[k] = the fold of `f` from `init` over the depth vectors of input
// pixels [r_lo, r_hi) x [c_lo, c_hi) of image b, for channels [k, k +
// kBlock): the block's running values kept in registers while the window is
// read (the trip count is fixed, so the compiler vectorizes it at -O2).
template <int kBlock, typename T, typename F>
void WindowReduceBlock(const T* __restrict src, const PoolDims& d, int64_t b, int64_t r_lo,
                       int64_t r_hi, int64_t c_lo, int64_t c_hi, int64_t k, T* __restrict out,
                       T init, F f) {
  T acc[kBlock];
  for (int j = 0; j < kBlock; ++j) acc[j] = init;
  for (int64_t rr = r_lo; rr < r_hi; ++rr) {
    for (int64_t cc = c_lo; cc < c_hi; ++cc) {
      const T* x = src + ((b * d.rows + rr) * d.cols + cc) * d.depth + k;
      for (int j = 0; j < kBlock; ++j) acc[j] = f(acc[j], x[j]);
    }
  }
  for (int j = 0; j < kBlock; ++j) out[k + j] = acc[j];
}

// The fold over every channel: blocks of 16, then one of 8 and one of 4
// (the 8- and 16-channel layers of small CNNs would otherwise go channel
// by channel), then the last ones singly.
template <typename T, typename F>
void WindowReduce(const T* __restrict src, const PoolDims& d, int64_t b, int64_t r_lo,
                  int64_t r_hi, int64_t c_lo, int64_t c_hi, T* __restrict out, T init, F f) {
  const int64_t depth = d.depth;
  int64_t k = 0;
  for (; k + 16 <= depth; k += 16) {
    WindowReduceBlock<16>(src, d, b, r_lo, r_hi, c_lo, c_hi, k, out, init, f);
  }
  if (k + 8 <= depth) {
    WindowReduceBlock<8>(src, d, b, r_lo, r_hi, c_lo, c_hi, k, out, init, f);
    k += 8;
  }
  if (k + 4 <= depth) {
    WindowReduceBlock<4>(src, d, b, r_lo, r_hi, c_lo, c_hi, k, out, init, f);
    k += 4;
  }
  for (; k < depth; ++k) {
    WindowReduceBlock<1>(src, d, b, r_lo, r_hi, c_lo, c_hi, k, out, init, f);
  }
}

// Calls pool(src, b, r_lo, r_hi, c_lo, c_hi, o) for each output pixel of
// NHWC pooling `d`: image b, the input rows [r_lo, r_hi) and columns
// [c_lo, c_hi) its window covers (padding left out), its depth vector o.
// Sharded by output row over the pool when `parallel`.
template <typename T, typename Pool>
void ForEachWindow(const OpKernelContext& ctx, const PoolDims& d, bool parallel, const T* src,
                   T* dst, Pool pool) {
  auto rows = [&](Index begin, Index end) {
    for (Index br = begin; br < end; ++br) {
      const int64_t b = br / d.out_rows.out, r = br % d.out_rows.out;
      const int64_t r0 = r * d.stride_rows - d.out_rows.pad_before;
      const int64_t r_lo = std::max<int64_t>(r0, 0);
      const int64_t r_hi = std::min<int64_t>(r0 + d.window_rows, d.rows);
      for (int64_t c = 0; c < d.out_cols.out; ++c) {
        const int64_t c0 = c * d.stride_cols - d.out_cols.pad_before;
        const int64_t c_lo = std::max<int64_t>(c0, 0);
        const int64_t c_hi = std::min<int64_t>(c0 + d.window_cols, d.cols);
        pool(src, b, r_lo, r_hi, c_lo, c_hi,
             dst + ((b * d.out_rows.out + r) * d.out_cols.out + c) * d.depth);
      }
    }
  };
  const Index n = d.batch * d.out_rows.out;
  if (parallel) {
    const double per_row =
        static_cast<double>(d.out_cols.out) * d.window_rows * d.window_cols * d.depth;
    ctx.eigen_cpu_device().parallelFor(
        n, Eigen::TensorOpCost(per_row * sizeof(T), d.out_cols.out * d.depth * sizeof(T), per_row),
        rows);
  } else {
    rows(0, n);
  }
}

// Spatial pooling of NHWC `in` into NHWC `out`.
template <typename T, PoolKind kKind>
absl::Status PoolNHWC(const OpKernelContext& ctx, const PoolDims& d,
                      const ConstTensor4<T>& in, Tensor4<T> out) {
  const bool parallel =
      static_cast<double>(out.size()) * d.window_rows * d.window_cols >
      kParallelElements;
  const Eigen::DSizes<Index, 4> out_dims(d.batch, d.out_rows.out,
                                         d.out_cols.out, d.depth);
  const Eigen::IndexList<Eigen::type2index<2>, Eigen::type2index<3>> window;
  if constexpr (kKind == PoolKind::kMax) {
    // As TensorFlow's CPU MaxPool: each output pixel is the element-wise
    // maximum of the depth vectors in its window; padded positions are
    // skipped. Much faster than extract_image_patches + a reduction on the
    // small images of real CNNs. The running maximum is `a < x ? x : a`
    // (a NaN input is passed over, as Eigen's max).
    ForEachWindow<T>(ctx, d, parallel, in.data(), out.data(),
                     [&d](const T* src, int64_t b, int64_t r_lo, int64_t r_hi, int64_t c_lo,
                          int64_t c_hi, T* o) {
                       WindowReduce<T>(src, d, b, r_lo, r_hi, c_lo, c_hi, o,
                                       Eigen::NumTraits<T>::lowest(),
                                       [](T a, T x) { return a < x ? x : a; });
                     });
  } else if constexpr (std::is_same_v<PoolComputeType<T, kKind>, T>) {
    // float and double: each output pixel's depth vector summed over the
    // window's pixels inside the input, then divided by their count
    // (padding is not counted, as TensorFlow's AvgPool). The patches below
    // (kept for 16-bit floats) took 9 % of an InceptionV3 step.
    ForEachWindow<T>(ctx, d, parallel, in.data(), out.data(),
                     [&d](const T* src, int64_t b, int64_t r_lo, int64_t r_hi, int64_t c_lo,
                          int64_t c_hi, T* o) {
                       WindowReduce<T>(src, d, b, r_lo, r_hi, c_lo, c_hi, o, T(0),
                                       [](T a, T x) { return a + x; });
                       // (A window wholly in padding cannot occur: padding is
                       // smaller than the window.)
                       const int64_t count = (r_hi - r_lo) * (c_hi - c_lo);
                       if (count == 0) return;
                       const T n = static_cast<T>(count);
                       for (int64_t k = 0; k < d.depth; ++k) o[k] /= n;
                     });
  } else {
    using CT = PoolComputeType<T, kKind>;
    auto patches = in.template cast<CT>().extract_image_patches(
        d.window_cols, d.window_rows, d.stride_cols, d.stride_rows, 1, 1, 1, 1,
        d.out_cols.pad_before, d.out_cols.pad_after, d.out_rows.pad_before,
        d.out_rows.pad_after, CT(0));
    absl::Status s = CheckPatchCount(patches, d);
    if (!s.ok()) return s;
    // Valid (unpadded) elements of each window: rows times cols.
    Eigen::Tensor<CT, 4, Eigen::RowMajor> counts(1, d.out_rows.out,
                                                 d.out_cols.out, 1);
    auto valid = [](int64_t out_index, int64_t stride, int64_t pad,
                    int64_t ksize, int64_t size) {
      const int64_t start = out_index * stride - pad;
      return std::min(start + ksize, size) - std::max<int64_t>(start, 0);
    };
    for (int64_t r = 0; r < d.out_rows.out; ++r) {
      const int64_t nr = valid(r, d.stride_rows, d.out_rows.pad_before,
                               d.window_rows, d.rows);
      for (int64_t c = 0; c < d.out_cols.out; ++c) {
        const int64_t nc = valid(c, d.stride_cols, d.out_cols.pad_before,
                                 d.window_cols, d.cols);
        counts(0, r, c, 0) = static_cast<CT>(nr * nc);
      }
    }
    const Eigen::array<Index, 4> bcast = {d.batch, 1, 1, d.depth};
    Assign(ctx, parallel, out,
           (patches.sum(window).reshape(out_dims) / counts.broadcast(bcast))
               .template cast<T>());
  }
  return absl::OkStatus();
}

template <typename T, PoolKind kKind>
class PoolingOp : public OpKernel {
 public:
  explicit PoolingOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format, padding;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES(ctx, data_format == "NHWC" || data_format == "NCHW",
                absl::InvalidArgumentError(absl::StrCat(
                    "Default ", Name(), " only supports NHWC on device type ",
                    kDeviceCpu)));
    nchw_ = data_format == "NCHW";
    // MaxPoolV2 takes ksize and strides as inputs, checked at each step.
    if (ctx->attrs().Find("ksize") != nullptr) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("ksize", &ksize_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("strides", &strides_));
      OP_REQUIRES_OK(ctx, CheckWindow(ksize_, strides_));
    }
    OP_REQUIRES_OK(ctx, ctx->GetAttr("padding", &padding));
    auto parsed = op_shapes::ParsePadding(padding);
    OP_REQUIRES_OK(ctx, parsed.status());
    padding_ = *parsed;
    if (ctx->attrs().Find("explicit_paddings") != nullptr) {
      OP_REQUIRES_OK(ctx,
                     ctx->GetAttr("explicit_paddings", &explicit_paddings_));
    }
    const int c = nchw_ ? 1 : 3;
    OP_REQUIRES_OK(ctx, cpu::CheckExplicitPaddings(padding_, explicit_paddings_, c));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    // MaxPoolV2 reads its window from inputs; the others, from attrs.
    const std::vector<int64_t>* ksize = &ksize_;
    const std::vector<int64_t>* strides = &strides_;
    std::vector<int64_t> ksize_in, strides_in;
    if (ctx->num_inputs() == 3) {
      OP_REQUIRES_OK(ctx, WindowInput(ctx->input(1), "ksize", &ksize_in));
      OP_REQUIRES_OK(ctx, WindowInput(ctx->input(2), "strides", &strides_in));
      OP_REQUIRES_OK(ctx, CheckWindow(ksize_in, strides_in));
      ksize = &ksize_in;
      strides = &strides_in;
    }
    PoolDims d;
    OP_REQUIRES_OK(ctx, ComputeDims(input, *ksize, *strides, &d));
    const int64_t out_h = d.depth_window > 1 ? d.rows : d.out_rows.out;
    const int64_t out_w = d.depth_window > 1 ? d.cols : d.out_cols.out;
    auto shape = TensorShape::FromDims(
        nchw_ ? std::vector<int64_t>{d.batch, d.out_depth, out_h, out_w}
              : std::vector<int64_t>{d.batch, out_h, out_w, d.out_depth});
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (shape->num_elements() == 0) return;
    Tensor4<T> out(output->flat<T>().data(), shape->dim_size(0),
                   shape->dim_size(1), shape->dim_size(2), shape->dim_size(3));
    if (input.NumElements() == 0) {
      // Windows lie wholly in explicit padding: max of nothing is lowest.
      Assign(*ctx, false, out, out.constant(Eigen::NumTraits<T>::lowest()));
      return;
    }
    const bool parallel = input.NumElements() > kParallelElements;
    ConstTensor4<T> in(input.flat<T>().data(), input.dim_size(0),
                       input.dim_size(1), input.dim_size(2),
                       input.dim_size(3));
    // NHWC views of input and output (temporaries for NCHW).
    Tensor in_tmp, out_tmp;
    const T* in_data = input.flat<T>().data();
    T* out_data = output->flat<T>().data();
    if (nchw_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(
                              DataTypeToEnum<T>::value,
                              TensorShape({d.batch, d.rows, d.cols, d.depth}),
                              &in_tmp));
      Tensor4<T> dst(in_tmp.flat<T>().data(), d.batch, d.rows, d.cols,
                     d.depth);
      Assign(*ctx, parallel, dst,
             in.shuffle(Eigen::array<int, 4>{0, 2, 3, 1}));
      in_data = dst.data();
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(
                              DataTypeToEnum<T>::value,
                              TensorShape({d.batch, out_h, out_w, d.out_depth}),
                              &out_tmp));
      out_data = out_tmp.flat<T>().data();
    }
    ConstTensor4<T> in_nhwc(in_data, d.batch, d.rows, d.cols, d.depth);
    Tensor4<T> out_nhwc(out_data, d.batch, out_h, out_w, d.out_depth);
    if (d.depth_window > 1) {
      // Max over non-overlapping groups of depth_window channels.
      const Eigen::DSizes<Index, 2> groups(
          input.NumElements() / d.depth_window, d.depth_window);
      const Eigen::IndexList<Eigen::type2index<1>> inner;
      Assign(*ctx, parallel, out_nhwc,
             in_nhwc.reshape(groups).maximum(inner).reshape(
                 out_nhwc.dimensions()));
    } else {
      OP_REQUIRES_OK(ctx, PoolNHWC<T, kKind>(*ctx, d, in_nhwc, out_nhwc));
    }
    if (nchw_) {
      Assign(*ctx, parallel, out,
             ConstTensor4<T>(out_data, d.batch, out_h, out_w, d.out_depth)
                 .shuffle(Eigen::array<int, 4>{0, 3, 1, 2}));
    }
  }

 private:
  static const char* Name() {
    return kKind == PoolKind::kMax ? "MaxPoolingOp" : "AvgPoolingOp";
  }

  static absl::Status CheckWindow(const std::vector<int64_t>& ksize,
                                  const std::vector<int64_t>& strides) {
    if (ksize.size() != 4) {
      return absl::InvalidArgumentError(
          "Sliding window ksize field must specify 4 dimensions");
    }
    for (size_t i = 0; i < ksize.size(); ++i) {
      if (ksize[i] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Sliding window ksize for dimension ", i, " was zero."));
      }
    }
    if (strides.size() != 4) {
      return absl::InvalidArgumentError(
          "Sliding window stride field must specify 4 dimensions");
    }
    if (ksize[0] != 1 || strides[0] != 1) {
      return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
    }
    return absl::OkStatus();
  }

  // MaxPoolV2's ksize or strides input: 4 int32 values.
  static absl::Status WindowInput(const Tensor& t, const char* name,
                                  std::vector<int64_t>* values) {
    if (t.dims() != 1 || t.NumElements() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be a vector of 4 values, but has shape ", t.shape().DebugString()));
    }
    values->assign(t.flat<int32_t>().data(), t.flat<int32_t>().data() + 4);
    return absl::OkStatus();
  }

  // TensorFlow's PoolParameters and the ops' Compute checks.
  absl::Status ComputeDims(const Tensor& input, const std::vector<int64_t>& ksize,
                           const std::vector<int64_t>& strides, PoolDims* d) const {
    if (input.dims() != 4) {
      return absl::InvalidArgumentError("tensor_in must be 4-dimensional");
    }
    const int c = nchw_ ? 1 : 3, h = nchw_ ? 2 : 1, w = nchw_ ? 3 : 2;
    d->batch = input.dim_size(0);
    d->rows = input.dim_size(h);
    d->cols = input.dim_size(w);
    d->depth = input.dim_size(c);
    d->window_rows = ksize[h];
    d->window_cols = ksize[w];
    d->depth_window = ksize[c];
    d->stride_rows = strides[h];
    d->stride_cols = strides[w];
    const int64_t depth_stride = strides[c];
    if (d->depth_window != 1 && (d->window_rows != 1 || d->window_cols != 1)) {
      return absl::UnimplementedError(
          "MaxPooling supports exactly one of pooling across depth or "
          "pooling across width/height.");
    }
    if (d->depth_window > 1) {
      if (kKind == PoolKind::kAvg) {
        return absl::UnimplementedError(
            "Non-spatial pooling is not yet supported. Volunteers? :)");
      }
      if (d->depth % d->depth_window != 0) {
        return absl::UnimplementedError(
            "Depthwise max pooling requires the depth window to evenly "
            "divide the input depth.");
      }
      if (depth_stride != d->depth_window) {
        return absl::UnimplementedError(
            "Depthwise max pooling requires the depth window to equal the "
            "depth stride.");
      }
      if (padding_ == Padding::kExplicit) {
        return absl::UnimplementedError(
            "Depthwise max pooling does not support explicit padding.");
      }
      d->out_depth = d->depth / d->depth_window;
      return absl::OkStatus();
    }
    if (padding_ == Padding::kExplicit) {
      d->out_rows.pad_before = explicit_paddings_[2 * h];
      d->out_rows.pad_after = explicit_paddings_[2 * h + 1];
      d->out_cols.pad_before = explicit_paddings_[2 * w];
      d->out_cols.pad_after = explicit_paddings_[2 * w + 1];
    }
    absl::Status s = ComputeWindow(d->rows, d->window_rows, /*dilation=*/1, d->stride_rows,
                                   padding_, &d->out_rows);
    if (!s.ok()) return s;
    s = ComputeWindow(d->cols, d->window_cols, /*dilation=*/1, d->stride_cols, padding_,
                      &d->out_cols);
    if (!s.ok()) return s;
    d->out_depth = d->depth;
    return absl::OkStatus();
  }

  std::vector<int64_t> ksize_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> explicit_paddings_;
  Padding padding_ = Padding::kValid;
  bool nchw_ = false;
};

#define GR_REGISTER_POOL(OP, T, KIND)                                 \
  REGISTER_KERNEL(KernelDefBuilder(OP).Device(kDeviceCpu).TypeConstraint( \
                      "T", {DataTypeToEnum<T>::value}),               \
                  PoolingOp<T, KIND>)

// MaxPool and MaxPoolV2 take the same element types.
#define GR_REGISTER_MAX_POOL(T)                    \
  GR_REGISTER_POOL("MaxPool", T, PoolKind::kMax);  \
  GR_REGISTER_POOL("MaxPoolV2", T, PoolKind::kMax)
GR_REGISTER_MAX_POOL(float);
GR_REGISTER_MAX_POOL(double);
GR_REGISTER_MAX_POOL(half);
GR_REGISTER_MAX_POOL(bfloat16);
GR_REGISTER_MAX_POOL(int32_t);
GR_REGISTER_MAX_POOL(int64_t);
GR_REGISTER_MAX_POOL(uint8_t);
GR_REGISTER_MAX_POOL(int16_t);
GR_REGISTER_MAX_POOL(int8_t);
GR_REGISTER_MAX_POOL(uint16_t);
#undef GR_REGISTER_MAX_POOL
GR_REGISTER_POOL("AvgPool", float, PoolKind::kAvg);
GR_REGISTER_POOL("AvgPool", double, PoolKind::kAvg);
GR_REGISTER_POOL("AvgPool", half, PoolKind::kAvg);
GR_REGISTER_POOL("AvgPool", bfloat16, PoolKind::kAvg);
#undef GR_REGISTER_POOL

}  // namespace
}  // namespace graphrun
