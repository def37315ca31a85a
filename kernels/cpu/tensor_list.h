// TensorList: the value a TensorList handle (a DT_VARIANT scalar) holds, and
// what the list kernels (list_ops.cc) share.
//
// A list has an element dtype, an element shape that may be partial, and a
// vector of element tensors; an element never set (TensorListReserve,
// Resize) is an uninitialized Tensor() and reads as zeros when the element
// shape is known. A list stored in a tensor is immutable: a kernel that
// changes a list writes into it only when it holds the only reference to
// both the handle tensor and the list (ForwardOrCopyList), else it copies.
// So TensorListSetItem inside a loop updates one list in place, step after
// step, and a loop of n writes costs O(n), not O(n^2).
#ifndef GRAPHRUN_KERNELS_CPU_TENSOR_LIST_H_
#define GRAPHRUN_KERNELS_CPU_TENSOR_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/variant.h"
#include "kernels/op_kernel.h"

namespace graphrun {

struct TensorList : VariantValue {
  std::string TypeName() const override { return "tensorflow::TensorList"; }
  // "TensorList<float, [?,3], 2 of 5 elements set>".
  std::string DebugString() const override;

  DataType element_dtype = DT_INVALID;
  PartialShape element_shape;  // unknown rank unless given
  std::vector<Tensor> tensors;  // !IsInitialized(): never set
  int max_num_elements = -1;    // -1: no bound (EmptyTensorList's)
};

namespace list_kernels {

// TensorFlow's TensorShapeFromTensor: a scalar -1 is an unknown shape, an
// int32/int64 vector lists dims (-1 unknown). InvalidArgument otherwise.
absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t);

// The list input `index` holds; InvalidArgument when it is not a scalar
// variant holding a TensorList.
absl::StatusOr<const TensorList*> GetInputList(OpKernelContext* ctx, int index);

// The element_shape input `index` merged with the list's element shape.
absl::StatusOr<PartialShape> ElementShapeFromInput(OpKernelContext* ctx,
                                                   const TensorList& list,
                                                   int index);

// Sets output `output` to a list the caller may change: input `input`'s
// own list when this kernel holds the only reference to it, else a copy of
// `list` (which must be input `input`'s list). Never fails to return a list
// unless the allocation fails.
absl::StatusOr<TensorList*> ForwardOrCopyList(OpKernelContext* ctx, int input,
                                              int output, const TensorList& list);

// How many lists ForwardOrCopyList has copied in this process: a loop
// whose list is updated in place adds none. Thread-safe.
int64_t ListCopies();

// Sets output `output` to a new list handle holding `list`.
absl::Status SetOutputList(OpKernelContext* ctx, int output, TensorList list);

// InvalidArgument unless `element_dtype` (the op's attr) is the list's.
absl::Status CheckElementDtype(DataType element_dtype, const TensorList& list);

// A tensor of `shape` filled with zeros (empty strings, empty variants),
// from the kernel's device.
absl::StatusOr<Tensor> Zeros(OpKernelContext* ctx, DataType dtype,
                             const TensorShape& shape);

// `t` itself when its data is aligned for Eigen, else an aligned copy.
absl::StatusOr<Tensor> Aligned(OpKernelContext* ctx, const Tensor& t);

// Copies all of `src`'s elements into `dst` starting at element `offset`
// (same dtype; dst has room).
void CopyInto(const Tensor& src, Tensor* dst, int64_t offset);

// The shape of the elements of `list` at `indices`, for Stack and Gather:
// `element_shape` merged with every set element's shape; InvalidArgument
// when they disagree or the result is not fully defined.
absl::StatusOr<TensorShape> ResolveElementShape(const TensorList& list,
                                                const std::vector<int64_t>& indices,
                                                PartialShape element_shape);

// Concatenates the elements at `indices` (zeros for unset ones) along a new
// leading dimension into output `output`, of shape [len(indices)] + element.
absl::Status StackElements(OpKernelContext* ctx, const TensorList& list,
                           const std::vector<int64_t>& indices,
                           const TensorShape& element, int output);

}  // namespace list_kernels
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_TENSOR_LIST_H_
