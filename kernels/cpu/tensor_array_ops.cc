// CPU kernels of the TensorArray ops, version 3 (graph/ops/
// tensor_array_ops.cc), with TensorFlow's semantics and messages
// (core/kernels/tensor_array_ops.cc). TensorArrayV3 makes a TensorArray
// (tensor_array.h) and returns a DT_RESOURCE scalar that points to it; the
// other kernels reach the array through that handle. Flow inputs carry no
// data: Write, Scatter and Split pass theirs on as flow_out.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/tensor_array.h"
#include "kernels/cpu/tensor_list.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

absl::StatusOr<TensorArray*> GetTensorArray(OpKernelContext* ctx) {
  const Tensor& t = ctx->input(0);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray handle must be a resource scalar, got a ",
        DataTypeString(t.dtype()), " tensor of shape ", t.shape().DebugString()));
  }
  const ResourceHandle& handle = t.flat<ResourceHandle>()[0];
  TensorArray* array = handle.get<TensorArray>();
  if (array == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input handle is not a TensorArray. Saw: '", handle.DebugString(), "'"));
  }
  return array;
}

absl::StatusOr<int64_t> IndexScalar(const Tensor& t) {
  if (t.dims() != 0 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray index must be scalar, but had shape: ", t.shape().DebugString()));
  }
  return t.scalar<int32_t>();
}

absl::StatusOr<std::vector<int64_t>> IndexVector(const Tensor& t) {
  if (t.dims() != 1 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected indices to be a vector, but received shape: ", t.shape().DebugString()));
  }
  return std::vector<int64_t>(t.flat<int32_t>().begin(), t.flat<int32_t>().end());
}

absl::Status CheckDtype(DataType op_dtype, const TensorArray& array) {
  if (op_dtype == array.dtype()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "TensorArray dtype is ", DataTypeString(array.dtype()), " but Op requested dtype ",
      DataTypeString(op_dtype), "."));
}

// InvalidArgument unless `value` may be written into `array`.
absl::Status CheckWriteDtype(const Tensor& value, const TensorArray& array) {
  if (value.dtype() == array.dtype()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "TensorArray dtype is ", DataTypeString(array.dtype()),
      " but Op is trying to write dtype ", DataTypeString(value.dtype()), "."));
}

// Rows [begin, end) of `t` (shape [end - begin] + t.shape[1:]), or row
// `begin` alone without the leading dim when `squeeze`; aligned.
absl::StatusOr<Tensor> Rows(OpKernelContext* ctx, const Tensor& t, int64_t begin,
                            int64_t end, bool squeeze) {
  Tensor slice = t.Slice(begin, end);
  if (squeeze) {
    TensorShape row = t.shape();
    row.RemoveDim(0);
    GR_ASSIGN_OR_RETURN(slice, slice.Reshaped(row));
  }
  return list_kernels::Aligned(ctx, slice);
}

// Joins `values` along dim 0 into output 0, of shape [rows] + row_shape.
absl::Status ConcatToOutput(OpKernelContext* ctx, const std::vector<Tensor>& values,
                            int64_t rows, const TensorShape& row_shape) {
  TensorShape out_shape;
  GR_RETURN_IF_ERROR(out_shape.AddDimWithStatus(rows));
  for (int64_t d : row_shape.dim_sizes()) {
    GR_RETURN_IF_ERROR(out_shape.AddDimWithStatus(d));
  }
  Tensor* out = nullptr;
  GR_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
  int64_t offset = 0;
  for (const Tensor& v : values) {
    list_kernels::CopyInto(v, out, offset);
    offset += v.NumElements();
  }
  return absl::OkStatus();
}

class TensorArrayOp : public OpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &options_.dtype));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape", &options_.element_shape));
    OP_REQUIRES_OK(c, c->GetAttr("dynamic_size", &options_.dynamic_size));
    OP_REQUIRES_OK(c, c->GetAttr("clear_after_read", &options_.clear_after_read));
    OP_REQUIRES_OK(c, c->GetAttr("identical_element_shapes",
                                 &options_.identical_element_shapes));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_array_name", &options_.name));
    if (options_.name.empty()) options_.name = c->def().name();
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& size = ctx->input(0);
    OP_REQUIRES(ctx, size.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorArray size must be scalar, but had shape: ",
                    size.shape().DebugString())));
    TensorArray::Options options = options_;
    options.size = size.scalar<int32_t>();
    OP_REQUIRES(ctx, options.size >= 0,
                absl::InvalidArgumentError("Size should be >= 0."));
    Tensor* handle = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &handle));
    handle->scalar<ResourceHandle>() =
        ResourceHandle(options.name, std::make_shared<TensorArray>(std::move(options)));
    Tensor* flow = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape(), &flow));
    flow->scalar<float>() = 0.0f;
  }

 private:
  TensorArray::Options options_;
};

