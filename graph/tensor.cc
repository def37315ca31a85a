#include "graph/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

size_t ElementBytes(DataType dtype) {
  switch (dtype) {
    case DT_STRING: return sizeof(std::string);
    case DT_VARIANT: return sizeof(Variant);
    case DT_RESOURCE: return sizeof(ResourceHandle);
    default: return DataTypeSize(dtype);
  }
}

template <typename T>
void ConstructAll(void* data, int64_t n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) new (p + i) T();
}

template <typename T>
void DestroyAll(void* data, int64_t n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) p[i].~T();
}

// Copies `n` values from a typed proto field into `out`, following
// TensorFlow's rule: extra values are ignored, a short list is filled out
// with its last value, an empty one leaves zeros.
template <typename T, typename Field, typename Convert>
void FillFromField(const Field& field, absl::Span<T> out, Convert convert) {
  const int64_t n = static_cast<int64_t>(out.size());
  const int64_t in_n = field.size();
  if (in_n == 0) return;  // zeros already
  const int64_t copy = std::min(n, in_n);
  for (int64_t i = 0; i < copy; ++i) out[i] = convert(field.Get(i));
  if (copy < n) {
    const T last = out[copy - 1];
    std::fill(out.begin() + copy, out.end(), last);
  }
}

template <typename T>
T Same(T v) { return v; }

absl::Status DecodeStrings(const std::string& content, absl::Span<std::string> out) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(content.data()),
      static_cast<int>(content.size()));
  std::vector<uint32_t> sizes(out.size());
  for (auto& s : sizes) {
    if (!in.ReadVarint32(&s)) {
      return absl::InvalidArgumentError(
          "tensor_content for a string tensor is truncated (lengths)");
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!in.ReadString(&out[i], static_cast<int>(sizes[i]))) {
      return absl::InvalidArgumentError(
          "tensor_content for a string tensor is truncated (bytes)");
    }
  }
  if (in.CurrentPosition() != static_cast<int>(content.size())) {
    return absl::InvalidArgumentError(
        "tensor_content for a string tensor has trailing bytes");
  }
  return absl::OkStatus();
}

}  // namespace

namespace {
bool PoisonUninitialized() {
  static const bool poison = [] {
    const char* v = std::getenv("GRAPHRUN_POISON_TENSORS");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  return poison;
}
}  // namespace

std::shared_ptr<TensorBuffer> TensorBuffer::Create(Allocator* allocator,
                                                   DataType dtype,
                                                   int64_t num_elements,
                                                   Init init) {
  const size_t bytes = ElementBytes(dtype) * static_cast<size_t>(num_elements);
  void* data = allocator->AllocateRaw(kTensorAlignment, bytes);
  if (data == nullptr) return nullptr;
  // One allocation for the buffer object and its reference count.
  struct Shared : TensorBuffer {};
  std::shared_ptr<TensorBuffer> buffer = std::make_shared<Shared>();
  buffer->allocator_ = allocator;
  buffer->data_ = data;
  buffer->bytes_ = bytes;
  buffer->dtype_ = dtype;
  buffer->num_elements_ = num_elements;
  if (dtype == DT_STRING) {
    ConstructAll<std::string>(data, num_elements);
  } else if (dtype == DT_VARIANT) {
    ConstructAll<Variant>(data, num_elements);
  } else if (dtype == DT_RESOURCE) {
    ConstructAll<ResourceHandle>(data, num_elements);
  } else if (!allocator->IsHostMemory()) {
    // Device memory: the host cannot write it (a device's kernels or copies
    // fill it, in its stream's order).
  } else if (init == Init::kZero) {
    std::memset(data, 0, bytes);
  } else if (PoisonUninitialized()) {
    std::memset(data, 0xFF, bytes);
  }
  return buffer;
}

TensorBuffer::~TensorBuffer() {
  if (dtype_ == DT_STRING) {
    DestroyAll<std::string>(data_, num_elements_);
  } else if (dtype_ == DT_VARIANT) {
    DestroyAll<Variant>(data_, num_elements_);
  } else if (dtype_ == DT_RESOURCE) {
    DestroyAll<ResourceHandle>(data_, num_elements_);
  }
  allocator_->DeallocateRaw(data_, bytes_);
}

namespace {

// The allocator of one wrapped buffer: hands out nothing, and when the
// buffer goes runs its owner's release and goes too.
class WrappedMemory final : public Allocator {
 public:
  explicit WrappedMemory(std::function<void()> release) : release_(std::move(release)) {}
  std::string Name() const override { return "caller memory"; }
  void* AllocateRaw(size_t, size_t) override { return nullptr; }
  void DeallocateRaw(void*, size_t) override {
    if (release_) release_();
    delete this;
  }

