// MatMul on CPU: checks shapes as TensorFlow's MatMulOp and calls Gemm
// (kernels/cpu/gemm.h), which picks the thread pool for big products.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
// pass over it (while it is still in cache), instead of two more kernels
// that each read and write the whole output.
class FusedMatMulOp : public OpKernel {
 public:
  enum class Act { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

  explicit FusedMatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_b", &transpose_b_));
    std::vector<std::string> ops;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("fused_ops", &ops));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("leakyrelu_alpha", &alpha_));
    int64_t num_args = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_args", &num_args));
    const bool bias = !ops.empty() && ops[0] == "BiasAdd" && num_args == 1;
    if (bias && ops.size() == 2) {
      static const std::pair<const char*, Act> kActs[] = {
          {"Relu", Act::kRelu}, {"Relu6", Act::kRelu6}, {"Elu", Act::kElu},
          {"LeakyRelu", Act::kLeakyRelu}, {"Tanh", Act::kTanh}, {"Sigmoid", Act::kSigmoid}};
      for (const auto& [name, act] : kActs) {
        if (ops[1] == name) act_ = act;
      }
    }
    const bool ok = bias && (ops.size() == 1 || act_ != Act::kNone);
    OP_REQUIRES(ctx, ok,
                absl::InvalidArgumentError(absl::StrCat(
                    "_FusedMatMul: unsupported fused_ops [", absl::StrJoin(ops, ", "),
                    "] with num_args=", num_args,
                    " (supported: BiasAdd, optionally followed by Relu, Relu6, Elu, "
                    "LeakyRelu, Tanh or Sigmoid)")));
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
    Gemm<float>(d, transpose_a_, transpose_b_, m, n, k, a.flat<float>().data(),
                b.flat<float>().data(), o);
    const float* bv = bias.flat<float>().data();
    auto rows = [this, o, bv, n](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) Epilogue(o + r * n, bv, n);
    };
    if (d != nullptr && m * n >= kParallelElements) {
      d->parallelFor(m, Eigen::TensorOpCost(4.0 * n, 4.0 * n, 4.0 * n), rows);
    } else {
      rows(0, m);
    }
  }

 private:
  void Epilogue(float* row, const float* bias, int64_t n) const {
    switch (act_) {
      case Act::kNone:
        for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
        break;
      case Act::kRelu:
        for (int64_t j = 0; j < n; ++j) row[j] = std::max(row[j] + bias[j], 0.f);
        break;
      case Act::kRelu6:
        for (int64_t j = 0; j < n; ++j) row[j] = std::min(std::max(row[j] + bias[j], 0.f), 6.f);
        break;
      case Act::kElu:
        for (int64_t j = 0; j < n; ++j) {
          const float x = row[j] + bias[j];
          row[j] = x < 0 ? std::expm1(x) : x;
        }
        break;
      case Act::kLeakyRelu:
        for (int64_t j = 0; j < n; ++j) {
          const float x = row[j] + bias[j];
          row[j] = x < 0 ? x * alpha_ : x;
        }
        break;
      case Act::kTanh:
      case Act::kSigmoid: {
        // Eigen's vectorized functors, the ones the Tanh/Sigmoid kernels use.
        Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> x(row, n);
        Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>> bm(bias, n);
        if (act_ == Act::kTanh) {
          x = (x + bm).tanh();
        } else {
          x = (x + bm).sigmoid();
        }
        break;
      }
    }
  }

  bool transpose_a_ = false;
  bool transpose_b_ = false;
  float alpha_ = 0.2f;
  Act act_ = Act::kNone;
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
