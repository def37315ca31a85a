// The GPU's element-wise gradients and softmax cross entropies, float:
// ReluGrad, Relu6Grad, EluGrad, SeluGrad, LeakyReluGrad, SoftplusGrad, SoftsignGrad,
// SigmoidGrad, TanhGrad, RsqrtGrad, SqrtGrad and ReciprocalGrad (one CUDA
// kernel each call, the output in input 0's buffer when it can be), and
// SoftmaxCrossEntropyWithLogits (logits and labels broadcast to [batch,
// classes]) and SparseSoftmaxCrossEntropyWithLogits (int32 or int64 labels
// in device memory: one outside [0, classes) gives its row NaN, as
// TensorFlow's GPU kernel, rather than the CPU's error, which would need
// the labels on the host).
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using gpu::GpuKernel;
using gpu::Stream;

using gpu::FloatData;

template <gpu::GradOp kOp>
class ActivationGradOp : public GpuKernel {
 public:
  explicit ActivationGradOp(OpKernelConstruction* c) : GpuKernel(c) {
    if (kOp == gpu::GradOp::kLeakyRelu) OP_REQUIRES_OK(c, c->GetAttr("alpha", &alpha_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.shape() == b.shape(),
                absl::InvalidArgumentError(
                    absl::StrCat(def().op(), ": the two inputs must have the same shape, got ",
                                 a.shape().DebugString(), " and ", b.shape().DebugString())));
    // Forwarding empties input 0's slot: what the launch needs is read first.
    const float* a_data = FloatData(a);
    const TensorShape shape = a.shape();
    const int64_t n = a.NumElements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, shape, &out));
    if (n == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::ActivationGrad(*stream, kOp, a_data, FloatData(b), FloatData(out), n,
                                            alpha_));
  }

 private:
  float alpha_ = 0.2f;
};

class SoftmaxXentOp : public GpuKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* c) : GpuKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    const std::string shapes = absl::StrCat("got logits shape ", features.shape().DebugString(),
                                            " and labels shape ", labels.shape().DebugString());
    OP_REQUIRES(ctx, features.dims() <= 2 && labels.dims() <= 2 &&
                         (features.dims() == 2 || labels.dims() == 2),
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be either 2-dimensional, or broadcasted to be "
                    "2-dimensional, ",
                    shapes)));
    int64_t f[2] = {1, 1}, l[2] = {1, 1};  // right-aligned to rank 2
    for (int i = 0; i < features.dims(); ++i) f[2 - features.dims() + i] = features.dim_size(i);
    for (int i = 0; i < labels.dims(); ++i) l[2 - labels.dims() + i] = labels.dim_size(i);
    int64_t dims[2];
    for (int i = 0; i < 2; ++i) {
      OP_REQUIRES(ctx, f[i] == l[i] || f[i] == 1 || l[i] == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "logits and labels must be broadcastable: logits_size=",
                      features.shape().DebugString(), " labels_size=",
                      labels.shape().DebugString())));
      dims[i] = f[i] == 1 ? l[i] : f[i];
    }
    gpu::XentShape x;
    x.rows = dims[0];
    x.cols = dims[1];
    x.logits_row_stride = f[0] == 1 ? 0 : f[1];
    x.logits_col_stride = f[1] == 1 ? 0 : 1;
    x.labels_row_stride = l[0] == 1 ? 0 : l[1];
    x.labels_col_stride = l[1] == 1 ? 0 : 1;
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({x.rows}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({x.rows, x.cols}), &backprop));
    if (x.rows == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::SoftmaxCrossEntropy(
                            *stream, features.NumElements() > 0 ? FloatData(features) : nullptr,
                            labels.NumElements() > 0 ? FloatData(labels) : nullptr,
                            FloatData(loss), x.cols > 0 ? FloatData(backprop) : nullptr, x));
  }
};

class SparseSoftmaxXentOp : public GpuKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* c) : GpuKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat("logits must be 2-D, but got shape ",
                                                        features.shape().DebugString())));
    OP_REQUIRES(ctx, labels.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat("labels must be 1-D, but got shape ",
                                                        labels.shape().DebugString())));
    OP_REQUIRES(ctx, features.dim_size(0) == labels.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must have the same first dimension, got logits shape ",
                    features.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString())));
    const int64_t rows = features.dim_size(0), cols = features.dim_size(1);
    OP_REQUIRES(ctx, cols > 0,
                absl::InvalidArgumentError(
                    absl::StrCat("Must have at least one class, but got logits shape ",
                                 features.shape().DebugString())));
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rows}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    if (rows == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::SparseSoftmaxCrossEntropy(
                            *stream, FloatData(features),
                            labels.dtype() == DT_INT64 ? gpu::IndexType::kInt64
                                                       : gpu::IndexType::kInt32,
                            labels.raw_data(), FloatData(loss), FloatData(backprop), rows, cols));
  }
};

#define GR_REGISTER_GRAD(name, op)                                                      \
  REGISTER_KERNEL(KernelDefBuilder(name).Device(kDeviceGpu).TypeConstraint<float>("T"), \
                  ActivationGradOp<gpu::GradOp::op>)
GR_REGISTER_GRAD("ReluGrad", kRelu);
GR_REGISTER_GRAD("Relu6Grad", kRelu6);
GR_REGISTER_GRAD("EluGrad", kElu);
GR_REGISTER_GRAD("SeluGrad", kSelu);
GR_REGISTER_GRAD("LeakyReluGrad", kLeakyRelu);
GR_REGISTER_GRAD("SoftplusGrad", kSoftplus);
GR_REGISTER_GRAD("SoftsignGrad", kSoftsign);
GR_REGISTER_GRAD("SigmoidGrad", kSigmoid);
GR_REGISTER_GRAD("TanhGrad", kTanh);
GR_REGISTER_GRAD("RsqrtGrad", kRsqrt);
GR_REGISTER_GRAD("SqrtGrad", kSqrt);
GR_REGISTER_GRAD("ReciprocalGrad", kReciprocal);
#undef GR_REGISTER_GRAD

REGISTER_KERNEL(KernelDefBuilder("SoftmaxCrossEntropyWithLogits")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T"),
                SoftmaxXentOp);
REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .TypeConstraint("Tlabels", {DT_INT32, DT_INT64}),
                SparseSoftmaxXentOp);

}  // namespace
}  // namespace graphrun
