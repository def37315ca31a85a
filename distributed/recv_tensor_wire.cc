#include "distributed/recv_tensor_wire.h"

#include <climits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "graph/allocator.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/slice.h"

namespace graphrun {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;
using google::protobuf::internal::WireFormatLite;

// RecvTensorResponse.tensor, and TensorProto's dtype, tensor_shape and
// tensor_content.
constexpr int kResponseTensorField = 5;
constexpr int kResponseDataPlaneField = 6;
constexpr int kProtoDtypeField = 1;
constexpr int kProtoShapeField = 2;
constexpr int kProtoContentField = 4;

// Values this small are copied into the message's first slice: a slice of
// their own costs more than the copy.
constexpr int64_t kCopyBelowBytes = 4096;

constexpr uint32_t LengthTag(int field) {
  return (static_cast<uint32_t>(field) << 3) | WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("a malformed RecvTensor response: ", what));
}

// Reads a TensorProto of `length` bytes at `in`. A fixed-size value in
// tensor_content that follows its dtype and shape is read into `*value`
// (`*direct` set); everything else is copied to `*rest`, a TensorProto of
// its own.
absl::Status ReadTensorProto(CodedInputStream* in, uint32_t length, Tensor* value,
                             bool* direct, std::string* rest) {
  *direct = false;
  rest->clear();
  const CodedInputStream::Limit limit = in->PushLimit(static_cast<int>(length));
  DataType dtype = DT_INVALID;
  bool have_shape = false;
  TensorShapeProto shape_proto;
  {
    StringOutputStream rest_stream(rest);
    CodedOutputStream out(&rest_stream);
    for (uint32_t tag = in->ReadTag(); tag != 0; tag = in->ReadTag()) {
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const auto type = WireFormatLite::GetTagWireType(tag);
      if (field == kProtoDtypeField && type == WireFormatLite::WIRETYPE_VARINT) {
        uint32_t d = 0;
        if (!in->ReadVarint32(&d)) return Malformed("the tensor's dtype is cut short");
        dtype = static_cast<DataType>(d);
        out.WriteTag(tag);
        out.WriteVarint32(d);
        continue;
      }
      if (field == kProtoShapeField && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t n = 0;
        std::string bytes;
        if (!in->ReadVarint32(&n) || !in->ReadString(&bytes, static_cast<int>(n)) ||
            !shape_proto.ParseFromString(bytes)) {
          return Malformed("the tensor's shape is unreadable");
        }
        have_shape = true;
        out.WriteTag(tag);
        out.WriteVarint32(n);
        out.WriteString(bytes);
        continue;
      }
      if (field == kProtoContentField && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
          have_shape && DataTypeSize(dtype) > 0) {
        uint32_t n = 0;
        if (!in->ReadVarint32(&n)) return Malformed("the tensor's length is cut short");
        absl::StatusOr<TensorShape> shape = TensorShape::FromProto(shape_proto);
        if (!shape.ok()) return Malformed(shape.status().message());
        const int64_t want = shape->num_elements() * DataTypeSize(dtype);
        if (static_cast<int64_t>(n) != want) {
          return Malformed(absl::StrCat("a ", DataTypeString(dtype), " ",
                                        shape->DebugString(), " tensor needs ", want,
                                        " bytes, its content has ", n));
        }
        if (n > static_cast<uint32_t>(in->BytesUntilLimit())) {
          return Malformed(absl::StrCat("the tensor's ", n, " bytes are cut short"));
        }
        GR_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(HostAllocator(), dtype, *shape,
                                                       TensorBuffer::Init::kUninitialized));
        if (n > 0 && !in->ReadRaw(t.raw_data(), static_cast<int>(n))) {
          return Malformed(absl::StrCat("the tensor's ", n, " bytes are cut short"));
        }
        *value = std::move(t);
        *direct = true;
        continue;
      }
      if (!WireFormatLite::SkipField(in, tag, &out)) {
        return Malformed(absl::StrCat("field ", field, " of the tensor is cut short"));
      }
    }
  }
  if (!in->ConsumedEntireMessage()) return Malformed("the tensor is cut short");
  in->PopLimit(limit);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<grpc::ByteBuffer> EncodeRecvTensorReply(const RecvTensorReply& reply) {
  const RecvTensorResponse& meta = reply.meta;
  std::string head;
  if (!meta.SerializeToString(&head)) {
    return absl::InternalError("cannot serialize a RecvTensor response");
  }
  const bool inline_value =
      meta.payload_case() == RecvTensorResponse::PAYLOAD_NOT_SET && !meta.is_dead();
  if (!inline_value) {
    grpc::Slice slice(head);
    return grpc::ByteBuffer(&slice, 1);
  }
  const Tensor& value = reply.wire_value;
  if (!value.IsInitialized() || DataTypeSize(value.dtype()) == 0) {
    return absl::InternalError(
        absl::StrCat("a RecvTensor reply with no value, or a ", DataTypeString(value.dtype()),
                     " one outside a TensorProto"));
  }
  const int64_t content = static_cast<int64_t>(value.TotalBytes());
  if (content > kMaxRecvTensorInlineBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a ", DataTypeString(value.dtype()), " ", value.shape().DebugString(), " tensor of ",
        content, " bytes is over the ", kMaxRecvTensorInlineBytes,
        " a RecvTensor response carries; larger tensors travel on the data plane "
        "(graphrun worker --data_plane, which is off under TLS)"));
  }
  TensorProto header;
  header.set_dtype(value.dtype());
  value.shape().AsProto(header.mutable_tensor_shape());
  const std::string header_bytes = header.SerializeAsString();
  const uint64_t tensor_length = header_bytes.size() +
                                 CodedOutputStream::VarintSize32(LengthTag(kProtoContentField)) +
                                 CodedOutputStream::VarintSize64(content) + content;
  const bool copy = content < kCopyBelowBytes;
  {
    StringOutputStream stream(&head);  // appends
    CodedOutputStream out(&stream);
    out.WriteTag(LengthTag(kResponseTensorField));
    out.WriteVarint64(tensor_length);
    out.WriteString(header_bytes);
    out.WriteTag(LengthTag(kProtoContentField));
    out.WriteVarint64(static_cast<uint64_t>(content));
    if (copy) out.WriteRaw(value.raw_data(), static_cast<int>(content));
  }
  if (copy) {
    grpc::Slice slice(head);
    return grpc::ByteBuffer(&slice, 1);
  }
  grpc::Slice slices[2] = {
      grpc::Slice(head),
      grpc::Slice(value.raw_data(), static_cast<size_t>(content), &ReleaseTensor,
                  new Tensor(value)),
  };
  return grpc::ByteBuffer(slices, 2);
}