class TensorArrayWriteOp : public OpKernel {
 public:
  explicit TensorArrayWriteOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto index = IndexScalar(ctx->input(1));
    OP_REQUIRES_OK(ctx, index.status());
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    const Tensor& value = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckWriteDtype(value, **array));
    OP_REQUIRES_OK(ctx, (*array)->Write(*index, value));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArrayReadOp : public OpKernel {
 public:
  explicit TensorArrayReadOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto index = IndexScalar(ctx->input(1));
    OP_REQUIRES_OK(ctx, index.status());
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    OP_REQUIRES_OK(ctx, CheckDtype(dtype_, **array));
    auto value = (*array)->Read(*index, ctx->device()->allocator());
    OP_REQUIRES_OK(ctx, value.status());
    ctx->set_output(0, *std::move(value));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class TensorArrayGatherOp : public OpKernel {
 public:
  explicit TensorArrayGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape", &element_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    TensorArray& ta = **array;
    OP_REQUIRES_OK(ctx, CheckDtype(dtype_, ta));
    auto indices = IndexVector(ctx->input(1));
    OP_REQUIRES_OK(ctx, indices.status());
    OP_REQUIRES_OK(ctx, ta.SetElementShape(element_shape_));
    if (indices->empty()) {
      const PartialShape shape = ta.ElementShape();
      OP_REQUIRES(ctx, shape.IsFullyDefined(),
                  absl::UnimplementedError(absl::StrCat(
                      "TensorArray has size zero, but element shape ", shape.DebugString(),
                      " is not fully defined. Currently only static shapes are "
                      "supported when packing zero-size TensorArrays.")));
      std::vector<int64_t> dims = {0};
      dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
      auto out_shape = TensorShape::FromDims(dims);
      OP_REQUIRES_OK(ctx, out_shape.status());
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
      return;
    }
    auto values = ta.ReadMany(*indices, ctx->device()->allocator());
    OP_REQUIRES_OK(ctx, values.status());
    const TensorShape& first = (*values)[0].shape();
    for (size_t i = 1; i < values->size(); ++i) {
      OP_REQUIRES(ctx, (*values)[i].shape() == first,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArray has inconsistent shapes.  Index 0 has shape: ",
                      first.DebugString(), " but index ", i,
                      " has shape: ", (*values)[i].shape().DebugString())));
    }
    OP_REQUIRES_OK(ctx, ConcatToOutput(ctx, *values,
                                       static_cast<int64_t>(values->size()), first));
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape element_shape_;
};

class TensorArrayScatterOp : public OpKernel {
 public:
  explicit TensorArrayScatterOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    TensorArray& ta = **array;
    const Tensor& value = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckWriteDtype(value, ta));
    OP_REQUIRES(ctx, value.dims() >= 1,
                absl::InvalidArgumentError("Input value for unpack must be at least a vector"));
    auto indices = IndexVector(ctx->input(1));
    OP_REQUIRES_OK(ctx, indices.status());
    OP_REQUIRES(ctx, static_cast<int64_t>(indices->size()) == value.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected len(indices) == values.shape[0], but saw: ",
                    indices->size(), " vs. ", value.dim_size(0))));
    if (!ta.dynamic_size() && !indices->empty()) {
      auto size = ta.Size();
      OP_REQUIRES_OK(ctx, size.status());
      const int64_t max_index = *std::max_element(indices->begin(), indices->end());
      OP_REQUIRES(ctx, max_index < *size,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Max scatter index must be < array size (", max_index, " vs. ",
                      *size, ")")));
    }
    std::vector<Tensor> rows;
    rows.reserve(indices->size());
    for (size_t k = 0; k < indices->size(); ++k) {
      auto row = Rows(ctx, value, static_cast<int64_t>(k), static_cast<int64_t>(k) + 1,
                      /*squeeze=*/true);
      OP_REQUIRES_OK(ctx, row.status());
      rows.push_back(*std::move(row));
    }
    OP_REQUIRES_OK(ctx, ta.WriteMany(*indices, rows));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArrayConcatOp : public OpKernel {
 public:
  explicit TensorArrayConcatOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape_except0", &except0_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    TensorArray& ta = **array;
    OP_REQUIRES_OK(ctx, CheckDtype(dtype_, ta));
    auto size = ta.Size();
    OP_REQUIRES_OK(ctx, size.status());
    Tensor* lengths = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({*size}), &lengths));
    if (*size == 0) {
      OP_REQUIRES(ctx, except0_.IsFullyDefined(),
                  absl::UnimplementedError(absl::StrCat(
                      "TensorArray has size zero, but element_shape_except0 ",
                      except0_.DebugString(),
                      " is not fully defined. Currently only static shapes are "
                      "supported when concatenating zero-size TensorArrays.")));
      std::vector<int64_t> dims = {0};
      dims.insert(dims.end(), except0_.dims().begin(), except0_.dims().end());
      auto out_shape = TensorShape::FromDims(dims);
      OP_REQUIRES_OK(ctx, out_shape.status());
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
      return;
    }
    std::vector<int64_t> all(*size);
    for (int64_t i = 0; i < *size; ++i) all[i] = i;
    auto values = ta.ReadMany(all, ctx->device()->allocator());
    OP_REQUIRES_OK(ctx, values.status());
    TensorShape rest;
    int64_t total = 0;
    for (size_t i = 0; i < values->size(); ++i) {
      const Tensor& v = (*values)[i];
      OP_REQUIRES(ctx, v.dims() >= 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Concat saw a scalar shape at index ", i,
                      " but requires at least vectors.  Did you mean to call stack?")));
      TensorShape except0 = v.shape();
      except0.RemoveDim(0);
      if (i == 0) {
        rest = except0;
      } else {
        OP_REQUIRES(ctx, except0 == rest,
                    absl::InvalidArgumentError(absl::StrCat(
                        "TensorArray has inconsistent shapes.  Index 0 has (excepting "
                        "dimension 0) shape: ",
                        rest.DebugString(), " but index ", i,
                        " has (excepting dimension 0) shape: ", except0.DebugString())));
      }
      lengths->flat<int64_t>()[i] = v.dim_size(0);
      total += v.dim_size(0);
    }
    OP_REQUIRES_OK(ctx, ConcatToOutput(ctx, *values, total, rest));
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape except0_;
};

