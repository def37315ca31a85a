#include "kernels/cpu/tensor_array.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

TensorArray::TensorArray(Options options)
    : options_(std::move(options)),
      element_shape_(options_.element_shape),
      elements_(static_cast<size_t>(options_.size)) {}

std::string TensorArray::DebugString() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("TensorArray[", elements_.size(), "]");
}

absl::Status TensorArray::CheckOpenLocked() const {
  if (!closed_) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("TensorArray ", options_.name, " has already been closed."));
}

absl::Status TensorArray::WriteMany(const std::vector<int64_t>& indices,
                                    const std::vector<Tensor>& values) {
  absl::MutexLock lock(&mu_);
  for (size_t k = 0; k < indices.size(); ++k) {
    GR_RETURN_IF_ERROR(WriteLocked(indices[k], values[k]));
  }
  return absl::OkStatus();
}

absl::Status TensorArray::WriteLocked(int64_t index, const Tensor& value) {
  GR_RETURN_IF_ERROR(CheckOpenLocked());
  const std::string& name = options_.name;
  if (index < 0 ||
      (!options_.dynamic_size && index >= static_cast<int64_t>(elements_.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Tried to write to index ", index,
        " but array is not resizeable and size is: ", elements_.size()));
  }
  if (index >= static_cast<int64_t>(elements_.size())) {
    elements_.resize(static_cast<size_t>(index) + 1);
  }
  Element& e = elements_[index];
  if (value.dtype() != options_.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Could not write to TensorArray index ", index,
        " because the value dtype is ", DataTypeString(value.dtype()),
        " but TensorArray dtype is ", DataTypeString(options_.dtype), "."));
  }
  if (!element_shape_.IsCompatibleWith(value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Could not write to TensorArray index ", index,
        " because the value shape is ", value.shape().DebugString(),
        " which is incompatible with the TensorArray's inferred element shape: ",
        element_shape_.DebugString(), " (consider setting infer_shape=False)."));
  }
  if (options_.identical_element_shapes && !element_shape_.IsFullyDefined()) {
    element_shape_ = PartialShape(value.shape());
  }
  if (e.read) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Could not write to TensorArray index ", index,
        " because it has already been read."));
  }
  if (e.written) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Could not write to TensorArray index ", index,
        " because it has already been written to."));
  }
  e.tensor = value;
  e.shape = value.shape();
  e.written = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> TensorArray::ReadMany(
    const std::vector<int64_t>& indices, Allocator* allocator) {
  absl::MutexLock lock(&mu_);
  std::vector<Tensor> out;
  out.reserve(indices.size());
  for (int64_t index : indices) {
    GR_ASSIGN_OR_RETURN(Tensor t, ReadLocked(index, allocator));
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<Tensor> TensorArray::Read(int64_t index, Allocator* allocator) {
  absl::MutexLock lock(&mu_);
  return ReadLocked(index, allocator);
}

absl::StatusOr<Tensor> TensorArray::ReadLocked(int64_t index, Allocator* allocator) {
  GR_RETURN_IF_ERROR(CheckOpenLocked());
  const std::string& name = options_.name;
  if (index < 0 || index >= static_cast<int64_t>(elements_.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tried to read from index ", index, " but array size is: ", elements_.size()));
  }
  Element& e = elements_[index];
  if (!e.written) {
    // Never written: zeros of the element shape, when it is known.
    if (!element_shape_.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArray ", name, ": Could not read from TensorArray index ", index,
          ".  Furthermore, the element shape is not fully defined: ",
          element_shape_.DebugString(),
          ".  It is possible you are working with a resizeable TensorArray and "
          "stop_gradients is not allowing the gradients to be written.  If you "
          "set the full element_shape property on the forward TensorArray, the "
          "proper all-zeros tensor will be returned instead of incurring this "
          "error."));
    }
    GR_ASSIGN_OR_RETURN(e.shape, TensorShape::FromDims(element_shape_.dims()));
    e.written = true;
  }
  if (e.cleared) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name, ": Could not read index ", index,
        " twice because it was cleared after a previous read (perhaps try "
        "setting clear_after_read = false?)."));
  }
  if (!e.tensor.IsInitialized()) {
    GR_ASSIGN_OR_RETURN(e.tensor, Tensor::Allocate(allocator, options_.dtype, e.shape,
                                                   TensorBuffer::Init::kZero));
  }
  Tensor value = e.tensor;
  if (options_.clear_after_read) {
    e.tensor = Tensor();
    e.cleared = true;
  }
  e.read = true;
  return value;
}

absl::StatusOr<int64_t> TensorArray::Size() const {
  absl::MutexLock lock(&mu_);
  GR_RETURN_IF_ERROR(CheckOpenLocked());
  return static_cast<int64_t>(elements_.size());
}

PartialShape TensorArray::ElementShape() const {
  absl::MutexLock lock(&mu_);
  return element_shape_;
}

absl::Status TensorArray::SetElementShape(const PartialShape& shape) {
  absl::MutexLock lock(&mu_);
  auto merged = InferenceContext::Merge(element_shape_, shape);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Inconsistent shapes: saw ", shape.DebugString(), " but expected ",
        element_shape_.DebugString(), " (and infer_shape=True)"));
  }
  element_shape_ = *std::move(merged);
  return absl::OkStatus();
}

void TensorArray::Close() {
  absl::MutexLock lock(&mu_);
  elements_.clear();
  closed_ = true;
}

}  // namespace graphrun
