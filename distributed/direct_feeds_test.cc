#include "distributed/direct_feeds.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph/rendezvous_key.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kClient[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kClientCpu1[] = "/job:worker/replica:0/task:0/device:CPU:1";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1/device:CPU:0";

// A _Send or _Recv of `tensor` from `from` to `to` (incarnation 3).
std::string Transfer(const std::string& name, const std::string& op, const std::string& tensor,
                     const std::string& from, const std::string& to, const std::string& input,
                     bool client_terminated = false) {
  std::string out = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  if (!input.empty()) absl::StrAppend(&out, " input: '", input, "'");
  absl::StrAppend(&out, " attr { key: 'tensor_name' value { s: '", tensor, "' } }",
                  " attr { key: 'send_device' value { s: '", from, "' } }",
                  " attr { key: 'recv_device' value { s: '", to, "' } }",
                  " attr { key: 'send_device_incarnation' value { i: 3 } }",
                  " attr { key: 'client_terminated' value { b: ", client_terminated, " } } }\n");
  return out;
}

std::string Op(const std::string& name, const std::string& op,
               const std::vector<std::string>& inputs) {
  std::string out = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& in : inputs) absl::StrAppend(&out, " input: '", in, "'");
  return out + " }\n";
}

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::string TaskOf(const std::string& device) { return device.substr(0, device.find("/device:")); }

uint64_t Incarnation(const std::string& device) { return device == kWorker1 ? 7 : 3; }

// The client's feed `feed` (tensor `tensor`) as the step graph makes it.
std::string Feed(const std::string& feed, const std::string& tensor) {
  return Transfer(feed, "_Recv", tensor, kClient, kClient, "", true);
}

TEST(DirectFeedsTest, AFeedReadOnlyOnAnotherTaskGoesToThatTask) {
  std::map<std::string, GraphDef> parts;
  parts[kClient] = Parse(Feed("_arg_x", "x:0") +
                         Transfer("send_x", "_Send", "edge_5_x", kClient, kWorker1, "_arg_x") +
                         Op("fetch", "_Send", {"loss"}) + Op("loss", "Identity", {}));
  parts[kWorker1] = Parse(Transfer("recv_x", "_Recv", "edge_5_x", kClient, kWorker1, "") +
                          Op("mm", "MatMul", {"recv_x", "w"}));
  absl::StatusOr<std::vector<FeedDelivery>> got =
      DeliverFeedsToReaders({"_arg_x"}, kClient, TaskOf, Incarnation, &parts);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].device, kWorker1);
  EXPECT_EQ((*got)[0].key, CreateRendezvousKey(kWorker1, 7, kWorker1, "x:0", 0, 0));
  EXPECT_EQ(Find(parts[kClient], "_arg_x"), nullptr);
  EXPECT_EQ(Find(parts[kClient], "send_x"), nullptr);
  EXPECT_NE(Find(parts[kClient], "fetch"), nullptr);
  const NodeDef* recv = Find(parts[kWorker1], "recv_x");
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->attr().at("tensor_name").s(), "x:0");
  EXPECT_EQ(recv->attr().at("send_device").s(), kWorker1);
  EXPECT_EQ(recv->attr().at("recv_device").s(), kWorker1);
  EXPECT_EQ(recv->attr().at("send_device_incarnation").i(), 7);
  EXPECT_TRUE(recv->attr().at("client_terminated").b());
  EXPECT_NE(Find(parts[kWorker1], "mm"), nullptr);
}

TEST(DirectFeedsTest, FeedsAlsoReadByTheClientsTaskStay) {
  const std::string client =
      Feed("_arg_x", "x:0") + Feed("_arg_y", "y:0") + Feed("_arg_z", "z:0") +
      // x: read here and on task 1.
      Transfer("send_x", "_Send", "edge_x", kClient, kWorker1, "_arg_x") +
      Op("neg", "Neg", {"_arg_x"}) +
      // y: sent to another device of the client's own task.
      Transfer("send_y", "_Send", "edge_y", kClient, kClientCpu1, "_arg_y") +
      // z: sent to task 1, but a node waits for the send.
      Transfer("send_z", "_Send", "edge_z", kClient, kWorker1, "_arg_z") +
      Op("after", "NoOp", {"^send_z"});
  std::map<std::string, GraphDef> parts;
  parts[kClient] = Parse(client);
  parts[kClientCpu1] = Parse(Transfer("recv_y", "_Recv", "edge_y", kClient, kClientCpu1, ""));
  parts[kWorker1] = Parse(Transfer("recv_x", "_Recv", "edge_x", kClient, kWorker1, "") +
                          Transfer("recv_z", "_Recv", "edge_z", kClient, kWorker1, ""));
  const std::map<std::string, GraphDef> before = parts;
  absl::StatusOr<std::vector<FeedDelivery>> got = DeliverFeedsToReaders(
      {"_arg_x", "_arg_y", "_arg_z"}, kClient, TaskOf, Incarnation, &parts);
  ASSERT_TRUE(got.ok()) << got.status();
  for (const FeedDelivery& d : *got) EXPECT_TRUE(d.device.empty()) << d.device;
  for (const auto& [device, g] : before) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parts[device], g))
        << device << ":\n" << parts[device].DebugString();
  }
}

TEST(DirectFeedsTest, ASendToADeviceWithoutAPartitionIsAnInternalError) {
  std::map<std::string, GraphDef> parts;
  parts[kClient] = Parse(Feed("_arg_x", "x:0") +
                         Transfer("send_x", "_Send", "edge_x", kClient, kWorker1, "_arg_x") +
                         Op("other", "NoOp", {}));
  absl::StatusOr<std::vector<FeedDelivery>> got =
      DeliverFeedsToReaders({"_arg_x"}, kClient, TaskOf, Incarnation, &parts);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(got.status().message().find("_arg_x"), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find(kWorker1), std::string::npos) << got.status();
}

}  // namespace
}  // namespace graphrun
