#include "partition/const_copies.h"

#include <memory>

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kPsGpu[] = "/job:ps/replica:0/task:0/device:GPU:0";

std::unique_ptr<Graph> Import(const std::string& text) {
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  absl::StatusOr<std::unique_ptr<Graph>> g = ImportGraphDef(def);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

absl::StatusOr<ConstCopies> Copy(const Graph& g) {
  return CopyConstsToReaders(g, PartitionOptions());  // devices from the nodes
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

TEST(ConstCopiesTest, ReadersOnAnotherTasksCpuReadACopy) {
  // lr on the worker, read by two nodes on ps 0's CPU (one by data, one by
  // control), by one on the worker and by one on ps 0's GPU.
  std::unique_ptr<Graph> g = Import(absl::StrCat(R"pb(
    node { name: "lr" op: "Const" device: ")pb", kWorker, R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.5 } } } }
    node { name: "a" op: "Neg" input: "lr" device: ")pb", kPs, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "b" op: "NoOp" input: "^lr" device: ")pb", kPs, R"pb(" }
    node { name: "c" op: "Neg" input: "lr:0" device: ")pb", kWorker, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "d" op: "Neg" input: "lr" device: ")pb", kPsGpu, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb"));
  ASSERT_NE(g, nullptr);
  absl::StatusOr<ConstCopies> copies = Copy(*g);
  ASSERT_TRUE(copies.ok()) << copies.status();
  EXPECT_EQ(copies->copies, 1);
  const NodeDef* copy = Find(copies->graph, "lr/_copy_0");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->op(), "Const");
  EXPECT_EQ(copy->attr().at("value").tensor().float_val(0), 0.5f);
  EXPECT_EQ(copies->device.at("lr/_copy_0"), kPs);
  EXPECT_EQ(Find(copies->graph, "a")->input(0), "lr/_copy_0");
  EXPECT_EQ(Find(copies->graph, "b")->input(0), "^lr/_copy_0");
  EXPECT_EQ(Find(copies->graph, "c")->input(0), "lr:0");  // same task
  EXPECT_EQ(Find(copies->graph, "d")->input(0), "lr");    // a GPU reads the sent value
  EXPECT_EQ(copies->device.at("lr"), kWorker);
  // The result imports: the copy is a valid node.
  absl::StatusOr<std::unique_ptr<Graph>> again = ImportGraphDef(copies->graph);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(ConstCopiesTest, ConstsWithInputsOrLocalReadersStay) {
  // A Const with a control input (as inside a loop's frame) is never
  // copied; one read only on its own task needs no copy.
  std::unique_ptr<Graph> g = Import(absl::StrCat(R"pb(
    node { name: "start" op: "NoOp" device: ")pb", kWorker, R"pb(" }
    node { name: "k" op: "Const" input: "^start" device: ")pb", kWorker, R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: "j" op: "Const" device: ")pb", kWorker, R"pb("
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "a" op: "Add" input: "k" input: "j" device: ")pb", kWorker, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "b" op: "Neg" input: "k" device: ")pb", kPs, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb"));
  ASSERT_NE(g, nullptr);
  absl::StatusOr<ConstCopies> copies = Copy(*g);
  ASSERT_TRUE(copies.ok()) << copies.status();
  EXPECT_EQ(copies->copies, 0);
  EXPECT_EQ(copies->graph.node_size(), 0);
}

}  // namespace
}  // namespace graphrun
