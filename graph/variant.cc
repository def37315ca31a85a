#include "graph/variant.h"

#include "absl/strings/str_cat.h"

namespace graphrun {

std::string Variant::TypeName() const {
  return value_ ? value_->TypeName() : "<empty>";
}

std::string Variant::DebugString() const {
  return value_ ? value_->DebugString() : "Variant<empty>";
}

std::string ResourceHandle::DebugString() const {
  if (resource_ == nullptr) return "ResourceHandle(<empty>)";
  return absl::StrCat("ResourceHandle(", name_, ": ", resource_->DebugString(), ")");
}

}  // namespace graphrun
