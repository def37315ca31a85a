// CPU kernels of the TensorList ops (graph/ops/list_ops.cc), with
// TensorFlow's semantics and messages (core/kernels/list_kernels.*):
//   EmptyTensorList, TensorListReserve, TensorListFromTensor, TensorListSplit,
//   TensorListScatter(V2)        make a list;
//   TensorListSetItem, PushBack, PopBack, Resize
//                                change one (in place when this kernel holds
//                                the only reference, see tensor_list.h);
//   TensorListGetItem, Length, ElementShape, Stack, Gather, Concat(V2)
//                                read one.
// Elements are shared, not copied, wherever TensorFlow shares them; element
// slices of an input are copied only when unaligned.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"
#include "kernels/cpu/tensor_list.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using list_kernels::CheckElementDtype;
using list_kernels::ElementShapeFromInput;
using list_kernels::ForwardOrCopyList;
using list_kernels::GetInputList;
using list_kernels::PartialShapeFromTensor;
using list_kernels::SetOutputList;

// The int32 scalar input `index` ("index", "num_elements"...).
absl::StatusOr<int64_t> Int32Scalar(OpKernelContext* ctx, int index,
                                    const char* what) {
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_INT32 || t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be an int32 scalar, got a ", DataTypeString(t.dtype()),
        " tensor of shape ", t.shape().DebugString()));
  }
  return t.scalar<int32_t>();
}

// InvalidArgument unless `t` has at least one dim (its rows are the
// elements of a list).
absl::Status CheckAtLeastVector(const Tensor& t) {
  if (t.dims() >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor must be at least a vector, but saw shape: ", t.shape().DebugString()));
}

// An empty list of `element_dtype` elements of `element_shape`.
TensorList NewList(DataType element_dtype, PartialShape element_shape) {
  TensorList list;
  list.element_dtype = element_dtype;
  list.element_shape = std::move(element_shape);
  return list;
}

// Row `i` of `t` (shape t.shape[1:]), sharing t's buffer when aligned.
absl::StatusOr<Tensor> Row(OpKernelContext* ctx, const Tensor& t, int64_t i) {
  TensorShape row = t.shape();
  row.RemoveDim(0);
  GR_ASSIGN_OR_RETURN(Tensor slice, t.Slice(i, i + 1).Reshaped(row));
  return list_kernels::Aligned(ctx, slice);
}

// t.shape[1:] as a PartialShape.
PartialShape RowShape(const TensorShape& shape) {
  std::vector<int64_t> dims(shape.dim_sizes().begin() + 1, shape.dim_sizes().end());
  return PartialShape(std::move(dims));
}

// An element of `list` that was never set, read as zeros: needs an element
// shape fully known from `element_shape`, or else from the set elements.
absl::StatusOr<Tensor> ZerosForUnsetElement(OpKernelContext* ctx,
                                            const TensorList& list,
                                            PartialShape element_shape) {
  if (!element_shape.IsFullyDefined()) {
    for (const Tensor& t : list.tensors) {
      if (!t.IsInitialized()) continue;
      auto merged = InferenceContext::Merge(element_shape, PartialShape(t.shape()));
      if (!merged.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Incompatible shapes during merge: ", element_shape.DebugString(), " vs. ",
            t.shape().DebugString()));
      }
      element_shape = *std::move(merged);
    }
  }
  if (!element_shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to read an uninitialized tensor but element_shape is not fully "
        "defined: ",
        element_shape.DebugString(), " and no list element is set."));
  }
  GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(element_shape.dims()));
  return list_kernels::Zeros(ctx, list.element_dtype, shape);
}

class ListOpBase : public OpKernel {
 public:
  explicit ListOpBase(OpKernelConstruction* c, bool has_element_dtype = true)
      : OpKernel(c) {
    if (has_element_dtype) OP_REQUIRES_OK(c, c->GetAttr("element_dtype", &element_dtype_));
  }

 protected:
  // Input 0: a list whose elements are element_dtype_.
  absl::StatusOr<const TensorList*> InputList(OpKernelContext* ctx) const {
    GR_ASSIGN_OR_RETURN(const TensorList* list, GetInputList(ctx, 0));
    GR_RETURN_IF_ERROR(CheckElementDtype(element_dtype_, *list));
    return list;
  }

  DataType element_dtype_ = DT_INVALID;
};

