// CPU kernels that route elements by an index tensor, with TensorFlow's
// semantics and messages (dynamic_partition_op.cc, sparse_to_dense_op.cc,
// bincount_op.cc): DynamicPartition (the slices of data whose partition is
// i, in order, to output i), SparseToDense (default everywhere, the values
// at the indices; lexicographic order and no repeats checked when
// validate_indices) and Bincount (counts or summed weights of each value
// below `size`; negative values refused).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

class DynamicPartitionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& parts = ctx->input(1);
    const int num = ctx->num_outputs();
    bool prefix = parts.dims() <= data.dims();
    for (int d = 0; prefix && d < parts.dims(); ++d) {
      prefix = parts.dim_size(d) == data.dim_size(d);
    }
    OP_REQUIRES(ctx, prefix,
                absl::InvalidArgumentError(absl::StrCat(
                    "data.shape must start with partitions.shape, got data.shape = ",
                    data.shape().DebugString(), ", partitions.shape = ",
                    parts.shape().DebugString())));
    const int64_t n = parts.NumElements();
    const int32_t* p = parts.flat<int32_t>().data();
    std::vector<int64_t> counts(num, 0);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, p[i] >= 0 && p[i] < num,
                  absl::InvalidArgumentError(absl::StrCat(
                      "partitions[", i, "] = ", p[i],
                      " is not in [0, ", num, ")")));
      ++counts[p[i]];
    }
    const int64_t inner = n == 0 ? 0 : data.NumElements() / n;
    std::vector<Tensor*> outs(num);
    for (int k = 0; k < num; ++k) {
      std::vector<int64_t> dims = {counts[k]};
      for (int d = parts.dims(); d < data.dims(); ++d) dims.push_back(data.dim_size(d));
      absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
      OP_REQUIRES_OK(ctx, shape.status());
      OP_REQUIRES_OK(ctx, ctx->allocate_output(k, *shape, &outs[k]));
    }
    VisitCopyType(data.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* in = DataAs<P>(data);
      std::vector<P*> dst(num);
      for (int k = 0; k < num; ++k) dst[k] = MutableDataAs<P>(outs[k]);
      for (int64_t i = 0; i < n; ++i) {
        CopyN(in + i * inner, inner, dst[p[i]]);
        dst[p[i]] += inner;
      }
    });
  }
};

class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& fill = ctx->input(3);
    OP_REQUIRES(ctx, indices.dims() <= 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "sparse_indices should be a scalar, vector, or matrix, got shape ",
                    indices.shape().DebugString())));
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_shape should be a vector, got shape ", shape_t.shape().DebugString())));
    const int64_t n = indices.dims() > 0 ? indices.dim_size(0) : 1;
    const int64_t rank = indices.dims() > 1 ? indices.dim_size(1) : 1;
    OP_REQUIRES(ctx, rank == shape_t.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "output_shape has incorrect number of elements: ", shape_t.NumElements(),
                    " should be: ", rank)));
    OP_REQUIRES(ctx, values.dims() == 0 || values.NumElements() == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "sparse_values has incorrect shape ", values.shape().DebugString(),
                    ", should be [] or [", n, "]")));
    OP_REQUIRES(ctx, fill.NumElements() == 1,
                absl::InvalidArgumentError("default_value should be a scalar."));
    const std::vector<int64_t> dims = IntValues(shape_t);
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    const std::vector<int64_t> idx = IntValues(indices);
    std::vector<int64_t> offsets(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t* at = idx.data() + i * rank;
      int64_t off = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        inside = inside && at[d] >= 0 && at[d] < dims[d];
        off = off * dims[d] + at[d];
      }
      const std::string where = absl::StrCat(
          "indices[", i, "] = [", absl::StrJoin(at, at + rank, ","), "]");
      OP_REQUIRES(ctx, inside,
                  absl::InvalidArgumentError(absl::StrCat(
                      where, " is out of bounds: need 0 <= index < [",
                      absl::StrJoin(dims, ","), "]")));
      if (validate_ && i > 0) {
        OP_REQUIRES(ctx, off != offsets[i - 1],
                    absl::InvalidArgumentError(absl::StrCat(where, " is repeated")));
        OP_REQUIRES(ctx, off > offsets[i - 1],
                    absl::InvalidArgumentError(absl::StrCat(where, " is out of order")));
      }
      offsets[i] = off;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    VisitCopyType(out->dtype(), [&](auto zero) {
      using P = decltype(zero);
      P* o = MutableDataAs<P>(out);
      const P d = DataAs<P>(fill)[0];
      std::fill(o, o + out->NumElements(), d);
      const P* v = DataAs<P>(values);
      for (int64_t i = 0; i < n; ++i) o[offsets[i]] = v[values.dims() == 0 ? 0 : i];
    });
  }

 private:
  bool validate_ = true;
};

template <typename T>
class BincountOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& arr = ctx->input(0);
    const Tensor& size_t_ = ctx->input(1);
    const Tensor& weights = ctx->input(2);
    OP_REQUIRES(ctx, size_t_.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape must be rank 0 but is rank ", size_t_.dims())));
    const int32_t size = size_t_.flat<int32_t>()[0];
    OP_REQUIRES(ctx, size >= 0,
                absl::InvalidArgumentError(absl::StrCat("size (", size,
                                                        ") must be non-negative")));
    const bool weighted = weights.NumElements() > 0;
    OP_REQUIRES(ctx, !weighted || weights.shape() == arr.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Input arr and weights should have the same shape: ",
                    arr.shape().DebugString(), " vs ", weights.shape().DebugString())));
    const int32_t* a = arr.flat<int32_t>().data();
    for (int64_t i = 0; i < arr.NumElements(); ++i) {
      OP_REQUIRES(ctx, a[i] >= 0,
                  absl::InvalidArgumentError("Input arr must be non-negative!"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({size}), &out));
    T* bins = out->flat<T>().data();
    std::fill(bins, bins + size, T(0));
    for (int64_t i = 0; i < arr.NumElements(); ++i) {
      if (a[i] < size) bins[a[i]] += weighted ? weights.flat<T>()[i] : T(1);
    }
  }
};

REGISTER_KERNEL(KernelDefBuilder("DynamicPartition")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                DynamicPartitionOp);
REGISTER_KERNEL(KernelDefBuilder("SparseToDense")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tindices", {DT_INT32, DT_INT64}),
                SparseToDenseOp);
#define GR_REGISTER_BINCOUNT(T)                                                        \
  REGISTER_KERNEL(KernelDefBuilder("Bincount").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  BincountOp<T>)
GR_REGISTER_BINCOUNT(int32_t);
GR_REGISTER_BINCOUNT(int64_t);
GR_REGISTER_BINCOUNT(float);
GR_REGISTER_BINCOUNT(double);
#undef GR_REGISTER_BINCOUNT

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
