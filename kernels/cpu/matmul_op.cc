// MatMul on CPU: checks shapes as TensorFlow's MatMulOp and calls Gemm
// (kernels/cpu/gemm.h), which picks the thread pool for big products.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] is not a matrix. Instead it has shape ",
                    a.shape().DebugString())));
    OP_REQUIRES(ctx, b.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[1] is not a matrix. Instead it has shape ",
                    b.shape().DebugString())));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == k_b,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                    ", In[1]: ", b.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &out));
    if (out->NumElements() == 0) return;
    Gemm<T>(ctx->device()->eigen_cpu_device(), transpose_a_, transpose_b_, m,
            n, k, a.flat<T>().data(), b.flat<T>().data(),
            out->flat<T>().data());
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// _FusedMatMul on float: the product, then bias and activation in one
// pass over it, instead of two more kernels that each read and write the
// whole output. Each thread finishes the block of the output it multiplied,
// while that block is still in its core's cache (GemmWithEpilogue).
class FusedMatMulOp : public OpKernel {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_b", &transpose_b_));
    auto epilogue = cpu::BiasActivation::FromAttrs(ctx);
    OP_REQUIRES_OK(ctx, epilogue.status());
    epilogue_ = *epilogue;
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_REQUIRES(ctx, a.dims() == 2 && b.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "_FusedMatMul wants matrices, got ", a.shape().DebugString(), " and ",
                    b.shape().DebugString())));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == k_b,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                    ", In[1]: ", b.shape().DebugString())));
    OP_REQUIRES(ctx, bias.dims() == 1 && bias.dim_size(0) == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "Must provide as many biases as the last dimension of the input tensor: ",
                    bias.shape().DebugString(), " vs. [", m, ",", n, "]")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &out));
    if (out->NumElements() == 0) return;
    const Eigen::ThreadPoolDevice* d = ctx->device()->eigen_cpu_device();
    float* o = out->flat<float>().data();
    const float* bias_data = bias.flat<float>().data();
    GemmWithEpilogue(d, transpose_a_, transpose_b_, m, n, k, a.flat<float>().data(),
                     b.flat<float>().data(), o,
                     [&](int64_t m0, int64_t mc, int64_t n0, int64_t nc) {
                       if (mc == m && nc == n) {
                         // The product ran whole: the epilogue may use the pool.
                         epilogue_.Apply(d, bias_data, n, o, m);
                       } else {
                         epilogue_.ApplyBlock(bias_data, n, o, m0, mc, n0, nc);
                       }
                     });
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  cpu::BiasActivation epilogue_;
};

REGISTER_KERNEL(KernelDefBuilder("_FusedMatMul").Device(kDeviceCpu).TypeConstraint<float>("T"),
                FusedMatMulOp);

#define GR_REGISTER_MATMUL(T)                                            \
  REGISTER_KERNEL(                                                       \
      KernelDefBuilder("MatMul").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      MatMulOp<T>)
GR_REGISTER_MATMUL(float);
GR_REGISTER_MATMUL(double);
GR_REGISTER_MATMUL(half);
GR_REGISTER_MATMUL(bfloat16);
GR_REGISTER_MATMUL(int32_t);
GR_REGISTER_MATMUL(int64_t);
GR_REGISTER_MATMUL(complex64);
GR_REGISTER_MATMUL(complex128);
#undef GR_REGISTER_MATMUL

}  // namespace
}  // namespace graphrun