class EmptyTensorListOp : public ListOpBase {
 public:
  explicit EmptyTensorListOp(OpKernelConstruction* c) : ListOpBase(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto max = Int32Scalar(ctx, 1, "max_num_elements");
    OP_REQUIRES_OK(ctx, max.status());
    OP_REQUIRES(ctx, *max >= -1,
                absl::InvalidArgumentError(absl::StrCat(
                    "max_num_elements must be non-negative or -1, got ", *max)));
    auto shape = PartialShapeFromTensor(ctx->input(0));
    OP_REQUIRES_OK(ctx, shape.status());
    TensorList list = NewList(element_dtype_, *std::move(shape));
    list.max_num_elements = static_cast<int>(*max);
    OP_REQUIRES_OK(ctx, SetOutputList(ctx, 0, std::move(list)));
  }
};

class TensorListReserveOp : public ListOpBase {
 public:
  explicit TensorListReserveOp(OpKernelConstruction* c) : ListOpBase(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto shape = PartialShapeFromTensor(ctx->input(0));
    OP_REQUIRES_OK(ctx, shape.status());
    auto n = Int32Scalar(ctx, 1, "num_elements");
    OP_REQUIRES_OK(ctx, n.status());
    OP_REQUIRES(ctx, *n >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "The num_elements to reserve must be a non negative number, "
                    "but got ",
                    *n)));
    TensorList list = NewList(element_dtype_, *std::move(shape));
    list.tensors.resize(*n);
    OP_REQUIRES_OK(ctx, SetOutputList(ctx, 0, std::move(list)));
  }
};

class TensorListFromTensorOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    auto shape = PartialShapeFromTensor(ctx->input(1));
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    const PartialShape rows = RowShape(t.shape());
    OP_REQUIRES(ctx, shape->IsCompatibleWith(rows),
                absl::InvalidArgumentError(absl::StrCat(
                    "Specified a list with shape ", shape->DebugString(),
                    " from a tensor with shape ", rows.DebugString())));
    TensorList list = NewList(t.dtype(), *std::move(shape));
    list.tensors.reserve(t.dim_size(0));
    for (int64_t i = 0; i < t.dim_size(0); ++i) {
      auto row = Row(ctx, t, i);
      OP_REQUIRES_OK(ctx, row.status());
      list.tensors.push_back(*std::move(row));
    }
    OP_REQUIRES_OK(ctx, SetOutputList(ctx, 0, std::move(list)));
  }
};

class TensorListLengthOp : public OpKernel {
 public:
  explicit TensorListLengthOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto list = GetInputList(ctx, 0);
    OP_REQUIRES_OK(ctx, list.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>((*list)->tensors.size());
  }
};

class TensorListElementShapeOp : public OpKernel {
 public:
  explicit TensorListElementShapeOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    auto list = GetInputList(ctx, 0);
    OP_REQUIRES_OK(ctx, list.status());
    const PartialShape& shape = (*list)->element_shape;
    // -1 (a scalar) for an unknown rank, else the dims with -1 unknown.
    std::vector<int64_t> values =
        shape.unknown_rank() ? std::vector<int64_t>{-1} : shape.dims();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0,
                            shape.unknown_rank()
                                ? TensorShape()
                                : TensorShape({static_cast<int64_t>(values.size())}),
                            &out));
    for (size_t i = 0; i < values.size(); ++i) {
      if (out->dtype() == DT_INT32) {
        out->flat<int32_t>()[i] = static_cast<int32_t>(values[i]);
      } else {
        out->flat<int64_t>()[i] = values[i];
      }
    }
  }
};

class TensorListPushBackOp : public ListOpBase {
 public:
  explicit TensorListPushBackOp(OpKernelConstruction* c) : ListOpBase(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor item = ctx->input(1);
    OP_REQUIRES(ctx, item.dtype() == element_dtype_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Invalid data types; list elements ", DataTypeString(element_dtype_),
                    " but tried to append ", DataTypeString(item.dtype()))));
    auto in = GetInputList(ctx, 0);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    OP_REQUIRES(ctx, l.element_shape.IsCompatibleWith(item.shape()),
                absl::InvalidArgumentError(absl::StrCat(
                    "Tried to append a tensor with incompatible shape to a list. Op "
                    "element shape: ",
                    item.shape().DebugString(), " list shape: ",
                    l.element_shape.DebugString())));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, l));
    if (l.max_num_elements != -1) {
      OP_REQUIRES(ctx, static_cast<int64_t>(l.tensors.size()) < l.max_num_elements,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Tried to push item into a full list list size: ", l.tensors.size(),
                      " max_num_elements: ", l.max_num_elements)));
    }
    auto out = ForwardOrCopyList(ctx, 0, 0, l);
    OP_REQUIRES_OK(ctx, out.status());
    (*out)->tensors.push_back(item);
  }
};

