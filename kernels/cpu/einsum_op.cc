// Einsum on CPU (einsum_equation.h says what equations mean). One input:
// a single strided pass does the diagonal, the sums and the transpose. Two
// inputs: the labels split into batch (both inputs and the output),
// contracted (both inputs only), free (one input and the output) and
// private (one input only, summed first); each input is arranged as
// [batch, free, contracted] or [batch, contracted, free] and the product is
// a broadcast BatchGemm (gemm.h), then arranged as the output. Of the
// arrangements (which input is "a", the order of each label group, the
// transpose flags), the one that copies the fewest elements wins, so the
// equations of Keras' EinsumDense and MultiHeadAttention mostly run as one
// GEMM with no copy. half and bfloat16 compute in float.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/ops/einsum_equation.h"
#include "graph/tensor.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// One input as the kernel sees it: its labels (ellipses expanded, maybe
// repeated) and dims.
struct Operand {
  std::vector<int> labels;
  std::vector<int64_t> dims;

  int64_t Size() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  bool Has(int label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
  }
  // This input's size of `label`: 1 when absent (a broadcast dim it lacks).
  int64_t DimOf(int label) const {
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == label) return dims[i];
    }
    return 1;
  }
  // Sum of the strides of the axes labelled `label` (several: diagonal).
  int64_t StrideOf(int label) const {
    int64_t stride = 1, sum = 0;
    for (int i = static_cast<int>(labels.size()) - 1; i >= 0; --i) {
      if (labels[i] == label) sum += stride;
      stride *= dims[i];
    }
    return sum;
  }
  // Labels in order of first appearance.
  std::vector<int> Unique() const {
    std::vector<int> out;
    for (int l : labels) {
      if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
    return out;
  }
};

// The labels that change memory order: those of size > 1.
std::vector<int> Significant(const std::vector<int>& labels,
                             const std::vector<int64_t>& sizes) {
  std::vector<int> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (sizes[i] != 1) out.push_back(labels[i]);
  }
  return out;
}

// True if `x` laid out as `target` (unique labels, each in x or absent with
// size 1) needs a copy: a diagonal, a label to sum, or another order.
bool NeedsCopy(const Operand& x, const std::vector<int>& target) {
  std::vector<int64_t> target_dims;
  for (int l : target) target_dims.push_back(x.DimOf(l));
  const std::vector<int> want = Significant(target, target_dims);
  return Significant(x.labels, x.dims) != want;
}

// Gathers x as `target` into `out`, summing x's labels not in target.
template <typename T>
void Arrange(const OpKernelContext* ctx, const Operand& x, const T* in,
             const std::vector<int>& target, T* out) {
  std::vector<int64_t> dims, strides, reduce_dims, reduce_strides;
  for (int l : target) {
    dims.push_back(x.DimOf(l));
    strides.push_back(x.Has(l) ? x.StrideOf(l) : 0);
  }
  for (int l : x.Unique()) {
    if (std::find(target.begin(), target.end(), l) != target.end()) continue;
    reduce_dims.push_back(x.DimOf(l));
    reduce_strides.push_back(x.StrideOf(l));
  }
  cpu::StridedSum<T>(ctx, in, dims, strides, reduce_dims, reduce_strides, out);
}

std::vector<int> Concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

// The labels of `order` that satisfy `keep`, in that order.
template <typename Pred>
std::vector<int> Select(const std::vector<int>& order, Pred keep) {
  std::vector<int> out;
  for (int l : order) {
    if (keep(l)) out.push_back(l);
  }
  return out;
}

// How a two-input einsum runs: c = op(a) * op(b) over broadcast batches.
struct Plan {
  int a = 0;  // which input is the GEMM's a (the other is b)
  std::vector<int> a_layout, b_layout, out_layout;
  bool transpose_a = false, transpose_b = false;
  bool copy_a = false, copy_b = false, copy_out = false;
  // Label counts: batch, contracted, a's free and b's free.
  size_t num_batch = 0, num_k = 0, num_fa = 0, num_fb = 0;
  double cost = 0;
};

