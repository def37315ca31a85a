// CPU kernels that pick elements by index: Gather, GatherV2 (with axis and
// batch_dims) and OneHot. Gather checks every index first, then copies
// whole inner slices (memcpy; strings element-wise) on the intra-op pool
// when big. OneHot is an Eigen generator. Semantics and messages follow
// TensorFlow's gather_op.cc and one_hot_op.cc.
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// "[1]" or "[0,2]": the position of flat element `flat` in `shape`; "" for
// a scalar (TensorFlow's SliceDebugString).
std::string IndexString(const TensorShape& shape, int64_t flat) {
  const int dims = shape.dims();
  if (dims == 0) return "";
  if (dims == 1) return absl::StrCat("[", flat, "]");
  std::vector<int64_t> strides(dims, 1);
  for (int i = dims - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape.dim_size(i + 1);
  std::string out;
  for (int i = 0; i < dims; ++i) {
    absl::StrAppend(&out, i ? "," : "[", flat / strides[i]);
    flat %= strides[i];
  }
  return out + "]";
}

// out[b, o, i, :] = params[b, o, indices[b, i], :], where params is
// [batch, outer, gather_dim, inner] and out is [batch, outer, n, inner].
// T is char (inner counted in bytes) or std::string. Indices are valid.
template <typename T>
void GatherSlices(OpKernelContext* ctx, const T* params, const std::vector<int64_t>& indices,
                  int64_t batch, int64_t outer, int64_t gather_dim,
                  int64_t inner, T* out) {
  const int64_t n = static_cast<int64_t>(indices.size()) / batch;
  const int64_t slices = batch * outer * n;
  const int64_t unit = std::is_same_v<T, std::string> ? 32 * inner : inner;
  ParallelForRange(ctx, slices, unit, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t i = k % n;
      const int64_t o = (k / n) % outer;
      const int64_t b = k / (n * outer);
      const int64_t index = indices[b * n + i];
      const T* src = params + ((b * outer + o) * gather_dim + index) * inner;
      T* dst = out + k * inner;
      if constexpr (std::is_same_v<T, std::string>) {
        std::copy(src, src + inner, dst);
      } else {
        std::memcpy(dst, src, static_cast<size_t>(inner));
      }
    }
  });
}

// Gather (has_axis_input false: axis 0) and GatherV2.
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->attrs().Find("batch_dims") != nullptr) {
      ctx->SetStatus(ctx->GetAttr("batch_dims", &batch_dims_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, params.dims() >= 1,
                absl::InvalidArgumentError(
                    "params must be at least 1 dimensional"));
    int64_t axis = 0;
    const bool axis_is_set = ctx->num_inputs() == 3;
    if (axis_is_set) {
      const Tensor& axis_t = ctx->input(2);
      OP_REQUIRES(ctx, axis_t.dims() == 0,
                  absl::InvalidArgumentError("axis must be scalar"));
      axis = IntScalar(axis_t);
    }
    // -axis or axis + 1, without overflow at the int64 extremes.
    const uint64_t min_params_dim =
        axis < 0 ? static_cast<uint64_t>(-(axis + 1)) + 1
                 : static_cast<uint64_t>(axis) + 1;
    OP_REQUIRES(ctx, static_cast<uint64_t>(params.dims()) >= min_params_dim,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape must be at least rank ", min_params_dim,
                    " but is rank ", params.dims())));
    if (axis < 0) axis += params.dims();
    int64_t batch_dims = batch_dims_;
    if (batch_dims != 0) {
      const int irank = indices.dims();
      OP_REQUIRES(ctx, batch_dims >= -irank && batch_dims <= irank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Expected batch_dims in the range [", -irank, ", ",
                      irank, "], but got ", batch_dims)));
      if (batch_dims < 0) batch_dims += irank;
      if (!axis_is_set) axis = batch_dims;
      OP_REQUIRES(ctx, batch_dims < params.dims(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "batch_dims (", batch_dims,
                      ") must be less than rank(params) (", params.dims(),
                      ").")));
      OP_REQUIRES(ctx, axis >= batch_dims,
                  absl::InvalidArgumentError(absl::StrCat(
                      "batch_dims (", batch_dims,
                      ") must be less than or equal to axis (", axis, ").")));
      for (int i = 0; i < batch_dims; ++i) {
        OP_REQUIRES(ctx, params.dim_size(i) == indices.dim_size(i),
                    absl::InvalidArgumentError(absl::StrCat(
                        "params.shape[", i, "]: ", params.dim_size(i),
                        " should be equal to indices.shape[", i,
                        "]: ", indices.dim_size(i))));
      }
    }
    const int a = static_cast<int>(axis);
    const int bd = static_cast<int>(batch_dims);
    const int64_t gather_dim = params.dim_size(a);
    // params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]
    std::vector<int64_t> out_dims;
    for (int i = 0; i < a; ++i) out_dims.push_back(params.dim_size(i));
    for (int i = bd; i < indices.dims(); ++i) out_dims.push_back(indices.dim_size(i));
    for (int i = a + 1; i < params.dims(); ++i) out_dims.push_back(params.dim_size(i));
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t batch = DimProduct(params.shape(), 0, bd);
    const int64_t outer = DimProduct(params.shape(), bd, a);
    const int64_t inner = DimProduct(params.shape(), a + 1, params.dims());
    if (indices.NumElements() == 0 || inner == 0 || batch == 0 || outer == 0) {
      return;
    }
    const std::vector<int64_t> index_values = IntValues(indices);
    for (size_t i = 0; i < index_values.size(); ++i) {
      const int64_t v = index_values[i];
      OP_REQUIRES(ctx, v >= 0 && v < gather_dim,
                  absl::InvalidArgumentError(absl::StrCat(
                      "indices", IndexString(indices.shape(), i), " = ", v,
                      " is not in [0, ", gather_dim, ")")));
    }
    if (params.dtype() == DT_STRING) {
      GatherSlices<std::string>(ctx, DataAs<std::string>(params), index_values,
                                batch, outer, gather_dim, inner,
                                MutableDataAs<std::string>(out));
    } else {
      const int64_t bytes = DataTypeSize(params.dtype());
      GatherSlices<char>(ctx, DataAs<char>(params), index_values, batch, outer,
                         gather_dim, inner * bytes, MutableDataAs<char>(out));
    }
  }

 private:
  int64_t batch_dims_ = 0;
};