class TensorListPopBackOp : public ListOpBase {
 public:
  explicit TensorListPopBackOp(OpKernelConstruction* c) : ListOpBase(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    OP_REQUIRES(ctx, !l.tensors.empty(),
                absl::InvalidArgumentError("Trying to pop from an empty list."));
    Tensor item = l.tensors.back();
    if (!item.IsInitialized()) {
      auto shape = ElementShapeFromInput(ctx, l, 1);
      OP_REQUIRES_OK(ctx, shape.status());
      OP_REQUIRES(ctx, shape->IsFullyDefined(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Trying to read an uninitialized tensor but element_shape is not "
                      "fully defined.",
                      shape->DebugString())));
      auto zeros = ZerosForUnsetElement(ctx, l, *shape);
      OP_REQUIRES_OK(ctx, zeros.status());
      item = *std::move(zeros);
    }
    auto out = ForwardOrCopyList(ctx, 0, 0, l);
    OP_REQUIRES_OK(ctx, out.status());
    (*out)->tensors.pop_back();
    ctx->set_output(1, std::move(item));
  }
};

class TensorListGetItemOp : public ListOpBase {
 public:
  explicit TensorListGetItemOp(OpKernelConstruction* c) : ListOpBase(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    auto index = Int32Scalar(ctx, 1, "index");
    OP_REQUIRES_OK(ctx, index.status());
    OP_REQUIRES(ctx, *index >= 0 && *index < static_cast<int64_t>(l.tensors.size()),
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to access element ", *index, " in a list with ",
                    l.tensors.size(), " elements.")));
    const Tensor& item = l.tensors[*index];
    if (item.IsInitialized()) {
      ctx->set_output(0, item);
      return;
    }
    auto shape = ElementShapeFromInput(ctx, l, 2);
    OP_REQUIRES_OK(ctx, shape.status());
    auto zeros = ZerosForUnsetElement(ctx, l, *shape);
    OP_REQUIRES_OK(ctx, zeros.status());
    ctx->set_output(0, *std::move(zeros));
  }
};

class TensorListSetItemOp : public ListOpBase {
 public:
  explicit TensorListSetItemOp(OpKernelConstruction* c) : ListOpBase(c) {
    set_expensive(false);
    OP_REQUIRES_OK(c, c->GetAttr("resize_if_index_out_of_bounds", &resize_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    auto index = Int32Scalar(ctx, 1, "index");
    OP_REQUIRES_OK(ctx, index.status());
    const int64_t size = static_cast<int64_t>(l.tensors.size());
    if (resize_) {
      OP_REQUIRES(ctx, *index >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Trying to modify element ", *index, " in a list with ", size,
                      " elements.")));
    } else {
      OP_REQUIRES(ctx, *index >= 0 && *index < size,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Trying to modify element ", *index, " in a list with ", size,
                      " elements.")));
    }
    const Tensor item = ctx->input(2);
    OP_REQUIRES(ctx, l.element_shape.IsCompatibleWith(item.shape()),
                absl::InvalidArgumentError(absl::StrCat(
                    "Tried to set a tensor with incompatible shape at a list index. "
                    "Item element shape: ",
                    item.shape().DebugString(), " list shape: ",
                    l.element_shape.DebugString())));
    auto out = ForwardOrCopyList(ctx, 0, 0, l);
    OP_REQUIRES_OK(ctx, out.status());
    TensorList& list = **out;
    if (*index >= static_cast<int64_t>(list.tensors.size())) list.tensors.resize(*index + 1);
    list.tensors[*index] = item;
  }

 private:
  bool resize_ = false;
};

class TensorListResizeOp : public OpKernel {
 public:
  explicit TensorListResizeOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto in = GetInputList(ctx, 0);
    OP_REQUIRES_OK(ctx, in.status());
    auto size = Int32Scalar(ctx, 1, "size");
    OP_REQUIRES_OK(ctx, size.status());
    OP_REQUIRES(ctx, *size >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSlice expects size to be non-negative. Got: ", *size)));
    auto out = ForwardOrCopyList(ctx, 0, 0, **in);
    OP_REQUIRES_OK(ctx, out.status());
    (*out)->tensors.resize(*size);
  }
};

