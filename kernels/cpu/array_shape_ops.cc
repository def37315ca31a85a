// CPU kernels that change only a tensor's shape: Reshape, ExpandDims and
// Squeeze. The output shares the input's buffer (Tensor::Reshaped); nothing
// is copied, so all three are inexpensive. Semantics and messages follow
// TensorFlow's reshape_op.h, shape_ops.h.
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    // A scalar `sizes` is TensorFlow's legacy spelling of a 1-vector.
    OP_REQUIRES(ctx, sizes.dims() <= 1,
                absl::InvalidArgumentError(
                    absl::StrCat("sizes input must be 1-D, not ",
                                 sizes.shape().DebugString())));
    const std::vector<int64_t> target = IntValues(sizes);
    std::vector<int64_t> dims;
    dims.reserve(target.size());
    int unknown_index = -1;
    int64_t product = 1;  // of the known, non-zero sizes
    bool sizes_has_zero_dim = false;
    for (int d = 0; d < static_cast<int>(target.size()); ++d) {
      const int64_t size = target[d];
      if (size == -1) {
        OP_REQUIRES(ctx, unknown_index == -1,
                    absl::InvalidArgumentError(
                        absl::StrCat("Only one input size may be -1, not both ",
                                     unknown_index, " and ", d)));
        unknown_index = d;
        dims.push_back(1);
      } else if (size < 0) {
        OP_REQUIRES(ctx, false,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Size ", d, " must be non-negative, not ", size)));
      } else {
        if (size == 0) {
          sizes_has_zero_dim = true;
        } else {
          OP_REQUIRES(ctx, product <= kMaxElements / size,
                      absl::InvalidArgumentError(absl::StrCat(
                          "Reshape: the requested shape has more than 2^48 "
                          "elements at dimension ", d)));
          product *= size;
        }
        dims.push_back(size);
      }
    }
    if (unknown_index != -1) {
      // Zero-sized input dims are left out (unless `sizes` has none) so the
      // other dims can still be inferred, as in TensorFlow.
      int64_t input_num_elements = 1;
      bool input_has_zero_dim = false;
      for (int64_t d : input.shape().dim_sizes()) {
        if (d > 0 || !sizes_has_zero_dim) {
          input_num_elements *= d;
        } else {
          input_has_zero_dim = true;
        }
      }
      const int64_t missing = input_num_elements / product;
      if (!input_has_zero_dim) {
        OP_REQUIRES(ctx, product * missing == input_num_elements,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Input to reshape is a tensor with ",
                        input_num_elements,
                        " values, but the requested shape requires a "
                        "multiple of ", product)));
      }
      dims[unknown_index] = missing;
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, shape->num_elements() == input.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Input to reshape is a tensor with ", input.NumElements(),
                    " values, but the requested shape has ",
                    shape->num_elements())));
    absl::StatusOr<Tensor> out = input.Reshaped(*shape);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->set_output(0, *std::move(out));
  }
};

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    OP_REQUIRES(ctx, dim_t.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "'dim' must be a tensor with a single value, but has ",
                    dim_t.NumElements())));
    const int64_t rank = input.dims();
    int64_t dim = IntScalar(dim_t);
    OP_REQUIRES(ctx, dim >= -1 - rank && dim <= rank,
                absl::InvalidArgumentError(
                    absl::StrCat("Tried to expand dim index ", dim,
                                 " for tensor with ", rank, " dimensions.")));
    if (dim < 0) dim += rank + 1;
    const std::vector<int64_t> dims =
        InsertDim(input.shape(), static_cast<int>(dim), 1);
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    absl::StatusOr<Tensor> out = input.Reshaped(*shape);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->set_output(0, *std::move(out));
  }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.dims();
    std::set<int64_t> wrapped;
    for (int64_t dim : squeeze_dims_) {
      OP_REQUIRES(ctx, dim >= -rank && dim < rank,
                  absl::InvalidArgumentError(
                      absl::StrCat("Tried to squeeze dim index ", dim,
                                   " for tensor with ", rank, " dimensions.")));
      wrapped.insert(dim < 0 ? dim + rank : dim);
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      const int64_t d = input.dim_size(i);
      if (wrapped.empty()) {
        if (d != 1) dims.push_back(d);
      } else if (wrapped.count(i) > 0) {
        OP_REQUIRES(ctx, d == 1,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Can not squeeze dim[", i,
                        "], expected a dimension of 1, got ", d)));
      } else {
        dims.push_back(d);
      }
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    absl::StatusOr<Tensor> out = input.Reshaped(*shape);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->set_output(0, *std::move(out));
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

REGISTER_KERNEL(KernelDefBuilder("Reshape").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tshape", {DT_INT32, DT_INT64}),
                ReshapeOp);
REGISTER_KERNEL(KernelDefBuilder("ExpandDims").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tdim", {DT_INT32, DT_INT64}),
                ExpandDimsOp);
REGISTER_KERNEL(KernelDefBuilder("Squeeze").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                SqueezeOp);

}  // namespace
}  // namespace array_kernels

OpKernel* NewReshapeOp(OpKernelConstruction* c) { return new array_kernels::ReshapeOp(c); }
OpKernel* NewExpandDimsOp(OpKernelConstruction* c) { return new array_kernels::ExpandDimsOp(c); }
OpKernel* NewSqueezeOp(OpKernelConstruction* c) { return new array_kernels::SqueezeOp(c); }

}  // namespace graphrun