class TensorArraySplitOp : public OpKernel {
 public:
  explicit TensorArraySplitOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    TensorArray& ta = **array;
    const Tensor& value = ctx->input(1);
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckWriteDtype(value, ta));
    OP_REQUIRES(ctx, lengths.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected lengths to be a vector, received shape: ",
                    lengths.shape().DebugString())));
    OP_REQUIRES(ctx, value.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected value to be at least a vector, but received shape: ",
                    value.shape().DebugString())));
    const int64_t n = lengths.NumElements();
    int64_t total = 0;
    for (int64_t len : lengths.flat<int64_t>()) {
      OP_REQUIRES(ctx, len >= 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Invalid value in lengths: ", len)));
      total += len;
    }
    OP_REQUIRES(ctx, total == value.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected sum of lengths to be equal to values.shape[0], but sum of "
                    "lengths is ",
                    total, " and value's shape is: ", value.shape().DebugString())));
    if (!ta.dynamic_size()) {
      auto size = ta.Size();
      OP_REQUIRES_OK(ctx, size.status());
      OP_REQUIRES(ctx, *size == n,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorArray's size is not equal to the size of lengths (", *size,
                      " vs. ", n, "), and the TensorArray is not marked as dynamically "
                      "resizeable")));
    }
    std::vector<int64_t> indices(n);
    std::vector<Tensor> pieces;
    pieces.reserve(n);
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t len = lengths.flat<int64_t>()[i];
      auto piece = Rows(ctx, value, start, start + len, /*squeeze=*/false);
      OP_REQUIRES_OK(ctx, piece.status());
      pieces.push_back(*std::move(piece));
      indices[i] = i;
      start += len;
    }
    OP_REQUIRES_OK(ctx, ta.WriteMany(indices, pieces));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArraySizeOp : public OpKernel {
 public:
  explicit TensorArraySizeOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    auto size = (*array)->Size();
    OP_REQUIRES_OK(ctx, size.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>(*size);
  }
};

class TensorArrayCloseOp : public OpKernel {
 public:
  explicit TensorArrayCloseOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto array = GetTensorArray(ctx);
    OP_REQUIRES_OK(ctx, array.status());
    (*array)->Close();
  }
};

REGISTER_KERNEL(KernelDefBuilder("TensorArrayV3").Device(kDeviceCpu), TensorArrayOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayWriteV3").Device(kDeviceCpu), TensorArrayWriteOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayReadV3").Device(kDeviceCpu), TensorArrayReadOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayGatherV3").Device(kDeviceCpu),
                TensorArrayGatherOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayScatterV3").Device(kDeviceCpu),
                TensorArrayScatterOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayConcatV3").Device(kDeviceCpu),
                TensorArrayConcatOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArraySplitV3").Device(kDeviceCpu), TensorArraySplitOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArraySizeV3").Device(kDeviceCpu), TensorArraySizeOp);
REGISTER_KERNEL(KernelDefBuilder("TensorArrayCloseV3").Device(kDeviceCpu), TensorArrayCloseOp);

}  // namespace
}  // namespace graphrun
