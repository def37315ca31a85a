// libFuzzer target: what arrives from the network beside protobuf's own
// parsers. Arbitrary bytes, cut into slices where the input says, go to
// DecodeRecvTensorReply (a RecvTensor response read straight into a
// tensor), and the data plane's request and reply headers are parsed. Must
// never crash, hang, leak or allocate past what the bytes justify.
//
// Build and run with clang (libFuzzer + ASan + UBSan): tools/fuzz.sh 60 wire
// The same entry point runs under gcc in the regression test over a corpus.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/data_plane_wire.h"
#include "distributed/recv_tensor_wire.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/grpcpp.h"

static const bool kQuietProtobuf = [] {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte says where gRPC's receive buffer was cut (1..256 bytes
  // per slice); the rest is the message.
  if (size == 0) return 0;
  const size_t piece = static_cast<size_t>(data[0]) + 1;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const size_t n = size - 1;
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < n; i += piece) {
    slices.emplace_back(bytes + i, std::min(piece, n - i));
  }
  grpc::ByteBuffer buffer(slices.data(), slices.size());
  graphrun::RecvTensorReply reply;
  const absl::Status s = graphrun::DecodeRecvTensorReply(&buffer, &reply);
  if (s.ok() && reply.wire_value.IsInitialized()) {
    // A decoded value is whole: re-encoding it must succeed.
    (void)graphrun::EncodeRecvTensorReply(reply);
  }
  if (n >= static_cast<size_t>(graphrun::data_plane_internal::kRequestBytes)) {
    graphrun::data_plane_internal::Request request;
    (void)graphrun::data_plane_internal::ParseRequest(reinterpret_cast<const uint8_t*>(bytes),
                                                      &request);
  }
  if (n >= static_cast<size_t>(graphrun::data_plane_internal::kReplyBytes)) {
    graphrun::data_plane_internal::Reply reply_header;
    (void)graphrun::data_plane_internal::ParseReply(reinterpret_cast<const uint8_t*>(bytes),
                                                    &reply_header);
  }
  return 0;
}
