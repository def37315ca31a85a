// CPU kernels that join and split tensors: Pack, Unpack, ConcatV2, Concat,
// Split, SplitV.
// Joining copies row blocks (memcpy; strings element-wise) on the intra-op
// pool when big. Splitting shares the input's buffer when every piece is a
// contiguous, aligned range of it, else copies. Semantics and messages
// follow TensorFlow's pack_op.cc, unpack_op.cc, concat_op.cc, split_op.cc.
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// Pieces of `input` along `axis` when every dim before it is 1: piece i is
// rows [starts[i], starts[i] + size) of `axis`, with shape `piece_shape`.
// Returns false (and leaves `out` empty) unless all pieces start aligned
// (strings need no alignment).
bool SharedPieces(const Tensor& input, int axis,
                  const std::vector<int64_t>& starts, int64_t size,
                  const TensorShape& piece_shape, std::vector<Tensor>* out) {
  const TensorShape& shape = input.shape();
  if (DimProduct(shape, 0, axis) != 1) return false;
  absl::StatusOr<Tensor> rows = input.Reshaped(TensorShape(
      {shape.dim_size(axis), DimProduct(shape, axis + 1, shape.dims())}));
  if (!rows.ok()) return false;
  std::vector<Tensor> pieces;
  for (int64_t start : starts) {
    absl::StatusOr<Tensor> piece =
        rows->Slice(start, start + size).Reshaped(piece_shape);
    if (!piece.ok()) return false;
    if (input.dtype() != DT_STRING && !IsAligned(*piece)) return false;
    pieces.push_back(*std::move(piece));
  }
  *out = std::move(pieces);
  return true;
}

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int num = ctx->num_inputs();
    const TensorShape& shape0 = ctx->input(0).shape();
    const int expanded = shape0.dims() + 1;
    int64_t axis = axis_ < 0 ? axis_ + expanded : axis_;
    OP_REQUIRES(ctx, 0 <= axis && axis < expanded,
                absl::InvalidArgumentError(
                    absl::StrCat("axis = ", axis_, " not in [", -expanded,
                                 ", ", expanded, ")")));
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < num; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.shape() == shape0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Shapes of all inputs must match: values[0].shape = ",
                      shape0.DebugString(), " != values[", i,
                      "].shape = ", t.shape().DebugString())));
      inputs.push_back(&t);
    }
    absl::StatusOr<TensorShape> out_shape = TensorShape::FromDims(
        InsertDim(shape0, static_cast<int>(axis), num));
    OP_REQUIRES_OK(ctx, out_shape.status());
    if (num == 1) {
      absl::StatusOr<Tensor> out = ctx->input(0).Reshaped(*out_shape);
      OP_REQUIRES_OK(ctx, out.status());
      ctx->set_output(0, *std::move(out));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;
    ConcatRows(ctx, inputs, DimProduct(shape0, 0, static_cast<int>(axis)),
               out);
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int num = ctx->num_outputs();
    const int rank = input.dims();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    OP_REQUIRES(ctx, 0 <= axis && axis < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "axis = ", axis_, " not in [", -rank, ", ", rank, ")")));
    const int a = static_cast<int>(axis);
    OP_REQUIRES(ctx, input.dim_size(a) == num,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input shape axis ", a, " must equal ", num,
                    ", got shape ", input.shape().DebugString())));
    TensorShape piece_shape = input.shape();
    piece_shape.RemoveDim(a);
    std::vector<int64_t> starts(num);
    for (int i = 0; i < num; ++i) starts[i] = i;
    std::vector<Tensor> shared;
    if (SharedPieces(input, a, starts, 1, piece_shape, &shared)) {
      for (int i = 0; i < num; ++i) ctx->set_output(i, std::move(shared[i]));
      return;
    }
    std::vector<Tensor*> outs(num);
    for (int i = 0; i < num; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, piece_shape, &outs[i]));
    }
    if (piece_shape.num_elements() == 0) return;
    SplitRows(ctx, input, DimProduct(input.shape(), 0, a), outs);
  }

 private:
  int64_t axis_ = 0;
};

