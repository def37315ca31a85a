// Segment reductions on CPU, as TensorFlow's segment_reduction_ops_impl.h
// and sparse segment kernels: rows are combined in input order; the sorted
// forms need non-decreasing ids and give [last id + 1] rows, with 0 for an
// empty segment (1 for a product); the unsorted forms drop negative ids and
// leave an empty segment at the reduction's identity (0, 1, the type's
// lowest for Max, highest for Min); the sparse forms gather data rows by
// `indices` first and divide by the segment's size (Mean) or its square root
// (SqrtN), 0 for an empty segment. 16-bit floats accumulate in float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using array_kernels::IntScalar;
using array_kernels::IntValues;

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

enum class Reduce { kSum, kMean, kProd, kMax, kMin, kSqrtN };

template <typename A>
A Identity(Reduce r) {
  switch (r) {
    case Reduce::kProd: return A(1);
    case Reduce::kMax: return std::numeric_limits<A>::lowest();
    case Reduce::kMin: return std::numeric_limits<A>::max();
    default: return A(0);
  }
}

template <typename A>
void Combine(Reduce r, A* acc, const A& x) {
  switch (r) {
    case Reduce::kProd: *acc *= x; break;
    case Reduce::kMax: *acc = std::max(*acc, x); break;
    case Reduce::kMin: *acc = std::min(*acc, x); break;
    default: *acc += x; break;
  }
}

// Writes out[s] for every segment: `acc` rows of `inner` combined values,
// `count[s]` rows each; empty segments get `empty`.
template <typename T>
void Finish(Reduce r, const std::vector<Acc<T>>& acc, const std::vector<int64_t>& count,
            int64_t inner, Acc<T> empty, T* out) {
  for (size_t s = 0; s < count.size(); ++s) {
    for (int64_t k = 0; k < inner; ++k) {
      Acc<T> v = acc[s * inner + k];
      if (count[s] == 0) {
        v = empty;
      } else if (r == Reduce::kMean) {
        v = v / static_cast<Acc<T>>(count[s]);
      } else if (r == Reduce::kSqrtN) {
        v = v / static_cast<Acc<T>>(std::sqrt(static_cast<double>(count[s])));
      }
      out[s * inner + k] = static_cast<T>(v);
    }
  }
}

// Allocates output 0: [rows] + data.shape[skip:].
absl::Status AllocateSegments(OpKernelContext* ctx, const Tensor& data, int skip, int64_t rows,
                              Tensor** out) {
  std::vector<int64_t> dims = {rows};
  for (int d = skip; d < data.dims(); ++d) dims.push_back(data.dim_size(d));
  GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  return ctx->allocate_output(0, shape, out);
}

// SegmentSum, SegmentMean, SegmentProd, SegmentMax, SegmentMin.
template <typename T, Reduce R>
class SortedSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    OP_REQUIRES(ctx, ids.dims() == 1,
                absl::InvalidArgumentError("segment_ids should be a vector."));
    OP_REQUIRES(ctx, data.dims() >= 1,
                absl::InvalidArgumentError("input must be at least rank 1"));
    const int64_t n = ids.NumElements();
    OP_REQUIRES(ctx, n == data.dim_size(0),
                absl::InvalidArgumentError(
                    "segment_ids should be the same size as dimension 0 of input."));
    const std::vector<int64_t> id = IntValues(ids);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, id[i] >= 0,
                  absl::InvalidArgumentError(absl::StrCat("segment ids must be >= 0, but ",
                                                          "segment_ids[", i, "] = ", id[i])));
      OP_REQUIRES(ctx, i == 0 || id[i] >= id[i - 1],
                  absl::InvalidArgumentError("segment ids are not increasing"));
    }
    const int64_t rows = n == 0 ? 0 : id[n - 1] + 1;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, AllocateSegments(ctx, data, 1, rows, &out));
    const int64_t inner = n == 0 ? 0 : data.NumElements() / n;
    std::vector<Acc<T>> acc(rows * inner, Identity<Acc<T>>(R));
    std::vector<int64_t> count(rows, 0);
    const T* x = data.flat<T>().data();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = id[i];
      ++count[s];
      for (int64_t k = 0; k < inner; ++k) {
        Combine(R, &acc[s * inner + k], static_cast<Acc<T>>(x[i * inner + k]));
      }
    }
    Finish<T>(R, acc, count, inner, Acc<T>(R == Reduce::kProd ? 1 : 0),
              out->flat<T>().data());
  }
};

