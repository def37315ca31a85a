// RecvTensor's bytes against protobuf's own parser and serializer: what
// the encoder writes must read as the RecvTensorResponse it stands for, and
// the decoder must read any serialized RecvTensorResponse.
#include "distributed/recv_tensor_wire.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "grpcpp/grpcpp.h"

namespace graphrun {
namespace {

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

grpc::ByteBuffer Bytes(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// Bytes split into slices of `piece` bytes, as gRPC hands over a message
// read from the socket in pieces.
grpc::ByteBuffer Pieces(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += piece) {
    slices.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

Tensor Iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.5f * static_cast<float>(i) - 3.0f;
  return Tensor::FromVector(v, TensorShape({n / 4, 4}));
}

RecvTensorReply ValueReply(const Tensor& value) {
  RecvTensorReply reply;
  reply.meta.set_dtype(value.dtype());
  value.shape().AsProto(reply.meta.mutable_shape());
  reply.meta.set_send_start_micros(1234567);
  reply.wire_value = value;
  return reply;
}

TEST(RecvTensorWireTest, EncodedValueReadsAsATensorProto) {
  for (int64_t n : {4, 64, 1024, 65536}) {  // copied into the head, and sliced
    const Tensor value = Iota(n);
    RecvTensorReply reply = ValueReply(value);
    reply.meta.set_fp16_saturated(7);
    absl::StatusOr<grpc::ByteBuffer> bytes = EncodeRecvTensorReply(reply);
    ASSERT_TRUE(bytes.ok()) << bytes.status();

    RecvTensorResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(Flatten(*bytes))) << n;
    EXPECT_EQ(parsed.payload_case(), RecvTensorResponse::kTensor);
    EXPECT_EQ(parsed.dtype(), DT_FLOAT);
    EXPECT_EQ(parsed.send_start_micros(), 1234567);
    EXPECT_EQ(parsed.fp16_saturated(), 7);
    EXPECT_EQ(parsed.tensor().dtype(), DT_FLOAT);
    ASSERT_EQ(parsed.tensor().tensor_shape().dim_size(), 2);
    EXPECT_EQ(parsed.tensor().tensor_shape().dim(0).size(), n / 4);
    EXPECT_EQ(parsed.tensor().tensor_shape().dim(1).size(), 4);
    ASSERT_EQ(parsed.tensor().tensor_content().size(), static_cast<size_t>(n * 4));
    std::vector<float> got(n);
    std::memcpy(got.data(), parsed.tensor().tensor_content().data(), n * 4);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 0.5f * i - 3.0f) << i;
  }
}

TEST(RecvTensorWireTest, LargeValuesGoToGrpcWithoutACopy) {
  const Tensor value = Iota(65536);
  absl::StatusOr<grpc::ByteBuffer> bytes = EncodeRecvTensorReply(ValueReply(value));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(bytes->Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()), value.raw_data());
}

TEST(RecvTensorWireTest, DecodesWhatProtobufSerialized) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 1e30f, -7.0f};
  RecvTensorResponse response;
  response.set_dtype(DT_FLOAT);
  response.mutable_shape()->add_dim()->set_size(2);
  response.mutable_shape()->add_dim()->set_size(3);
  response.set_send_start_micros(99);
  TensorProto* t = response.mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(2);
  t->mutable_tensor_shape()->add_dim()->set_size(3);
  t->set_tensor_content(std::string(reinterpret_cast<const char*>(values.data()), 24));
  const std::string serialized = response.SerializeAsString();

  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, serialized.size()}) {
    grpc::ByteBuffer bytes = Pieces(serialized, piece);
    RecvTensorReply reply;
    ASSERT_TRUE(DecodeRecvTensorReply(&bytes, &reply).ok()) << piece;
    EXPECT_EQ(reply.meta.payload_case(), RecvTensorResponse::PAYLOAD_NOT_SET);
    EXPECT_EQ(reply.meta.send_start_micros(), 99);
    ASSERT_EQ(reply.wire_value.dtype(), DT_FLOAT);
    ASSERT_EQ(reply.wire_value.shape(), TensorShape({2, 3}));
    auto got = reply.wire_value.flat<float>();
    for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], values[i]);
  }
}

