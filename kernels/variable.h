// A variable: the object behind a ref variable (VariableV2) and a resource
// variable (VarHandleOp). It lives in its device's ResourceMgr, so its value
// survives from one step to the next. Ref-typed edges carry a DT_RESOURCE
// scalar pointing to the Var (RefTensor); the executor reads the variable's
// value when a ref edge ends at an input that is not a ref, as TensorFlow's
// executor dereferences refs, and fails naming the variable when it was
// never assigned.
//
// A read shares the variable's buffer; an update in place first copies the
// value when a read still holds it (copy on write), so a read never sees a
// later step's update.
//
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_VARIABLE_H_
#define GRAPHRUN_KERNELS_VARIABLE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/allocator.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/variant.h"

namespace graphrun {

// Copies `bytes` bytes between two buffers of the memory a variable lives
// in. Empty: memcpy (host memory); a device with memory of its own queues
// the copy in order with its kernels' work.
using BufferCopy = std::function<absl::Status(const void* src, void* dst, size_t bytes)>;

class Var : public ResourceBase {
 public:
  // `name`: the node or shared name, for messages. `shape`: what the
  // variable was declared with (unknown rank: anything goes).
  Var(std::string name, DataType dtype, PartialShape shape);

  // "Var(<name>: float [2,3])", or "... uninitialized".
  std::string DebugString() const override;
  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  bool initialized() const;

  // The value (sharing its buffer); FailedPrecondition `uninitialized`
  // when never assigned.
  absl::StatusOr<Tensor> Read(const std::string& uninitialized) const;

  // Holds a copy of `value` (its buffer, if nothing else holds it). With
  // `validate_shape`, the value's shape must be compatible with the
  // declared shape and, once assigned, equal to the current value's. The
  // copy is `copy`'s (`value` then in the allocator's memory).
  absl::Status Assign(const Tensor& value, bool validate_shape, Allocator* allocator,
                      const BufferCopy& copy = {});

  // Runs `update` on the value in place, under the variable's lock, after
  // copying it when a read still shares its buffer. FailedPrecondition
  // `uninitialized` when never assigned. The tensor `update` gets is the
  // variable's own: it may change its elements, not its shape or dtype.
  // The copy is `copy`'s.
  absl::Status Update(const std::string& uninitialized, Allocator* allocator,
                      const std::function<absl::Status(Tensor*)>& update,
                      const BufferCopy& copy = {});

  // Forgets the value (as a restart would): uninitialized again.
  void Reset();

 private:
  const std::string name_;
  const DataType dtype_;
  const PartialShape shape_;
  mutable absl::Mutex mu_;
  Tensor value_ ABSL_GUARDED_BY(mu_);
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
};

// A copy of `t` in a buffer of its own from `allocator` (strings copied
// element by element; other bytes by `copy` when given).
absl::StatusOr<Tensor> DeepCopy(const Tensor& t, Allocator* allocator,
                                const BufferCopy& copy = {});

// The DT_RESOURCE scalar a ref edge carries: points to `var`.
Tensor RefTensor(const std::shared_ptr<Var>& var);

// The Var a DT_RESOURCE scalar points to; InvalidArgument naming `what`
// otherwise.
absl::StatusOr<Var*> VarOf(const Tensor& handle, const char* what);

// TensorFlow's messages for a variable read before it was assigned.
std::string UninitializedRefMessage(const Var& var);
std::string UninitializedResourceMessage(const Var& var);

// Before an optimizer updates a resource variable: TensorFlow's INTERNAL
// "Invalid variable reference" (its kernels fail taking the variables'
// locks) when `var` was never assigned, naming it. Ref variables pass (their
// update reports the uninitialized value itself).
absl::Status CheckUpdatable(const Var& var, bool resource);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_VARIABLE_H_