 private:
  std::function<void()> release_;
};

}  // namespace

absl::StatusOr<Tensor> Tensor::WrapHostMemory(DataType dtype, const TensorShape& shape,
                                              void* data, std::function<void()> release) {
  if (!IsSupportedTensorType(dtype) || dtype == DT_STRING || dtype == DT_VARIANT ||
      dtype == DT_RESOURCE) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot wrap caller memory as a ", DataTypeString(dtype), " tensor"));
  }
  if (reinterpret_cast<uintptr_t>(data) % kTensorAlignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("caller memory is not ", kTensorAlignment, "-byte aligned"));
  }
  struct Shared : TensorBuffer {};
  std::shared_ptr<TensorBuffer> buffer = std::make_shared<Shared>();
  buffer->allocator_ = new WrappedMemory(std::move(release));
  buffer->data_ = data;
  buffer->dtype_ = dtype;
  buffer->num_elements_ = shape.num_elements();
  buffer->bytes_ = ElementBytes(dtype) * static_cast<size_t>(buffer->num_elements_);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = std::move(buffer);
  return t;
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  auto t = Allocate(HostAllocator(), dtype, shape);
  GR_CHECK(t.ok());
  *this = std::move(t).value();
}

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype,
                                        const TensorShape& shape,
                                        TensorBuffer::Init init) {
  if (!IsSupportedTensorType(dtype)) {
    return absl::UnimplementedError(absl::StrCat(
        "tensors of type ", DataTypeString(dtype), " are not supported"));
  }
  if (init == TensorBuffer::Init::kZero && !allocator->IsHostMemory()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a zero-filled tensor from ", allocator->Name(),
        ", whose memory the host cannot write: allocate it uninitialized and fill it on the "
        "device"));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buffer_ = TensorBuffer::Create(allocator, dtype, shape.num_elements(), init);
  if (t.buffer_ == nullptr) {
    std::string state;
    if (std::optional<AllocatorStats> stats = allocator->GetStats()) {
      // What the allocator could still give: a device's BFC allocator may
      // have the bytes in all but not in one piece.
      state = absl::StrCat("; ", stats->bytes_in_use, " bytes in use");
      if (stats->bytes_limit > 0) absl::StrAppend(&state, " of a ", stats->bytes_limit, " limit");
      if (stats->bytes_reserved > 0) {
        absl::StrAppend(&state, ", ", stats->bytes_reserved, " reserved, largest free chunk ",
                        stats->largest_free_block, " bytes");
      }
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory allocating a ", DataTypeString(dtype), " tensor of shape ",
        shape.DebugString(), " (", t.TotalBytes(), " bytes) from ",
        allocator->Name(), state));
  }
  return t;
}

size_t Tensor::TotalBytes() const {
  return ElementBytes(dtype_) * static_cast<size_t>(NumElements());
}

