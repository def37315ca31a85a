// CPU kernels of the optimizer updates (graph/ops/training_ops.cc): plain
// SGD, momentum (Nesterov too) and Adam (Nesterov too), each in its ref
// (Apply*) and resource (ResourceApply*) form, for float and double. The
// arithmetic is TensorFlow's, evaluated in TensorFlow's order
// (core/kernels/training_ops.cc, the CPU functors), with no contraction
// into fused multiply-adds (this target is built with -ffp-contract=off),
// so each step's values are TensorFlow's bit for bit.
//
// Both forms reach their variables through the DT_RESOURCE scalar their
// first inputs carry (kernels/variable.h). Updates run in place, under each
// variable's lock taken in input order (var, then the accumulators), after
// copying a value that a read of this step still holds.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/variable.h"

namespace graphrun {
namespace {

// The hyperparameters' values as T, and the variables' tensors, for one
// update; the update function sees every variable locked and writable.
template <typename T>
struct Slots {
  std::vector<Tensor*> vars;  // var, then the accumulators
  std::vector<T> scalars;     // in input order
  const Tensor* grad = nullptr;
};

class ApplyOp : public OpKernel {
 public:
  // `num_vars` variables at inputs 0.., then `num_scalars` scalars, then
  // the gradient.
  ApplyOp(OpKernelConstruction* c, int num_vars, int num_scalars)
      : OpKernel(c), num_vars_(num_vars), num_scalars_(num_scalars) {
    resource_ = absl::StartsWith(type_string(), "Resource");
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
  }

 protected:
  template <typename T>
  using Update = std::function<void(const Slots<T>&, int64_t n)>;

  // Locks the variables in order, checks shapes, and runs `update`.
  template <typename T>
  void Run(OpKernelContext* ctx, const Update<T>& update) {
    Slots<T> slots;
    for (int i = 0; i < num_scalars_; ++i) {
      const Tensor& s = ctx->input(num_vars_ + i);
      OP_REQUIRES(ctx, s.dims() == 0 && s.dtype() == dtype_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", num_vars_ + i, " (a hyperparameter) is not a ",
                      DataTypeString(dtype_), " scalar: ", DataTypeString(s.dtype()), " ",
                      s.shape().DebugString())));
      slots.scalars.push_back(s.scalar<T>());
    }
    slots.grad = &ctx->input(num_vars_ + num_scalars_);
    std::vector<Var*> vars;
    for (int i = 0; i < num_vars_; ++i) {
      absl::StatusOr<Var*> var = VarOf(ctx->input(i), i == 0 ? "var" : "an accumulator");
      OP_REQUIRES_OK(ctx, var.status());
      OP_REQUIRES(ctx, (*var)->dtype() == dtype_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "variable ", (*var)->name(), " is ", DataTypeString((*var)->dtype()),
                      ", the update is ", DataTypeString(dtype_))));
      vars.push_back(*var);
    }
    OP_REQUIRES_OK(ctx, Nest(ctx, vars, 0, &slots, update));
    if (!resource_) ctx->set_output(0, ctx->input(0));
  }

 private:
  template <typename T>
  absl::Status Nest(OpKernelContext* ctx, const std::vector<Var*>& vars, size_t k,
                    Slots<T>* slots, const Update<T>& update) {
    if (k == vars.size()) {
      const Tensor& var = *slots->vars[0];
      for (size_t i = 0; i < slots->vars.size(); ++i) {
        if (slots->vars[i]->shape() != var.shape()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "var and ", vars[i]->name(), " do not have the same shape",
              var.shape().DebugString(), " ", slots->vars[i]->shape().DebugString()));
        }
      }
      if (slots->grad->shape() != var.shape() || slots->grad->dtype() != dtype_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "var and grad do not have the same shape", var.shape().DebugString(), " ",
            slots->grad->shape().DebugString(), " (variable ", vars[0]->name(), ")"));
      }
      update(*slots, var.NumElements());
      return absl::OkStatus();
    }
    Var* var = vars[k];
    const std::string uninitialized =
        resource_ ? UninitializedResourceMessage(*var) : UninitializedRefMessage(*var);
    return var->Update(uninitialized, ctx->device()->allocator(), [&](Tensor* t) {
      slots->vars.push_back(t);
      absl::Status s = Nest(ctx, vars, k + 1, slots, update);
      slots->vars.pop_back();
      return s;
    });
  }

 protected:
  const int num_vars_, num_scalars_;
  bool resource_ = false;
  DataType dtype_ = DT_FLOAT;
};

#define GR_APPLY_DISPATCH(ctx, BODY)                                          \
  switch (dtype_) {                                                           \
    case DT_FLOAT: Run<float>(ctx, BODY<float>()); break;                     \
    case DT_DOUBLE: Run<double>(ctx, BODY<double>()); break;                  \
    default:                                                                  \
      ctx->SetStatus(absl::UnimplementedError(absl::StrCat(                   \
          type_string(), " has no CPU kernel for ", DataTypeString(dtype_)))); \
  }

