#include "runtime/step_graph.h"

#include <map>
#include <set>
#include <string>

#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/rendezvous_key.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

// y = Neg(x * w); an unrelated branch z = Abs(u); c runs after x by a
// control edge; i = Identity(w) for the optimizer to bypass.
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
  node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                float_val: [1, 2] } } } }
  node { name: "m" op: "Mul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Neg" input: "m" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "u" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "z" op: "Abs" input: "u" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "c" op: "NoOp" input: "^x" }
  node { name: "i" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "n" op: "Neg" input: "i" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

std::unique_ptr<Graph> FullGraph() {
  auto def = ParseGraphDef(kGraph, GraphFormat::kText);
  EXPECT_TRUE(def.ok()) << def.status();
  auto g = ImportGraphDef(*def);
  EXPECT_TRUE(g.ok()) << g.status();
  return std::move(g).value();
}

StepGraphOptions Unoptimized() {
  StepGraphOptions options;
  options.optimize = false;
  return options;
}

std::map<std::string, NodeDef> NodesByName(const Graph& g) {
  std::map<std::string, NodeDef> out;
  const GraphDef def = g.ToGraphDef();
  for (const NodeDef& n : def.node()) out[n.name()] = n;
  return out;
}

TEST(StepGraphTest, PrunesToWhatFetchesNeedAndRewritesFeedsAndFetches) {
  auto full = FullGraph();
  auto step = BuildStepGraph(*full, {"x"}, {"y:0"}, {}, Unoptimized());
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  // x is replaced by its _Arg; u, z, c, i and n are not needed.
  ASSERT_EQ(step->feed_nodes.size(), 1u);
  ASSERT_EQ(step->fetch_nodes.size(), 1u);
  const std::string arg = step->feed_nodes[0];
  const std::string retval = step->fetch_nodes[0];
  std::set<std::string> names;
  for (const auto& [name, n] : nodes) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{arg, retval, "w", "m", "y"}));
  EXPECT_EQ(nodes[arg].op(), "_Arg");
  EXPECT_EQ(nodes[arg].attr().at("index").i(), 0);
  EXPECT_EQ(nodes[arg].attr().at("T").type(), DT_FLOAT);
  EXPECT_EQ(nodes["m"].input(0), arg);
  EXPECT_EQ(nodes["m"].input(1), "w");
  EXPECT_EQ(nodes[retval].op(), "_Retval");
  EXPECT_EQ(nodes[retval].input(0), "y");
  EXPECT_EQ(nodes[retval].attr().at("index").i(), 0);
  // What a fed value must look like.
  EXPECT_EQ(step->feed_dtypes, std::vector<DataType>{DT_FLOAT});
  EXPECT_EQ(step->feed_shapes[0].DebugString(), "[?,2]");
  EXPECT_EQ(step->feed_labels[0], "node 'x' (Placeholder)");
  // The feed prints as x in the placement log; the fetch as an added node.
  EXPECT_EQ(step->log_names.at(arg).name, "x");
  EXPECT_EQ(step->log_names.at(retval).name, "");
  EXPECT_TRUE(step->feed_keys.empty());
  EXPECT_TRUE(step->fetch_keys.empty());
}

TEST(StepGraphTest, FeedingAnInnerTensorCutsItsProducers) {
  auto full = FullGraph();
  auto step = BuildStepGraph(*full, {"m:0"}, {"y"}, {}, Unoptimized());
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  EXPECT_EQ(nodes.size(), 3u);  // _Arg, y, _Retval
  EXPECT_EQ(nodes["y"].input(0), step->feed_nodes[0]);
  EXPECT_EQ(nodes.count("x") + nodes.count("w") + nodes.count("m"), 0u);
}

TEST(StepGraphTest, AFetchThatIsFedReturnsTheFedValue) {
  auto full = FullGraph();
  auto step = BuildStepGraph(*full, {"m"}, {"m:0", "y"}, {}, Unoptimized());
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  EXPECT_EQ(nodes[step->fetch_nodes[0]].input(0), step->feed_nodes[0]);
  EXPECT_EQ(nodes[step->fetch_nodes[1]].input(0), "y");
  EXPECT_EQ(nodes[step->fetch_nodes[1]].attr().at("index").i(), 1);
  EXPECT_EQ(nodes.count("m"), 0u);
}

TEST(StepGraphTest, TargetsAndControlEdgesOfAFedPlaceholder) {
  auto full = FullGraph();
  // c waits for x by `^x`; fed, x hands that edge to its feed node.
  auto step = BuildStepGraph(*full, {"x"}, {}, {"c"}, Unoptimized());
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  EXPECT_EQ(nodes.size(), 2u);
  ASSERT_EQ(nodes["c"].input_size(), 1);
  EXPECT_EQ(nodes["c"].input(0), "^" + step->feed_nodes[0]);
  // Unfed, the Placeholder itself stays.
  step = BuildStepGraph(*full, {}, {}, {"c"}, Unoptimized());
  ASSERT_TRUE(step.ok()) << step.status();
  nodes = NodesByName(*step->graph);
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes["c"].input(0), "^x");
}

