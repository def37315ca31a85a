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

// Largest rank shape inference accepts for a shape it derives from a tensor's
// length (a Fill whose dims input has 2^31 elements): TensorFlow's limit.
inline constexpr int kMaxRank = 254;

// The product of the non-zero entries of `dims` (1 for none), or -1 when a
// dim is negative or the product passes kMaxElements. Never overflows.
int64_t NonZeroDimProduct(absl::Span<const int64_t> dims);

// A TensorShape's invariant: no dim is negative and the product of its
// non-zero dims is at most kMaxElements. So the element count, every partial
// product (strides) and every sub-shape stay in range, even with a 0 dim.
class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims);

  // InvalidArgument for negative dims or a product of non-zero dims past
  // kMaxElements ("shape [...] is too large").
  static absl::StatusOr<TensorShape> FromDims(absl::Span<const int64_t> dims);
  // Also rejects unknown rank and unknown (-1) dimensions.
  static absl::StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  // Append a dim / change dim i. InvalidArgument, leaving the shape as it
  // was, when `size` is negative or the shape would pass kMaxElements: use
  // these for sizes computed from user input (attrs, tensor values, sums and
  // products of input dims).
  absl::Status AddDimWithStatus(int64_t size);
  absl::Status SetDimWithStatus(int i, int64_t size);
  // The same, but CHECK-fail instead: only for sizes known to keep the
  // invariant (taken from another valid shape, or already checked).
  void AddDim(int64_t size);
  void set_dim(int i, int64_t size);
  // Never breaks the invariant.
  void RemoveDim(int i);

  void AsProto(TensorShapeProto* proto) const;
  TensorShapeProto AsProto() const;
  // "[2,3]", "[]" for a scalar.
  std::string DebugString() const;

  bool operator==(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

 private:
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
  // Dim i; -1 (unknown) for every i when the rank is unknown.
  int64_t dim(int i) const { return unknown_rank_ ? -1 : dims_[i]; }
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
