// What every optimizer update kernel shares (training_ops*.cc): finding the
// variables behind the DT_RESOURCE scalars their first inputs carry
// (kernels/variable.h), locking them in input order (var, then the
// accumulators), copying a value a read of this step still holds, checking
// hyperparameters and shapes with TensorFlow's messages, and running the
// element-wise update over the intra-op pool in ranges when the variable is
// big (each element's arithmetic is the same however the range is cut, so
// the result does not depend on the threads).
#ifndef GRAPHRUN_KERNELS_CPU_APPLY_OP_H_
#define GRAPHRUN_KERNELS_CPU_APPLY_OP_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"
#include "kernels/op_kernel.h"
#include "kernels/variable.h"

namespace graphrun {
namespace cpu {

// The hyperparameters' values as T, and the variables' tensors, for one
// update; the update function sees every variable locked and writable.
template <typename T>
struct Slots {
  std::vector<Tensor*> vars;  // var, then the accumulators
  std::vector<T> scalars;     // in input order, those after the gradient last
  const Tensor* grad = nullptr;
  const Tensor* indices = nullptr;  // the sparse forms' row indices
};

// The row indices of a sparse update as int64.
std::vector<int64_t> SparseRows(const Tensor& indices);

class ApplyOp : public OpKernel {
 public:
  // Inputs: `num_vars` variables, then `num_scalars` scalars, then the
  // gradient, then (sparse forms) the indices, then `num_trailing` more
  // scalars (Momentum's momentum comes after the gradient).
  ApplyOp(OpKernelConstruction* c, int num_vars, int num_scalars, int num_trailing = 0,
          bool sparse = false)
      : OpKernel(c),
        num_vars_(num_vars),
        num_scalars_(num_scalars),
        num_trailing_(num_trailing),
        sparse_(sparse) {
    resource_ = absl::StartsWith(type_string(), "Resource");
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
  }

 protected:
  // Updates elements [begin, end) of the dense forms; the sparse forms get
  // the whole range of gradient rows.
  template <typename T>
  using Update = std::function<void(const Slots<T>&, int64_t begin, int64_t end)>;

  // The update that runs `make(scalars)`'s step, a functor
  // (T* const* slots, int64_t element, T grad), on each element of the
  // range; Sparse: on each element of the gradient rows in the range, at
  // the variable's row its index names, in index order (so a repeated
  // index is applied twice, as TensorFlow applies it).
  template <typename T, typename Make>
  static Update<T> Dense(Make make) {
    return [make](const Slots<T>& s, int64_t begin, int64_t end) {
      T* v[kMaxSlots] = {nullptr, nullptr, nullptr, nullptr};
      for (size_t k = 0; k < s.vars.size(); ++k) v[k] = s.vars[k]->template flat<T>().data();
      DenseLoop(make(s.scalars.data()), v[0], v[1], v[2], v[3],
                s.grad->template flat<T>().data(), begin, end);
    };
  }
  // The variable, its slots and the gradient are distinct buffers (an
  // update holds each variable's lock and its own copy): with `restrict`,
  // and a step whose options are compile-time constants, the loop
  // vectorizes.
  template <typename T, typename Step>
  static void DenseLoop(const Step step, T* __restrict v0, T* __restrict v1, T* __restrict v2,
                        T* __restrict v3, const T* __restrict g, int64_t begin, int64_t end) {
    T* const v[kMaxSlots] = {v0, v1, v2, v3};
    for (int64_t i = begin; i < end; ++i) step(v, i, g[i]);
  }
  template <typename T, typename Make>
  static Update<T> Sparse(Make make) {
    return [make](const Slots<T>& s, int64_t begin, int64_t end) {
      T* v[kMaxSlots];
      for (size_t k = 0; k < s.vars.size(); ++k) v[k] = s.vars[k]->template flat<T>().data();
      const auto step = make(s.scalars.data());
      const T* g = s.grad->template flat<T>().data();
      const std::vector<int64_t> rows = SparseRows(*s.indices);
      const int64_t inner = rows.empty() ? 0 : s.grad->NumElements() / static_cast<int64_t>(rows.size());
      for (int64_t r = begin; r < end; ++r) {
        const int64_t at = rows[static_cast<size_t>(r)] * inner;
        for (int64_t j = 0; j < inner; ++j) step(v, at + j, g[r * inner + j]);
      }
    };
  }
  static constexpr int kMaxSlots = 4;