Plan ChoosePlan(const Operand (&in)[2], const std::vector<int>& output,
                const std::vector<int64_t>& label_sizes) {
  auto in_output = [&](int l) {
    return std::find(output.begin(), output.end(), l) != output.end();
  };
  auto broadcast = [](int l) { return l >= kFirstBroadcastLabel; };
  // Broadcast labels count as in both inputs (size 1 where missing).
  auto in_both = [&](int l) {
    return broadcast(l) || (in[0].Has(l) && in[1].Has(l));
  };
  const std::vector<int> batch =
      Select(output, [&](int l) { return in_both(l); });
  std::vector<int64_t> out_dims;
  for (int l : output) out_dims.push_back(label_sizes[l]);
  const double out_size = [&] {
    double n = 1;
    for (int64_t d : out_dims) n *= static_cast<double>(d);
    return n;
  }();
  Plan best;
  best.cost = -1;
  for (int a = 0; a < 2; ++a) {
    const Operand& x = in[a];
    const Operand& y = in[1 - a];
    const std::vector<int> xu = x.Unique(), yu = y.Unique();
    const auto contracted = [&](int l) { return in_both(l) && !in_output(l); };
    const std::array<std::vector<int>, 2> k_orders = {Select(xu, contracted),
                                                      Select(yu, contracted)};
    const auto free_x = [&](int l) { return x.Has(l) && !in_both(l) && in_output(l); };
    const auto free_y = [&](int l) { return y.Has(l) && !in_both(l) && in_output(l); };
    const std::array<std::vector<int>, 2> fx_orders = {Select(output, free_x),
                                                       Select(xu, free_x)};
    const std::array<std::vector<int>, 2> fy_orders = {Select(output, free_y),
                                                       Select(yu, free_y)};
    for (const auto& k : k_orders) {
      for (const auto& fx : fx_orders) {
        for (const auto& fy : fy_orders) {
          const std::vector<int> result = Concat({&batch, &fx, &fy});
          std::vector<int64_t> result_dims;
          for (int l : result) result_dims.push_back(label_sizes[l]);
          const bool copy_out =
              Significant(result, result_dims) != Significant(output, out_dims);
          for (int ta = 0; ta < 2; ++ta) {
            for (int tb = 0; tb < 2; ++tb) {
              Plan p;
              p.a = a;
              p.transpose_a = ta;
              p.transpose_b = tb;
              p.a_layout = ta ? Concat({&batch, &k, &fx}) : Concat({&batch, &fx, &k});
              p.b_layout = tb ? Concat({&batch, &fy, &k}) : Concat({&batch, &k, &fy});
              p.out_layout = result;
              p.copy_a = NeedsCopy(x, p.a_layout);
              p.copy_b = NeedsCopy(y, p.b_layout);
              p.copy_out = copy_out;
              p.num_batch = batch.size();
              p.num_k = k.size();
              p.num_fa = fx.size();
              p.num_fb = fy.size();
              p.cost = (p.copy_a ? x.Size() : 0) + (p.copy_b ? y.Size() : 0) +
                       (copy_out ? out_size : 0);
              if (best.cost < 0 || p.cost < best.cost) best = p;
            }
          }
        }
      }
    }
  }
  return best;
}

// The last plan a kernel chose and the operands it was chosen for: a
// graph's einsum sees the same shapes step after step, and choosing
// compares 64 arrangements. Thread-safe.
class PlanCache {
 public:
  std::shared_ptr<const Plan> Get(const Operand (&in)[2], const std::vector<int>& output,
                                  const std::vector<int64_t>& label_sizes) {
    {
      absl::MutexLock lock(&mu_);
      if (plan_ != nullptr && Same(in, output)) return plan_;
    }
    auto plan = std::make_shared<const Plan>(ChoosePlan(in, output, label_sizes));
    absl::MutexLock lock(&mu_);
    for (int i = 0; i < 2; ++i) {
      labels_[i] = in[i].labels;
      dims_[i] = in[i].dims;
    }
    output_ = output;
    plan_ = plan;
    return plan;
  }

 private:
  bool Same(const Operand (&in)[2], const std::vector<int>& output) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return output == output_ && in[0].labels == labels_[0] && in[0].dims == dims_[0] &&
           in[1].labels == labels_[1] && in[1].dims == dims_[1];
  }

  absl::Mutex mu_;
  std::vector<int> labels_[2] ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> dims_[2] ABSL_GUARDED_BY(mu_);
  std::vector<int> output_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Plan> plan_ ABSL_GUARDED_BY(mu_);
};

int64_t Product(const Operand& x, const std::vector<int>& labels, size_t begin,
                size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= x.DimOf(labels[i]);
  return n;
}

