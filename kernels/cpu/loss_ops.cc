// L2Loss, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits on CPU, as TensorFlow's kernels (the
// forward outputs: loss and its gradient "backprop"). Per row of logits,
// shifted = logits - max, sum = sum(exp(shifted)):
//   loss = sum(labels * (log(sum) - shifted)),
//   backprop = exp(shifted) / sum - labels
// (the sparse form's labels are one-hot indices, each checked to lie in
// [0, classes)). Features and labels of the dense form broadcast to
// [batch, classes]. Plain loops over rows, spread over the intra-op pool
// when big; half and bfloat16 compute in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// The arithmetic type: double for double, else float.
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Runs fn(begin, end) over `rows` rows of `cols` elements each.
template <typename Fn>
void ForEachRow(OpKernelContext* ctx, int64_t rows, int64_t cols, Fn fn) {
  const double per_row = static_cast<double>(std::max<int64_t>(cols, 1));
  if (rows > 1 && per_row * rows > kParallelElements) {
    ctx->eigen_cpu_device().parallelFor(
        rows, Eigen::TensorOpCost(8 * per_row, 4 * per_row, 10 * per_row),
        [&](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
  } else {
    fn(0, rows);
  }
}

template <typename T>
class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    const int64_t n = t.NumElements();
    const T* x = n > 0 ? t.flat<T>().data() : nullptr;
    double sum = 0;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (n > 0) {
        sum = static_cast<double>(
            Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(x, n)
                .square()
                .sum());
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(static_cast<float>(x[i]));
        sum += v * v;
      }
    }
    out->flat<T>()[0] = static_cast<T>(sum / 2);
  }
};

// The [batch, classes] view of an operand that broadcasts to it.
struct Rows {
  int64_t row_stride = 0;  // 0 when the operand has one row
  int64_t col_stride = 0;  // 0 when the operand has one column
};

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.dims() <= 2 && labels.dims() <= 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be either 2-dimensional, or "
                    "broadcasted to be 2-dimensional, got logits shape ",
                    features.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString())));
    // Both right-aligned to rank 2, then broadcast.
    int64_t f[2] = {1, 1}, l[2] = {1, 1};
    for (int i = 0; i < features.dims(); ++i) {
      f[2 - features.dims() + i] = features.dim_size(i);
    }
    for (int i = 0; i < labels.dims(); ++i) {
      l[2 - labels.dims() + i] = labels.dim_size(i);
    }
    int64_t dims[2];
    for (int i = 0; i < 2; ++i) {
      OP_REQUIRES(ctx, f[i] == l[i] || f[i] == 1 || l[i] == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "logits and labels must be broadcastable: logits_size=",
                      features.shape().DebugString(),
                      " labels_size=", labels.shape().DebugString())));
      dims[i] = f[i] == 1 ? l[i] : f[i];
    }
    OP_REQUIRES(ctx, features.dims() == 2 || labels.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be either 2-dimensional, or "
                    "broadcasted to be 2-dimensional, got logits shape ",
                    features.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString())));
    const int64_t batch = dims[0], classes = dims[1];
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({batch, classes}),
                                             &backprop));
    if (batch == 0) return;
    const Rows fv{f[0] == 1 ? 0 : f[1], f[1] == 1 ? 0 : 1};
    const Rows lv{l[0] == 1 ? 0 : l[1], l[1] == 1 ? 0 : 1};
    const T* fp = features.NumElements() > 0 ? features.flat<T>().data() : nullptr;
    const T* lp = labels.NumElements() > 0 ? labels.flat<T>().data() : nullptr;
    T* loss_p = loss->flat<T>().data();
    T* grad = classes > 0 ? backprop->flat<T>().data() : nullptr;
    using U = ComputeType<T>;
    ForEachRow(ctx, batch, classes, [&](int64_t begin, int64_t end) {
      std::vector<U> shifted(classes);
      for (int64_t b = begin; b < end; ++b) {
        const T* frow = fp + b * fv.row_stride;
        const T* lrow = lp + b * lv.row_stride;
        U max = -std::numeric_limits<U>::infinity();
        for (int64_t c = 0; c < classes; ++c) {
          shifted[c] = static_cast<U>(frow[c * fv.col_stride]);
          max = std::max(max, shifted[c]);
        }
        U sum = 0;
        for (int64_t c = 0; c < classes; ++c) {
          shifted[c] -= max;
          sum += std::exp(shifted[c]);
        }
        const U log_sum = std::log(sum);
        U row_loss = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const U label = static_cast<U>(lrow[c * lv.col_stride]);
          row_loss += label * (log_sum - shifted[c]);
          grad[b * classes + c] =
              static_cast<T>(std::exp(shifted[c]) / sum - label);
        }
        loss_p[b] = static_cast<T>(row_loss);
      }
    });
  }
};