absl::StatusOr<Tensor> Tensor::FromProto(const TensorProto& proto,
                                         const TensorFromProtoOptions& options) {
  const DataType dtype = proto.dtype();
  if (dtype == DT_VARIANT || dtype == DT_RESOURCE) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensors of type ", DataTypeString(dtype),
        " cannot be decoded from a TensorProto"));
  }
  if (!IsSupportedTensorType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor of type ", DataTypeString(dtype), " is not supported"));
  }
  GR_ASSIGN_OR_RETURN(TensorShape shape,
                      TensorShape::FromProto(proto.tensor_shape()));
  const int64_t n = shape.num_elements();
  if (static_cast<double>(n) * ElementBytes(dtype) >
      static_cast<double>(options.max_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor of shape ", shape.DebugString(), " and type ",
        DataTypeString(dtype), " would take ",
        static_cast<double>(n) * ElementBytes(dtype), " bytes, over the limit of ",
        options.max_bytes));
  }
  GR_ASSIGN_OR_RETURN(Tensor t, Allocate(HostAllocator(), dtype, shape));
  if (!proto.tensor_content().empty()) {
    const std::string& content = proto.tensor_content();
    if (dtype == DT_STRING) {
      GR_RETURN_IF_ERROR(DecodeStrings(content, t.flat<std::string>()));
      return t;
    }
    if (content.size() != t.TotalBytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor_content has ", content.size(), " bytes but a ",
          DataTypeString(dtype), " tensor of shape ", shape.DebugString(),
          " needs ", t.TotalBytes()));
    }
    std::memcpy(t.raw_data(), content.data(), content.size());
    return t;
  }
  switch (dtype) {
    case DT_FLOAT: FillFromField(proto.float_val(), t.flat<float>(), Same<float>); break;
    case DT_DOUBLE: FillFromField(proto.double_val(), t.flat<double>(), Same<double>); break;
    case DT_INT32: FillFromField(proto.int_val(), t.flat<int32_t>(), Same<int32_t>); break;
    case DT_INT16:
      FillFromField(proto.int_val(), t.flat<int16_t>(), [](int32_t v) { return static_cast<int16_t>(v); });
      break;
    case DT_INT8:
      FillFromField(proto.int_val(), t.flat<int8_t>(), [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DT_UINT8:
      FillFromField(proto.int_val(), t.flat<uint8_t>(), [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DT_UINT16:
      FillFromField(proto.int_val(), t.flat<uint16_t>(), [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    case DT_INT64: FillFromField(proto.int64_val(), t.flat<int64_t>(), Same<int64_t>); break;
    case DT_UINT32: FillFromField(proto.uint32_val(), t.flat<uint32_t>(), Same<uint32_t>); break;
    case DT_UINT64: FillFromField(proto.uint64_val(), t.flat<uint64_t>(), Same<uint64_t>); break;
    case DT_BOOL: FillFromField(proto.bool_val(), t.flat<bool>(), Same<bool>); break;
    case DT_HALF:
      FillFromField(proto.half_val(), t.flat<half>(), [](int32_t v) {
        return Eigen::numext::bit_cast<half>(static_cast<uint16_t>(v));
      });
      break;
    case DT_BFLOAT16:
      FillFromField(proto.half_val(), t.flat<bfloat16>(), [](int32_t v) {
        return Eigen::numext::bit_cast<bfloat16>(static_cast<uint16_t>(v));
      });
      break;
    case DT_STRING:
      FillFromField(proto.string_val(), t.flat<std::string>(),
                    [](const std::string& v) { return v; });
      break;
    case DT_COMPLEX64:
    case DT_COMPLEX128: {
      const bool c64 = dtype == DT_COMPLEX64;
      const int pairs = (c64 ? proto.scomplex_val_size() : proto.dcomplex_val_size());
      if (pairs % 2 != 0) {
        return absl::InvalidArgumentError(
            "complex tensor has an odd number of real/imaginary values");
      }
      const int64_t in_n = pairs / 2;
      for (int64_t i = 0; i < n && in_n > 0; ++i) {
        const int64_t j = std::min(i, in_n - 1);
        if (c64) {
          t.flat<complex64>()[i] = complex64(proto.scomplex_val(2 * j),
                                             proto.scomplex_val(2 * j + 1));
        } else {
          t.flat<complex128>()[i] = complex128(proto.dcomplex_val(2 * j),
                                               proto.dcomplex_val(2 * j + 1));
        }
      }
      break;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor of type ", DataTypeString(dtype), " is not supported"));
  }
  return t;
}

void Tensor::AsProtoTensorContent(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  // Variant and resource elements are process-local objects: dtype and
  // shape only.
  if (NumElements() == 0 || dtype_ == DT_VARIANT || dtype_ == DT_RESOURCE) return;
  if (dtype_ == DT_STRING) {
    std::string out;
    {
      google::protobuf::io::StringOutputStream stream(&out);
      google::protobuf::io::CodedOutputStream coded(&stream);
      for (const std::string& s : flat<std::string>()) {
        coded.WriteVarint32(static_cast<uint32_t>(s.size()));
      }
      for (const std::string& s : flat<std::string>()) coded.WriteString(s);
    }
    proto->set_tensor_content(std::move(out));
    return;
  }
  proto->set_tensor_content(std::string(static_cast<const char*>(raw_data()),
                                        TotalBytes()));
}

void Tensor::AsProtoField(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  switch (dtype_) {
    case DT_FLOAT: for (float v : flat<float>()) proto->add_float_val(v); break;
    case DT_DOUBLE: for (double v : flat<double>()) proto->add_double_val(v); break;
    case DT_INT32: for (int32_t v : flat<int32_t>()) proto->add_int_val(v); break;
    case DT_INT16: for (int16_t v : flat<int16_t>()) proto->add_int_val(v); break;
    case DT_INT8: for (int8_t v : flat<int8_t>()) proto->add_int_val(v); break;
    case DT_UINT8: for (uint8_t v : flat<uint8_t>()) proto->add_int_val(v); break;
    case DT_UINT16: for (uint16_t v : flat<uint16_t>()) proto->add_int_val(v); break;
    case DT_INT64: for (int64_t v : flat<int64_t>()) proto->add_int64_val(v); break;
    case DT_UINT32: for (uint32_t v : flat<uint32_t>()) proto->add_uint32_val(v); break;
    case DT_UINT64: for (uint64_t v : flat<uint64_t>()) proto->add_uint64_val(v); break;
    case DT_BOOL: for (bool v : flat<bool>()) proto->add_bool_val(v); break;
    case DT_HALF:
      for (half v : flat<half>()) proto->add_half_val(Eigen::numext::bit_cast<uint16_t>(v));
      break;
    case DT_BFLOAT16:
      for (bfloat16 v : flat<bfloat16>()) proto->add_half_val(Eigen::numext::bit_cast<uint16_t>(v));
      break;
    case DT_STRING: for (const std::string& v : flat<std::string>()) proto->add_string_val(v); break;
    case DT_COMPLEX64:
      for (complex64 v : flat<complex64>()) {
        proto->add_scomplex_val(v.real());
        proto->add_scomplex_val(v.imag());
      }
      break;
    case DT_COMPLEX128:
      for (complex128 v : flat<complex128>()) {
        proto->add_dcomplex_val(v.real());
        proto->add_dcomplex_val(v.imag());
      }
      break;
    default:
      break;
  }
}

Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  GR_CHECK(dims() >= 1);
  GR_CHECK(0 <= start && start <= limit && limit <= dim_size(0));
  Tensor t = *this;
  t.shape_.set_dim(0, limit - start);
  const int64_t row = dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  t.offset_ = offset_ + static_cast<size_t>(start * row) * ElementBytes(dtype_);
  return t;
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (shape.num_elements() != NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape a tensor with ", NumElements(), " elements to shape ",
        shape.DebugString(), " (", shape.num_elements(), " elements)"));
  }
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

std::string Tensor::ValueString(int64_t i) const {
  if (dtype_ == DT_VARIANT) return flat<Variant>()[i].DebugString();
  if (dtype_ == DT_RESOURCE) return flat<ResourceHandle>()[i].DebugString();
  std::string out;
  VisitDataType(dtype_, [&](auto zero) {
    using T = decltype(zero);
    const T& v = flat<T>()[i];
    if constexpr (std::is_same_v<T, std::string>) {
      out = absl::StrCat("\"", absl::CEscape(v), "\"");
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      out = absl::StrCat(static_cast<float>(v));
    } else if constexpr (std::is_same_v<T, complex64> ||
                         std::is_same_v<T, complex128>) {
      out = absl::StrCat("(", v.real(), ",", v.imag(), ")");
    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      out = absl::StrCat(static_cast<int>(v));
    } else {
      out = absl::StrCat(v);
    }
  });
  return out;
}

std::string Tensor::DebugString(int max_values) const {
  std::vector<std::string> values;
  const int64_t n = std::min<int64_t>(NumElements(), max_values);
  if (IsInitialized()) {
    for (int64_t i = 0; i < n; ++i) values.push_back(ValueString(i));
  }
  if (NumElements() > n) values.push_back("...");
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_),
                      " shape: ", shape_.DebugString(),
                      " values: ", absl::StrJoin(values, " "), ">");
}

void CopyElements(const Tensor& src, int64_t src_at, int64_t n, Tensor* dst, int64_t dst_at) {
  if (n <= 0) return;
  auto objects = [&](auto zero) {
    using T = decltype(zero);
    std::copy_n(src.flat<T>().data() + src_at, n, dst->flat<T>().data() + dst_at);
  };
  switch (src.dtype()) {
    case DT_STRING: objects(std::string()); return;
    case DT_VARIANT: objects(Variant()); return;
    case DT_RESOURCE: objects(ResourceHandle()); return;
    default: {
      const size_t size = static_cast<size_t>(DataTypeSize(src.dtype()));
      std::memcpy(static_cast<char*>(dst->raw_data()) + dst_at * size,
                  static_cast<const char*>(src.raw_data()) + src_at * size, n * size);
    }
  }
}

}  // namespace graphrun
