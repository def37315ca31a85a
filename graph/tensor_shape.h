// TensorShape (every dimension known) and PartialShape (unknown rank or
// dimensions allowed, for shape inference and Placeholder shapes).
// Value types; not synchronized.
#ifndef GRAPHRUN_GRAPH_TENSOR_SHAPE_H_
#define GRAPHRUN_GRAPH_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/protos/tensor_shape.pb.h"

namespace graphrun {

// Largest number of elements a shape may declare (2^48): far past any
// tensor that fits in memory, small enough that byte counts never overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims);

  // InvalidArgument for negative dims or more than kMaxElements elements.
  static absl::StatusOr<TensorShape> FromDims(absl::Span<const int64_t> dims);
  // Also rejects unknown rank and unknown (-1) dimensions.
  static absl::StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  // CHECK-fails on a negative size; use FromDims for untrusted input.
  void AddDim(int64_t size);
  void set_dim(int i, int64_t size);
  void RemoveDim(int i);

  void AsProto(TensorShapeProto* proto) const;
  TensorShapeProto AsProto() const;
  // "[2,3]", "[]" for a scalar.
  std::string DebugString() const;

  bool operator==(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

 private:
  void Recompute();
  absl::InlinedVector<int64_t, 4> dims_;
  int64_t num_elements_ = 1;
};

// A shape that may have unknown rank, or unknown (-1) dimensions.
class PartialShape {
 public:
  PartialShape() = default;  // unknown rank
  static PartialShape Scalar() { return PartialShape(std::vector<int64_t>{}); }
  explicit PartialShape(std::vector<int64_t> dims);  // -1 = unknown dim
  // PartialShape({-1, 784}); without it such a call is ambiguous between
  // the vector and TensorShape constructors.
  explicit PartialShape(std::initializer_list<int64_t> dims)
      : PartialShape(std::vector<int64_t>(dims)) {}
  explicit PartialShape(const TensorShape& shape);
  static absl::StatusOr<PartialShape> FromProto(const TensorShapeProto& proto);

  bool unknown_rank() const { return unknown_rank_; }
  int rank() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  bool IsFullyDefined() const;
  // Product of dims, or -1 if anything is unknown.
  int64_t num_elements() const;
  // True if some full shape could satisfy both.
  bool IsCompatibleWith(const PartialShape& other) const;
  bool IsCompatibleWith(const TensorShape& shape) const {
    return IsCompatibleWith(PartialShape(shape));
  }
  TensorShapeProto AsProto() const;
  // "[?,3]", "<unknown>".
  std::string DebugString() const;

  bool operator==(const PartialShape& other) const {
    return unknown_rank_ == other.unknown_rank_ && dims_ == other.dims_;
  }

 private:
  bool unknown_rank_ = true;
  std::vector<int64_t> dims_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_TENSOR_SHAPE_H_
