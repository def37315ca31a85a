// CPU kernels that address elements by N-d coordinates: GatherNd (slices
// at coordinates, every dtype, copied as bytes), ScatterNd (updates summed
// into zeros at coordinates; float, double, int32, int64, half, bfloat16),
// TensorScatterUpdate/Add/Sub/Max/Min (the same into a copy of `tensor`)
// and Where (the coordinates of the non-zero elements, as int64). Every
// coordinate is checked first; a bad one is InvalidArgument naming it.
// Semantics follow TensorFlow's gather_nd_op.cc, scatter_nd_op.cc and
// where_op.cc.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// "[0,1]" for position `flat` of `shape` ("" for a scalar).
std::string PositionString(const TensorShape& shape, int64_t flat) {
  if (shape.dims() == 0) return "";
  std::vector<int64_t> idx(shape.dims());
  for (int i = shape.dims() - 1; i >= 0; --i) {
    idx[i] = shape.dim_size(i) == 0 ? 0 : flat % shape.dim_size(i);
    flat = shape.dim_size(i) == 0 ? 0 : flat / shape.dim_size(i);
  }
  return absl::StrCat("[", absl::StrJoin(idx, ","), "]");
}

// How a kernel treats coordinates outside the shape: TensorFlow's
// bad_indices_policy attr ("" and "DEFAULT" mean "ERROR" on CPU).
enum class BadIndices { kError, kIgnore };

absl::StatusOr<BadIndices> ReadPolicy(OpKernelConstruction* ctx) {
  std::string policy;
  if (ctx->attrs().Find("bad_indices_policy") != nullptr) {
    GR_RETURN_IF_ERROR(ctx->GetAttr("bad_indices_policy", &policy));
  }
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") {
    return BadIndices::kError;
  }
  if (policy == "IGNORE") return BadIndices::kIgnore;
  return absl::InvalidArgumentError(absl::StrCat(
      "bad_indices_policy must be '', 'DEFAULT', 'ERROR' or 'IGNORE', not '",
      policy, "'"));
}

// Coordinates: `indices` is [..., n]; each of its rows addresses dims
// [0, n) of `shape`. Returns the flat offset of each row's slice in units
// of slices (the elements of dims [n, rank)). A row outside `shape` is
// InvalidArgument naming it, or -1 under BadIndices::kIgnore.
absl::StatusOr<std::vector<int64_t>> SliceOffsets(const Tensor& indices,
                                                  const TensorShape& shape,
                                                  absl::string_view what,
                                                  BadIndices policy) {
  const int outer_rank = indices.dims() - 1;
  const int64_t n = indices.dim_size(outer_rank);
  const int64_t rows = DimProduct(indices.shape(), 0, outer_rank);
  const std::vector<int64_t> values = IntValues(indices);
  std::vector<int64_t> offsets(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < n && offset >= 0; ++j) {
      const int64_t v = values[r * n + j];
      const int64_t d = shape.dim_size(static_cast<int>(j));
      if (v >= 0 && v < d) {
        offset = offset * d + v;
        continue;
      }
      if (policy == BadIndices::kIgnore) {
        offset = -1;
        continue;
      }
      TensorShape outer;
      for (int i = 0; i < outer_rank; ++i) outer.AddDim(indices.dim_size(i));
      std::vector<int64_t> row(values.begin() + r * n,
                               values.begin() + (r + 1) * n);
      return absl::InvalidArgumentError(absl::StrCat(
          "indices", PositionString(outer, r), " = [", absl::StrJoin(row, ", "),
          "] does not index into ", what, " ", shape.DebugString()));
    }
    offsets[r] = offset;
  }
  return offsets;
}

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    absl::StatusOr<BadIndices> policy = ReadPolicy(ctx);
    ctx->SetStatus(policy.status());
    if (policy.ok()) policy_ = *policy;
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, indices.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "indices must be at least a vector, but has shape ",
                    indices.shape().DebugString())));
    const int64_t n = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(ctx, n <= params.dims(),
                absl::InvalidArgumentError(absl::StrCat(
                    "indices.shape[-1] must be <= params.rank, but saw "
                    "indices shape: ",
                    indices.shape().DebugString(),
                    " and params shape: ", params.shape().DebugString())));
    std::vector<int64_t> dims(indices.shape().dim_sizes().begin(),
                              indices.shape().dim_sizes().end() - 1);
    for (int i = static_cast<int>(n); i < params.dims(); ++i) {
      dims.push_back(params.dim_size(i));
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    absl::StatusOr<std::vector<int64_t>> offsets =
        SliceOffsets(indices, params.shape(), "param shape", policy_);
    OP_REQUIRES_OK(ctx, offsets.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    const int64_t slice =
        DimProduct(params.shape(), static_cast<int>(n), params.dims());
    if (output->NumElements() == 0) return;
    const int64_t rows = static_cast<int64_t>(offsets->size());
    if (params.dtype() == DT_STRING) {
      const std::string* from = DataAs<std::string>(params);
      std::string* to = MutableDataAs<std::string>(output);
      ParallelForRange(ctx, rows, 32 * slice, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t o = (*offsets)[r];
          if (o < 0) {
            std::fill(to + r * slice, to + (r + 1) * slice, std::string());
          } else {
            std::copy(from + o * slice, from + (o + 1) * slice, to + r * slice);
          }
        }
      });
      return;
    }
    const int64_t bytes = slice * DataTypeSize(params.dtype());
    const char* from = DataAs<char>(params);
    char* to = MutableDataAs<char>(output);
    ParallelForRange(ctx, rows, bytes, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = (*offsets)[r];
        if (o < 0) {  // ignored bad coordinates read zeros
          std::memset(to + r * bytes, 0, static_cast<size_t>(bytes));
        } else {
          std::memcpy(to + r * bytes, from + o * bytes,
                      static_cast<size_t>(bytes));
        }
      }
    });
  }

 private:
  BadIndices policy_ = BadIndices::kError;
};