absl::Status DecodeRecvTensorReply(grpc::ByteBuffer* bytes, RecvTensorReply* reply) {
  grpc::ProtoBufferReader reader(bytes);
  if (!reader.status().ok()) return Malformed(reader.status().error_message());
  CodedInputStream in(&reader);
  in.SetTotalBytesLimit(INT_MAX);
  std::string rest;  // the response without its tensor
  bool direct = false;
  bool data_plane_after_value = false;
  Tensor value;
  std::string tensor_rest;
  bool have_tensor = false;
  {
    StringOutputStream rest_stream(&rest);
    CodedOutputStream out(&rest_stream);
    for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      if (field == kResponseTensorField &&
          WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t length = 0;
        if (!in.ReadVarint32(&length) || length > static_cast<uint32_t>(INT_MAX)) {
          return Malformed("the tensor's length is unreadable");
        }
        GR_RETURN_IF_ERROR(ReadTensorProto(&in, length, &value, &direct, &tensor_rest));
        have_tensor = true;
        data_plane_after_value = false;
        continue;
      }
      if (field == kResponseDataPlaneField) data_plane_after_value = have_tensor;
      if (!WireFormatLite::SkipField(&in, tag, &out)) {
        return Malformed(absl::StrCat("field ", field, " is cut short"));
      }
    }
  }
  if (!in.ConsumedEntireMessage()) return Malformed("the message is cut short");
  reply->meta.Clear();
  reply->wire_value = Tensor();
  if (!reply->meta.ParseFromString(rest)) return Malformed("its fields are unreadable");
  if (!have_tensor || data_plane_after_value) return absl::OkStatus();  // the last one wins
  if (direct) {
    reply->meta.clear_payload();
    reply->wire_value = std::move(value);
    return absl::OkStatus();
  }
  if (!reply->meta.mutable_tensor()->ParseFromString(tensor_rest)) {
    return Malformed("its tensor is unreadable");
  }
  return absl::OkStatus();
}

}  // namespace graphrun
