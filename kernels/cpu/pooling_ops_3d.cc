// MaxPool3D and AvgPool3D on CPU, as TensorFlow's Pooling3DOp: windows
// over the three spatial dims of NDHWC input (NCDHW is transposed to NDHWC
// and back), SAME or VALID. Each output voxel's depth vector is the
// element-wise maximum, or the mean, of the input vectors in its window
// (Eigen arrays, vectorized over channels); padding is skipped, so an
// average divides by the number of voxels inside the input. Output rows
// are spread over the intra-op pool. half and bfloat16 compute in float.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
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

enum class Pool3DKind { kMax, kAvg };

struct Pool3DGeometry {
  int64_t batch = 0, depth = 0;
  std::array<int64_t, 3> in{}, ksize{}, stride{};
  std::array<Window, 3> out;
};

template <typename C, Pool3DKind kKind>
void Pool3DNDHWC(const OpKernelContext& ctx, const Pool3DGeometry& g,
                 const C* in, C* out) {
  using Vec = Eigen::Array<C, Eigen::Dynamic, 1>;
  const int64_t depth = g.depth;
  // One task per (batch, out plane, out row).
  const int64_t rows = g.batch * g.out[0].out * g.out[1].out;
  auto run = [&](Eigen::Index begin, Eigen::Index end) {
    for (Eigen::Index row = begin; row < end; ++row) {
      const int64_t y = row % g.out[1].out;
      const int64_t z = (row / g.out[1].out) % g.out[0].out;
      const int64_t b = row / (g.out[1].out * g.out[0].out);
      const int64_t z0 = z * g.stride[0] - g.out[0].pad_before;
      const int64_t y0 = y * g.stride[1] - g.out[1].pad_before;
      const int64_t z_lo = std::max<int64_t>(z0, 0);
      const int64_t z_hi = std::min<int64_t>(z0 + g.ksize[0], g.in[0]);
      const int64_t y_lo = std::max<int64_t>(y0, 0);
      const int64_t y_hi = std::min<int64_t>(y0 + g.ksize[1], g.in[1]);
      for (int64_t x = 0; x < g.out[2].out; ++x) {
        const int64_t x0 = x * g.stride[2] - g.out[2].pad_before;
        const int64_t x_lo = std::max<int64_t>(x0, 0);
        const int64_t x_hi = std::min<int64_t>(x0 + g.ksize[2], g.in[2]);
        Eigen::Map<Vec> o(out + (row * g.out[2].out + x) * depth, depth);
        if (kKind == Pool3DKind::kMax) {
          o.setConstant(Eigen::NumTraits<C>::lowest());
        } else {
          o.setZero();
        }
        for (int64_t zz = z_lo; zz < z_hi; ++zz) {
          for (int64_t yy = y_lo; yy < y_hi; ++yy) {
            for (int64_t xx = x_lo; xx < x_hi; ++xx) {
              Eigen::Map<const Vec> v(
                  in + (((b * g.in[0] + zz) * g.in[1] + yy) * g.in[2] + xx) *
                           depth,
                  depth);
              if (kKind == Pool3DKind::kMax) {
                o = o.max(v);
              } else {
                o += v;
              }
            }
          }
        }
        if (kKind == Pool3DKind::kAvg) {
          const int64_t count =
              (z_hi - z_lo) * (y_hi - y_lo) * std::max<int64_t>(x_hi - x_lo, 0);
          if (count > 0) o /= static_cast<C>(count);
        }
      }
    }
  };
  const double per_row = static_cast<double>(g.out[2].out) * depth *
                         g.ksize[0] * g.ksize[1] * g.ksize[2];
  if (per_row * rows > cpu::kParallelElements) {
    ctx.eigen_cpu_device().parallelFor(
        rows,
        Eigen::TensorOpCost(per_row * sizeof(C),
                            g.out[2].out * depth * sizeof(C), per_row),
        run);
  } else {
    run(0, rows);
  }
}

