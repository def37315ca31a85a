#include "graph/tensor_shape.h"

#include "graph/check.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphrun {

TensorShape::TensorShape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) AddDim(d);
}

int64_t NonZeroDimProduct(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) continue;
    if (n > kMaxElements / d) return -1;
    n *= d;
  }
  return n;
}

namespace {

// InvalidArgument saying why `dims` breaks TensorShape's invariant.
absl::Status InvalidDims(absl::Span<const int64_t> dims) {
  const std::string shape = absl::StrCat("[", absl::StrJoin(dims, ","), "]");
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", shape, " has a negative dimension"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "shape ", shape, " is too large (more than 2^48 elements)"));
}

}  // namespace

absl::StatusOr<TensorShape> TensorShape::FromDims(
    absl::Span<const int64_t> dims) {
  if (NonZeroDimProduct(dims) < 0) return InvalidDims(dims);
  TensorShape shape;
  shape.dims_.assign(dims.begin(), dims.end());
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // in range: bounded by the product above
  shape.num_elements_ = n;
  return shape;
}

absl::StatusOr<TensorShape> TensorShape::FromProto(
    const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("shape has unknown rank");
  }
  std::vector<int64_t> dims;
  for (const auto& d : proto.dim()) {
    if (d.size() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", PartialShape::FromProto(proto).value_or(PartialShape()).DebugString(),
                       " is not fully defined"));
    }
    dims.push_back(d.size());
  }
  return FromDims(dims);
}

absl::Status TensorShape::AddDimWithStatus(int64_t size) {
  // Fast path: with no zero dim, num_elements_ is the non-zero product.
  if (size >= 0 && num_elements_ > 0 &&
      (size == 0 || num_elements_ <= kMaxElements / size)) {
    dims_.push_back(size);
    num_elements_ *= size;
    return absl::OkStatus();
  }
  dims_.push_back(size);
  if (NonZeroDimProduct(dims_) < 0) {
    absl::Status error = InvalidDims(dims_);
    dims_.pop_back();
    return error;
  }
  num_elements_ *= size;
  return absl::OkStatus();
}

absl::Status TensorShape::SetDimWithStatus(int i, int64_t size) {
  const int64_t old = dims_[i];
  dims_[i] = size;
  if (NonZeroDimProduct(dims_) < 0) {
    absl::Status error = InvalidDims(dims_);
    dims_[i] = old;
    return error;
  }
  num_elements_ = 1;
  for (int64_t d : dims_) num_elements_ *= d;
  return absl::OkStatus();
}

void TensorShape::AddDim(int64_t size) {
  GR_CHECK(AddDimWithStatus(size).ok());
}

void TensorShape::set_dim(int i, int64_t size) {
  GR_CHECK(SetDimWithStatus(i, size).ok());
}

void TensorShape::RemoveDim(int i) {
  dims_.erase(dims_.begin() + i);
  num_elements_ = 1;
  for (int64_t d : dims_) num_elements_ *= d;
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

TensorShapeProto TensorShape::AsProto() const {
  TensorShapeProto p;
  AsProto(&p);
  return p;
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

PartialShape::PartialShape(std::vector<int64_t> dims)
    : unknown_rank_(false), dims_(std::move(dims)) {
  for (int64_t& d : dims_) {
    if (d < 0) d = -1;
  }
}

PartialShape::PartialShape(const TensorShape& shape)
    : unknown_rank_(false),
      dims_(shape.dim_sizes().begin(), shape.dim_sizes().end()) {}

absl::StatusOr<PartialShape> PartialShape::FromProto(
    const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return absl::InvalidArgumentError(
          "shape has unknown_rank set and also lists dimensions");
    }
    return PartialShape();
  }
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape has invalid dimension ", d.size()));
    }
    if (d.size() > 0) {
      if (n > kMaxElements / d.size()) {
        return absl::InvalidArgumentError(
            "shape is too large (more than 2^48 elements)");
      }
      n *= d.size();
    }
    dims.push_back(d.size());
  }
  return PartialShape(std::move(dims));
}

bool PartialShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

int64_t PartialShape::num_elements() const {
  if (!IsFullyDefined()) return -1;
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

bool PartialShape::IsCompatibleWith(const PartialShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

TensorShapeProto PartialShape::AsProto() const {
  TensorShapeProto p;
  if (unknown_rank_) {
    p.set_unknown_rank(true);
    return p;
  }
  for (int64_t d : dims_) p.add_dim()->set_size(d);
  return p;
}

std::string PartialShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  std::vector<std::string> parts;
  for (int64_t d : dims_) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace graphrun