TEST(RecvTensorWireTest, RoundTripsEveryKindOfReply) {
  // fp16 words.
  Tensor words(DT_HALF, TensorShape({3}));
  uint16_t w[3] = {0x3c00, 0xc000, 0x7bff};
  std::memcpy(words.raw_data(), w, sizeof(w));
  RecvTensorReply half = ValueReply(words);
  half.meta.set_dtype(DT_FLOAT);
  half.meta.set_encoding(WIRE_ENCODING_FP16);
  absl::StatusOr<grpc::ByteBuffer> bytes = EncodeRecvTensorReply(half);
  ASSERT_TRUE(bytes.ok());
  RecvTensorReply got;
  ASSERT_TRUE(DecodeRecvTensorReply(&*bytes, &got).ok());
  EXPECT_EQ(got.meta.encoding(), WIRE_ENCODING_FP16);
  ASSERT_EQ(got.wire_value.dtype(), DT_HALF);
  EXPECT_EQ(std::memcmp(got.wire_value.raw_data(), w, sizeof(w)), 0);

  // No elements.
  RecvTensorReply empty = ValueReply(Tensor(DT_INT32, TensorShape({0, 5})));
  bytes = EncodeRecvTensorReply(empty);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(DecodeRecvTensorReply(&*bytes, &got).ok());
  EXPECT_EQ(got.wire_value.dtype(), DT_INT32);
  EXPECT_EQ(got.wire_value.shape(), TensorShape({0, 5}));

  // Dead, data plane, and a string tensor inside a TensorProto.
  RecvTensorReply dead;
  dead.meta.set_is_dead(true);
  bytes = EncodeRecvTensorReply(dead);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(DecodeRecvTensorReply(&*bytes, &got).ok());
  EXPECT_TRUE(got.meta.is_dead());
  EXPECT_FALSE(got.wire_value.IsInitialized());

  RecvTensorReply ticket;
  ticket.meta.mutable_data_plane()->set_address("127.0.0.1:5");
  ticket.meta.mutable_data_plane()->set_num_bytes(1 << 20);
  bytes = EncodeRecvTensorReply(ticket);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(DecodeRecvTensorReply(&*bytes, &got).ok());
  EXPECT_EQ(got.meta.data_plane().address(), "127.0.0.1:5");
  EXPECT_EQ(got.meta.data_plane().num_bytes(), 1 << 20);

  RecvTensorReply strings;
  strings.meta.set_dtype(DT_STRING);
  Tensor s(DT_STRING, TensorShape({2}));
  s.flat<std::string>()[0] = "ab";
  s.flat<std::string>()[1] = std::string(5000, 'x');
  s.AsProtoTensorContent(strings.meta.mutable_tensor());
  bytes = EncodeRecvTensorReply(strings);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(DecodeRecvTensorReply(&*bytes, &got).ok());
  ASSERT_TRUE(got.meta.has_tensor());
  absl::StatusOr<Tensor> back = Tensor::FromProto(got.meta.tensor());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<std::string>()[1], std::string(5000, 'x'));
}

TEST(RecvTensorWireTest, CutShortOrWrongSizedValuesAreRefused) {
  absl::StatusOr<grpc::ByteBuffer> bytes = EncodeRecvTensorReply(ValueReply(Iota(64)));
  ASSERT_TRUE(bytes.ok());
  const std::string whole = Flatten(*bytes);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    grpc::ByteBuffer prefix = Bytes(whole.substr(0, cut));
    RecvTensorReply reply;
    const absl::Status s = DecodeRecvTensorReply(&prefix, &reply);
    // A prefix that ends between the metadata's fields is a message of its
    // own, without the value; none may decode to a value.
    if (s.ok()) {
      EXPECT_FALSE(reply.wire_value.IsInitialized()) << cut;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << cut;
    }
  }

  RecvTensorResponse response;
  TensorProto* t = response.mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(4);
  t->set_tensor_content(std::string(12, '\0'));  // 3 floats for 4
  grpc::ByteBuffer wrong = Bytes(response.SerializeAsString());
  RecvTensorReply reply;
  const absl::Status s = DecodeRecvTensorReply(&wrong, &reply);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs 16 bytes"), std::string::npos) << s;

  t->mutable_tensor_shape()->mutable_dim(0)->set_size(-4);
  wrong = Bytes(response.SerializeAsString());
  EXPECT_EQ(DecodeRecvTensorReply(&wrong, &reply).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RecvTensorWireTest, RandomBytesNeverCrash) {
  std::mt19937 rng(17);
  absl::StatusOr<grpc::ByteBuffer> bytes = EncodeRecvTensorReply(ValueReply(Iota(64)));
  ASSERT_TRUE(bytes.ok());
  const std::string whole = Flatten(*bytes);
  for (int i = 0; i < 3000; ++i) {
    std::string b = whole;
    // Flip a few bytes of a real message, or make one up.
    if (i % 3 == 0) {
      b.resize(rng() % 200);
      for (char& c : b) c = static_cast<char>(rng());
    } else {
      for (int k = 0; k < 1 + i % 4; ++k) b[rng() % b.size()] = static_cast<char>(rng());
    }
    grpc::ByteBuffer buffer = Bytes(b);
    RecvTensorReply reply;
    const absl::Status s = DecodeRecvTensorReply(&buffer, &reply);
    if (s.ok() && reply.wire_value.IsInitialized() && reply.wire_value.NumElements() > 0) {
      // Whatever decoded must be whole: its bytes are the shape's.
      EXPECT_EQ(static_cast<int64_t>(reply.wire_value.TotalBytes()),
                reply.wire_value.NumElements() * DataTypeSize(reply.wire_value.dtype()));
    }
  }
}

}  // namespace
}  // namespace graphrun
