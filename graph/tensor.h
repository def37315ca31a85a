// Tensor: a typed, shaped, reference-counted view of a buffer.
//
// Copying a Tensor shares its buffer (no data copy); Slice() views a range of
// the outermost dimension without copying. Buffers are 64-byte aligned and
// come from an Allocator. A Tensor is a value type: concurrent reads are
// safe; writing through data() while others read is the caller's business.
//
//   Tensor t(DT_FLOAT, TensorShape({2, 3}));
//   absl::Span<float> v = t.flat<float>();
#ifndef GRAPHRUN_GRAPH_TENSOR_H_
#define GRAPHRUN_GRAPH_TENSOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/allocator.h"
#include "graph/check.h"
#include "graph/protos/tensor.pb.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "graph/variant.h"

namespace graphrun {

// Owns one allocation. For DT_STRING, DT_VARIANT and DT_RESOURCE it holds
// constructed std::string / Variant / ResourceHandle objects (so those
// tensors must come from a host allocator).
class TensorBuffer {
 public:
  // Whether a new buffer's bytes are set. kUninitialized is for buffers
  // the caller overwrites completely (kernel outputs); with the environment
  // variable GRAPHRUN_POISON_TENSORS=1 (set for every test) they are filled
  // with 0xFF bytes instead, so code that reads them before writing shows
  // up as NaN / -1 rather than as a lucky zero. Neither touches memory the
  // host cannot write (Allocator::IsHostMemory() false: a GPU's), for which
  // Tensor::Allocate refuses kZero.
  enum class Init { kZero, kUninitialized };
  // Returns nullptr if the allocator has no memory left. DT_STRING,
  // DT_VARIANT and DT_RESOURCE buffers always hold default-constructed
  // elements.
  static std::shared_ptr<TensorBuffer> Create(Allocator* allocator,
                                              DataType dtype,
                                              int64_t num_elements,
                                              Init init = Init::kZero);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  Allocator* allocator() const { return allocator_; }

 private:
  friend class Tensor;  // Tensor::WrapHostMemory
  TensorBuffer() = default;
  Allocator* allocator_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  DataType dtype_ = DT_INVALID;
  int64_t num_elements_ = 0;
};

struct TensorFromProtoOptions {
  // Refuse constants whose decoded size exceeds this (a 1-value proto may
  // declare a shape that would fill terabytes).
  int64_t max_bytes = int64_t{4} << 30;
};

class Tensor {
 public:
  // An empty float scalar with no buffer (IsInitialized() is false).
  Tensor() = default;
  // Allocates a zero-initialized tensor from the host allocator; aborts if
  // the memory is not there. Use Allocate() when the size comes from input.
  Tensor(DataType dtype, const TensorShape& shape);
  // A tensor over host memory its caller owns (a NumPy array's), without a
  // copy: `release` runs once the last view of it is gone, on whichever
  // thread drops it. For dtypes of plain bytes only (not string, variant or
  // resource); `data` must be kTensorAlignment-aligned and hold the
  // shape's elements. InvalidArgument otherwise.
  static absl::StatusOr<Tensor> WrapHostMemory(DataType dtype, const TensorShape& shape,
                                               void* data, std::function<void()> release);
  static absl::StatusOr<Tensor> Allocate(
      Allocator* allocator, DataType dtype, const TensorShape& shape,
      TensorBuffer::Init init = TensorBuffer::Init::kZero);

  // A scalar holding `value`.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    t.flat<T>()[0] = value;
    return t;
  }
  // A tensor of `shape` holding `values` in row-major order.
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values,
                           const TensorShape& shape) {
    GR_CHECK(static_cast<int64_t>(values.size()) == shape.num_elements());
    Tensor t(DataTypeToEnum<T>::value, shape);
    std::copy(values.begin(), values.end(), t.flat<T>().begin());
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values) {
    return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
  }

  // Decodes a TensorProto: tensor_content when non-empty, else the typed
  // field for the dtype, a short list filled out with its last value (zeros
  // when empty). InvalidArgument names what is wrong.
  static absl::StatusOr<Tensor> FromProto(
      const TensorProto& proto, const TensorFromProtoOptions& options = {});
  // Encodes as tensor_content (raw bytes; strings as varint lengths then
  // bytes), as TensorFlow's AsProtoTensorContent.
  void AsProtoTensorContent(TensorProto* proto) const;
  // Encodes in the typed *_val field, as TensorFlow's AsProtoField.
  void AsProtoField(TensorProto* proto) const;

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of element data (for strings, variants and resource handles:
  // sizeof the C++ object each).
  size_t TotalBytes() const;
  bool IsInitialized() const { return buffer_ != nullptr || NumElements() == 0; }
  // True if both view the same allocation.
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True if this Tensor is the only holder of its buffer (so a kernel may
  // write into it in place).
  bool RefCountIsOne() const { return buffer_ != nullptr && buffer_.use_count() == 1; }
  // The allocator the buffer came from (nullptr without a buffer).
  Allocator* buffer_allocator() const {
    return buffer_ ? buffer_->allocator() : nullptr;
  }
  // The buffer starts at its allocation (not a slice): safe to reuse whole.
  bool IsWholeBuffer() const {
    return buffer_ != nullptr && offset_ == 0 && buffer_->size() == TotalBytes();
  }

  template <typename T>
  absl::Span<T> flat() {
    GR_CHECK(DataTypeToEnum<T>::value == dtype_);
    return absl::Span<T>(static_cast<T*>(raw_data()), NumElements());
  }
  template <typename T>
  absl::Span<const T> flat() const {
    GR_CHECK(DataTypeToEnum<T>::value == dtype_);
    return absl::Span<const T>(static_cast<const T*>(raw_data()),
                               NumElements());
  }
  template <typename T>
  T& scalar() {
    GR_CHECK(NumElements() == 1);
    return flat<T>()[0];
  }
  template <typename T>
  const T& scalar() const {
    GR_CHECK(NumElements() == 1);
    return flat<T>()[0];
  }

  void* raw_data() const {
    return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr;
  }

  // Rows [start, limit) of the outermost dimension, sharing this buffer.
  // Requires dims() >= 1 and 0 <= start <= limit <= dim_size(0).
  Tensor Slice(int64_t start, int64_t limit) const;
  // Same buffer, new shape with the same number of elements.
  absl::StatusOr<Tensor> Reshaped(const TensorShape& shape) const;

  // "Tensor<type: float shape: [2,3] values: 1 2 3...>".
  std::string DebugString(int max_values = 8) const;
  // Element i printed as text (numbers exactly, strings escaped).
  std::string ValueString(int64_t i) const;

 private:
  DataType dtype_ = DT_FLOAT;
  TensorShape shape_;
  std::shared_ptr<TensorBuffer> buffer_;
  size_t offset_ = 0;  // bytes into buffer_
};

// Copies n elements of `src`, from element src_at, into `dst` from element
// dst_at (both of src's dtype, flat row-major indices): strings, variants
// and resource handles by assignment, every other dtype bitwise.
void CopyElements(const Tensor& src, int64_t src_at, int64_t n, Tensor* dst, int64_t dst_at);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_TENSOR_H_