class TensorListStackOp : public ListOpBase {
 public:
  explicit TensorListStackOp(OpKernelConstruction* c) : ListOpBase(c) {
    int64_t n = -1;
    OP_REQUIRES_OK(c, c->GetAttr("num_elements", &n));
    num_elements_ = n;
  }
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    if (num_elements_ != -1) {
      OP_REQUIRES(ctx, static_cast<int64_t>(l.tensors.size()) == num_elements_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Operation expected a list with ", num_elements_,
                      " elements but got a list with ", l.tensors.size(), " elements.")));
    }
    auto partial = ElementShapeFromInput(ctx, l, 1);
    OP_REQUIRES_OK(ctx, partial.status());
    OP_REQUIRES(ctx, partial->IsFullyDefined() || !l.tensors.empty(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Tried to stack elements of an empty list with non-fully-defined "
                    "element_shape: ",
                    partial->DebugString())));
    std::vector<int64_t> all(l.tensors.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    auto element = list_kernels::ResolveElementShape(l, all, *partial);
    OP_REQUIRES_OK(ctx, element.status());
    OP_REQUIRES_OK(ctx, list_kernels::StackElements(ctx, l, all, *element, 0));
  }

 private:
  int64_t num_elements_ = -1;
};

class TensorListGatherOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    const Tensor& indices_t = ctx->input(1);
    auto partial = ElementShapeFromInput(ctx, l, 2);
    OP_REQUIRES_OK(ctx, partial.status());
    OP_REQUIRES(ctx, partial->IsFullyDefined() || indices_t.NumElements() > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Tried to gather 0-elements from a list with non-fully-defined "
                    "shape: ",
                    partial->DebugString())));
    std::vector<int64_t> indices(indices_t.NumElements());
    for (size_t k = 0; k < indices.size(); ++k) {
      indices[k] = indices_t.flat<int32_t>()[k];
      OP_REQUIRES(ctx, indices[k] >= 0 && indices[k] < static_cast<int64_t>(l.tensors.size()),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Index ", indices[k], " out of range; list only has ",
                      l.tensors.size(), " elements.")));
    }
    auto element = list_kernels::ResolveElementShape(l, indices, *partial);
    OP_REQUIRES_OK(ctx, element.status());
    OP_REQUIRES_OK(ctx, list_kernels::StackElements(ctx, l, indices, *element, 0));
  }
};

// TensorListScatter (V1: length max(indices) + 1) and TensorListScatterV2
// (length num_elements unless -1).
class TensorListScatterOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, indices.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected indices to be a vector, but received shape: ",
                    indices.shape().DebugString())));
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    OP_REQUIRES(ctx, indices.NumElements() == t.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected len(indices) == tensor.shape[0], but saw: ",
                    indices.NumElements(), " vs. ", t.dim_size(0))));
    auto shape = PartialShapeFromTensor(ctx->input(2));
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, shape->IsCompatibleWith(RowShape(t.shape())),
                absl::InvalidArgumentError(absl::StrCat(
                    "tensor shape ", t.shape().DebugString(),
                    " is not compatible with element_shape ", shape->DebugString())));
    int64_t highest = -1;
    for (int32_t i : indices.flat<int32_t>()) {
      OP_REQUIRES(ctx, i >= 0,
                  absl::InvalidArgumentError(
                      "Indices in TensorListScatter must all be non-negative."));
      highest = std::max<int64_t>(highest, i);
    }
    int64_t size = highest + 1;
    if (ctx->num_inputs() > 3) {
      auto n = Int32Scalar(ctx, 3, "num_elements");
      OP_REQUIRES_OK(ctx, n.status());
      OP_REQUIRES(ctx, *n >= -1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorListScatter expects num_elements >= -1, found: ", *n)));
      if (*n != -1) {
        OP_REQUIRES(ctx, highest < *n,
                    absl::InvalidArgumentError(absl::StrCat(
                        "TensorListScatter: Trying to scatter at index ", highest,
                        " in list with size ", *n)));
        size = *n;
      }
    }
    TensorList list = NewList(t.dtype(), *std::move(shape));
    list.tensors.resize(size);
    for (int64_t k = 0; k < indices.NumElements(); ++k) {
      auto row = Row(ctx, t, k);
      OP_REQUIRES_OK(ctx, row.status());
      list.tensors[indices.flat<int32_t>()[k]] = *std::move(row);
    }
    OP_REQUIRES_OK(ctx, SetOutputList(ctx, 0, std::move(list)));
  }
};

