// CPU kernels of the optimizer updates with momentum and first moments
// (graph/ops/training_ops.cc): plain SGD, momentum (Nesterov too), Keras's
// momentum, Adam (Nesterov too), Adam with AMSGrad and AdaMax, in their ref
// (Apply*) and resource (ResourceApply*) forms, for float and double, and
// the sparse momentum updates. The arithmetic is TensorFlow's, evaluated in
// TensorFlow's order (core/kernels/training_ops.cc, the CPU functors), with
// no contraction into fused multiply-adds (this target is built with
// -ffp-contract=off), so each step's values are TensorFlow's bit for bit.
// The adaptive-rate updates (Adagrad, Adadelta, RMSProp) are in
// training_ops_adaptive.cc; both share apply_op.h.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/apply_op.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace cpu {
namespace {

// var -= delta * alpha
template <typename T>
struct GradientDescentStep {
  explicit GradientDescentStep(const T* s) : alpha(s[0]) {}
  void operator()(T* const* v, int64_t i, T g) const { v[0][i] -= g * alpha; }
  T alpha;
};

// accum = accum * momentum + grad; var -= accum * lr, or with Nesterov
// var -= grad * lr + accum * momentum * lr. Scalars: lr, momentum (after
// the gradient, as TensorFlow orders the inputs).
template <typename T, bool kNesterov>
struct MomentumStep {
  explicit MomentumStep(const T* s) : lr(s[0]), momentum(s[1]) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    accum = accum * momentum + g;
    if constexpr (kNesterov) {
      v[0][i] -= g * lr + accum * momentum * lr;
    } else {
      v[0][i] -= accum * lr;
    }
  }
  T lr, momentum;
};

// The sparse form's Nesterov step groups lr * momentum first, as
// TensorFlow's sparse kernel does.
template <typename T, bool kNesterov>
struct SparseMomentumStep : MomentumStep<T, kNesterov> {
  using MomentumStep<T, kNesterov>::MomentumStep;
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    accum = accum * this->momentum + g;
    if constexpr (kNesterov) {
      v[0][i] -= this->lr * g + this->lr * this->momentum * accum;
    } else {
      v[0][i] -= this->lr * accum;
    }
  }
};

// Keras's form: accum = accum * momentum - grad * lr; var += accum, or with
// Nesterov var += accum * momentum - grad * lr.
template <typename T, bool kNesterov>
struct KerasMomentumStep {
  explicit KerasMomentumStep(const T* s) : lr(s[0]), momentum(s[1]) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    accum = accum * momentum - g * lr;
    if constexpr (kNesterov) {
      v[0][i] += accum * momentum - g * lr;
    } else {
      v[0][i] += accum;
    }
  }
  T lr, momentum;
};

// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m += (g - m) * (1 - beta1); v += (g * g - v) * (1 - beta2);
// var -= m * alpha / (sqrt(v) + epsilon), or with Nesterov
// var -= (g * (1 - beta1) + beta1 * m) * alpha / (sqrt(v) + epsilon).
// With AMSGrad (a fourth slot vhat): vhat = max(vhat, v), and vhat stands
// for v in the denominator. Scalars: beta1_power, beta2_power, lr, beta1,
// beta2, epsilon.
template <typename T, bool kNesterov, bool kAmsgrad>
struct AdamStep {
  explicit AdamStep(const T* s)
      : alpha(s[2] * std::sqrt(T(1) - s[1]) / (T(1) - s[0])),
        beta1(s[3]),
        one_minus_beta1(T(1) - s[3]),
        one_minus_beta2(T(1) - s[4]),
        epsilon(s[5]) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& m = v[1][i];
    T& second = v[2][i];
    m += (g - m) * one_minus_beta1;
    second += (g * g - second) * one_minus_beta2;
    if constexpr (kAmsgrad) {
      T& vhat = v[3][i];
      vhat = std::max(vhat, second);
      v[0][i] -= (m * alpha) / (std::sqrt(vhat) + epsilon);
    } else if constexpr (kNesterov) {
      v[0][i] -= ((g * one_minus_beta1 + beta1 * m) * alpha) / (std::sqrt(second) + epsilon);
    } else {
      v[0][i] -= (m * alpha) / (std::sqrt(second) + epsilon);
    }
  }
  T alpha, beta1, one_minus_beta1, one_minus_beta2, epsilon;
};

