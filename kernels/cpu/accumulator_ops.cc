// ResourceConditionalAccumulator and the ResourceAccumulator* ops on it,
// with TensorFlow's semantics (core/kernels/conditional_accumulator*.h):
// gradients applied with a local step older than the accumulator's global
// step are dropped; the others are summed; a take waits until
// `num_required` have arrived, returns their mean (or sum), empties the
// accumulator and advances its global step by one. SyncReplicasOptimizer
// keeps one per variable. Dense float gradients (half, float, double), as
// TensorFlow's kernels.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "kernels/cpu/shared_resource.h"
#include "kernels/cpu/step_watch.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class Accumulator : public ResourceBase {
 public:
  using TakeDone = std::function<void(absl::Status, Tensor)>;

  Accumulator(std::string name, DataType dtype, PartialShape shape, bool mean)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), mean_(mean) {}

  ~Accumulator() override {
    for (Take& t : takes_) t.done(absl::CancelledError("TakeGrad operation was cancelled"), {});
  }

  std::string DebugString() const override {
    return absl::StrCat("ConditionalAccumulator '", name_, "'");
  }
  DataType dtype() const { return dtype_; }

  absl::Status Apply(int64_t local_step, const Tensor& grad) {
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) return absl::OkStatus();  // stale: dropped
      if (!shape_.IsCompatibleWith(grad.shape())) {
        return absl::InvalidArgumentError(absl::StrCat("Shape mismatch: expected ",
                                                       shape_.DebugString(), ", got ",
                                                       grad.shape().DebugString()));
      }
      if (count_ > 0 && sum_.shape() != grad.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape mismatch: expected ", sum_.shape().DebugString(), ", got ",
            grad.shape().DebugString()));
      }
      if (count_ == 0) {
        absl::StatusOr<Tensor> copy = Tensor::Allocate(HostAllocator(), dtype_, grad.shape(),
                                                       TensorBuffer::Init::kUninitialized);
        if (!copy.ok()) return copy.status();
        sum_ = *std::move(copy);
        CopyElements(grad, 0, grad.NumElements(), &sum_, 0);
      } else {
        AddInto(grad, &sum_);
      }
      ++count_;
      Flush(&ready);
    }
    for (auto& f : ready) f();
    return absl::OkStatus();
  }

  void SetGlobalStep(int64_t step) {
    absl::MutexLock lock(&mu_);
    global_step_ = step;
  }

  int32_t NumAccumulated() const {
    absl::MutexLock lock(&mu_);
    return count_;
  }

  // `done` gets the mean (or sum) once `num_required` gradients are in.
  void TakeAsync(int32_t num_required, CancellationManager* cm, TakeDone done) {
    int64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = next_id_++;
    }
    StepWatch watch;
    if (!watch.Start(cm, [this, id] { Cancel(id); })) {
      done(absl::CancelledError("TakeGrad operation was cancelled"), {});
      return;
    }
    TakeDone finish = watch.Wrap(std::move(done));
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_ids_.erase(id) > 0) {
        ready.push_back([finish] {
          finish(absl::CancelledError("TakeGrad operation was cancelled"), {});
        });
      } else {
        takes_.push_back(Take{id, num_required, std::move(finish)});
        Flush(&ready);
      }
    }
    for (auto& f : ready) f();
  }

 private:
  struct Take {
    int64_t id;
    int32_t num_required;
    TakeDone done;
  };

  template <typename T>
  static void AddTyped(const Tensor& grad, Tensor* sum) {
    absl::Span<const T> in = grad.flat<T>();
    absl::Span<T> out = sum->flat<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = out[i] + in[i];
  }
  template <typename T>
  static void DivideTyped(int32_t n, Tensor* sum) {
    absl::Span<T> out = sum->flat<T>();
    const T d = static_cast<T>(n);
    for (size_t i = 0; i < out.size(); ++i) out[i] = out[i] / d;
  }

  void AddInto(const Tensor& grad, Tensor* sum) {
    switch (dtype_) {
      case DT_HALF: return AddTyped<half>(grad, sum);
      case DT_FLOAT: return AddTyped<float>(grad, sum);
      default: return AddTyped<double>(grad, sum);
    }
  }
  void Divide(int32_t n, Tensor* sum) {
    switch (dtype_) {
      case DT_HALF: return DivideTyped<half>(n, sum);
      case DT_FLOAT: return DivideTyped<float>(n, sum);
      default: return DivideTyped<double>(n, sum);
    }
  }

  // Completes the oldest takes while enough gradients are in.
  void Flush(std::vector<std::function<void()>>* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!takes_.empty() && count_ >= takes_.front().num_required) {
      Tensor out = std::move(sum_);
      sum_ = Tensor();
      if (mean_) Divide(count_, &out);
      count_ = 0;
      ++global_step_;
      ready->push_back([f = std::move(takes_.front().done), out = std::move(out)] {
        f(absl::OkStatus(), out);
      });
      takes_.pop_front();
    }
  }

  void Cancel(int64_t id) {
    TakeDone done;
    std::vector<std::function<void()>> unblocked;
    {
      absl::MutexLock lock(&mu_);
      for (auto it = takes_.begin(); it != takes_.end(); ++it) {
        if (it->id != id) continue;
        done = std::move(it->done);
        takes_.erase(it);
        break;
      }
      if (!done) {
        cancelled_ids_.insert(id);
      } else {
        Flush(&unblocked);  // a take behind the cancelled one may be met now
      }
    }
    if (done) done(absl::CancelledError("TakeGrad operation was cancelled"), {});
    for (auto& f : unblocked) f();
  }

  const std::string name_;
  const DataType dtype_;
  const PartialShape shape_;
  const bool mean_;
  mutable absl::Mutex mu_;
  Tensor sum_ ABSL_GUARDED_BY(mu_);
  int32_t count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Take> takes_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<int64_t> cancelled_ids_ ABSL_GUARDED_BY(mu_);
};