// var -= delta * alpha
class GradientDescentOp : public ApplyOp {
 public:
  explicit GradientDescentOp(OpKernelConstruction* c) : ApplyOp(c, 1, 1) {}
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  static Update<T> Body() {
    return [](const Slots<T>& s, int64_t n) {
      T* var = s.vars[0]->template flat<T>().data();
      const T* delta = s.grad->template flat<T>().data();
      const T alpha = s.scalars[0];
      for (int64_t i = 0; i < n; ++i) var[i] -= delta[i] * alpha;
    };
  }
};

// accum = accum * momentum + grad; var -= accum * lr, or with Nesterov
// var -= grad * lr + accum * momentum * lr. Inputs: var, accum, lr, grad,
// momentum (momentum after the gradient, as TensorFlow orders them).
class MomentumOp : public ApplyOp {
 public:
  explicit MomentumOp(OpKernelConstruction* c) : ApplyOp(c, 2, 1) {
    OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &nesterov_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& momentum = ctx->input(4);
    OP_REQUIRES(ctx, momentum.dims() == 0 && momentum.dtype() == dtype_,
                absl::InvalidArgumentError(absl::StrCat(
                    "momentum is not a scalar: ", momentum.shape().DebugString())));
    momentum_ = &momentum;
    GR_APPLY_DISPATCH(ctx, Body);
  }

 private:
  template <typename T>
  Update<T> Body() {
    const T momentum = momentum_->scalar<T>();
    const bool nesterov = nesterov_;
    return [momentum, nesterov](const Slots<T>& s, int64_t n) {
      T* var = s.vars[0]->template flat<T>().data();
      T* accum = s.vars[1]->template flat<T>().data();
      const T* grad = s.grad->template flat<T>().data();
      const T lr = s.scalars[0];
      for (int64_t i = 0; i < n; ++i) {
        accum[i] = accum[i] * momentum + grad[i];
        if (nesterov) {
          var[i] -= grad[i] * lr + accum[i] * momentum * lr;
        } else {
          var[i] -= accum[i] * lr;
        }
      }
    };
  }
  bool nesterov_ = false;
  const Tensor* momentum_ = nullptr;  // set by Compute for Body
};

// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m += (g - m) * (1 - beta1); v += (g * g - v) * (1 - beta2);
// var -= m * alpha / (sqrt(v) + epsilon), or with Nesterov
// var -= (g * (1 - beta1) + beta1 * m) * alpha / (sqrt(v) + epsilon).
class AdamOp : public ApplyOp {
 public:
  explicit AdamOp(OpKernelConstruction* c) : ApplyOp(c, 3, 6) {
    OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &nesterov_));
  }
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    const bool nesterov = nesterov_;
    return [nesterov](const Slots<T>& s, int64_t n) {
      T* var = s.vars[0]->template flat<T>().data();
      T* m = s.vars[1]->template flat<T>().data();
      T* v = s.vars[2]->template flat<T>().data();
      const T* g = s.grad->template flat<T>().data();
      const T beta1_power = s.scalars[0], beta2_power = s.scalars[1], lr = s.scalars[2];
      const T beta1 = s.scalars[3], beta2 = s.scalars[4], epsilon = s.scalars[5];
      const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
      const T one_minus_beta1 = T(1) - beta1, one_minus_beta2 = T(1) - beta2;
      for (int64_t i = 0; i < n; ++i) {
        m[i] += (g[i] - m[i]) * one_minus_beta1;
        v[i] += (g[i] * g[i] - v[i]) * one_minus_beta2;
        if (nesterov) {
          var[i] -= ((g[i] * one_minus_beta1 + beta1 * m[i]) * alpha) / (std::sqrt(v[i]) + epsilon);
        } else {
          var[i] -= (m[i] * alpha) / (std::sqrt(v[i]) + epsilon);
        }
      }
    };
  }
  bool nesterov_ = false;
};

#undef GR_APPLY_DISPATCH

REGISTER_KERNEL(KernelDefBuilder("ApplyGradientDescent").Device(kDeviceCpu), GradientDescentOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceApplyGradientDescent").Device(kDeviceCpu),
                GradientDescentOp);
REGISTER_KERNEL(KernelDefBuilder("ApplyMomentum").Device(kDeviceCpu), MomentumOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceApplyMomentum").Device(kDeviceCpu), MomentumOp);
REGISTER_KERNEL(KernelDefBuilder("ApplyAdam").Device(kDeviceCpu), AdamOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdam").Device(kDeviceCpu), AdamOp);

}  // namespace
}  // namespace graphrun
