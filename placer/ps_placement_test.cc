#include "placer/ps_placement.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "graph/graph_io.h"

namespace graphrun {
namespace placer {
namespace {

std::string Var(const std::string& name, int rows, int cols, const std::string& device,
                const std::string& colocate = "") {
  std::string shape = absl::StrCat("dim { size: ", rows, " }");
  if (cols > 0) absl::StrAppend(&shape, " dim { size: ", cols, " }");
  return absl::StrCat(
      "node { name: '", name, "' op: 'VariableV2' device: '", device, "'",
      " attr { key: 'dtype' value { type: DT_FLOAT } }",
      " attr { key: 'shape' value { shape { ", shape, " } } }",
      colocate.empty() ? ""
                       : absl::StrCat(" attr { key: '_class' value { list { s: 'loc:@", colocate,
                                      "' } } }"),
      " }\n");
}

std::string Assign(const std::string& name, const std::string& var, const std::string& value,
                   const std::string& device) {
  return absl::StrCat("node { name: '", name, "' op: 'Assign' input: '", var, "' input: '", value,
                      "' device: '", device, "' attr { key: 'T' value { type: DT_FLOAT } } }\n");
}

// The MLP 784-256-256-10's variables pinned round-robin as
// replica_device_setter(ps_tasks=2) does (W0 with an Adam slot beside it),
// a restore Assign on W0 and an unpinned MatMul.
GraphDef RoundRobinMlp() {
  const std::string text = absl::StrCat(
      Var("W0", 784, 256, "/job:ps/task:0"), Var("W0/Adam", 784, 256, "/job:ps/task:0", "W0"),
      Var("b0", 256, 0, "/job:ps/task:1"), Var("W1", 256, 256, "/job:ps/task:0"),
      Var("b1", 256, 0, "/job:ps/task:1"), Var("W2", 256, 10, "/job:ps/task:0"),
      Var("b2", 10, 0, "/job:ps/task:1"),
      Assign("restore_W0", "W0", "W0/Adam", "/job:ps/task:0"),
      "node { name: 'm' op: 'MatMul' input: 'W1' input: 'W1' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n");
  absl::StatusOr<GraphDef> g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

const NodeDef& Node(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return g.node(0);
}

constexpr int64_t kW0 = 784 * 256 * 4, kW1 = 256 * 256 * 4, kW2 = 256 * 10 * 4;

TEST(PsPlacementTest, DescribesTheGraphsPins) {
  absl::StatusOr<PsPlacement> p = DescribePsPins(RoundRobinMlp(), 2);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->bytes_per_task[0], 2 * kW0 + kW1 + kW2);
  EXPECT_EQ(p->bytes_per_task[1], (256 + 256 + 10) * 4);
  EXPECT_GT(p->max_over_mean, 1.99);
  ASSERT_EQ(p->groups.size(), 6u);  // W0 and its slot are one group
  EXPECT_EQ(p->groups[0].variable, "W0");
  EXPECT_EQ(p->groups[0].variables, 2);
}

TEST(PsPlacementTest, BalancesBytesLargestFirstAndMovesWhatLivesBeside) {
  GraphDef g = RoundRobinMlp();
  PsPlacementOptions options;
  options.num_ps_tasks = 2;
  options.override_pins = true;
  absl::StatusOr<PsPlacement> p = PlaceVariablesOnPs(&g, options);
  ASSERT_TRUE(p.ok()) << p.status();
  // W0 with its slot alone is more than everything else: it takes one task,
  // the rest goes to the other.
  const std::string w0_task = Node(g, "W0").device();
  const std::string other = w0_task == "/job:ps/task:0" ? "/job:ps/task:1" : "/job:ps/task:0";
  EXPECT_EQ(Node(g, "W0/Adam").device(), w0_task);
  EXPECT_EQ(Node(g, "restore_W0").device(), w0_task);
  for (const char* v : {"b0", "W1", "b1", "W2", "b2"}) EXPECT_EQ(Node(g, v).device(), other) << v;
  EXPECT_EQ(Node(g, "m").device(), "/job:worker");
  EXPECT_EQ(std::max(p->bytes_per_task[0], p->bytes_per_task[1]), 2 * kW0);
  EXPECT_TRUE(p->groups[0].moved);
  EXPECT_NE(p->groups[0].why.find("fewest variable bytes"), std::string::npos);
}

TEST(PsPlacementTest, KeepsPinsUnlessToldAndPlacesUnpinnedVariables) {
  GraphDef g = RoundRobinMlp();
  absl::StatusOr<GraphDef> extra = ParseGraphDef(Var("W3", 512, 512, ""), GraphFormat::kText);
  ASSERT_TRUE(extra.ok());
  *g.add_node() = extra->node(0);
  PsPlacementOptions options;
  options.num_ps_tasks = 2;
  absl::StatusOr<PsPlacement> p = PlaceVariablesOnPs(&g, options);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Node(g, "W0").device(), "/job:ps/task:0");
  EXPECT_EQ(Node(g, "b0").device(), "/job:ps/task:1");
  // The new variable goes where fewer bytes are: ps task 1.
  EXPECT_EQ(Node(g, "W3").device(), "/job:ps/task:1");
}

TEST(PsPlacementTest, APinToAMissingTaskNamesTheVariable) {
  GraphDef g = RoundRobinMlp();
  PsPlacementOptions options;
  options.num_ps_tasks = 1;
  absl::StatusOr<PsPlacement> p = PlaceVariablesOnPs(&g, options);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("variable 'b0' is pinned to /job:ps/task:1"),
            std::string::npos)
      << p.status();
  options.override_pins = true;
  EXPECT_TRUE(PlaceVariablesOnPs(&g, options).ok());
  EXPECT_FALSE(PlaceVariablesOnPs(&g, PsPlacementOptions{}).ok());
}

// ResNet-50's 320 weights (placer/testdata/resnet50_variables.txt: Keras'
// names and shapes in creation order), each with a momentum slot, pinned
// round-robin as replica_device_setter does: one task gets every kernel.
// Placed by bytes they spread to within 1 % of even.
TEST(PsPlacementTest, ResNet50SizedVariablesSpreadEvenly) {
  std::ifstream in("placer/testdata/resnet50_variables.txt");
  ASSERT_TRUE(in.good());
  std::vector<std::pair<std::string, std::vector<int>>> vars;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    std::vector<int> dims;
    for (int d; fields >> d;) dims.push_back(d);
    vars.emplace_back(name, dims);
  }
  ASSERT_EQ(vars.size(), 320u);
  for (int tasks : {2, 4, 8}) {
    std::string text;
    for (size_t i = 0; i < vars.size(); ++i) {
      std::string shape;
      for (int d : vars[i].second) absl::StrAppend(&shape, "dim { size: ", d, " } ");
      const std::string device = absl::StrCat("/job:ps/task:", i % tasks);
      for (const std::string& name : {vars[i].first, vars[i].first + "/Momentum"}) {
        absl::StrAppend(&text, "node { name: '", name, "' op: 'VariableV2' device: '", device,
                        "' attr { key: 'dtype' value { type: DT_FLOAT } }",
                        " attr { key: 'shape' value { shape { ", shape, "} } }",
                        name == vars[i].first
                            ? std::string()
                            : absl::StrCat(" attr { key: '_class' value { list { s: 'loc:@",
                                           vars[i].first, "' } } }"),
                        " }\n");
      }
    }
    absl::StatusOr<GraphDef> g = ParseGraphDef(text, GraphFormat::kText);
    ASSERT_TRUE(g.ok()) << g.status();
    absl::StatusOr<PsPlacement> pinned = DescribePsPins(*g, tasks);
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    EXPECT_GT(pinned->max_over_mean, 1.9) << tasks << " tasks";
    PsPlacementOptions options;
    options.num_ps_tasks = tasks;
    options.override_pins = true;
    absl::StatusOr<PsPlacement> placed = PlaceVariablesOnPs(&*g, options);
    ASSERT_TRUE(placed.ok()) << placed.status();
    EXPECT_LE(placed->max_over_mean, 1.01) << tasks << " tasks";
    EXPECT_EQ(placed->groups.size(), 320u);
  }
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