class AccumulatorOp : public OpKernel {
 public:
  explicit AccumulatorOp(OpKernelConstruction* c) : OpKernel(c), resource_(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    std::string reduction;
    OP_REQUIRES_OK(c, c->GetAttr("reduction_type", &reduction));
    mean_ = reduction == "MEAN";
    auto shape = c->def().attr().find("shape");
    if (shape != c->def().attr().end()) {
      absl::StatusOr<PartialShape> s = PartialShape::FromProto(shape->second.shape());
      OP_REQUIRES_OK(c, s.status());
      shape_ = *std::move(s);
    }
    OP_REQUIRES(c, dtype_ == DT_HALF || dtype_ == DT_FLOAT || dtype_ == DT_DOUBLE,
                absl::UnimplementedError(absl::StrCat(
                    "ConditionalAccumulator ", name(), ": gradients of ", DataTypeString(dtype_),
                    " are not supported (half, float, double)")));
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    auto make = [this](const std::string& name) -> absl::StatusOr<std::shared_ptr<Accumulator>> {
      return std::make_shared<Accumulator>(name, dtype_, shape_, mean_);
    };
    Tensor handle;
    absl::StatusOr<std::shared_ptr<Accumulator>> acc = resource_.Get(ctx, make, &handle);
    OP_REQUIRES_OK(ctx, acc.status());
    OP_REQUIRES(ctx, (*acc)->dtype() == dtype_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shared accumulator '", resource_.name(), "' holds ",
                    DataTypeString((*acc)->dtype()), " gradients, not ", DataTypeString(dtype_))));
    ctx->set_output(0, handle);
  }

 private:
  DataType dtype_ = DT_FLOAT;
  PartialShape shape_;
  bool mean_ = true;
  SharedResource<Accumulator> resource_;
};