// m += (g - m) * (1 - beta1); v = max(beta2 * v, |g|);
// var -= lr / (1 - beta1_power) * (m / (v + epsilon)). Scalars:
// beta1_power, lr, beta1, beta2, epsilon.
template <typename T>
struct AdaMaxStep {
  explicit AdaMaxStep(const T* s)
      : rate(s[1] / (T(1) - s[0])), one_minus_beta1(T(1) - s[2]), beta2(s[3]), epsilon(s[4]) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& m = v[1][i];
    T& u = v[2][i];
    m += (g - m) * one_minus_beta1;
    u = std::max(beta2 * u, std::abs(g));
    v[0][i] -= rate * (m / (u + epsilon));
  }
  T rate, one_minus_beta1, beta2, epsilon;
};

class GradientDescentOp : public ApplyOp {
 public:
  explicit GradientDescentOp(OpKernelConstruction* c) : ApplyOp(c, 1, 1) {}
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    return this->template Dense<T>([](const T* s) { return GradientDescentStep<T>(s); });
  }
};

// ApplyMomentum, ResourceApplyKerasMomentum and their sparse forms: var,
// accum, lr, grad, [indices,] momentum.
template <template <typename, bool> class Step>
class MomentumOp : public ApplyOp {
 public:
  MomentumOp(OpKernelConstruction* c, bool sparse) : ApplyOp(c, 2, 1, 1, sparse) {
    OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &nesterov_));
  }
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T, bool kNesterov>
  Update<T> With() {
    auto make = [](const T* s) { return Step<T, kNesterov>(s); };
    return this->sparse_ ? this->template Sparse<T>(make) : this->template Dense<T>(make);
  }
  template <typename T>
  Update<T> Body() {
    return nesterov_ ? With<T, true>() : With<T, false>();
  }
  bool nesterov_ = false;
};

template <template <typename, bool> class Step>
struct DenseMomentumOp : MomentumOp<Step> {
  explicit DenseMomentumOp(OpKernelConstruction* c) : MomentumOp<Step>(c, false) {}
};
template <template <typename, bool> class Step>
struct SparseMomentumOp : MomentumOp<Step> {
  explicit SparseMomentumOp(OpKernelConstruction* c) : MomentumOp<Step>(c, true) {}
};

// Adam: var, m, v, 6 scalars, grad; with AMSGrad a fourth slot, vhat.
class AdamOp : public ApplyOp {
 public:
  explicit AdamOp(OpKernelConstruction* c) : ApplyOp(c, VarsOf(c), 6) {
    amsgrad_ = num_vars_ == 4;
    if (!amsgrad_) OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &nesterov_));
  }
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  static int VarsOf(OpKernelConstruction* c) {
    return c->def().op() == "ResourceApplyAdamWithAmsgrad" ? 4 : 3;
  }
  template <typename T, bool kNesterov, bool kAmsgrad>
  Update<T> With() {
    return this->template Dense<T>(
        [](const T* s) { return AdamStep<T, kNesterov, kAmsgrad>(s); });
  }
  template <typename T>
  Update<T> Body() {
    if (amsgrad_) return With<T, false, true>();
    return nesterov_ ? With<T, true, false>() : With<T, false, false>();
  }
  bool nesterov_ = false, amsgrad_ = false;
};

class AdaMaxOp : public ApplyOp {
 public:
  explicit AdaMaxOp(OpKernelConstruction* c) : ApplyOp(c, 3, 5) {}
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    return this->template Dense<T>([](const T* s) { return AdaMaxStep<T>(s); });
  }
};

#define GR_REGISTER_BOTH_FORMS(NAME, KERNEL)                                         \
  REGISTER_KERNEL(KernelDefBuilder(NAME).Device(kDeviceCpu), KERNEL);               \
  REGISTER_KERNEL(KernelDefBuilder("Resource" NAME).Device(kDeviceCpu), KERNEL)

GR_REGISTER_BOTH_FORMS("ApplyGradientDescent", GradientDescentOp);
GR_REGISTER_BOTH_FORMS("ApplyMomentum", DenseMomentumOp<MomentumStep>);
GR_REGISTER_BOTH_FORMS("SparseApplyMomentum", SparseMomentumOp<SparseMomentumStep>);
GR_REGISTER_BOTH_FORMS("ApplyAdam", AdamOp);
GR_REGISTER_BOTH_FORMS("ApplyAdaMax", AdaMaxOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdamWithAmsgrad").Device(kDeviceCpu), AdamOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceApplyKerasMomentum").Device(kDeviceCpu),
                DenseMomentumOp<KerasMomentumStep>);
REGISTER_KERNEL(KernelDefBuilder("ResourceSparseApplyKerasMomentum").Device(kDeviceCpu),
                SparseMomentumOp<KerasMomentumStep>);

#undef GR_REGISTER_BOTH_FORMS

}  // namespace
}  // namespace cpu
}  // namespace graphrun
