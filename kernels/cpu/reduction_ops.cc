// Sum, Mean, Prod, Max, Min, All and Any over `reduction_indices` on CPU, as
// TensorFlow's ReductionOp: axes may be negative, duplicates are an error,
// keep_dims keeps reduced dimensions as 1s, and an empty reduction gives the
// reducer's identity (0, 1, lowest/-inf, highest/+inf, true, false; NaN for
// the Mean of floating types).
//
// The input is viewed with size-1 dimensions dropped and adjacent kept or
// reduced dimensions merged; each run of reduced dimensions is then reduced
// by one Eigen pass over an [outer, reduced, inner] view, innermost run
// first. half and bfloat16 accumulate in float; Mean of integers sums in
// 64 bits and truncates, as TensorFlow.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Element counts above this run on the thread pool.
constexpr int64_t kThreadedMinElements = kParallelElements;

// What a reduction does to its input's shape.
struct ReductionPlan {
  TensorShape out_shape;
  // The input with size-1 dimensions dropped and neighbours of the same kind
  // merged: (size, reduced) runs, alternating.
  std::vector<std::pair<int64_t, bool>> runs;
};

template <typename Tidx>
absl::Status PlanReduction(const TensorShape& in, const Tensor& axes,
                           bool keep_dims, ReductionPlan* plan) {
  const int rank = in.dims();
  std::vector<bool> reduced(rank, false);
  for (Tidx axis : axes.flat<Tidx>()) {
    const int64_t a = static_cast<int64_t>(axis);
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction dimension ", a, " for input with ",
                       rank, " dimensions."));
    }
    const int index = static_cast<int>(a < 0 ? a + rank : a);
    if (reduced[index]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid reduction arguments: Axes contains duplicate dimension: ",
          index));
    }
    reduced[index] = true;
  }
  plan->out_shape = TensorShape();
  plan->runs.clear();
  for (int i = 0; i < rank; ++i) {
    const int64_t size = in.dim_size(i);
    if (!reduced[i]) {
      plan->out_shape.AddDim(size);
    } else if (keep_dims) {
      plan->out_shape.AddDim(1);
    }
    if (size == 1) continue;
    if (!plan->runs.empty() && plan->runs.back().second == reduced[i]) {
      plan->runs.back().first *= size;
    } else {
      plan->runs.emplace_back(size, reduced[i]);
    }
  }
  return absl::OkStatus();
}

// out[outer, inner] = reduce over r of in[outer, r, inner].
template <typename Acc, typename Reducer, typename Device>
void ReducePass(const Device& d, const Acc* in, int64_t outer, int64_t r,
                int64_t inner, Acc* out, const Reducer& reducer) {
  if (outer == 1 && inner == 1) {
    Eigen::IndexList<Eigen::type2index<0>> axis;
    TensorMap<Acc, 0>(out).device(d) = ConstTensorMap<Acc, 1>(in, r).reduce(axis, reducer);
  } else if (inner == 1) {
    Eigen::IndexList<Eigen::type2index<1>> axis;
    TensorMap<Acc, 1>(out, outer).device(d) =
        ConstTensorMap<Acc, 2>(in, outer, r).reduce(axis, reducer);
  } else {
    Eigen::IndexList<Eigen::type2index<1>> axis;
    TensorMap<Acc, 2>(out, outer, inner).device(d) =
        ConstTensorMap<Acc, 3>(in, outer, r, inner).reduce(axis, reducer);
  }
}

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kAll, kAny };

template <typename T>
constexpr bool kIsHalfLike =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// The type a reduction accumulates in.
template <typename T, ReduceKind K>
struct Accumulator {
  using type = std::conditional_t<
      kIsHalfLike<T>, float,
      std::conditional_t<K == ReduceKind::kMean && std::is_integral_v<T>,
                         std::conditional_t<std::is_signed_v<T>, int64_t,
                                            uint64_t>,
                         T>>;
};