template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "logits must be 2-D, but got shape ",
                    features.shape().DebugString())));
    OP_REQUIRES(ctx, labels.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "labels must be 1-D, but got shape ",
                    labels.shape().DebugString())));
    OP_REQUIRES(ctx, features.dim_size(0) == labels.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must have the same first dimension, "
                    "got logits shape ",
                    features.shape().DebugString(), " and labels shape ",
                    labels.shape().DebugString())));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    OP_REQUIRES(ctx, classes > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Must have at least one class, but got logits shape ",
                    features.shape().DebugString())));
    const Index* lp = batch > 0 ? labels.flat<Index>().data() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, lp[b] >= 0 && lp[b] < classes,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Received a label value of ", lp[b],
                      " which is outside the valid range of [0, ", classes,
                      ").  Label at index ", b)));
    }
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    if (batch == 0) return;
    const T* fp = features.flat<T>().data();
    T* loss_p = loss->flat<T>().data();
    T* grad = backprop->flat<T>().data();
    using U = ComputeType<T>;
    ForEachRow(ctx, batch, classes, [&](int64_t begin, int64_t end) {
      std::vector<U> shifted(classes);
      for (int64_t b = begin; b < end; ++b) {
        const T* row = fp + b * classes;
        U max = -std::numeric_limits<U>::infinity();
        for (int64_t c = 0; c < classes; ++c) {
          shifted[c] = static_cast<U>(row[c]);
          max = std::max(max, shifted[c]);
        }
        U sum = 0;
        for (int64_t c = 0; c < classes; ++c) {
          shifted[c] -= max;
          sum += std::exp(shifted[c]);
        }
        const int64_t label = static_cast<int64_t>(lp[b]);
        loss_p[b] = static_cast<T>(std::log(sum) - shifted[label]);
        for (int64_t c = 0; c < classes; ++c) {
          grad[b * classes + c] = static_cast<T>(
              std::exp(shifted[c]) / sum - (c == label ? U(1) : U(0)));
        }
      }
    });
  }
};

#define GR_REGISTER_LOSSES(T)                                              \
  REGISTER_KERNEL(                                                         \
      KernelDefBuilder("L2Loss").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      L2LossOp<T>);                                                        \
  REGISTER_KERNEL(KernelDefBuilder("SoftmaxCrossEntropyWithLogits")        \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T"),                             \
                  SoftmaxXentOp<T>);                                       \
  REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")  \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T")                              \
                      .TypeConstraint<int32_t>("Tlabels"),                 \
                  SparseSoftmaxXentOp<T, int32_t>);                        \
  REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")  \
                      .Device(kDeviceCpu)                                  \
                      .TypeConstraint<T>("T")                              \
                      .TypeConstraint<int64_t>("Tlabels"),                 \
                  SparseSoftmaxXentOp<T, int64_t>)
GR_REGISTER_LOSSES(float);
GR_REGISTER_LOSSES(double);
GR_REGISTER_LOSSES(half);
GR_REGISTER_LOSSES(bfloat16);
#undef GR_REGISTER_LOSSES

}  // namespace
}  // namespace graphrun
