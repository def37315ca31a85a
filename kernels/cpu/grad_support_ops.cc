// CPU kernels of the ops TensorFlow's gradients of v1 while loops emit
// (graph/ops/loop_gradient_ops.cc), with TensorFlow's semantics and
// messages (core/kernels/stack.cc, concat_op.cc's ConcatOffsetOp,
// dynamic_stitch_op.cc). Each
// StackV2 execution makes a new stack; its handle (and copies of it, through
// Enter into the loops) keeps it alive, so a stack lives for the step that
// made it. Pushed tensors are held, not copied: graphrun's tensors are not
// written in place while anything else holds their buffer.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/array_strided_slice.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class Stack : public ResourceBase {
 public:
  Stack(std::string name, DataType elem_type, int64_t max_size)
      : name_(std::move(name)), elem_type_(elem_type), max_size_(max_size) {}

  std::string DebugString() const override {
    absl::MutexLock lock(&mu_);
    return absl::StrCat("Stack[", name_, "] of ", elements_.size(), " ",
                        DataTypeString(elem_type_));
  }

  absl::Status Push(const Tensor& t) {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::InvalidArgumentError(absl::StrCat("Stack[", name_, "] is closed."));
    if (t.dtype() != elem_type_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack[", name_, "]: pushing a ", DataTypeString(t.dtype()), " onto a stack of ",
          DataTypeString(elem_type_)));
    }
    if (max_size_ >= 0 && static_cast<int64_t>(elements_.size()) >= max_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack[", name_, "] overflowed its max_size (", max_size_, ")"));
    }
    elements_.push_back(t);
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Pop() {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::InvalidArgumentError(absl::StrCat("Stack[", name_, "] is closed."));
    if (elements_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Stack[", name_, "] is empty."));
    }
    Tensor t = std::move(elements_.back());
    elements_.pop_back();
    return t;
  }

  void Close() {
    absl::MutexLock lock(&mu_);
    elements_.clear();
    closed_ = true;
  }

  DataType elem_type() const { return elem_type_; }

 private:
  const std::string name_;
  const DataType elem_type_;
  const int64_t max_size_;
  mutable absl::Mutex mu_;
  std::vector<Tensor> elements_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<Stack*> GetStack(const Tensor& t) {
  Stack* stack = t.dtype() == DT_RESOURCE && t.NumElements() == 1
                     ? t.flat<ResourceHandle>()[0].get<Stack>()
                     : nullptr;
  if (stack == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the stack handle is not a stack: a ", DataTypeString(t.dtype()), " tensor of shape ",
        t.shape().DebugString()));
  }
  return stack;
}

class StackOp : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    OP_REQUIRES_OK(c, c->GetAttr("elem_type", &elem_type_));
    OP_REQUIRES_OK(c, c->GetAttr("stack_name", &name_));
    if (name_.empty()) name_ = c->def().name();
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& max_size = ctx->input(0);
    OP_REQUIRES(ctx, max_size.dims() == 0 && max_size.dtype() == DT_INT32,
                absl::InvalidArgumentError(absl::StrCat(
                    "max_size must be an int32 scalar, got shape ",
                    max_size.shape().DebugString())));
    Tensor* handle = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &handle));
    handle->scalar<ResourceHandle>() = ResourceHandle(
        name_, std::make_shared<Stack>(name_, elem_type_, max_size.scalar<int32_t>()));
  }

 private:
  DataType elem_type_ = DT_FLOAT;
  std::string name_;
};

class StackPushOp : public OpKernel {
 public:
  explicit StackPushOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Stack*> stack = GetStack(ctx->input(0));
    OP_REQUIRES_OK(ctx, stack.status());
    OP_REQUIRES_OK(ctx, (*stack)->Push(ctx->input(1)));
    ctx->set_output(0, ctx->input(1));
  }
};

class StackPopOp : public OpKernel {
 public:
  explicit StackPopOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Stack*> stack = GetStack(ctx->input(0));
    OP_REQUIRES_OK(ctx, stack.status());
    OP_REQUIRES(ctx, (*stack)->elem_type() == output_type(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "popping a ", DataTypeString(output_type(0)), " from a stack of ",
                    DataTypeString((*stack)->elem_type()))));
    absl::StatusOr<Tensor> t = (*stack)->Pop();
    OP_REQUIRES_OK(ctx, t.status());
    ctx->set_output(0, *std::move(t));
  }
};