template <typename Acc, ReduceKind K>
auto MakeReducer() {
  if constexpr (K == ReduceKind::kSum || K == ReduceKind::kMean) {
    return Eigen::internal::SumReducer<Acc>();
  } else if constexpr (K == ReduceKind::kProd) {
    return Eigen::internal::ProdReducer<Acc>();
  } else if constexpr (K == ReduceKind::kMax) {
    return Eigen::internal::MaxReducer<Acc, Eigen::PropagateNaN>();
  } else if constexpr (K == ReduceKind::kAll) {
    return Eigen::internal::AndReducer();
  } else if constexpr (K == ReduceKind::kAny) {
    return Eigen::internal::OrReducer();
  } else {
    return Eigen::internal::MinReducer<Acc, Eigen::PropagateNaN>();
  }
}

template <typename T, ReduceKind K>
class ReductionOp : public OpKernel {
 public:
  using Acc = typename Accumulator<T, K>::type;

  explicit ReductionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axes = ctx->input(1);
    ReductionPlan plan;
    if (axes.dtype() == DT_INT64) {
      OP_REQUIRES_OK(ctx, PlanReduction<int64_t>(input.shape(), axes,
                                                 keep_dims_, &plan));
    } else {
      OP_REQUIRES(ctx, axes.dtype() == DT_INT32,
                  absl::InvalidArgumentError(absl::StrCat(
                      "reduction_indices must be int32 or int64, got ",
                      DataTypeString(axes.dtype()))));
      OP_REQUIRES_OK(ctx, PlanReduction<int32_t>(input.shape(), axes,
                                                 keep_dims_, &plan));
    }
    const int64_t in_size = input.NumElements();
    const int64_t out_size = plan.out_shape.num_elements();
    bool reduces = false;
    for (const auto& run : plan.runs) reduces |= run.second;
    if (in_size > 0 && !reduces) {
      // Nothing is reduced (only size-1 axes): same values, new shape.
      auto reshaped = input.Reshaped(plan.out_shape);
      OP_REQUIRES_OK(ctx, reshaped.status());
      ctx->set_output(0, *std::move(reshaped));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan.out_shape, &out));
    if (out_size == 0) return;
    T* out_data = out->flat<T>().data();
    const auto reducer = MakeReducer<Acc, K>();
    if (in_size == 0) {
      std::fill(out_data, out_data + out_size, Identity(reducer));
      return;
    }

    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    const bool threaded = pool != nullptr && in_size > kThreadedMinElements;
    // The source of each pass; the first is the input (widened if needed).
    const Acc* src = nullptr;
    Tensor widened;
    if constexpr (std::is_same_v<T, Acc>) {
      src = input.flat<T>().data();
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<Acc>::value,
                                             TensorShape({in_size}), &widened));
      Convert(pool, threaded, input.flat<T>().data(), in_size,
              widened.flat<Acc>().data());
      src = widened.flat<Acc>().data();
    }
    std::vector<std::pair<int64_t, bool>> runs = plan.runs;
    Tensor buffers[2];
    int next = 0;
    while (true) {
      // The innermost reduced run.
      int g = static_cast<int>(runs.size()) - 1;
      while (g >= 0 && !runs[g].second) --g;
      if (g < 0) break;
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < g; ++i) outer *= runs[i].first;
      for (size_t i = g + 1; i < runs.size(); ++i) inner *= runs[i].first;
      bool last = true;
      for (int i = 0; i < g; ++i) last &= !runs[i].second;
      Acc* dst = nullptr;
      if (last && std::is_same_v<T, Acc>) {
        dst = reinterpret_cast<Acc*>(out_data);
      } else {
        Tensor& buf = buffers[next];
        next ^= 1;
        OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<Acc>::value,
                                               TensorShape({outer * inner}),
                                               &buf));
        dst = buf.flat<Acc>().data();
      }
      if (threaded && outer * runs[g].first * inner > kThreadedMinElements) {
        ReducePass(*pool, src, outer, runs[g].first, inner, dst, reducer);
      } else {
        ReducePass(Eigen::DefaultDevice(), src, outer, runs[g].first, inner,
                   dst, reducer);
      }
      src = dst;
      // Drop the run; merge the kept runs around it.
      runs.erase(runs.begin() + g);
      if (g > 0 && g < static_cast<int>(runs.size()) &&
          runs[g - 1].second == runs[g].second) {
        runs[g - 1].first *= runs[g].first;
        runs.erase(runs.begin() + g);
      }
    }
    // `src` holds out_size accumulated values (in `out` when Acc == T).
    if constexpr (K == ReduceKind::kMean) {
      const Acc count = static_cast<Acc>(in_size / out_size);
      TensorMap<T, 1> dst(out_data, out_size);
      ConstTensorMap<Acc, 1> sum(src, out_size);
      auto expr = (sum / sum.constant(count)).template cast<T>();
      if (threaded && out_size > kThreadedMinElements) {
        dst.device(*pool) = expr;
      } else {
        dst = expr;
      }
    } else if constexpr (!std::is_same_v<T, Acc>) {
      Convert(pool, threaded && out_size > kThreadedMinElements, src, out_size,
              out_data);
    }
  }

 private:
  template <typename Reducer>
  static T Identity(const Reducer& reducer) {
    if constexpr (K == ReduceKind::kMean &&
                  (kIsHalfLike<T> || std::is_floating_point_v<T>)) {
      return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
    } else if constexpr (K == ReduceKind::kMean) {
      return T(0);
    } else {
      return static_cast<T>(reducer.initialize());
    }
  }

  template <typename To, typename From>
  static void Convert(const Eigen::ThreadPoolDevice* pool, bool threaded,
                      const From* in, int64_t n, To* out) {
    ConstTensorMap<From, 1> src(in, n);
    TensorMap<To, 1> dst(out, n);
    if (threaded) {
      dst.device(*pool) = src.template cast<To>();
    } else {
      dst = src.template cast<To>();
    }
  }

  bool keep_dims_ = false;
};

