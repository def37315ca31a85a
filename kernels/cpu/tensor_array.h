// TensorArray: the object a TensorArrayV3 handle (a DT_RESOURCE scalar)
// points to, with TensorFlow's rules (core/kernels/tensor_array.h):
//   - an index is written at most once, and not after it was read;
//   - with clear_after_read (the default) an index reads once, then its
//     tensor is dropped;
//   - an index read before it was written gives zeros when the element
//     shape is fully known, else an error;
//   - writes grow the array only when it has dynamic_size;
//   - with identical_element_shapes the first write fixes the element shape.
// Each TensorArrayV3 execution makes a new array; its handle (and copies of
// it) keep the array alive, so an array lives for the step that made it.
// Thread-safe: kernels of several nodes use one array at once.
#ifndef GRAPHRUN_KERNELS_CPU_TENSOR_ARRAY_H_
#define GRAPHRUN_KERNELS_CPU_TENSOR_ARRAY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/allocator.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/variant.h"

namespace graphrun {

class TensorArray : public ResourceBase {
 public:
  struct Options {
    std::string name;  // for messages: "TensorArray <name>: ..."
    DataType dtype = DT_FLOAT;
    int64_t size = 0;
    PartialShape element_shape;
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
  };
  explicit TensorArray(Options options);

  // "TensorArray[<size>]".
  std::string DebugString() const override;
  DataType dtype() const { return options_.dtype; }
  const std::string& name() const { return options_.name; }
  bool dynamic_size() const { return options_.dynamic_size; }

  // Stores values[k] at indices[k], in order; stops at the first error
  // (earlier writes stay), as TensorFlow's WriteOrAggregateMany.
  absl::Status WriteMany(const std::vector<int64_t>& indices,
                         const std::vector<Tensor>& values);
  absl::Status Write(int64_t index, const Tensor& value) {
    return WriteMany({index}, {value});
  }
  // The tensors at `indices` (zeros, from `allocator`, for indices never
  // written when the element shape is known).
  absl::StatusOr<std::vector<Tensor>> ReadMany(const std::vector<int64_t>& indices,
                                               Allocator* allocator);
  absl::StatusOr<Tensor> Read(int64_t index, Allocator* allocator);

  absl::StatusOr<int64_t> Size() const;
  // The element shape, as given or as fixed by the first write.
  PartialShape ElementShape() const;
  // Merges `shape` into the element shape; InvalidArgument if incompatible.
  absl::Status SetElementShape(const PartialShape& shape);
  // Drops every element; any later use fails.
  void Close();

 private:
  struct Element {
    Tensor tensor;  // not initialized until written (or read as zeros)
    TensorShape shape;
    bool written = false;
    bool read = false;
    bool cleared = false;
  };

  absl::Status CheckOpenLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(int64_t index, const Tensor& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Tensor> ReadLocked(int64_t index, Allocator* allocator)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  PartialShape element_shape_ ABSL_GUARDED_BY(mu_);
  std::vector<Element> elements_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_TENSOR_ARRAY_H_
