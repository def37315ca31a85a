// CPU kernels that order or accumulate along one dim: Cumsum and Cumprod
// (exclusive and reverse variants) and TopKV2 (the k largest of the last
// dim, largest first, ties to the lower index, NaN above every number).
// Instantiated for float, double, int32 and int64 only. Independent
// scans / rows run on the intra-op pool when big. Semantics follow
// TensorFlow's scan_ops.cc and topk_op.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

template <typename T, bool kProduct>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("exclusive", &exclusive_));
    ctx->SetStatus(ctx->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    OP_REQUIRES(ctx, axis_t.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("axis must be a scalar, but has shape ",
                                 axis_t.shape().DebugString())));
    const int rank = x.dims();
    int64_t axis = IntScalar(axis_t);
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                absl::InvalidArgumentError(
                    absl::StrCat("Expected scan axis in the range [", -rank,
                                 ", ", rank, "), but got ", axis)));
    if (axis < 0) axis += rank;
    Tensor* out_t = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out_t));
    if (x.NumElements() == 0) return;
    const int a = static_cast<int>(axis);
    const int64_t outer = DimProduct(x.shape(), 0, a);
    const int64_t n = x.dim_size(a);
    const int64_t inner = DimProduct(x.shape(), a + 1, rank);
    const T* in = x.flat<T>().data();
    T* out = out_t->flat<T>().data();
    const bool exclusive = exclusive_, reverse = reverse_;
    // One task per outer slice: [n, inner], scanned row by row so reads
    // and writes stay contiguous.
    ParallelForRange(
        ctx, outer, n * inner * static_cast<int64_t>(sizeof(T)),
        [&](int64_t begin, int64_t end) {
          std::vector<T> acc(static_cast<size_t>(inner));
          for (int64_t o = begin; o < end; ++o) {
            std::fill(acc.begin(), acc.end(), kProduct ? T(1) : T(0));
            for (int64_t step = 0; step < n; ++step) {
              const int64_t j = reverse ? n - 1 - step : step;
              const T* src = in + (o * n + j) * inner;
              T* dst = out + (o * n + j) * inner;
              for (int64_t i = 0; i < inner; ++i) {
                const T before = acc[i];
                acc[i] = kProduct ? before * src[i] : before + src[i];
                dst[i] = exclusive ? before : acc[i];
              }
            }
          }
        });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

// True if value a comes before value b in top-k order: larger first, NaN
// above every number, equal values by lower index.
template <typename T>
bool TopKBefore(T a, T b, int64_t ia, int64_t ib) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na && nb ? ia < ib : na;
  }
  if (a != b) return a > b;
  return ia < ib;
}

template <typename T>
class TopKOp : public OpKernel {
 public:
  explicit TopKOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    // Unsorted results may come in any order; they come sorted.
    bool sorted = true;
    ctx->SetStatus(ctx->GetAttr("sorted", &sorted));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& k_t = ctx->input(1);
    OP_REQUIRES(
        ctx, k_t.dims() == 0,
        absl::InvalidArgumentError(absl::StrCat(
            "k must be a scalar, but has shape ", k_t.shape().DebugString())));
    const int64_t k = IntScalar(k_t);
    OP_REQUIRES(
        ctx, k >= 0,
        absl::InvalidArgumentError(absl::StrCat("Need k >= 0, got ", k)));
    OP_REQUIRES(ctx, input.dims() >= 1,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be at least 1-dim, but has shape ",
                                 input.shape().DebugString())));
    const int64_t n = input.dim_size(input.dims() - 1);
    OP_REQUIRES(
        ctx, n >= k,
        absl::InvalidArgumentError(absl::StrCat(
            "input must have at least k columns. Had ", n, ", needed ", k)));
    const DataType index_type = output_type(1);
    const int64_t index_max =
        index_type == DT_INT16   ? std::numeric_limits<int16_t>::max()
        : index_type == DT_INT32 ? std::numeric_limits<int32_t>::max()
                                 : std::numeric_limits<int64_t>::max();
    OP_REQUIRES(ctx, n - 1 <= index_max,
                absl::InvalidArgumentError(
                    absl::StrCat("the last dim (", n, ") is too large for ",
                                 DataTypeString(index_type), " indices")));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().end());
    dims.back() = k;
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* values = nullptr;
    Tensor* indices = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, *shape, &indices));
    if (values->NumElements() == 0) return;
    const int64_t rows = input.NumElements() / n;
    const T* in = input.flat<T>().data();
    T* out = values->flat<T>().data();
    ParallelForRange(ctx, rows, n * 8, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const T* row = in + r * n;
        std::iota(order.begin(), order.end(), int64_t{0});
        auto before = [row](int64_t a, int64_t b) {
          return TopKBefore(row[a], row[b], a, b);
        };
        if (k < n) {
          std::nth_element(order.begin(), order.begin() + k, order.end(),
                           before);
        }
        std::sort(order.begin(), order.begin() + k, before);
        for (int64_t i = 0; i < k; ++i) {
          out[r * k + i] = row[order[i]];
          SetIndex(indices, index_type, r * k + i, order[i]);
        }
      }
    });
  }

 private:
  static void SetIndex(Tensor* t, DataType type, int64_t i, int64_t v) {
    switch (type) {
      case DT_INT16:
        MutableDataAs<int16_t>(t)[i] = static_cast<int16_t>(v);
        break;
      case DT_INT32:
        MutableDataAs<int32_t>(t)[i] = static_cast<int32_t>(v);
        break;
      default:
        MutableDataAs<int64_t>(t)[i] = v;
        break;
    }
  }
};

#define GR_REGISTER_SCAN_TOPK(T)                                         \
  REGISTER_KERNEL(KernelDefBuilder("Cumsum")                             \
                      .Device(kDeviceCpu)                                \
                      .TypeConstraint<T>("T")                            \
                      .TypeConstraint("Tidx", {DT_INT32, DT_INT64}),     \
                  ScanOp<T, false>);                                     \
  REGISTER_KERNEL(KernelDefBuilder("Cumprod")                            \
                      .Device(kDeviceCpu)                                \
                      .TypeConstraint<T>("T")                            \
                      .TypeConstraint("Tidx", {DT_INT32, DT_INT64}),     \
                  ScanOp<T, true>);                                      \
  REGISTER_KERNEL(                                                       \
      KernelDefBuilder("TopKV2")                                         \
          .Device(kDeviceCpu)                                            \
          .TypeConstraint<T>("T")                                        \
          .TypeConstraint("Tk", {DT_INT16, DT_INT32, DT_INT64})          \
          .TypeConstraint("index_type", {DT_INT16, DT_INT32, DT_INT64}), \
      TopKOp<T>)
GR_REGISTER_SCAN_TOPK(float);
GR_REGISTER_SCAN_TOPK(double);
GR_REGISTER_SCAN_TOPK(int32_t);
GR_REGISTER_SCAN_TOPK(int64_t);
#undef GR_REGISTER_SCAN_TOPK

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