// ConcatV2 (values, axis) and Concat (concat_dim, values).
class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* ctx)
      : OpKernel(ctx), axis_first_(type_string() == "Concat") {}
  void Compute(OpKernelContext* ctx) override {
    const int num = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    const Tensor& axis_t = ctx->input(axis_first_ ? 0 : num);
    OP_REQUIRES(ctx, axis_t.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "axis tensor should be a scalar integer, but got shape ",
                    axis_t.shape().DebugString())));
    const int64_t concat_dim = IntScalar(axis_t);
    const TensorShape& shape0 = ctx->input(first).shape();
    const int rank = shape0.dims();
    const int64_t axis = concat_dim < 0 ? concat_dim + rank : concat_dim;
    OP_REQUIRES(ctx, 0 <= axis && axis < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "ConcatOp : Expected concatenating dimensions in the "
                    "range [", -rank, ", ", rank, "), but got ", concat_dim)));
    const int a = static_cast<int>(axis);
    std::vector<const Tensor*> inputs;
    int64_t out_axis_size = 0;
    int nonempty = 0, last_nonempty = -1;
    for (int i = 0; i < num; ++i) {
      const Tensor& t = ctx->input(first + i);
      OP_REQUIRES(ctx, t.dims() == rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "ConcatOp : Ranks of all input tensors should match: "
                      "shape[0] = ", shape0.DebugString(), " vs. shape[", i,
                      "] = ", t.shape().DebugString())));
      for (int j = 0; j < rank; ++j) {
        OP_REQUIRES(ctx, j == a || t.dim_size(j) == shape0.dim_size(j),
                    absl::InvalidArgumentError(absl::StrCat(
                        "ConcatOp : Dimensions of inputs should match: "
                        "shape[0] = ", shape0.DebugString(), " vs. shape[",
                        i, "] = ", t.shape().DebugString())));
      }
      OP_REQUIRES(ctx, out_axis_size <= kMaxElements - t.dim_size(a),
                  absl::InvalidArgumentError(absl::StrCat(
                      "ConcatOp : the concatenated dimension ", a,
                      " is too large (more than 2^48)")));
      out_axis_size += t.dim_size(a);
      inputs.push_back(&t);
      if (t.NumElements() > 0) {
        ++nonempty;
        last_nonempty = first + i;
      }
    }
    TensorShape out_shape = shape0;
    OP_REQUIRES_OK(ctx, out_shape.SetDimWithStatus(a, out_axis_size));
    // Everything but one input is empty: that input is the result.
    if (nonempty == 1 && ctx->input(last_nonempty).shape() == out_shape) {
      ctx->set_output(0, ctx->input(last_nonempty));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    ConcatRows(ctx, inputs, DimProduct(shape0, 0, a), out);
  }

 private:
  const bool axis_first_;
};

class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& split_dim_t = ctx->input(0);
    const Tensor& input = ctx->input(1);
    const int num_split = ctx->num_outputs();
    OP_REQUIRES(ctx, split_dim_t.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("split_dim must be a scalar but has rank ",
                                 split_dim_t.dims())));
    const int64_t split_dim_orig = IntScalar(split_dim_t);
    const int rank = input.dims();
    const int64_t split_dim =
        split_dim_orig < 0 ? split_dim_orig + rank : split_dim_orig;
    OP_REQUIRES(ctx, 0 <= split_dim && split_dim < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "-input rank(-", rank, ") <= split_dim < input rank (",
                    rank, "), but got ", split_dim_orig)));
    const int a = static_cast<int>(split_dim);
    OP_REQUIRES(ctx, num_split > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Number of ways to split should be > 0, but got ",
                    num_split)));
    const int64_t dim = input.dim_size(a);
    OP_REQUIRES(ctx, dim % num_split == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Number of ways to split should evenly divide the split "
                    "dimension, but got split_dim ", split_dim, " (size = ",
                    dim, ") and num_split ", num_split)));
    if (num_split == 1) {
      ctx->set_output(0, input);
      return;
    }
    const int64_t size = dim / num_split;
    TensorShape piece_shape = input.shape();
    piece_shape.set_dim(a, size);
    std::vector<int64_t> starts(num_split);
    for (int i = 0; i < num_split; ++i) starts[i] = i * size;
    std::vector<Tensor> shared;
    if (SharedPieces(input, a, starts, size, piece_shape, &shared)) {
      for (int i = 0; i < num_split; ++i) ctx->set_output(i, std::move(shared[i]));
      return;
    }
    std::vector<Tensor*> outs(num_split);
    for (int i = 0; i < num_split; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, piece_shape, &outs[i]));
    }
    if (piece_shape.num_elements() == 0) return;
    SplitRows(ctx, input, DimProduct(input.shape(), 0, a), outs);
  }
};