  template <typename T>
  void Run(OpKernelContext* ctx, const Update<T>& update) {
    Slots<T> slots;
    const int grad_index = num_vars_ + num_scalars_;
    const int first_trailing = grad_index + (sparse_ ? 2 : 1);
    for (int i = 0; i < num_scalars_ + num_trailing_; ++i) {
      const int input = i < num_scalars_ ? num_vars_ + i : first_trailing + i - num_scalars_;
      const Tensor& s = ctx->input(input);
      OP_REQUIRES(ctx, s.dims() == 0 && s.dtype() == dtype_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", input, " (a hyperparameter) is not a ", DataTypeString(dtype_),
                      " scalar: ", DataTypeString(s.dtype()), " ", s.shape().DebugString())));
      slots.scalars.push_back(s.scalar<T>());
    }
    slots.grad = &ctx->input(grad_index);
    if (sparse_) slots.indices = &ctx->input(grad_index + 1);
    std::vector<Var*> vars;
    for (int i = 0; i < num_vars_; ++i) {
      absl::StatusOr<Var*> var = VarOf(ctx->input(i), i == 0 ? "var" : "an accumulator");
      OP_REQUIRES_OK(ctx, var.status());
      OP_REQUIRES(ctx, (*var)->dtype() == dtype_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "variable ", (*var)->name(), " is ", DataTypeString((*var)->dtype()),
                      ", the update is ", DataTypeString(dtype_))));
      OP_REQUIRES_OK(ctx, CheckUpdatable(**var, resource_));
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
      GR_RETURN_IF_ERROR(CheckShapes(*slots, vars));
      if (sparse_) {
        update(*slots, 0, slots->grad->dims() == 0 ? 0 : slots->grad->dim_size(0));
      } else {
        RunRanges(ctx, *slots, update);
      }
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

  template <typename T>
  absl::Status CheckShapes(const Slots<T>& slots, const std::vector<Var*>& vars) const {
    const Tensor& var = *slots.vars[0];
    for (size_t i = 1; i < slots.vars.size(); ++i) {
      if (slots.vars[i]->shape() != var.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "var and ", vars[i]->name(), " do not have the same shape",
            var.shape().DebugString(), " ", slots.vars[i]->shape().DebugString()));
      }
    }
    if (slots.grad->dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grad is ", DataTypeString(slots.grad->dtype()), ", variable ", vars[0]->name(),
          " is ", DataTypeString(dtype_)));
    }
    if (!sparse_) {
      if (slots.grad->shape() != var.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "var and grad do not have the same shape", var.shape().DebugString(), " ",
            slots.grad->shape().DebugString(), " (variable ", vars[0]->name(), ")"));
      }
      return absl::OkStatus();
    }
    return CheckSparse(var, *slots.grad, *slots.indices, vars[0]->name());
  }

  // TensorFlow's checks of a sparse update: indices a vector, grad one row
  // per index with var's row shape, every index a row of var.
  absl::Status CheckSparse(const Tensor& var, const Tensor& grad, const Tensor& indices,
                           const std::string& name) const;

  template <typename T>
  void RunRanges(OpKernelContext* ctx, const Slots<T>& slots, const Update<T>& update) {
    const int64_t n = slots.vars[0]->NumElements();
    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    if (pool == nullptr || ctx->device()->intra_op_threads() <= 1 || n < kParallelElements) {
      update(slots, 0, n);
      return;
    }
    // One range per intra-op thread (whole cache lines each), on the
    // calling thread and the pool's (RunPieces: threads still about from
    // the gradient's product take them without a wake-up).
    const int pieces = static_cast<int>(std::min<int64_t>(
        ctx->device()->intra_op_threads(), (n + kParallelElements - 1) / kParallelElements));
    const int64_t step = ((n + pieces - 1) / pieces + 15) / 16 * 16;
    RunPieces(*pool, pieces, [&](int i) {
      const int64_t begin = std::min(n, i * step);
      update(slots, begin, std::min(n, begin + step));
    });
  }

 protected:
  const int num_vars_, num_scalars_, num_trailing_;
  const bool sparse_;
  bool resource_ = false;
  DataType dtype_ = DT_FLOAT;
};

}  // namespace cpu
}  // namespace graphrun

// Runs BODY<float> or BODY<double> by the op's T.
#define GR_APPLY_DISPATCH(ctx, BODY)                                          \
  switch (dtype_) {                                                           \
    case DT_FLOAT: Run<float>(ctx, BODY<float>()); break;                     \
    case DT_DOUBLE: Run<double>(ctx, BODY<double>()); break;                  \
    default:                                                                  \
      ctx->SetStatus(absl::UnimplementedError(absl::StrCat(                   \
          type_string(), " has no CPU kernel for ", DataTypeString(dtype_)))); \
  }

#endif  // GRAPHRUN_KERNELS_CPU_APPLY_OP_H_
