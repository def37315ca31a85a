// Softmax and LogSoftmax over the last dimension on CPU, numerically stable
// (the row maximum is subtracted first), as TensorFlow's SoftmaxEigenImpl.
// half and bfloat16 are computed in float and rounded once.
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Element counts above this run on the thread pool.
constexpr int64_t kThreadedMinElements = 32 * 1024;

// y[b, :] = (log)softmax(x[b, :]). `x` and `y` may be the same buffer;
// `scratch` holds `batch` values.
template <typename U, typename Device>
void SoftmaxRows(const Device& d, const U* x, U* y, U* scratch, int64_t batch,
                 int64_t depth, bool log) {
  ConstTensorMap<U, 2> logits(x, batch, depth);
  TensorMap<U, 2> out(y, batch, depth);
  TensorMap<U, 1> row(scratch, batch);
  Eigen::IndexList<Eigen::type2index<1>> along_class;
  Eigen::IndexList<Eigen::Index, Eigen::type2index<1>> batch_by_one;
  batch_by_one.set(0, batch);
  Eigen::IndexList<Eigen::type2index<1>, Eigen::Index> one_by_class;
  one_by_class.set(1, depth);

  row.device(d) = logits.maximum(along_class);
  out.device(d) = logits - row.reshape(batch_by_one).broadcast(one_by_class);
  if (log) {
    row.device(d) = out.exp().sum(along_class).log();
    out.device(d) = out - row.reshape(batch_by_one).broadcast(one_by_class);
  } else {
    out.device(d) = out.exp();
    row.device(d) = out.sum(along_class).inverse();
    out.device(d) = out * row.reshape(batch_by_one).broadcast(one_by_class);
  }
}

template <typename T>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    log_ = type_string() == "LogSoftmax";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.dims() >= 1,
                absl::InvalidArgumentError(
                    absl::StrCat("logits must have >= 1 dimension, got ",
                                 logits.shape().DebugString())));
    const TensorShape shape = logits.shape();
    const int64_t n = logits.NumElements();
    const T* in = logits.flat<T>().data();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, shape, &out));
    if (n == 0) return;
    const int64_t depth = shape.dim_size(shape.dims() - 1);
    const int64_t batch = n / depth;
    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    const bool threaded = pool != nullptr && n > kThreadedMinElements;

    using U = std::conditional_t<std::is_same_v<T, double>, double, float>;
    Tensor row;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<U>::value,
                                           TensorShape({batch}), &row));
    if constexpr (std::is_same_v<T, U>) {
      Run(pool, threaded, in, out->flat<T>().data(), row.flat<U>().data(),
          batch, depth);
    } else {
      // half / bfloat16: widen, compute in float, round once.
      Tensor wide;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<U>::value,
                                             TensorShape({n}), &wide));
      U* w = wide.flat<U>().data();
      ConstTensorMap<T, 1> src(in, n);
      TensorMap<U, 1> dst(w, n);
      if (threaded) {
        dst.device(*pool) = src.template cast<U>();
      } else {
        dst = src.template cast<U>();
      }
      Run(pool, threaded, w, w, row.flat<U>().data(), batch, depth);
      TensorMap<T, 1> result(out->flat<T>().data(), n);
      if (threaded) {
        result.device(*pool) = dst.template cast<T>();
      } else {
        result = dst.template cast<T>();
      }
    }
  }

 private:
  template <typename U>
  void Run(const Eigen::ThreadPoolDevice* pool, bool threaded, const U* x,
           U* y, U* scratch, int64_t batch, int64_t depth) const {
    if (threaded) {
      SoftmaxRows(*pool, x, y, scratch, batch, depth, log_);
    } else {
      SoftmaxRows(Eigen::DefaultDevice(), x, y, scratch, batch, depth, log_);
    }
  }

  bool log_ = false;
};

#define GR_REGISTER_SOFTMAX(T)                                               \
  REGISTER_KERNEL(                                                           \
      KernelDefBuilder("Softmax").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      SoftmaxOp<T>);                                                         \
  REGISTER_KERNEL(KernelDefBuilder("LogSoftmax")                             \
                      .Device(kDeviceCpu)                                    \
                      .TypeConstraint<T>("T"),                               \
                  SoftmaxOp<T>)
GR_REGISTER_SOFTMAX(float);
GR_REGISTER_SOFTMAX(double);
GR_REGISTER_SOFTMAX(half);
GR_REGISTER_SOFTMAX(bfloat16);
#undef GR_REGISTER_SOFTMAX

}  // namespace
}  // namespace graphrun