#define GR_REGISTER_REDUCTION(OP, KIND, T)                             \
  REGISTER_KERNEL(                                                     \
      KernelDefBuilder(OP).Device(kDeviceCpu).TypeConstraint<T>("T"),  \
      ReductionOp<T, ReduceKind::KIND>)
#define GR_REGISTER_REAL(T)                       \
  GR_REGISTER_REDUCTION("Sum", kSum, T);          \
  GR_REGISTER_REDUCTION("Mean", kMean, T);        \
  GR_REGISTER_REDUCTION("Prod", kProd, T);        \
  GR_REGISTER_REDUCTION("Max", kMax, T);          \
  GR_REGISTER_REDUCTION("Min", kMin, T)
#define GR_REGISTER_COMPLEX(T)                    \
  GR_REGISTER_REDUCTION("Sum", kSum, T);          \
  GR_REGISTER_REDUCTION("Mean", kMean, T);        \
  GR_REGISTER_REDUCTION("Prod", kProd, T)
GR_REGISTER_REAL(float);
GR_REGISTER_REAL(double);
GR_REGISTER_REAL(half);
GR_REGISTER_REAL(bfloat16);
GR_REGISTER_REAL(int8_t);
GR_REGISTER_REAL(uint8_t);
GR_REGISTER_REAL(int16_t);
GR_REGISTER_REAL(uint16_t);
GR_REGISTER_REAL(int32_t);
GR_REGISTER_REAL(uint32_t);
GR_REGISTER_REAL(int64_t);
GR_REGISTER_REAL(uint64_t);
GR_REGISTER_COMPLEX(complex64);
GR_REGISTER_COMPLEX(complex128);
// All and Any have no "T" attr: their input is always bool.
REGISTER_KERNEL(KernelDefBuilder("All").Device(kDeviceCpu),
                ReductionOp<bool, ReduceKind::kAll>);
REGISTER_KERNEL(KernelDefBuilder("Any").Device(kDeviceCpu),
                ReductionOp<bool, ReduceKind::kAny>);
#undef GR_REGISTER_COMPLEX
#undef GR_REGISTER_REAL
#undef GR_REGISTER_REDUCTION

}  // namespace
}  // namespace graphrun
