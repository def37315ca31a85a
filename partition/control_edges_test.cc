#include "partition/control_edges.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "partition/const_copies.h"
#include "partition/partition.h"

namespace graphrun {
namespace {

constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kPs0[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kPs1[] = "/job:ps/replica:0/task:1/device:CPU:0";

std::string Node(const std::string& name, const std::string& op, const std::string& device,
                 const std::vector<std::string>& inputs = {}) {
  std::string out = absl::StrCat("node { name: '", name, "' op: '", op, "' device: '", device, "'");
  for (const std::string& in : inputs) absl::StrAppend(&out, " input: '", in, "'");
  if (op == "Const") {
    absl::StrAppend(&out,
                    " attr { key: 'dtype' value { type: DT_FLOAT } }"
                    " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} "
                    "float_val: 1 } } }");
  }
  return out + " }\n";
}

GraphDef Parse(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def)) << text;
  return def;
}

std::map<std::string, std::string> Devices(const GraphDef& g) {
  std::map<std::string, std::string> out;
  for (const NodeDef& n : g.node()) out[n.name()] = n.device();
  return out;
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> Inputs(const NodeDef& n) {
  return std::vector<std::string>(n.input().begin(), n.input().end());
}

// The end of a parameter-server step: each ps task's updates signal a NoOp
// on the worker, which signals the global step's increment on ps 0.
std::string EndOfStep() {
  return absl::StrCat(Node("u0", "Const", kPs0), Node("u1", "Const", kPs1),
                      Node("ps0_done", "NoOp", kPs0, {"^u0"}),
                      Node("ps1_done", "NoOp", kPs1, {"^u1"}),
                      Node("update", "NoOp", kWorker, {"^ps0_done", "^ps1_done"}),
                      Node("train", "NoOp", kPs0, {"^update"}));
}

int Sends(const std::map<std::string, GraphDef>& parts) {
  int n = 0;
  for (const auto& [device, part] : parts) {
    for (const NodeDef& node : part.node()) n += node.op() == "_Send";
  }
  return n;
}

TEST(ControlEdgesTest, ANoOpMovesToTheTaskOfItsReaders) {
  GraphDef g = Parse(EndOfStep());
  std::map<std::string, std::string> device = Devices(g);
  absl::StatusOr<ControlEdgeChanges> c = GatherControlEdges(&g, &device, DefaultTaskOf);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->moved, 1);
  EXPECT_EQ(device.at("update"), kPs0);
  // ps 1's signal now goes straight to ps 0: one message instead of three.
  std::unique_ptr<Graph> graph = *ImportGraphDef(Parse(EndOfStep()));
  absl::StatusOr<std::map<std::string, GraphDef>> before = Partition(*graph, PartitionOptions());
  absl::StatusOr<std::map<std::string, GraphDef>> after =
      PartitionCopyingConsts(*graph, PartitionOptions());
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(Sends(*before), 3);
  EXPECT_EQ(Sends(*after), 1);
  EXPECT_EQ(after->count(kWorker), 0u);  // nothing is left on the worker
}

TEST(ControlEdgesTest, ControlInputsFromOneTaskAreGatheredThere) {
  // Three updates on ps 0 that two nodes on ps 1 wait for.
  GraphDef g = Parse(absl::StrCat(
      Node("a2", "Const", kPs0), Node("a0", "Const", kPs0), Node("a1", "Const", kPs0),
      Node("x", "Const", kPs1), Node("b", "Identity", kPs1, {"x", "^a0", "^a1", "^a2", "^x"}),
      Node("c", "NoOp", kPs1, {"^a2", "^a1", "^a0"}), Node("d", "NoOp", kPs1, {"^a0"})));
  (*g.mutable_node(4)->mutable_attr())["T"].set_type(DT_FLOAT);
  std::map<std::string, std::string> device = Devices(g);
  absl::StatusOr<ControlEdgeChanges> c = GatherControlEdges(&g, &device, DefaultTaskOf);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->gathered, 1);
  const NodeDef* gather = Find(g, "a0/_gather_0");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->op(), "NoOp");
  EXPECT_EQ(Inputs(*gather), (std::vector<std::string>{"^a0", "^a1", "^a2"}));
  EXPECT_EQ(device.at("a0/_gather_0"), kPs0);
  EXPECT_EQ(Inputs(*Find(g, "b")), (std::vector<std::string>{"x", "^x", "^a0/_gather_0"}));
  EXPECT_EQ(Inputs(*Find(g, "c")), (std::vector<std::string>{"^a0/_gather_0"}));
  EXPECT_EQ(Inputs(*Find(g, "d")), (std::vector<std::string>{"^a0"}));  // one source
  EXPECT_TRUE(ImportGraphDef(g).ok());
}

TEST(ControlEdgesTest, NothingChangesWhereNoMessageIsSaved) {
  // A NoOp read on two tasks, and one whose inputs all live where it is.
  const std::string text = absl::StrCat(
      Node("u0", "Const", kPs0), Node("u1", "Const", kPs1),
      Node("both", "NoOp", kWorker, {"^u0"}), Node("r0", "NoOp", kPs0, {"^both"}),
      Node("r1", "NoOp", kPs1, {"^both"}), Node("w", "Const", kWorker),
      Node("local", "NoOp", kWorker, {"^w"}), Node("far", "NoOp", kPs1, {"^local", "^u1"}));
  GraphDef g = Parse(text);
  std::map<std::string, std::string> device = Devices(g);
  absl::StatusOr<ControlEdgeChanges> c = GatherControlEdges(&g, &device, DefaultTaskOf);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->moved, 0);
  EXPECT_EQ(c->gathered, 0);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(g, Parse(text)));
  EXPECT_EQ(device, Devices(Parse(text)));
}

TEST(ControlEdgesTest, GraphsWithLoopsAreLeftAlone) {
  GraphDef g = Parse(EndOfStep() + Node("e", "Enter", kWorker, {"u0"}));
  (*g.mutable_node(g.node_size() - 1)->mutable_attr())["T"].set_type(DT_FLOAT);
  (*g.mutable_node(g.node_size() - 1)->mutable_attr())["frame_name"].set_s("loop");
  std::map<std::string, std::string> device = Devices(g);
  absl::StatusOr<ControlEdgeChanges> c = GatherControlEdges(&g, &device, DefaultTaskOf);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->moved, 0);
  EXPECT_EQ(device.at("update"), kWorker);
  device.erase("u0");
  EXPECT_FALSE(GatherControlEdges(&g, &device, DefaultTaskOf).ok());
}

}  // namespace
}  // namespace graphrun
