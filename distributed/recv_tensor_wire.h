// RecvTensor's answer on the gRPC wire, without a TensorProto in between.
//
// The bytes are a serialized RecvTensorResponse, readable by protobuf's own
// parser: the reply's metadata, then its inline value as field `tensor` (a
// TensorProto with dtype, tensor_shape and tensor_content). What differs is
// where the value's bytes live. The encoder hands gRPC the tensor's own
// buffer as a slice, held until gRPC has sent it; the decoder copies the
// bytes once, from gRPC's receive buffers into a new tensor. Through a
// TensorProto they were copied four times.
#ifndef GRAPHRUN_DISTRIBUTED_RECV_TENSOR_WIRE_H_
#define GRAPHRUN_DISTRIBUTED_RECV_TENSOR_WIRE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/worker_interface.h"
#include "grpcpp/support/byte_buffer.h"

namespace graphrun {

// The most tensor bytes one RecvTensor response carries inline: protobuf's
// readers count a message's bytes in an int.
constexpr int64_t kMaxRecvTensorInlineBytes = (int64_t{1} << 31) - (int64_t{1} << 20);

// ResourceExhausted when the wire value is over kMaxRecvTensorInlineBytes.
absl::StatusOr<grpc::ByteBuffer> EncodeRecvTensorReply(const RecvTensorReply& reply);

// Reads any serialized RecvTensorResponse. An inline value of a fixed-size
// dtype in tensor_content becomes `reply->wire_value` and leaves `meta`'s
// payload unset; any other inline value stays in `meta.tensor`.
// InvalidArgument for bytes that are not such a message, or whose value
// does not fit its dtype and shape.
absl::Status DecodeRecvTensorReply(grpc::ByteBuffer* bytes, RecvTensorReply* reply);

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_RECV_TENSOR_WIRE_H_
