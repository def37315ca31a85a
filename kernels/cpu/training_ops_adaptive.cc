// CPU kernels of the optimizer updates with per-element rates
// (graph/ops/training_ops_adaptive.cc): Adagrad (with and without
// epsilon), Adadelta, RMSProp and centered RMSProp, in their ref (Apply*)
// and resource (ResourceApply*) forms, dense and sparse, for float and
// double. TensorFlow's arithmetic in TensorFlow's order
// (core/kernels/training_ops.cc), built with -ffp-contract=off; where
// TensorFlow's sparse kernel orders an expression differently from its
// dense one, so does the sparse step here. A reciprocal square root is
// 1 / sqrt (correctly rounded), where TensorFlow's vectorized Eigen may
// use an approximation refined by a Newton step: those results agree with
// TensorFlow's to a few ulps, not bit for bit.
#include <cmath>

#include "kernels/cpu/apply_op.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace cpu {
namespace {

template <typename T>
T Rsqrt(T x) {
  return T(1) / std::sqrt(x);
}

// accum += g * g (when update_slots); var -= g * lr * rsqrt(accum), or
// with epsilon (V2) var -= g * lr / (sqrt(accum) + epsilon). Scalars: lr
// [, epsilon].
template <typename T>
struct AdagradStep {
  AdagradStep(const T* s, bool update_slots, bool v2)
      : lr(s[0]), epsilon(v2 ? s[1] : T(0)), update_slots(update_slots), v2(v2) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    if (update_slots) accum += g * g;
    if (v2) {
      v[0][i] -= g * lr / (std::sqrt(accum) + epsilon);
    } else {
      v[0][i] -= g * lr * Rsqrt(accum);
    }
  }
  T lr, epsilon;
  bool update_slots, v2;
};

// TensorFlow's sparse Adagrad scales lr * g.
template <typename T>
struct SparseAdagradStep : AdagradStep<T> {
  using AdagradStep<T>::AdagradStep;
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    if (this->update_slots) accum += g * g;
    if (this->v2) {
      v[0][i] -= this->lr * g / (std::sqrt(accum) + this->epsilon);
    } else {
      v[0][i] -= this->lr * g * Rsqrt(accum);
    }
  }
};

// accum = accum * rho + g * g * (1 - rho);
// update = sqrt(accum_update + epsilon) * rsqrt(accum + epsilon) * g;
// var -= update * lr;
// accum_update = accum_update * rho + update * update * (1 - rho).
// Scalars: lr, rho, epsilon.
template <typename T>
struct AdadeltaStep {
  explicit AdadeltaStep(const T* s) : lr(s[0]), rho(s[1]), one_minus_rho(T(1) - s[1]), epsilon(s[2]) {}
  void operator()(T* const* v, int64_t i, T g) const {
    T& accum = v[1][i];
    T& accum_update = v[2][i];
    accum = accum * rho + g * g * one_minus_rho;
    const T update = std::sqrt(accum_update + epsilon) * Rsqrt(accum + epsilon) * g;
    v[0][i] -= update * lr;
    accum_update = accum_update * rho + update * update * one_minus_rho;
  }
  T lr, rho, one_minus_rho, epsilon;
};

// ms += (g * g - ms) * (1 - rho); centered: mg += (g - mg) * (1 - rho) and
// the denominator is sqrt((ms - mg * mg) + epsilon), else sqrt(ms +
// epsilon); mom = mom * momentum + g * lr / denominator; var -= mom.
// Slots: var, [mg,] ms, mom. Scalars: lr, rho, momentum, epsilon.
template <typename T>
struct RmsPropStep {
  RmsPropStep(const T* s, bool centered)
      : lr(s[0]), rho(s[1]), one_minus_rho(T(1) - s[1]), momentum(s[2]), epsilon(s[3]),
        centered(centered) {}
  void operator()(T* const* v, int64_t i, T g) const {
    const int at = centered ? 2 : 1;
    T& ms = v[at][i];
    T& mom = v[at + 1][i];
    ms += (g * g - ms) * one_minus_rho;
    T denominator;
    if (centered) {
      T& mg = v[1][i];
      mg += (g - mg) * one_minus_rho;
      denominator = (ms - mg * mg) + epsilon;
    } else {
      denominator = ms + epsilon;
    }
    mom = mom * momentum + (g * lr) / std::sqrt(denominator);
    v[0][i] -= mom;
  }
  T lr, rho, one_minus_rho, momentum, epsilon;
  bool centered;
};

