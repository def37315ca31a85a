// BatchMatMulV2 on CPU: broadcasts the batch dimensions (numpy rules, as
// TensorFlow's MatMulBCast) and multiplies each pair of matrices with
// BatchGemm (gemm.h).
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, complex64> ||
                            std::is_same_v<T, complex128>;

template <typename T>
class BatchMatMulV2Op : public OpKernel {
 public:
  explicit BatchMatMulV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adj_x", &adj_x_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_REQUIRES(ctx, x.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("In[0] ndims must be >= 2: ", x.dims())));
    OP_REQUIRES(ctx, y.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("In[1] ndims must be >= 2: ", y.dims())));
    auto bcast = BroadcastMatMulBatch(x.shape().dim_sizes().first(x.dims() - 2),
                                      y.shape().dim_sizes().first(y.dims() - 2));
    if (!bcast.ok()) {
      const bool incompatible =
          absl::StrContains(bcast.status().message(), "do not broadcast");
      ctx->SetStatus(absl::InvalidArgumentError(
          incompatible
              ? absl::StrCat(
                    "In[0] and In[1] must have compatible batch dimensions: ",
                    x.shape().DebugString(), " vs. ", y.shape().DebugString())
              : std::string(bcast.status().message())));
      return;
    }
    int64_t d0 = x.dim_size(x.dims() - 2), d1 = x.dim_size(x.dims() - 1);
    int64_t d2 = y.dim_size(y.dims() - 2), d3 = y.dim_size(y.dims() - 1);
    if (adj_x_) std::swap(d0, d1);
    if (adj_y_) std::swap(d2, d3);
    OP_REQUIRES(ctx, d1 == d2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", x.shape().DebugString(),
                    ", In[1]: ", y.shape().DebugString())));
    TensorShape out_shape;
    for (int64_t d : bcast->dims) out_shape.AddDim(d);  // checked above
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d0));
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d3));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;

    const Eigen::ThreadPoolDevice* device = ctx->device()->eigen_cpu_device();
    const T* xp = x.flat<T>().data();
    const T* yp = y.flat<T>().data();
    // adj of a complex matrix is its conjugate transpose: conjugate a copy.
    Tensor x_conj, y_conj;
    if constexpr (kIsComplex<T>) {
      if (adj_x_ && x.NumElements() > 0) {
        OP_REQUIRES_OK(ctx, Conjugate(ctx, x, &x_conj));
        xp = x_conj.flat<T>().data();
      }
      if (adj_y_ && y.NumElements() > 0) {
        OP_REQUIRES_OK(ctx, Conjugate(ctx, y, &y_conj));
        yp = y_conj.flat<T>().data();
      }
    }

    BatchGemm<T>(device, adj_x_, adj_y_, d0, d3, d1, xp, yp, *bcast,
                 out->flat<T>().data());
  }

 private:
  static absl::Status Conjugate(OpKernelContext* ctx, const Tensor& in,
                                Tensor* out) {
    absl::Status s = ctx->allocate_temp(in.dtype(), in.shape(), out);
    if (!s.ok()) return s;
    const int64_t size = in.NumElements();
    Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>> src(
        in.flat<T>().data(), size);
    Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>> dst(
        out->flat<T>().data(), size);
    dst = src.conjugate();
    return absl::OkStatus();
  }

  bool adj_x_ = false;
  bool adj_y_ = false;
};

// BatchMatMul (v1) takes equal batch dims, which broadcast trivially;
// BatchMatMulV3 with Ta = Tb = Tout is BatchMatMulV2.
#define GR_REGISTER_BATCH_MATMUL(T)                    \
  REGISTER_KERNEL(KernelDefBuilder("BatchMatMulV2")    \
                      .Device(kDeviceCpu)              \
                      .TypeConstraint<T>("T"),         \
                  BatchMatMulV2Op<T>);                 \
  REGISTER_KERNEL(KernelDefBuilder("BatchMatMul")      \
                      .Device(kDeviceCpu)              \
                      .TypeConstraint<T>("T"),         \
                  BatchMatMulV2Op<T>);                 \
  REGISTER_KERNEL(KernelDefBuilder("BatchMatMulV3")    \
                      .Device(kDeviceCpu)              \
                      .TypeConstraint<T>("Ta")         \
                      .TypeConstraint<T>("Tb")         \
                      .TypeConstraint<T>("Tout"),      \
                  BatchMatMulV2Op<T>)
GR_REGISTER_BATCH_MATMUL(float);
GR_REGISTER_BATCH_MATMUL(double);
GR_REGISTER_BATCH_MATMUL(half);
GR_REGISTER_BATCH_MATMUL(bfloat16);
GR_REGISTER_BATCH_MATMUL(int16_t);
GR_REGISTER_BATCH_MATMUL(int32_t);
GR_REGISTER_BATCH_MATMUL(int64_t);
GR_REGISTER_BATCH_MATMUL(complex64);
GR_REGISTER_BATCH_MATMUL(complex128);
#undef GR_REGISTER_BATCH_MATMUL

}  // namespace
}  // namespace graphrun