class TensorListSplitOp : public ListOpBase {
 public:
  using ListOpBase::ListOpBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    auto shape = PartialShapeFromTensor(ctx->input(1));
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, shape->unknown_rank() || shape->rank() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "TensorListSplit requires element_shape to be at least of rank 1, "
                    "but saw: ",
                    shape->DebugString())));
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    PartialShape except_first;
    if (!shape->unknown_rank()) {
      except_first = PartialShape(
          std::vector<int64_t>(shape->dims().begin() + 1, shape->dims().end()));
    }
    OP_REQUIRES(ctx, except_first.IsCompatibleWith(RowShape(t.shape())),
                absl::InvalidArgumentError(absl::StrCat(
                    "tensor shape ", t.shape().DebugString(),
                    " is not compatible with element_shape ", shape->DebugString())));
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES(ctx, lengths.dims() == 1 && lengths.dtype() == DT_INT64,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected lengths to be a vector, received shape: ",
                    lengths.shape().DebugString())));
    TensorList list = NewList(t.dtype(), *std::move(shape));
    int64_t start = 0;
    for (int64_t length : lengths.flat<int64_t>()) {
      OP_REQUIRES(ctx, length >= 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Invalid value in lengths: ", length)));
      const int64_t end = start + length;
      OP_REQUIRES(ctx, end <= t.dim_size(0),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Attempting to slice [", start, ", ", end,
                      "] from tensor with length ", t.dim_size(0))));
      auto piece = list_kernels::Aligned(ctx, t.Slice(start, end));
      OP_REQUIRES_OK(ctx, piece.status());
      list.tensors.push_back(*std::move(piece));
      start = end;
    }
    OP_REQUIRES(ctx, start == t.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Unused values in tensor. Length of tensor: ", t.dim_size(0),
                    " Values used: ", start)));
    OP_REQUIRES_OK(ctx, SetOutputList(ctx, 0, std::move(list)));
  }
};