class StackCloseOp : public OpKernel {
 public:
  explicit StackCloseOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Stack*> stack = GetStack(ctx->input(0));
    OP_REQUIRES_OK(ctx, stack.status());
    (*stack)->Close();
  }
};

// For each shape, where its input starts in a concatenation along
// concat_dim.
class ConcatOffsetOp : public OpKernel {
 public:
  explicit ConcatOffsetOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dim = ctx->input(0);
    OP_REQUIRES(ctx, dim.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Concat dim tensor should be a scalar, but got shape ",
                    dim.shape().DebugString())));
    const int n = ctx->num_inputs() - 1;
    auto value = [&](const Tensor& t, int64_t i) -> int64_t {
      return t.dtype() == DT_INT64 ? t.flat<int64_t>()[i] : t.flat<int32_t>()[i];
    };
    const Tensor& first = ctx->input(1);
    OP_REQUIRES(ctx, first.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "input 0 should be a vector, got shape ", first.shape().DebugString())));
    const int64_t rank = first.NumElements();
    int64_t axis = dim.scalar<int32_t>();
    if (axis < 0) axis += rank;
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Concat dim is out of range: ", dim.scalar<int32_t>(), " vs. ", rank)));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& s = ctx->input(1 + i);
      OP_REQUIRES(ctx, s.dims() == 1 && s.NumElements() == rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", i, " should contain ", rank, " elements, but got ",
                      s.NumElements())));
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({rank}), &out));
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis) {
          OP_REQUIRES(ctx, value(s, d) == value(first, d),
                      absl::InvalidArgumentError(absl::StrCat(
                          "All dimensions except ", axis, " must match. Input ", i,
                          " has shape ", s.shape().DebugString(), " and doesn't match input 0")));
        }
        const int64_t o = d == axis ? offset : 0;
        if (out->dtype() == DT_INT64) {
          out->flat<int64_t>()[d] = o;
        } else {
          out->flat<int32_t>()[d] = static_cast<int32_t>(o);
        }
      }
      offset += value(s, axis);
    }
  }
};

// merged[indices[m][i], ...] = data[m][i, ...] for every m and i, in order
// (a later index wins); rows no index names are zeros.
class DynamicStitchOp : public OpKernel {
 public:
  explicit DynamicStitchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    int64_t rows = 0;
    for (int m = 0; m < n; ++m) {
      const Tensor& idx = ctx->input(m);
      for (int64_t i = 0; i < idx.NumElements(); ++i) {
        const int32_t r = idx.flat<int32_t>()[i];
        OP_REQUIRES(ctx, r >= 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "DynamicStitch: indices[", m, "] holds ", r, ", which is negative")));
        rows = std::max<int64_t>(rows, r + 1);
      }
    }
    // Each data[m] is indices[m].shape + the element shape.
    const Tensor& data0 = ctx->input(n);
    const Tensor& idx0 = ctx->input(0);
    OP_REQUIRES(ctx, data0.dims() >= idx0.dims(),
                absl::InvalidArgumentError("DynamicStitch: data[0] has fewer dims than indices[0]"));
    TensorShape element;
    for (int d = idx0.dims(); d < data0.dims(); ++d) element.AddDim(data0.dim_size(d));
    const int64_t width = element.num_elements();
    for (int m = 0; m < n; ++m) {
      TensorShape want = ctx->input(m).shape();
      for (int d = 0; d < element.dims(); ++d) want.AddDim(element.dim_size(d));
      OP_REQUIRES(ctx, ctx->input(n + m).shape() == want,
                  absl::InvalidArgumentError(absl::StrCat(
                      "DynamicStitch: data[", m, "] must have shape ", want.DebugString(),
                      " (indices[", m, "].shape + the element shape), not ",
                      ctx->input(n + m).shape().DebugString())));
    }
    TensorShape shape({rows});
    for (int d = 0; d < element.dims(); ++d) shape.AddDim(element.dim_size(d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->dtype() == DT_STRING) {  // rows no index names stay empty strings
      std::string* o = out->flat<std::string>().data();
      for (int m = 0; m < n; ++m) {
        const Tensor& idx = ctx->input(m);
        const std::string* src = ctx->input(n + m).flat<std::string>().data();
        for (int64_t i = 0; i < idx.NumElements(); ++i) {
          std::copy(src + i * width, src + (i + 1) * width,
                    o + idx.flat<int32_t>()[i] * width);
        }
      }
      return;
    }
    const size_t row_bytes = static_cast<size_t>(width) * DataTypeSize(out->dtype());
    if (row_bytes > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    for (int m = 0; m < n; ++m) {
      const Tensor& idx = ctx->input(m);
      const char* src = static_cast<const char*>(ctx->input(n + m).raw_data());
      for (int64_t i = 0; i < idx.NumElements(); ++i) {
        std::memcpy(static_cast<char*>(out->raw_data()) + idx.flat<int32_t>()[i] * row_bytes,
                    src + i * row_bytes, row_bytes);
      }
    }
  }
};

