// Sparse-tensor reshaping and filling on CPU, TensorFlow's semantics and
// messages (reshape_util.cc, sparse_fill_empty_rows_op.cc): SparseReshape
// maps each index through the row-major position it has in the dense shape
// (one new dim may be -1); SparseFillEmptyRows groups entries by row, keeps
// each row's entries in input order, and gives every empty row one entry
// [row, 0, ...] holding default_value.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class SparseReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& in_shape = ctx->input(1);
    const Tensor& target = ctx->input(2);
    OP_REQUIRES(ctx, indices.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input indices should be a matrix but received shape ",
                    indices.shape().DebugString())));
    OP_REQUIRES(ctx, in_shape.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input shape should be a vector but received shape ",
                    in_shape.shape().DebugString())));
    OP_REQUIRES(ctx, target.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Target shape should be a vector but received shape ",
                    target.shape().DebugString())));
    const int64_t n = indices.dim_size(0), rank = in_shape.dim_size(0);
    OP_REQUIRES(ctx, indices.dim_size(1) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input tensor rank must match input shape length: ", indices.dim_size(1),
                    " vs ", rank)));
    const int64_t* old_dims = in_shape.flat<int64_t>().data();
    int64_t dense = 1;
    for (int64_t d = 0; d < rank; ++d) dense *= old_dims[d];
    const int64_t new_rank = target.dim_size(0);
    std::vector<int64_t> dims(target.flat<int64_t>().data(),
                              target.flat<int64_t>().data() + new_rank);
    int64_t product = 1, unknown = -1;
    for (int64_t d = 0; d < new_rank; ++d) {
      if (dims[d] == -1) {
        OP_REQUIRES(ctx, unknown < 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "only one output dimension may be -1, not both ", unknown, " and ", d)));
        unknown = d;
      } else {
        OP_REQUIRES(ctx, dims[d] >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "size ", d, " must be non-negative, not ", dims[d])));
        product *= dims[d];
      }
    }
    if (unknown >= 0) {
      OP_REQUIRES(ctx, product > 0,
                  absl::InvalidArgumentError(
                      "reshape cannot infer the missing input size for an empty tensor unless "
                      "all specified input sizes are non-zero"));
      OP_REQUIRES(ctx, dense % product == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input to reshape is a SparseTensor with ", dense,
                      " dense values, but the requested shape requires a multiple of ",
                      product)));
      dims[unknown] = dense / product;
      product = dense;
    }
    OP_REQUIRES(ctx, product == dense,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input to reshape is a tensor with ", dense,
                    " dense values, but the requested shape has ", product)));
    Tensor* out_indices = nullptr;
    Tensor* out_shape = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n, new_rank}), &out_indices));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({new_rank}), &out_shape));
    std::copy(dims.begin(), dims.end(), out_shape->flat<int64_t>().data());
    const int64_t* in = indices.flat<int64_t>().data();
    int64_t* out = out_indices->flat<int64_t>().data();
    for (int64_t i = 0; i < n; ++i) {
      int64_t linear = 0;
      for (int64_t d = 0; d < rank; ++d) linear = linear * old_dims[d] + in[i * rank + d];
      for (int64_t d = new_rank - 1; d >= 0; --d) {
        out[i * new_rank + d] = dims[d] == 0 ? 0 : linear % dims[d];
        if (dims[d] != 0) linear /= dims[d];
      }
    }
  }
};

template <typename T>
class SparseFillEmptyRowsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& dense_shape = ctx->input(2);
    const Tensor& fill = ctx->input(3);
    OP_REQUIRES(ctx, indices.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "indices must be a matrix, saw: ", indices.shape().DebugString())));
    OP_REQUIRES(ctx, values.dims() == 1 && values.dim_size(0) == indices.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "values must be a vector as long as indices, saw: ",
                    values.shape().DebugString())));
    OP_REQUIRES(ctx, dense_shape.dims() == 1 && dense_shape.dim_size(0) == indices.dim_size(1),
                absl::InvalidArgumentError(absl::StrCat(
                    "dense_shape must be a vector of the indices' rank, saw: ",
                    dense_shape.shape().DebugString())));
    OP_REQUIRES(ctx, fill.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "default_value must be a scalar, saw: ", fill.shape().DebugString())));
    const int64_t n = indices.dim_size(0), rank = indices.dim_size(1);
    OP_REQUIRES(ctx, rank > 0,
                absl::InvalidArgumentError("dense_shape must have at least one dimension"));
    const int64_t rows = dense_shape.flat<int64_t>()[0];
    const int64_t* idx = indices.flat<int64_t>().data();
    std::vector<std::vector<int64_t>> by_row(static_cast<size_t>(std::max<int64_t>(rows, 0)));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = idx[i * rank];
      OP_REQUIRES(ctx, r >= 0 && r < rows,
                  absl::InvalidArgumentError(absl::StrCat(
                      "indices(", i, ", 0) is invalid: ", r, " >= ", rows)));
      by_row[r].push_back(i);
    }
    int64_t total = 0;
    for (const auto& r : by_row) total += std::max<int64_t>(r.size(), 1);
    Tensor *out_indices = nullptr, *out_values = nullptr, *empty = nullptr, *reverse = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({total, rank}), &out_indices));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({total}), &out_values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({rows}), &empty));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({n}), &reverse));
    int64_t* oi = out_indices->flat<int64_t>().data();
    T* ov = out_values->flat<T>().data();
    const T* v = values.flat<T>().data();
    int64_t at = 0;
    for (int64_t r = 0; r < rows; ++r) {
      empty->flat<bool>()[r] = by_row[r].empty();
      if (by_row[r].empty()) {
        oi[at * rank] = r;
        for (int64_t d = 1; d < rank; ++d) oi[at * rank + d] = 0;
        ov[at++] = fill.flat<T>()[0];
        continue;
      }
      for (int64_t i : by_row[r]) {
        for (int64_t d = 0; d < rank; ++d) oi[at * rank + d] = idx[i * rank + d];
        ov[at] = v[i];
        reverse->flat<int64_t>()[i] = at++;
      }
    }
  }
};

REGISTER_KERNEL(KernelDefBuilder("SparseReshape").Device(kDeviceCpu), SparseReshapeOp);
#define GR_REGISTER_FILL_EMPTY_ROWS(T)                                                   \
  REGISTER_KERNEL(                                                                       \
      KernelDefBuilder("SparseFillEmptyRows").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      SparseFillEmptyRowsOp<T>)
GR_REGISTER_FILL_EMPTY_ROWS(float);
GR_REGISTER_FILL_EMPTY_ROWS(double);
GR_REGISTER_FILL_EMPTY_ROWS(int32_t);
GR_REGISTER_FILL_EMPTY_ROWS(int64_t);
GR_REGISTER_FILL_EMPTY_ROWS(bool);
GR_REGISTER_FILL_EMPTY_ROWS(std::string);
#undef GR_REGISTER_FILL_EMPTY_ROWS

}  // namespace
}  // namespace graphrun