// TensorListConcat (element_shape attr) and TensorListConcatV2
// (element_shape and leading_dims inputs): the elements joined along their
// first dimension, and each element's length.
class TensorListConcatOp : public ListOpBase {
 public:
  explicit TensorListConcatOp(OpKernelConstruction* c) : ListOpBase(c) {
    if (c->input_types().size() == 1) {  // TensorListConcat
      PartialShape shape;
      OP_REQUIRES_OK(c, c->GetAttr("element_shape", &shape));
      if (!shape.unknown_rank() && shape.rank() >= 1) {
        except_first_ = PartialShape(
            std::vector<int64_t>(shape.dims().begin() + 1, shape.dims().end()));
      }
    }
  }
  void Compute(OpKernelContext* ctx) override {
    auto in = InputList(ctx);
    OP_REQUIRES_OK(ctx, in.status());
    const TensorList& l = **in;
    int64_t first_dim = -1;
    PartialShape except_first = except_first_;
    if (ctx->num_inputs() > 1) {
      auto shape = ElementShapeFromInput(ctx, l, 1);
      OP_REQUIRES_OK(ctx, shape.status());
      OP_REQUIRES(ctx, shape->unknown_rank() || shape->rank() >= 1,
                  absl::InvalidArgumentError(
                      "Concat requires elements to be at least vectors, found scalars "
                      "instead."));
      if (!shape->unknown_rank()) {
        first_dim = shape->dim(0);
        except_first = PartialShape(
            std::vector<int64_t>(shape->dims().begin() + 1, shape->dims().end()));
      } else {
        except_first = PartialShape();
      }
    }
    OP_REQUIRES(ctx, !l.tensors.empty() || except_first.IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    "All except the first dimension must be fully defined when "
                    "concating an empty tensor list. element_shape: ",
                    except_first.DebugString())));
    if (!l.element_shape.IsFullyDefined()) {
      bool check_dim = first_dim == -1;
      int64_t inferred = first_dim;
      for (size_t i = 0; i < l.tensors.size(); ++i) {
        const Tensor& t = l.tensors[i];
        if (!t.IsInitialized()) continue;
        OP_REQUIRES(ctx, t.dims() >= 1,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Concat saw a scalar shape at index ", i,
                        " but requires at least vectors.")));
        auto merged = InferenceContext::Merge(except_first, RowShape(t.shape()));
        OP_REQUIRES(ctx, merged.ok(),
                    absl::InvalidArgumentError(absl::StrCat(
                        "Incompatible shapes during merge: ", except_first.DebugString(),
                        " vs. ", RowShape(t.shape()).DebugString())));
        except_first = *std::move(merged);
        OP_REQUIRES(ctx, first_dim == -1 || first_dim == t.dim_size(0),
                    absl::InvalidArgumentError(absl::StrCat(
                        "First entry of element_shape input does not match the first "
                        "dim of list element at index: ",
                        i, " Expected: ", first_dim, " Actual: ", t.dim_size(0))));
        if (check_dim) {
          if (inferred == -1) {
            inferred = t.dim_size(0);
          } else if (inferred != t.dim_size(0)) {
            inferred = -1;
            check_dim = false;
          }
        }
      }
      first_dim = inferred;
    }
    OP_REQUIRES(ctx, except_first.IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to concat list with only uninitialized tensors but "
                    "element_shape_except_first_dim_ is not fully defined: ",
                    except_first.DebugString())));
    auto rest = TensorShape::FromDims(except_first.dims());
    OP_REQUIRES_OK(ctx, rest.status());
    Tensor* lengths = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            1, TensorShape({static_cast<int64_t>(l.tensors.size())}),
                            &lengths));
    int64_t leading = 0;
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      int64_t dim;
      if (l.tensors[i].IsInitialized()) {
        dim = l.tensors[i].dim_size(0);
      } else if ((ctx->num_inputs() <= 2 ||
                  static_cast<int64_t>(i) >= ctx->input(2).NumElements()) &&
                 first_dim != -1) {
        dim = first_dim;
      } else {
        OP_REQUIRES(ctx, ctx->num_inputs() > 2,
                    absl::InvalidArgumentError(
                        "Concating lists with uninitialized tensors is not supported in "
                        "this version of TensorListConcat. Consider updating your "
                        "GraphDef to run the newer version."));
        OP_REQUIRES(ctx, static_cast<int64_t>(i) < ctx->input(2).NumElements(),
                    absl::InvalidArgumentError(absl::StrCat(
                        "List contains uninitialized tensor at index ", i,
                        " but leading_dims has only ", ctx->input(2).NumElements(),
                        " elements.")));
        dim = ctx->input(2).flat<int64_t>()[i];
      }
      lengths->flat<int64_t>()[i] = dim;
      leading += dim;
    }
    TensorShape out_shape;
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(leading));
    for (int64_t d : rest->dim_sizes()) OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64_t row = rest->num_elements();
    int64_t offset = 0;
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      const int64_t dim = lengths->flat<int64_t>()[i];
      const Tensor& t = l.tensors[i];
      if (t.IsInitialized()) {
        OP_REQUIRES(ctx, RowShape(t.shape()) == PartialShape(*rest),
                    absl::InvalidArgumentError(absl::StrCat(
                        "Incompatible shapes during merge: ", rest->DebugString(), " vs. ",
                        RowShape(t.shape()).DebugString())));
        list_kernels::CopyInto(t, out, offset);
      } else {
        TensorShape zeros_shape = out_shape;
        zeros_shape.set_dim(0, dim);
        auto zeros = list_kernels::Zeros(ctx, element_dtype_, zeros_shape);
        OP_REQUIRES_OK(ctx, zeros.status());
        list_kernels::CopyInto(*zeros, out, offset);
      }
      offset += dim * row;
    }
  }

 private:
  PartialShape except_first_;
};

REGISTER_KERNEL(KernelDefBuilder("EmptyTensorList").Device(kDeviceCpu), EmptyTensorListOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListReserve").Device(kDeviceCpu), TensorListReserveOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListFromTensor").Device(kDeviceCpu),
                TensorListFromTensorOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListLength").Device(kDeviceCpu), TensorListLengthOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListElementShape").Device(kDeviceCpu),
                TensorListElementShapeOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListPushBack").Device(kDeviceCpu), TensorListPushBackOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListPopBack").Device(kDeviceCpu), TensorListPopBackOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListGetItem").Device(kDeviceCpu), TensorListGetItemOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListSetItem").Device(kDeviceCpu), TensorListSetItemOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListResize").Device(kDeviceCpu), TensorListResizeOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListStack").Device(kDeviceCpu), TensorListStackOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListGather").Device(kDeviceCpu), TensorListGatherOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListScatter").Device(kDeviceCpu), TensorListScatterOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListScatterV2").Device(kDeviceCpu), TensorListScatterOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListSplit").Device(kDeviceCpu), TensorListSplitOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListConcat").Device(kDeviceCpu), TensorListConcatOp);
REGISTER_KERNEL(KernelDefBuilder("TensorListConcatV2").Device(kDeviceCpu), TensorListConcatOp);

}  // namespace
}  // namespace graphrun