// TensorFlow's sparse RMSProp: ms = ms * rho + g * g * (1 - rho), and the
// step is rsqrt(denominator) * lr * g, the centered denominator
// (ms + epsilon) - mg * mg.
template <typename T>
struct SparseRmsPropStep : RmsPropStep<T> {
  using RmsPropStep<T>::RmsPropStep;
  void operator()(T* const* v, int64_t i, T g) const {
    const int at = this->centered ? 2 : 1;
    T& ms = v[at][i];
    T& mom = v[at + 1][i];
    ms = ms * this->rho + g * g * this->one_minus_rho;
    T denominator;
    if (this->centered) {
      T& mg = v[1][i];
      mg = mg * this->rho + g * this->one_minus_rho;
      denominator = (ms + this->epsilon) - mg * mg;
    } else {
      denominator = ms + this->epsilon;
    }
    mom = mom * this->momentum + Rsqrt(denominator) * this->lr * g;
    v[0][i] -= mom;
  }
};

// Adagrad: var, accum, lr, [epsilon,] grad, [indices].
template <template <typename> class Step, bool kV2, bool kSparse>
class AdagradOp : public ApplyOp {
 public:
  explicit AdagradOp(OpKernelConstruction* c) : ApplyOp(c, 2, kV2 ? 2 : 1, 0, kSparse) {
    OP_REQUIRES_OK(c, c->GetAttr("update_slots", &update_slots_));
  }
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    const bool update_slots = update_slots_;
    auto make = [update_slots](const T* s) { return Step<T>(s, update_slots, kV2); };
    return kSparse ? Sparse<T>(make) : Dense<T>(make);
  }
  bool update_slots_ = true;
};

class AdadeltaOp : public ApplyOp {
 public:
  explicit AdadeltaOp(OpKernelConstruction* c) : ApplyOp(c, 3, 3) {}
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    return Dense<T>([](const T* s) { return AdadeltaStep<T>(s); });
  }
};

// RMSProp: var, [mg,] ms, mom, lr, rho, momentum, epsilon, grad, [indices].
template <template <typename> class Step, bool kCentered, bool kSparse>
class RmsPropOp : public ApplyOp {
 public:
  explicit RmsPropOp(OpKernelConstruction* c) : ApplyOp(c, kCentered ? 4 : 3, 4, 0, kSparse) {}
  void Compute(OpKernelContext* ctx) override { GR_APPLY_DISPATCH(ctx, Body); }

 private:
  template <typename T>
  Update<T> Body() {
    auto make = [](const T* s) { return Step<T>(s, kCentered); };
    return kSparse ? Sparse<T>(make) : Dense<T>(make);
  }
};

#define GR_REGISTER_BOTH_FORMS(NAME, ...)                                      \
  REGISTER_KERNEL(KernelDefBuilder(NAME).Device(kDeviceCpu), __VA_ARGS__);    \
  REGISTER_KERNEL(KernelDefBuilder("Resource" NAME).Device(kDeviceCpu), __VA_ARGS__)

using Adagrad = AdagradOp<AdagradStep, false, false>;
using AdagradV2 = AdagradOp<AdagradStep, true, false>;
using SparseAdagrad = AdagradOp<SparseAdagradStep, false, true>;
using SparseAdagradV2 = AdagradOp<SparseAdagradStep, true, true>;
using RmsProp = RmsPropOp<RmsPropStep, false, false>;
using CenteredRmsProp = RmsPropOp<RmsPropStep, true, false>;
using SparseRmsProp = RmsPropOp<SparseRmsPropStep, false, true>;
using SparseCenteredRmsProp = RmsPropOp<SparseRmsPropStep, true, true>;

GR_REGISTER_BOTH_FORMS("ApplyAdagrad", Adagrad);
GR_REGISTER_BOTH_FORMS("ApplyAdagradV2", AdagradV2);
GR_REGISTER_BOTH_FORMS("SparseApplyAdagrad", SparseAdagrad);
GR_REGISTER_BOTH_FORMS("SparseApplyAdagradV2", SparseAdagradV2);
GR_REGISTER_BOTH_FORMS("ApplyAdadelta", AdadeltaOp);
GR_REGISTER_BOTH_FORMS("ApplyRMSProp", RmsProp);
GR_REGISTER_BOTH_FORMS("ApplyCenteredRMSProp", CenteredRmsProp);
GR_REGISTER_BOTH_FORMS("SparseApplyRMSProp", SparseRmsProp);
GR_REGISTER_BOTH_FORMS("SparseApplyCenteredRMSProp", SparseCenteredRmsProp);

#undef GR_REGISTER_BOTH_FORMS

}  // namespace
}  // namespace cpu
}  // namespace graphrun
