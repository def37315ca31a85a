#include "kernels/cpu/tensor_list.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

std::string TensorList::DebugString() const {
  int64_t set = 0;
  for (const Tensor& t : tensors) set += t.IsInitialized() ? 1 : 0;
  return absl::StrCat("TensorList<", DataTypeString(element_dtype), ", ",
                      element_shape.DebugString(), ", ", set, " of ",
                      tensors.size(), " elements set>");
}

namespace list_kernels {
namespace {

// Only counted, never used to order anything: relaxed.
std::atomic<int64_t> list_copies{0};

}  // namespace

absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected an int32 or int64 shape tensor; found ", DataTypeString(t.dtype())));
  }
  auto value = [&t](int64_t i) -> int64_t {
    return t.dtype() == DT_INT32 ? t.flat<int32_t>()[i] : t.flat<int64_t>()[i];
  };
  if (t.dims() == 0) {
    if (value(0) == -1) return PartialShape();
    return absl::InvalidArgumentError(
        "The only valid scalar shape tensor is the fully unknown shape "
        "specified as -1.");
  }
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape must be a vector or the scalar -1, got shape ", t.shape().DebugString()));
  }
  std::vector<int64_t> dims(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    dims[i] = value(i);
    if (dims[i] < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dimension ", dims[i], " must be >= -1"));
    }
  }
  PartialShape shape(std::move(dims));
  if (shape.IsFullyDefined()) GR_RETURN_IF_ERROR(TensorShape::FromDims(shape.dims()).status());
  return shape;
}

absl::StatusOr<const TensorList*> GetInputList(OpKernelContext* ctx, int index) {
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_VARIANT || t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input list must be a scalar saw: ", t.shape().DebugString()));
  }
  const Variant& v = t.scalar<Variant>();
  const TensorList* list = v.get<TensorList>();
  if (list == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input handle is not a list. Saw: '", v.DebugString(), "'"));
  }
  return list;
}

absl::StatusOr<PartialShape> ElementShapeFromInput(OpKernelContext* ctx,
                                                   const TensorList& list,
                                                   int index) {
  GR_ASSIGN_OR_RETURN(PartialShape shape, PartialShapeFromTensor(ctx->input(index)));
  auto merged = InferenceContext::Merge(shape, list.element_shape);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incompatible shapes during merge: ", shape.DebugString(), " vs. ",
        list.element_shape.DebugString()));
  }
  return merged;
}

absl::StatusOr<TensorList*> ForwardOrCopyList(OpKernelContext* ctx, int input,
                                              int output, const TensorList& list) {
  // The handle tensor is forwarded when this kernel holds its only
  // reference; the list inside may still be shared with another handle
  // (a copy of this Variant), so check that too before writing into it.
  Tensor* out = nullptr;
  GR_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(input, output, TensorShape(), &out));
  Variant& v = out->scalar<Variant>();
  if (TensorList* mine = v.MutableIfUnique<TensorList>(); mine != nullptr && mine == &list) {
    return mine;
  }
  list_copies.fetch_add(1, std::memory_order_relaxed);
  auto copy = std::make_shared<TensorList>(list);
  TensorList* raw = copy.get();
  v = Variant(std::move(copy));
  return raw;
}

int64_t ListCopies() { return list_copies.load(std::memory_order_relaxed); }

absl::Status SetOutputList(OpKernelContext* ctx, int output, TensorList list) {
  Tensor* out = nullptr;
  GR_RETURN_IF_ERROR(ctx->allocate_output(output, TensorShape(), &out));
  out->scalar<Variant>() = Variant(std::make_shared<TensorList>(std::move(list)));
  return absl::OkStatus();
}

absl::Status CheckElementDtype(DataType element_dtype, const TensorList& list) {
  if (element_dtype == list.element_dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Invalid data types; op elements ", DataTypeString(element_dtype),
      " but list elements ", DataTypeString(list.element_dtype)));
}

absl::StatusOr<Tensor> Zeros(OpKernelContext* ctx, DataType dtype,
                             const TensorShape& shape) {
  return Tensor::Allocate(ctx->device()->allocator(), dtype, shape,
                          TensorBuffer::Init::kZero);
}

absl::StatusOr<Tensor> Aligned(OpKernelContext* ctx, const Tensor& t) {
  if (reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment == 0) return t;
  GR_ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(ctx->device()->allocator(), t.dtype(),
                                                    t.shape(),
                                                    TensorBuffer::Init::kUninitialized));
  CopyInto(t, &copy, 0);
  return copy;
}

void CopyInto(const Tensor& src, Tensor* dst, int64_t offset) {
  CopyElements(src, 0, src.NumElements(), dst, offset);
}

absl::StatusOr<TensorShape> ResolveElementShape(const TensorList& list,
                                                const std::vector<int64_t>& indices,
                                                PartialShape element_shape) {
  if (!list.element_shape.IsFullyDefined()) {
    for (int64_t i : indices) {
      const Tensor& t = list.tensors[i];
      if (!t.IsInitialized()) continue;
      auto merged = InferenceContext::Merge(element_shape, PartialShape(t.shape()));
      if (!merged.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Incompatible shapes during merge: ", element_shape.DebugString(),
            " vs. ", t.shape().DebugString()));
      }
      element_shape = *std::move(merged);
    }
  }
  if (!element_shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tried to stack list which only contains uninitialized tensors and "
        "has a non-fully-defined element_shape: ",
        element_shape.DebugString()));
  }
  return TensorShape::FromDims(element_shape.dims());
}

absl::Status StackElements(OpKernelContext* ctx, const TensorList& list,
                           const std::vector<int64_t>& indices,
                           const TensorShape& element, int output) {
  TensorShape out_shape;
  GR_RETURN_IF_ERROR(out_shape.AddDimWithStatus(static_cast<int64_t>(indices.size())));
  for (int64_t d : element.dim_sizes()) GR_RETURN_IF_ERROR(out_shape.AddDimWithStatus(d));
  Tensor* out = nullptr;
  GR_RETURN_IF_ERROR(ctx->allocate_output(output, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  const int64_t n = element.num_elements();
  Tensor zeros;
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& t = list.tensors[indices[k]];
    if (t.IsInitialized()) {
      if (t.shape() != element) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Incompatible shapes during merge: ", element.DebugString(), " vs. ",
            t.shape().DebugString(), " (list element ", indices[k], ")"));
      }
      CopyInto(t, out, static_cast<int64_t>(k) * n);
    } else {
      if (!zeros.IsInitialized()) {
        GR_ASSIGN_OR_RETURN(zeros, Zeros(ctx, list.element_dtype, element));
      }
      CopyInto(zeros, out, static_cast<int64_t>(k) * n);
    }
  }
  return absl::OkStatus();
}

}  // namespace list_kernels
}  // namespace graphrun