TEST(StepGraphTest, ClientTerminatedFeedsAndFetches) {
  auto full = FullGraph();
  StepGraphOptions options = Unoptimized();
  options.feeds_through_rendezvous = true;
  options.client_device = "/job:localhost/replica:0/task:0/device:CPU:0";
  // A fetch named twice gets two _Sends with their own keys.
  auto step = BuildStepGraph(*full, {"x"}, {"y", "y"}, {}, options);
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  const NodeDef& recv = nodes[step->feed_nodes[0]];
  EXPECT_EQ(recv.op(), "_Recv");
  EXPECT_EQ(recv.device(), options.client_device);
  EXPECT_TRUE(recv.attr().at("client_terminated").b());
  EXPECT_EQ(recv.attr().at("tensor_name").s(), "x:0");
  EXPECT_EQ(recv.attr().at("tensor_type").type(), DT_FLOAT);
  ASSERT_EQ(step->fetch_nodes.size(), 2u);
  for (const std::string& name : step->fetch_nodes) {
    EXPECT_EQ(nodes[name].op(), "_Send");
    EXPECT_EQ(nodes[name].input(0), "y");
  }
  ASSERT_EQ(step->feed_keys.size(), 1u);
  ASSERT_EQ(step->fetch_keys.size(), 2u);
  EXPECT_NE(step->fetch_keys[0], step->fetch_keys[1]);
  EXPECT_NE(step->feed_keys[0].find("x:0"), std::string::npos);
}

TEST(StepGraphTest, FeedValueShapesBecomeTheFeedNodesShapes) {
  auto full = FullGraph();
  StepGraphOptions options = Unoptimized();
  options.feed_value_shapes = {TensorShape({5, 2})};
  auto step = BuildStepGraph(*full, {"x"}, {"y"}, {}, options);
  ASSERT_TRUE(step.ok()) << step.status();
  const Node* arg = step->graph->FindNode(step->feed_nodes[0]);
  EXPECT_EQ(arg->output_shape(0).DebugString(), "[5,2]");
  // What a fed value must match stays the graph's shape.
  EXPECT_EQ(step->feed_shapes[0].DebugString(), "[?,2]");
  options.feed_value_shapes = {};
  EXPECT_EQ(BuildStepGraph(*full, {"x", "u"}, {"y"}, {}, options).ok(), true);
  options.feed_value_shapes = {TensorShape({1, 2})};
  EXPECT_EQ(BuildStepGraph(*full, {"x", "u"}, {"y"}, {}, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StepGraphTest, OptimizerKeepsFeedsAndFetchesAndReportsRemovedNodes) {
  auto full = FullGraph();
  StepGraphOptions options;  // optimize, no evaluator: no folding of Neg
  auto step = BuildStepGraph(*full, {}, {"n"}, {}, options);
  ASSERT_TRUE(step.ok()) << step.status();
  auto nodes = NodesByName(*step->graph);
  // The Identity between w and n is bypassed; n (fetched) keeps its name.
  EXPECT_EQ(nodes.count("i"), 0u);
  EXPECT_EQ(nodes.count("n"), 1u);
  bool removed_i = false;
  for (const auto& r : step->log_removed) removed_i |= r.name == "i" && r.op == "Identity";
  EXPECT_TRUE(removed_i);
}

TEST(StepGraphTest, Errors) {
  auto full = FullGraph();
  auto expect = [&](const std::vector<std::string>& feeds,
                    const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets, absl::StatusCode code,
                    const std::string& fragment) {
    auto s = BuildStepGraph(*full, feeds, fetches, targets, Unoptimized()).status();
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s;
  };
  expect({"nope"}, {"y"}, {}, absl::StatusCode::kNotFound,
         "feed 'nope': there is no node 'nope' in the graph");
  expect({"x"}, {"nope:1"}, {}, absl::StatusCode::kNotFound,
         "fetch 'nope:1': there is no node 'nope'");
  expect({"x"}, {"y"}, {"ghost"}, absl::StatusCode::kNotFound, "target 'ghost'");
  expect({"x"}, {"y:1"}, {}, absl::StatusCode::kInvalidArgument,
         "fetch 'y:1': node 'y' (Neg) has 1 outputs");
  expect({"x"}, {"^y"}, {}, absl::StatusCode::kInvalidArgument, "is not a tensor name");
  expect({"x", "x:0"}, {"y"}, {}, absl::StatusCode::kInvalidArgument, "'x:0' is fed twice");
  expect({"x", "x"}, {"y"}, {}, absl::StatusCode::kInvalidArgument, "'x' is fed twice");
}


// The client-terminated keys and nodes carry the client device's
// incarnation.
TEST(StepGraphTest, ClientKeysCarryTheClientDevicesIncarnation) {
  auto full = FullGraph();
  StepGraphOptions options = Unoptimized();
  options.feeds_through_rendezvous = true;
  options.client_device = "/job:localhost/replica:0/task:0/device:CPU:0";
  options.client_device_incarnation = 0xfedcba9876543210u;
  auto step = BuildStepGraph(*full, {"x"}, {"y"}, {}, options);
  ASSERT_TRUE(step.ok()) << step.status();
  for (const std::string& key : {step->feed_keys[0], step->fetch_keys[0]}) {
    auto parsed = ParseRendezvousKey(key);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->incarnation, 0xfedcba9876543210u) << key;
  }
  auto nodes = NodesByName(*step->graph);
  const NodeDef& recv = nodes[step->feed_nodes[0]];
  const NodeDef& send = nodes[step->fetch_nodes[0]];
  for (const NodeDef* n : {&recv, &send}) {
    EXPECT_EQ(static_cast<uint64_t>(n->attr().at("send_device_incarnation").i()),
              0xfedcba9876543210u)
        << n->name();
  }
}

}  // namespace
}  // namespace graphrun