// The accumulator of input 0, or a failed context.
Accumulator* AccumulatorOf(OpKernelContext* ctx) {
  absl::StatusOr<Accumulator*> acc = ObjectOf<Accumulator>(ctx->input(0), "an accumulator");
  if (!acc.ok()) {
    ctx->SetStatus(acc.status());
    return nullptr;
  }
  return *acc;
}

int64_t ScalarInt64(const Tensor& t) { return t.flat<int64_t>()[0]; }

class ApplyGradientOp : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    Accumulator* acc = AccumulatorOf(ctx);
    if (acc == nullptr) return;
    const Tensor& grad = ctx->input(2);
    OP_REQUIRES(ctx, grad.dtype() == acc->dtype(),
                absl::InvalidArgumentError(absl::StrCat(
                    "the accumulator holds ", DataTypeString(acc->dtype()), " gradients, got ",
                    DataTypeString(grad.dtype()))));
    OP_REQUIRES(ctx, ctx->input(1).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "local_step must be scalar, but had shape ", ctx->input(1).shape().DebugString())));
    OP_REQUIRES_OK(ctx, acc->Apply(ScalarInt64(ctx->input(1)), grad));
  }
};

class SetGlobalStepOp : public OpKernel {
 public:
  explicit SetGlobalStepOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    Accumulator* acc = AccumulatorOf(ctx);
    if (acc == nullptr) return;
    OP_REQUIRES(ctx, ctx->input(1).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat("new_global_step must be scalar, but had shape ",
                                                        ctx->input(1).shape().DebugString())));
    acc->SetGlobalStep(ScalarInt64(ctx->input(1)));
  }
};

class NumAccumulatedOp : public OpKernel {
 public:
  explicit NumAccumulatedOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    Accumulator* acc = AccumulatorOf(ctx);
    if (acc == nullptr) return;
    ctx->set_output(0, Tensor::Scalar<int32_t>(acc->NumAccumulated()));
  }
};

class TakeGradientOp : public AsyncOpKernel {
 public:
  explicit TakeGradientOp(OpKernelConstruction* c) : AsyncOpKernel(c) { set_expensive(false); }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<Accumulator*> acc = ObjectOf<Accumulator>(ctx->input(0), "an accumulator");
    OP_REQUIRES_OK_ASYNC(ctx, acc.status(), done);
    const Tensor& required = ctx->input(1);
    OP_REQUIRES_ASYNC(ctx, required.dtype() == DT_INT32 && required.dims() == 0,
                      absl::InvalidArgumentError(absl::StrCat("num_required must be scalar, but had shape ",
                                                              required.shape().DebugString())),
                      done);
    const int32_t n = required.flat<int32_t>()[0];
    OP_REQUIRES_ASYNC(ctx, n >= 1,
                      absl::InvalidArgumentError(absl::StrCat(
                          "Argument num_required must be positive, but was ", n)),
                      done);
    OP_REQUIRES_ASYNC(ctx, (*acc)->dtype() == ctx->expected_output_dtype(0),
                      absl::InvalidArgumentError("the accumulator holds gradients of another dtype"),
                      done);
    (*acc)->TakeAsync(n, ctx->cancellation(), [ctx, done](absl::Status s, Tensor average) {
      if (s.ok()) {
        ctx->set_output(0, std::move(average));
      } else {
        ctx->SetStatus(s);
      }
      done();
    });
  }
};

REGISTER_KERNEL(KernelDefBuilder("ResourceConditionalAccumulator").Device(kDeviceCpu),
                AccumulatorOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorApplyGradient").Device(kDeviceCpu),
                ApplyGradientOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorSetGlobalStep").Device(kDeviceCpu),
                SetGlobalStepOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorNumAccumulated").Device(kDeviceCpu),
                NumAccumulatedOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorTakeGradient").Device(kDeviceCpu),
                TakeGradientOp);

}  // namespace
}  // namespace graphrun