// How ScatterNd and the TensorScatter ops combine an update with the
// output: ScatterNd starts from zeros and adds; TensorScatter* start from
// `tensor`.
enum class Scatter { kNd, kUpdate, kAdd, kSub, kMax, kMin };

template <typename T, Scatter M>
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    absl::StatusOr<BadIndices> policy = ReadPolicy(ctx);
    ctx->SetStatus(policy.status());
    if (policy.ok()) policy_ = *policy;
  }
  void Compute(OpKernelContext* ctx) override {
    constexpr bool kNd = M == Scatter::kNd;
    const Tensor& indices = ctx->input(kNd ? 0 : 1);
    const Tensor& updates = ctx->input(kNd ? 1 : 2);
    absl::StatusOr<TensorShape> shape = ctx->input(0).shape();
    if (kNd) {
      const Tensor& shape_t = ctx->input(2);
      OP_REQUIRES(ctx, shape_t.dims() == 1,
                  absl::InvalidArgumentError(
                      absl::StrCat("shape must be a vector, but has shape ",
                                   shape_t.shape().DebugString())));
      shape = ShapeFromDims(IntValues(shape_t));
      OP_REQUIRES_OK(ctx, shape.status());
    }
    OP_REQUIRES(ctx, indices.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "indices must be at least a vector, but has shape ",
                    indices.shape().DebugString())));
    const int outer = indices.dims() - 1;
    const int64_t n = indices.dim_size(outer);
    OP_REQUIRES(ctx, n <= shape->dims(),
                absl::InvalidArgumentError(absl::StrCat(
                    "indices.shape[-1] (", n, ") must be <= the rank of shape ",
                    shape->DebugString())));
    std::vector<int64_t> want(indices.shape().dim_sizes().begin(),
                              indices.shape().dim_sizes().begin() + outer);
    for (int i = static_cast<int>(n); i < shape->dims(); ++i) {
      want.push_back(shape->dim_size(i));
    }
    OP_REQUIRES(ctx,
                updates.shape().dim_sizes() == absl::Span<const int64_t>(want),
                absl::InvalidArgumentError(
                    absl::StrCat("updates must have shape indices.shape[:-1] + "
                                 "shape[indices.shape[-1]:] = [",
                                 absl::StrJoin(want, ","), "], but have shape ",
                                 updates.shape().DebugString())));
    OP_REQUIRES(ctx, shape->num_elements() > 0 || updates.NumElements() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Indices and updates specified for empty output shape ",
                    shape->DebugString())));
    absl::StatusOr<std::vector<int64_t>> offsets =
        SliceOffsets(indices, *shape, "shape", policy_);
    OP_REQUIRES_OK(ctx, offsets.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    T* out = output->flat<T>().data();
    if (kNd) {
      std::fill(out, out + output->NumElements(), T(0));
    } else {
      const T* in = ctx->input(0).flat<T>().data();
      std::copy(in, in + output->NumElements(), out);
    }
    if (updates.NumElements() == 0) return;
    const int64_t slice =
        DimProduct(*shape, static_cast<int>(n), shape->dims());
    const T* up = updates.flat<T>().data();
    // Sequential: duplicate coordinates combine into the same slice in order.
    for (size_t r = 0; r < offsets->size(); ++r) {
      if ((*offsets)[r] < 0) continue;  // ignored bad coordinates
      T* dst = out + (*offsets)[r] * slice;
      const T* src = up + static_cast<int64_t>(r) * slice;
      for (int64_t i = 0; i < slice; ++i) {
        switch (M) {
          case Scatter::kUpdate: dst[i] = src[i]; break;
          case Scatter::kSub: dst[i] -= src[i]; break;
          case Scatter::kMax: dst[i] = std::max(dst[i], src[i]); break;
          case Scatter::kMin: dst[i] = std::min(dst[i], src[i]); break;
          default: dst[i] += src[i]; break;
        }
      }
    }
  }

 private:
  BadIndices policy_ = BadIndices::kError;
};