template <typename T>
absl::Status Contract(OpKernelContext* ctx, const Operand (&in)[2],
                      const T* const (&data)[2], const EinsumDims& r, PlanCache* plans,
                      T* out) {
  const std::shared_ptr<const Plan> chosen = plans->Get(in, r.output, r.label_sizes);
  const Plan& p = *chosen;
  const Operand& x = in[p.a];
  const Operand& y = in[1 - p.a];
  // Batch labels lead out_layout, then a's free labels, then b's.
  std::vector<int64_t> batch_x, batch_y;
  for (size_t i = 0; i < p.num_batch; ++i) {
    batch_x.push_back(x.DimOf(p.out_layout[i]));
    batch_y.push_back(y.DimOf(p.out_layout[i]));
  }
  const size_t fa = p.num_batch, fb = fa + p.num_fa;
  const int64_t m = Product(x, p.out_layout, fa, fb);
  const int64_t n = Product(y, p.out_layout, fb, fb + p.num_fb);
  const size_t k_begin = p.transpose_a ? p.num_batch : p.num_batch + p.num_fa;
  const int64_t k = Product(x, p.a_layout, k_begin, k_begin + p.num_k);
  const size_t nx = p.a_layout.size(), ny = p.b_layout.size();
  auto batch = BroadcastMatMulBatch(batch_x, batch_y);
  if (!batch.ok()) return batch.status();

  Tensor x_tmp, y_tmp, out_tmp;
  const T* xp = data[p.a];
  const T* yp = data[1 - p.a];
  const DataType dtype = DataTypeToEnum<T>::value;
  if (p.copy_a) {
    const int64_t size = Product(x, p.a_layout, 0, nx);
    absl::Status s = ctx->allocate_temp(dtype, TensorShape({size}), &x_tmp);
    if (!s.ok()) return s;
    Arrange(ctx, x, xp, p.a_layout, x_tmp.flat<T>().data());
    xp = x_tmp.flat<T>().data();
  }
  if (p.copy_b) {
    const int64_t size = Product(y, p.b_layout, 0, ny);
    absl::Status s = ctx->allocate_temp(dtype, TensorShape({size}), &y_tmp);
    if (!s.ok()) return s;
    Arrange(ctx, y, yp, p.b_layout, y_tmp.flat<T>().data());
    yp = y_tmp.flat<T>().data();
  }
  T* result = out;
  if (p.copy_out) {
    int64_t size = 1;
    for (int l : p.out_layout) size *= r.label_sizes[l];
    absl::Status s = ctx->allocate_temp(dtype, TensorShape({size}), &out_tmp);
    if (!s.ok()) return s;
    result = out_tmp.flat<T>().data();
  }
  BatchGemm<T>(ctx->device()->eigen_cpu_device(), p.transpose_a,
               p.transpose_b, m, n, k, xp, yp, *batch, result);
  if (p.copy_out) {
    Operand res;
    res.labels = p.out_layout;
    for (int l : p.out_layout) res.dims.push_back(r.label_sizes[l]);
    Arrange(ctx, res, static_cast<const T*>(result), r.output, out);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RunEinsum(OpKernelContext* ctx, const EinsumDims& r,
                       const std::vector<const T*>& data, PlanCache* plans, T* out) {
  Operand in[2];
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    in[i].labels = r.inputs[i];
    const Tensor& t = ctx->input(static_cast<int>(i));
    in[i].dims.assign(t.shape().dim_sizes().begin(),
                      t.shape().dim_sizes().end());
  }
  if (r.inputs.size() == 1) {
    Arrange(ctx, in[0], data[0], r.output, out);
    return absl::OkStatus();
  }
  // Labels one input has and the output lacks are summed by Arrange.
  const T* const ptrs[2] = {data[0], data[1]};
  return Contract<T>(ctx, in, ptrs, r, plans, out);
}

template <typename T>
class EinsumOp : public OpKernel {
 public:
  explicit EinsumOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string equation;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("equation", &equation));
    auto eq = ParseEinsumEquation(equation, num_inputs());
    OP_REQUIRES_OK(ctx, eq.status());
    equation_ = *std::move(eq);
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<std::vector<int64_t>> dims;
    for (int i = 0; i < num_inputs(); ++i) {
      auto d = ctx->input(i).shape().dim_sizes();
      dims.emplace_back(d.begin(), d.end());
    }
    auto resolved = ResolveEinsum(equation_, dims);
    OP_REQUIRES_OK(ctx, resolved.status());
    auto shape = TensorShape::FromDims(resolved->OutputDims());
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (shape->num_elements() == 0) return;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      std::vector<const T*> data;
      for (int i = 0; i < num_inputs(); ++i) {
        data.push_back(ctx->input(i).flat<T>().data());
      }
      OP_REQUIRES_OK(ctx, RunEinsum<T>(ctx, *resolved, data, &plans_,
                                       output->flat<T>().data()));
    } else {
      // 16-bit floats: widen, compute in float, round once.
      std::vector<Tensor> wide(num_inputs());
      std::vector<const float*> data;
      for (int i = 0; i < num_inputs(); ++i) {
        const Tensor& t = ctx->input(i);
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, t.shape(), &wide[i]));
        const T* src = t.flat<T>().data();
        float* dst = wide[i].flat<float>().data();
        for (int64_t j = 0; j < t.NumElements(); ++j) {
          dst[j] = static_cast<float>(src[j]);
        }
        data.push_back(dst);
      }
      Tensor result;
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, *shape, &result));
      OP_REQUIRES_OK(ctx, RunEinsum<float>(ctx, *resolved, data, &plans_,
                                           result.flat<float>().data()));
      const float* src = result.flat<float>().data();
      T* dst = output->flat<T>().data();
      for (int64_t j = 0; j < shape->num_elements(); ++j) {
        dst[j] = static_cast<T>(src[j]);
      }
    }
  }

 private:
  EinsumEquation equation_;
  PlanCache plans_;
};

#define GR_REGISTER_EINSUM(T)                                              \
  REGISTER_KERNEL(                                                         \
      KernelDefBuilder("Einsum").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      EinsumOp<T>)
GR_REGISTER_EINSUM(float);
GR_REGISTER_EINSUM(double);
GR_REGISTER_EINSUM(half);
GR_REGISTER_EINSUM(bfloat16);
#undef GR_REGISTER_EINSUM

}  // namespace
}  // namespace graphrun
