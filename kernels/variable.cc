#include "kernels/variable.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace graphrun {

Var::Var(std::string name, DataType dtype, PartialShape shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

std::string Var::DebugString() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("Var(", name_, ": ", DataTypeString(dtype_), " ",
                      initialized_ ? value_.shape().DebugString() : "uninitialized", ")");
}

bool Var::initialized() const {
  absl::MutexLock lock(&mu_);
  return initialized_;
}

absl::StatusOr<Tensor> Var::Read(const std::string& uninitialized) const {
  absl::MutexLock lock(&mu_);
  if (!initialized_) return absl::FailedPreconditionError(uninitialized);
  return value_;
}

absl::Status Var::Assign(const Tensor& value, bool validate_shape, Allocator* allocator,
                         const BufferCopy& buffer_copy) {
  if (value.dtype() != dtype_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to assign variable with wrong dtype. Expected ", DataTypeString(dtype_),
        " got ", DataTypeString(value.dtype()), " (variable ", name_, ")"));
  }
  if (validate_shape && !shape_.IsCompatibleWith(value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Assign requires shapes of both tensors to match. lhs shape= ", shape_.DebugString(),
        " rhs shape= ", value.shape().DebugString(), " (variable ", name_, ")"));
  }
  absl::StatusOr<Tensor> copy = DeepCopy(value, allocator, buffer_copy);
  if (!copy.ok()) return copy.status();
  absl::MutexLock lock(&mu_);
  if (validate_shape && initialized_ && value_.shape() != value.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Assign requires shapes of both tensors to match. lhs shape= ",
        value_.shape().DebugString(), " rhs shape= ", value.shape().DebugString(),
        " (variable ", name_, ")"));
  }
  value_ = *std::move(copy);
  initialized_ = true;
  return absl::OkStatus();
}

absl::Status Var::Update(const std::string& uninitialized, Allocator* allocator,
                         const std::function<absl::Status(Tensor*)>& update,
                         const BufferCopy& buffer_copy) {
  absl::MutexLock lock(&mu_);
  if (!initialized_) return absl::FailedPreconditionError(uninitialized);
  if (!value_.RefCountIsOne() && value_.NumElements() > 0) {
    // A read still holds the buffer: it keeps the old value.
    absl::StatusOr<Tensor> copy = DeepCopy(value_, allocator, buffer_copy);
    if (!copy.ok()) return copy.status();
    value_ = *std::move(copy);
  }
  return update(&value_);
}

void Var::Reset() {
  absl::MutexLock lock(&mu_);
  value_ = Tensor();
  initialized_ = false;
}

absl::StatusOr<Tensor> DeepCopy(const Tensor& t, Allocator* allocator,
                                const BufferCopy& buffer_copy) {
  absl::StatusOr<Tensor> out =
      Tensor::Allocate(allocator, t.dtype(), t.shape(), TensorBuffer::Init::kUninitialized);
  if (!out.ok()) return out.status();
  if (t.dtype() == DT_STRING) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      out->flat<std::string>()[i] = t.flat<std::string>()[i];
    }
  } else if (t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) {
    return absl::InvalidArgumentError(
        absl::StrCat("a variable cannot hold ", DataTypeString(t.dtype()), " values"));
  } else if (t.TotalBytes() > 0) {
    if (buffer_copy) {
      absl::Status s = buffer_copy(t.raw_data(), out->raw_data(), t.TotalBytes());
      if (!s.ok()) return s;
    } else {
      std::memcpy(out->raw_data(), t.raw_data(), t.TotalBytes());
    }
  }
  return out;
}

Tensor RefTensor(const std::shared_ptr<Var>& var) {
  Tensor t(DT_RESOURCE, TensorShape());
  t.flat<ResourceHandle>()[0] = ResourceHandle(var->name(), var);
  return t;
}

absl::StatusOr<Var*> VarOf(const Tensor& handle, const char* what) {
  Var* var = handle.dtype() == DT_RESOURCE && handle.NumElements() == 1
                 ? handle.flat<ResourceHandle>()[0].get<Var>()
                 : nullptr;
  if (var == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a handle to a variable, got a ", DataTypeString(handle.dtype()),
        " tensor of shape ", handle.shape().DebugString()));
  }
  return var;
}

std::string UninitializedRefMessage(const Var& var) {
  return absl::StrCat("Attempting to use uninitialized value ", var.name());
}

absl::Status CheckUpdatable(const Var& var, bool resource) {
  if (!resource || var.initialized()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("Invalid variable reference: ", UninitializedResourceMessage(var)));
}

std::string UninitializedResourceMessage(const Var& var) {
  return absl::StrCat("Error while reading resource variable ", var.name(),
                      " from Container: localhost. This could mean that the variable was "
                      "uninitialized. Not found: Resource localhost/",
                      var.name(), " does not exist.");
}

}  // namespace graphrun