class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int64_t n = input.NumElements();
    std::vector<int64_t> hits;
    VisitDataType(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, std::string>) {
        const T* v = input.flat<T>().data();
        for (int64_t i = 0; i < n; ++i) {
          if (v[i] != T(0)) hits.push_back(i);
        }
      }
    });
    const int rank = input.dims();
    Tensor* output = nullptr;
    OP_REQUIRES_OK(
        ctx, ctx->allocate_output(
                 0, TensorShape({static_cast<int64_t>(hits.size()), rank}),
                 &output));
    int64_t* out = output->flat<int64_t>().data();
    for (size_t h = 0; h < hits.size(); ++h) {
      int64_t flat = hits[h];
      for (int d = rank - 1; d >= 0; --d) {
        out[h * rank + d] = flat % input.dim_size(d);
        flat /= input.dim_size(d);
      }
    }
  }
};

REGISTER_KERNEL(KernelDefBuilder("GatherNd")
                    .Device(kDeviceCpu)
                    .TypeConstraint("Tparams", AllTensorTypes())
                    .TypeConstraint("Tindices", {DT_INT16, DT_INT32, DT_INT64}),
                GatherNdOp);

#define GR_REGISTER_SCATTER_OP(NAME, T, M)                             \
  REGISTER_KERNEL(                                                     \
      KernelDefBuilder(NAME)                                           \
          .Device(kDeviceCpu)                                          \
          .TypeConstraint<T>("T")                                      \
          .TypeConstraint("Tindices", {DT_INT16, DT_INT32, DT_INT64}), \
      ScatterNdOp<T, M>)
#define GR_REGISTER_SCATTER_ND(T)                                      \
  GR_REGISTER_SCATTER_OP("ScatterNd", T, Scatter::kNd);                \
  GR_REGISTER_SCATTER_OP("TensorScatterUpdate", T, Scatter::kUpdate);  \
  GR_REGISTER_SCATTER_OP("TensorScatterAdd", T, Scatter::kAdd);        \
  GR_REGISTER_SCATTER_OP("TensorScatterSub", T, Scatter::kSub);        \
  GR_REGISTER_SCATTER_OP("TensorScatterMax", T, Scatter::kMax);        \
  GR_REGISTER_SCATTER_OP("TensorScatterMin", T, Scatter::kMin)
GR_REGISTER_SCATTER_ND(float);
GR_REGISTER_SCATTER_ND(double);
GR_REGISTER_SCATTER_ND(int32_t);
GR_REGISTER_SCATTER_ND(int64_t);
GR_REGISTER_SCATTER_ND(half);
GR_REGISTER_SCATTER_ND(bfloat16);
#undef GR_REGISTER_SCATTER_ND
#undef GR_REGISTER_SCATTER_OP

REGISTER_KERNEL(KernelDefBuilder("Where")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", PodTensorTypes()),
                WhereOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