// Zeros of `shape`, with dy written where the strided slice reads: the
// slice's positions in row-major order are dy's elements in order (shrunk
// and new axes have size 1 and do not reorder them).
class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("begin_mask", &masks_.begin));
    ctx->SetStatus(ctx->GetAttr("end_mask", &masks_.end));
    ctx->SetStatus(ctx->GetAttr("ellipsis_mask", &masks_.ellipsis));
    ctx->SetStatus(ctx->GetAttr("new_axis_mask", &masks_.new_axis));
    ctx->SetStatus(ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis));
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<TensorShape> shape = array_kernels::ShapeFromTensor(ctx->input(0));
    OP_REQUIRES_OK(ctx, shape.status());
    absl::StatusOr<array_kernels::StridedSliceSpec> spec = array_kernels::ValidateStridedSlice(
        *shape, ctx->input(1), ctx->input(2), ctx->input(3), masks_);
    OP_REQUIRES_OK(ctx, spec.status());
    const Tensor& dy = ctx->input(4);
    int64_t count = 1;
    for (int64_t d : spec->processing_dims) count *= d;
    OP_REQUIRES(ctx, dy.NumElements() == count && dy.shape() == spec->final_shape,
                absl::InvalidArgumentError(absl::StrCat(
                    "shape of dy was ", dy.shape().DebugString(), " instead of ",
                    spec->final_shape.DebugString())));
    OP_REQUIRES(ctx, dy.dtype() != DT_STRING,
                absl::UnimplementedError("StridedSliceGrad of strings"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const size_t width = static_cast<size_t>(DataTypeSize(dy.dtype()));
    if (out->TotalBytes() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    if (count == 0) return;
    const int rank = shape->dims();
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape->dim_size(d + 1);
    std::vector<int64_t> idx(rank, 0);
    const char* src = static_cast<const char*>(dy.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = 0;
      for (int d = 0; d < rank; ++d) at += (spec->begin[d] + idx[d] * spec->strides[d]) * stride[d];
      std::memcpy(dst + at * width, src + i * width, width);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < spec->processing_dims[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  array_kernels::StridedSliceMasks masks_;
};

REGISTER_KERNEL(KernelDefBuilder("DynamicStitch").Device(kDeviceCpu), DynamicStitchOp);
REGISTER_KERNEL(KernelDefBuilder("ParallelDynamicStitch").Device(kDeviceCpu), DynamicStitchOp);
REGISTER_KERNEL(KernelDefBuilder("StridedSliceGrad").Device(kDeviceCpu), StridedSliceGradOp);
REGISTER_KERNEL(KernelDefBuilder("StackV2").Device(kDeviceCpu), StackOp);
REGISTER_KERNEL(KernelDefBuilder("StackPushV2").Device(kDeviceCpu), StackPushOp);
REGISTER_KERNEL(KernelDefBuilder("StackPopV2").Device(kDeviceCpu), StackPopOp);
REGISTER_KERNEL(KernelDefBuilder("StackCloseV2").Device(kDeviceCpu), StackCloseOp);
REGISTER_KERNEL(KernelDefBuilder("ConcatOffset").Device(kDeviceCpu), ConcatOffsetOp);

}  // namespace
}  // namespace graphrun
