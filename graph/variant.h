// Variant and ResourceHandle: the element types of DT_VARIANT and
// DT_RESOURCE tensors.
//
// A Variant holds any value derived from VariantValue (a TensorList, say)
// behind a shared_ptr: copying a Variant shares the value, so a value stored
// in a tensor must be treated as immutable unless the holder is its only
// owner (copy-on-write, see MutableIfUnique). A ResourceHandle names a
// mutable object (a TensorArray) that every copy of the handle reaches;
// that object guards its own state. Tensors of these types hold constructed
// C++ objects, so they live in host memory only and are never serialized
// (AsProto* writes dtype and shape, FromProto refuses them).
//
//   Tensor t(DT_VARIANT, TensorShape());
//   t.scalar<Variant>() = Variant(std::make_shared<TensorList>(...));
//   const TensorList* list = t.scalar<Variant>().get<TensorList>();
//
// Thread-safety: as for any value; const access from many threads is safe.
#ifndef GRAPHRUN_GRAPH_VARIANT_H_
#define GRAPHRUN_GRAPH_VARIANT_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "graph/types.h"

namespace graphrun {

// What a Variant holds. Subclasses are plain values; TypeName() is the name
// TensorFlow gives the type ("tensorflow::TensorList").
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
};

class Variant {
 public:
  Variant() = default;  // empty
  explicit Variant(std::shared_ptr<VariantValue> value) : value_(std::move(value)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as a T, or nullptr when empty or of another type.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  // The value as a writable T when this Variant is its only holder (so no
  // other tensor sees the write); nullptr otherwise.
  template <typename T>
  T* MutableIfUnique() {
    return value_.use_count() == 1 ? dynamic_cast<T*>(value_.get()) : nullptr;
  }
  const std::shared_ptr<VariantValue>& value() const { return value_; }

  // "<empty>" or the value's TypeName().
  std::string TypeName() const;
  std::string DebugString() const;

 private:
  std::shared_ptr<VariantValue> value_;
};

// A mutable object that resource handles point to. Subclasses lock their
// own state: kernels of different nodes use one object concurrently.
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
  // A worker's session `handle` has ended: closed by its master (`why`
  // OK), or lost (its master stopped calling; `why` says how). A resource
  // that other steps wait on because that session's steps feed it (a
  // queue a chief's queue runner fills) lets those waiters go.
  virtual void SessionEnded(const std::string& handle, const absl::Status& why) {
    (void)handle;
    (void)why;
  }
};

// The element of a DT_RESOURCE tensor: a name (for messages) and the
// object. graphrun's resources are per step: a handle keeps its object
// alive, and the object dies with the step's last handle.
class ResourceHandle {
 public:
  ResourceHandle() = default;  // points nowhere
  ResourceHandle(std::string name, std::shared_ptr<ResourceBase> resource)
      : name_(std::move(name)), resource_(std::move(resource)) {}

  const std::string& name() const { return name_; }
  // The object as a T, or nullptr when empty or of another type.
  template <typename T>
  T* get() const {
    return dynamic_cast<T*>(resource_.get());
  }
  // "ResourceHandle(name)" or "ResourceHandle(<empty>)".
  std::string DebugString() const;

 private:
  std::string name_;
  std::shared_ptr<ResourceBase> resource_;
};

template <>
struct DataTypeToEnum<Variant> {
  static constexpr DataType value = DT_VARIANT;
};
template <>
struct DataTypeToEnum<ResourceHandle> {
  static constexpr DataType value = DT_RESOURCE;
};

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_VARIANT_H_
