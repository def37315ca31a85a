// The service protos compile to messages and gRPC stubs: a request survives
// serialization, and both services carry the methods masters and workers
// rely on.
#include <string>
#include <type_traits>

#include "distributed/protos/master.grpc.pb.h"
#include "distributed/protos/master.pb.h"
#include "distributed/protos/worker.grpc.pb.h"
#include "distributed/protos/worker.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

static_assert(std::is_class_v<WorkerService::Stub>);
static_assert(
    std::is_base_of_v<WorkerService::StubInterface, WorkerService::Stub>);
static_assert(std::is_class_v<WorkerService::Service>);
static_assert(std::is_class_v<MasterService::Stub>);
static_assert(std::is_class_v<MasterService::Service>);

TEST(ServiceProtosTest, RunGraphRequestRoundTrips) {
  RunGraphRequest request;
  request.set_session_handle("session-7");
  request.set_graph_handle("graph-3");
  request.set_step_id(-42);  // step ids are random 64-bit values
  request.set_is_last(true);
  request.set_timeout_ms(5000);
  NamedTensor* feed = request.add_feeds();
  feed->set_name(
      "/job:worker/replica:0/task:0/device:CPU:0;0000000000000001;"
      "/job:worker/replica:0/task:1/device:CPU:0;x:0;0:0");
  TensorProto* tensor = feed->mutable_tensor();
  tensor->set_dtype(DT_FLOAT);
  tensor->mutable_tensor_shape()->add_dim()->set_size(2);
  tensor->add_float_val(1.5f);
  tensor->add_float_val(-2.0f);
  request.add_fetches("y:0");

  std::string bytes;
  ASSERT_TRUE(request.SerializeToString(&bytes));
  RunGraphRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(request, parsed));
  EXPECT_EQ(parsed.step_id(), -42);
  ASSERT_EQ(parsed.feeds_size(), 1);
  EXPECT_EQ(parsed.feeds(0).tensor().float_val(1), -2.0f);
  EXPECT_EQ(parsed.feeds(0).tensor().tensor_shape().dim(0).size(), 2);
}

TEST(ServiceProtosTest, RecvTensorResponseCarriesOneOfInlineOrDataPlane) {
  RecvTensorResponse response;
  response.set_dtype(DT_FLOAT);
  response.mutable_shape()->add_dim()->set_size(1 << 20);
  response.set_encoding(WIRE_ENCODING_FP16);
  response.mutable_tensor()->set_dtype(DT_FLOAT);
  DataPlaneTicket* ticket = response.mutable_data_plane();
  ticket->set_address("10.0.0.2:7001");
  ticket->set_token(std::string("\x00\xff\x10", 3));
  ticket->set_num_bytes(2 << 20);
  // Setting the data plane replaced the inline tensor.
  EXPECT_EQ(response.payload_case(), RecvTensorResponse::kDataPlane);
  EXPECT_FALSE(response.has_tensor());

  RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(response.SerializeAsString()));
  EXPECT_EQ(parsed.payload_case(), RecvTensorResponse::kDataPlane);
  EXPECT_EQ(parsed.data_plane().token(), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(parsed.encoding(), WIRE_ENCODING_FP16);
}

// The method names are part of the wire contract (the HTTP/2 path is
// "/graphrun.WorkerService/RunGraph").
TEST(ServiceProtosTest, ServicesHaveTheirMethods) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const google::protobuf::ServiceDescriptor* worker =
      pool->FindServiceByName("graphrun.WorkerService");
  ASSERT_NE(worker, nullptr);
  for (const char* method :
       {"GetStatus", "RegisterGraph", "RunGraph", "CleanupGraph", "CleanupStep",
        "RecvTensor", "Health", "Collective"}) {
    EXPECT_NE(worker->FindMethodByName(method), nullptr) << method;
  }
  EXPECT_EQ(worker->method_count(), 8);
  EXPECT_STREQ(WorkerService::service_full_name(), "graphrun.WorkerService");

  const google::protobuf::ServiceDescriptor* master =
      pool->FindServiceByName("graphrun.MasterService");
  ASSERT_NE(master, nullptr);
  for (const char* method :
       {"CreateSession", "ListDevices", "RunStep", "CloseSession"}) {
    EXPECT_NE(master->FindMethodByName(method), nullptr) << method;
  }
  EXPECT_EQ(master->FindMethodByName("RunStep")->input_type(),
            RunStepRequest::descriptor());
}

}  // namespace
}  // namespace graphrun