// SplitV: pieces of the sizes size_splits gives along split_dim (one size
// may be -1: what the others leave).
class SplitVOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes_t = ctx->input(1);
    const Tensor& split_dim_t = ctx->input(2);
    const int num_split = ctx->num_outputs();
    OP_REQUIRES(ctx, split_dim_t.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "split_dim_tensor must have exactly one element.")));
    const int64_t split_dim_orig = IntScalar(split_dim_t);
    const int rank = input.dims();
    const int64_t split_dim = split_dim_orig < 0 ? split_dim_orig + rank : split_dim_orig;
    OP_REQUIRES(ctx, 0 <= split_dim && split_dim < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "-input rank(-", rank, ") <= split_dim < input rank (", rank,
                    "), but got ", split_dim_orig)));
    OP_REQUIRES(ctx, sizes_t.dims() == 1 && sizes_t.NumElements() == num_split,
                absl::InvalidArgumentError(absl::StrCat(
                    "size of the split_tensor must be 1-D and have the same elements "
                    "as outputs got ", sizes_t.dims(), " -D and ", sizes_t.NumElements(),
                    " elements")));
    const int a = static_cast<int>(split_dim);
    const int64_t dim = input.dim_size(a);
    std::vector<int64_t> sizes = sizes_t.dtype() == DT_INT8 ? std::vector<int64_t>()
                                                             : IntValues(sizes_t);
    if (sizes_t.dtype() == DT_INT8) {
      for (int64_t i = 0; i < num_split; ++i) sizes.push_back(sizes_t.flat<int8_t>()[i]);
    }
    int64_t known = 0;
    int unknown = -1;
    for (int i = 0; i < num_split; ++i) {
      if (sizes[i] == -1) {
        OP_REQUIRES(ctx, unknown < 0,
                    absl::InvalidArgumentError(
                        "There can only be one -1 in the input."));
        unknown = i;
      } else {
        OP_REQUIRES(ctx, sizes[i] >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Split size at index ", i, " must be >= 0. Got: ", sizes[i])));
        known += sizes[i];
      }
    }
    OP_REQUIRES(ctx, (unknown < 0 && known == dim) || (unknown >= 0 && known <= dim),
                absl::InvalidArgumentError(absl::StrCat(
                    "Determined shape must either match input shape along split_dim "
                    "exactly if fully specified, or be less than the size of the input "
                    "along split_dim if not fully specified.  Got: ", known)));
    if (unknown >= 0) sizes[unknown] = dim - known;
    if (num_split == 1) {
      ctx->set_output(0, input);
      return;
    }
    std::vector<Tensor*> outs(num_split);
    for (int i = 0; i < num_split; ++i) {
      TensorShape piece = input.shape();
      piece.set_dim(a, sizes[i]);
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, piece, &outs[i]));
    }
    if (input.NumElements() == 0) return;
    SplitRows(ctx, input, DimProduct(input.shape(), 0, a), outs);
  }
};

REGISTER_KERNEL(KernelDefBuilder("Pack").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                PackOp);
REGISTER_KERNEL(KernelDefBuilder("Unpack").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                UnpackOp);
REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tidx", {DT_INT32, DT_INT64}),
                ConcatV2Op);
REGISTER_KERNEL(KernelDefBuilder("Concat").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                ConcatV2Op);
REGISTER_KERNEL(KernelDefBuilder("SplitV").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                SplitVOp);
REGISTER_KERNEL(KernelDefBuilder("Split").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                SplitOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