// UnsortedSegmentSum, UnsortedSegmentProd, UnsortedSegmentMax,
// UnsortedSegmentMin.
template <typename T, Reduce R>
class UnsortedSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    const Tensor& num = ctx->input(2);
    OP_REQUIRES(ctx, num.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "num_segments should be a scalar, not shape ", num.shape().DebugString())));
    bool prefix = ids.dims() <= data.dims();
    for (int d = 0; prefix && d < ids.dims(); ++d) {
      prefix = ids.dim_size(d) == data.dim_size(d);
    }
    OP_REQUIRES(ctx, prefix,
                absl::InvalidArgumentError(absl::StrCat(
                    "data.shape = ", data.shape().DebugString(),
                    " does not start with segment_ids.shape = ", ids.shape().DebugString())));
    const int64_t rows = IntScalar(num);
    OP_REQUIRES(ctx, rows >= 0,
                absl::InvalidArgumentError(
                    absl::StrCat("Input num_segments == ", rows, " must not be negative.")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, AllocateSegments(ctx, data, ids.dims(), rows, &out));
    const int64_t n = ids.NumElements();
    const int64_t inner = n == 0 ? 0 : data.NumElements() / n;
    std::vector<Acc<T>> acc(rows * inner, Identity<Acc<T>>(R));
    std::vector<int64_t> count(rows, 1);  // empty segments keep the identity
    const T* x = data.flat<T>().data();
    const std::vector<int64_t> id = IntValues(ids);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = id[i];
      if (s < 0) continue;
      OP_REQUIRES(ctx, s < rows,
                  absl::InvalidArgumentError(absl::StrCat("segment_ids[", i, "] = ", s,
                                                          " is out of range [0, ", rows, ")")));
      for (int64_t k = 0; k < inner; ++k) {
        Combine(R, &acc[s * inner + k], static_cast<Acc<T>>(x[i * inner + k]));
      }
    }
    Finish<T>(R, acc, count, inner, Acc<T>(0), out->flat<T>().data());
  }
};

// SparseSegmentSum/Mean/SqrtN, and their WithNumSegments forms (input 3).
template <typename T, Reduce R>
class SparseSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    const Tensor& ids = ctx->input(2);
    const bool with_num = ctx->num_inputs() == 4;
    OP_REQUIRES(ctx, indices.dims() == 1,
                absl::InvalidArgumentError("indices should be a vector."));
    OP_REQUIRES(ctx, ids.dims() == 1,
                absl::InvalidArgumentError("segment_ids should be a vector."));
    OP_REQUIRES(ctx, data.dims() >= 1,
                absl::InvalidArgumentError("data must be at least rank 1"));
    const int64_t n = indices.NumElements();
    OP_REQUIRES(ctx, n == ids.NumElements(),
                absl::InvalidArgumentError("segment_ids and indices should have same size."));
    const std::vector<int64_t> id = IntValues(ids);
    const std::vector<int64_t> index = IntValues(indices);
    int64_t rows = n == 0 ? 0 : id[n - 1] + 1;
    if (with_num) {
      const Tensor& num = ctx->input(3);
      OP_REQUIRES(ctx, num.dims() == 0,
                  absl::InvalidArgumentError("num_segments should be a scalar"));
      rows = IntScalar(num);
      OP_REQUIRES(ctx, rows >= 0,
                  absl::InvalidArgumentError("num_segments must be non-negative"));
    }
    const int64_t data_rows = data.dim_size(0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = id[i];
      OP_REQUIRES(ctx, s >= 0, absl::InvalidArgumentError("segment ids must be >= 0"));
      OP_REQUIRES(ctx, i == 0 || s >= id[i - 1],
                  absl::InvalidArgumentError("segment ids are not increasing"));
      OP_REQUIRES(ctx, s < rows,
                  absl::InvalidArgumentError(
                      absl::StrCat("segment ids must be < num_segments, but segment_ids[", i,
                                   "] = ", s, " and num_segments = ", rows)));
      const int64_t j = index[i];
      OP_REQUIRES(ctx, j >= 0 && j < data_rows,
                  absl::InvalidArgumentError(absl::StrCat("Bad: indices[", i, "] == ", j,
                                                          " out of range [0, ", data_rows,
                                                          ")")));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, AllocateSegments(ctx, data, 1, rows, &out));
    const int64_t inner = data_rows == 0 ? 0 : data.NumElements() / data_rows;
    std::vector<Acc<T>> acc(rows * inner, Acc<T>(0));
    std::vector<int64_t> count(rows, 0);
    const T* x = data.flat<T>().data();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = id[i];
      const int64_t j = index[i];
      ++count[s];
      for (int64_t k = 0; k < inner; ++k) {
        acc[s * inner + k] += static_cast<Acc<T>>(x[j * inner + k]);
      }
    }
    Finish<T>(R, acc, count, inner, Acc<T>(0), out->flat<T>().data());
  }
};