template <typename T, Pool3DKind kKind>
class Pooling3DOp : public OpKernel {
 public:
  explicit Pooling3DOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string data_format, padding;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format));
    OP_REQUIRES(ctx, data_format == "NDHWC" || data_format == "NCDHW",
                absl::InvalidArgumentError(absl::StrCat(
                    "attr 'data_format' is '", data_format, "': ",
                    type_string(), " supports NDHWC and NCDHW")));
    channels_first_ = data_format == "NCDHW";
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ksize", &ksize_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("padding", &padding));
    auto parsed = op_shapes::ParsePadding(padding);
    OP_REQUIRES_OK(ctx, parsed.status());
    padding_ = *parsed;
    OP_REQUIRES(ctx, ksize_.size() == 5,
                absl::InvalidArgumentError(
                    "Sliding window ksize field must specify 5 dimensions"));
    OP_REQUIRES(ctx, strides_.size() == 5,
                absl::InvalidArgumentError(
                    "Sliding window stride field must specify 5 dimensions"));
    const int c = channels_first_ ? 1 : 4;
    OP_REQUIRES(ctx, ksize_[0] == 1 && strides_[0] == 1,
                absl::InvalidArgumentError(
                    "Pooling is not yet supported on the batch dimension."));
    OP_REQUIRES(ctx, ksize_[c] == 1 && strides_[c] == 1,
                absl::InvalidArgumentError(
                    "Pooling is not yet supported on the depth dimension."));
    for (int i = 0; i < 5; ++i) {
      OP_REQUIRES(ctx, ksize_[i] > 0 && strides_[i] > 0,
                  absl::InvalidArgumentError(
                      "ksize and strides must be positive"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 5,
                absl::InvalidArgumentError(absl::StrCat(
                    "tensor_in must be 5-dimensional, got ",
                    input.shape().DebugString())));
    Pool3DGeometry g;
    const int first = channels_first_ ? 2 : 1;
    g.batch = input.dim_size(0);
    g.depth = input.dim_size(channels_first_ ? 1 : 4);
    for (int i = 0; i < 3; ++i) {
      g.in[i] = input.dim_size(first + i);
      g.ksize[i] = ksize_[first + i];
      g.stride[i] = strides_[first + i];
      OP_REQUIRES_OK(ctx, ComputeWindow(g.in[i], g.ksize[i], 1, g.stride[i],
                                        padding_, &g.out[i]));
    }
    std::vector<int64_t> last = {g.batch, g.out[0].out, g.out[1].out,
                                 g.out[2].out, g.depth};
    std::vector<int64_t> out_dims = last;
    if (channels_first_) out_dims = {g.batch, g.depth, last[1], last[2], last[3]};
    auto shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (shape->num_elements() == 0) return;
    const DataType ct = DataTypeToEnum<C>::value;
    // Input in NDHWC and C.
    Tensor wide, in_last, out_last;
    const C* in = nullptr;
    if constexpr (std::is_same_v<T, C>) {
      in = input.flat<T>().data();
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, input.shape(), &wide));
      const T* src = input.flat<T>().data();
      C* dst = wide.flat<C>().data();
      for (int64_t i = 0; i < input.NumElements(); ++i) {
        dst[i] = static_cast<C>(src[i]);
      }
      in = dst;
    }
    if (channels_first_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, input.shape(), &in_last));
      std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                                input.shape().dim_sizes().end());
      cpu::Permute<C>(ctx, in, dims, {0, 2, 3, 4, 1}, in_last.flat<C>().data());
      in = in_last.flat<C>().data();
    }
    C* out = nullptr;
    if (std::is_same_v<T, C> && !channels_first_) {
      out = reinterpret_cast<C*>(output->flat<T>().data());
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, *shape, &out_last));
      out = out_last.flat<C>().data();
    }
    Pool3DNDHWC<C, kKind>(*ctx, g, in, out);
    if (std::is_same_v<T, C> && !channels_first_) return;
    const C* result = out;
    Tensor first_tmp;
    if (channels_first_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(ct, *shape, &first_tmp));
      cpu::Permute<C>(ctx, out, last, {0, 4, 1, 2, 3},
                      first_tmp.flat<C>().data());
      result = first_tmp.flat<C>().data();
    }
    T* dst = output->flat<T>().data();
    for (int64_t i = 0; i < shape->num_elements(); ++i) {
      dst[i] = static_cast<T>(result[i]);
    }
  }

 private:
  std::vector<int64_t> ksize_, strides_;
  Padding padding_ = Padding::kValid;
  bool channels_first_ = false;
};

#define GR_REGISTER_POOL3D(OP, T, KIND)                                     \
  REGISTER_KERNEL(                                                          \
      KernelDefBuilder(OP).Device(kDeviceCpu).TypeConstraint<T>("T"),       \
      Pooling3DOp<T, KIND>)
GR_REGISTER_POOL3D("MaxPool3D", float, Pool3DKind::kMax);
GR_REGISTER_POOL3D("MaxPool3D", half, Pool3DKind::kMax);
GR_REGISTER_POOL3D("MaxPool3D", bfloat16, Pool3DKind::kMax);
GR_REGISTER_POOL3D("AvgPool3D", float, Pool3DKind::kAvg);
GR_REGISTER_POOL3D("AvgPool3D", double, Pool3DKind::kAvg);
GR_REGISTER_POOL3D("AvgPool3D", half, Pool3DKind::kAvg);
GR_REGISTER_POOL3D("AvgPool3D", bfloat16, Pool3DKind::kAvg);
#undef GR_REGISTER_POOL3D

}  // namespace
}  // namespace graphrun