// output[p, d, s] = indices[p, s] == d ? on : off.
template <typename P, typename TI>
struct OneHotGenerator {
  EigenConstMap<TI, 2> indices;
  P on, off;
  P operator()(const Eigen::array<Eigen::DenseIndex, 3>& pds) const {
    return static_cast<int64_t>(indices(pds[0], pds[2])) == pds[1] ? on : off;
  }
};

template <typename TI>
class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& depth = ctx->input(1);
    const Tensor& on_value = ctx->input(2);
    const Tensor& off_value = ctx->input(3);
    const int indices_dims = indices.dims();
    const int output_dims = indices_dims + 1;
    OP_REQUIRES(ctx, axis_ == -1 || (axis_ >= 0 && axis_ < output_dims),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected axis to be -1 or between [0, ", output_dims,
                    ").  But received: ", axis_)));
    OP_REQUIRES(ctx, depth.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("depth must be a scalar, but got: ",
                                 depth.shape().DebugString())));
    OP_REQUIRES(ctx, on_value.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("on_value must be a scalar, but got: ",
                                 on_value.shape().DebugString())));
    OP_REQUIRES(ctx, off_value.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("off_value must be a scalar, but got: ",
                                 off_value.shape().DebugString())));
    const int axis = axis_ == -1 ? indices_dims : static_cast<int>(axis_);
    const int32_t depth_v = depth.flat<int32_t>()[0];
    OP_REQUIRES(ctx, depth_v >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "depth must be non-negative, got: ", depth_v)));
    absl::StatusOr<TensorShape> shape =
        TensorShape::FromDims(InsertDim(indices.shape(), axis, depth_v));
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    const int64_t prefix = DimProduct(indices.shape(), 0, axis);
    const int64_t suffix = indices.NumElements() / prefix;
    VisitCopyType(out->dtype(), [&](auto zero) {
      using P = decltype(zero);
      OneHotGenerator<P, TI> gen{
          EigenConstMap<TI, 2>(indices.flat<TI>().data(), prefix, suffix),
          DataAs<P>(on_value)[0], DataAs<P>(off_value)[0]};
      EigenMap<P, 3> out_map(MutableDataAs<P>(out), prefix, depth_v, suffix);
      RunOnEigenDevice(ctx, n, [&](const auto& device) {
        out_map.device(device) = out_map.generate(gen);
      });
    });
  }

 private:
  int64_t axis_ = -1;
};

REGISTER_KERNEL(KernelDefBuilder("Gather").Device(kDeviceCpu)
                    .TypeConstraint("Tparams", AllTensorTypes())
                    .TypeConstraint("Tindices", {DT_INT32, DT_INT64}),
                GatherOp);
REGISTER_KERNEL(KernelDefBuilder("GatherV2").Device(kDeviceCpu)
                    .TypeConstraint("Tparams", AllTensorTypes())
                    .TypeConstraint("Tindices", {DT_INT16, DT_INT32, DT_INT64})
                    .TypeConstraint("Taxis", {DT_INT32, DT_INT64}),
                GatherOp);

#define GR_REGISTER_ONE_HOT(TI)                                   \
  REGISTER_KERNEL(KernelDefBuilder("OneHot").Device(kDeviceCpu)   \
                      .TypeConstraint("T", AllTensorTypes())      \
                      .TypeConstraint<TI>("TI"),                  \
                  OneHotOp<TI>)
GR_REGISTER_ONE_HOT(uint8_t);
GR_REGISTER_ONE_HOT(int8_t);
GR_REGISTER_ONE_HOT(int32_t);
GR_REGISTER_ONE_HOT(int64_t);
#undef GR_REGISTER_ONE_HOT

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