KernelDefBuilder Def(const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); }

#define GR_SEGMENT_KERNELS(T)                                                                  \
  REGISTER_KERNEL(Def("SegmentSum").TypeConstraint<T>("T"), SortedSegmentOp<T, Reduce::kSum>); \
  REGISTER_KERNEL(Def("SegmentMean").TypeConstraint<T>("T"),                                   \
                  SortedSegmentOp<T, Reduce::kMean>);                                          \
  REGISTER_KERNEL(Def("SegmentProd").TypeConstraint<T>("T"),                                   \
                  SortedSegmentOp<T, Reduce::kProd>);                                          \
  REGISTER_KERNEL(Def("SegmentMax").TypeConstraint<T>("T"), SortedSegmentOp<T, Reduce::kMax>); \
  REGISTER_KERNEL(Def("SegmentMin").TypeConstraint<T>("T"), SortedSegmentOp<T, Reduce::kMin>); \
  REGISTER_KERNEL(Def("UnsortedSegmentSum").TypeConstraint<T>("T"),                            \
                  UnsortedSegmentOp<T, Reduce::kSum>);                                         \
  REGISTER_KERNEL(Def("UnsortedSegmentProd").TypeConstraint<T>("T"),                           \
                  UnsortedSegmentOp<T, Reduce::kProd>);                                        \
  REGISTER_KERNEL(Def("UnsortedSegmentMax").TypeConstraint<T>("T"),                            \
                  UnsortedSegmentOp<T, Reduce::kMax>);                                         \
  REGISTER_KERNEL(Def("UnsortedSegmentMin").TypeConstraint<T>("T"),                            \
                  UnsortedSegmentOp<T, Reduce::kMin>);                                         \
  REGISTER_KERNEL(Def("SparseSegmentSum").TypeConstraint<T>("T"),                              \
                  SparseSegmentOp<T, Reduce::kSum>);                                           \
  REGISTER_KERNEL(Def("SparseSegmentSumWithNumSegments").TypeConstraint<T>("T"),               \
                  SparseSegmentOp<T, Reduce::kSum>)
GR_SEGMENT_KERNELS(float);
GR_SEGMENT_KERNELS(double);
GR_SEGMENT_KERNELS(half);
GR_SEGMENT_KERNELS(bfloat16);
GR_SEGMENT_KERNELS(int32_t);
GR_SEGMENT_KERNELS(int64_t);
#undef GR_SEGMENT_KERNELS

#define GR_SPARSE_MEAN_KERNELS(T)                                                \
  REGISTER_KERNEL(Def("SparseSegmentMean").TypeConstraint<T>("T"),               \
                  SparseSegmentOp<T, Reduce::kMean>);                            \
  REGISTER_KERNEL(Def("SparseSegmentMeanWithNumSegments").TypeConstraint<T>("T"), \
                  SparseSegmentOp<T, Reduce::kMean>);                            \
  REGISTER_KERNEL(Def("SparseSegmentSqrtN").TypeConstraint<T>("T"),              \
                  SparseSegmentOp<T, Reduce::kSqrtN>);                           \
  REGISTER_KERNEL(Def("SparseSegmentSqrtNWithNumSegments").TypeConstraint<T>("T"), \
                  SparseSegmentOp<T, Reduce::kSqrtN>)
GR_SPARSE_MEAN_KERNELS(float);
GR_SPARSE_MEAN_KERNELS(double);
GR_SPARSE_MEAN_KERNELS(half);
GR_SPARSE_MEAN_KERNELS(bfloat16);
#undef GR_SPARSE_MEAN_KERNELS

}  // namespace
}  // namespace graphrun
