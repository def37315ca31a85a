// The optimizer's LSTM cell fusion (graph/optimize/lstm_cell.cc) and loop
// fusion (lstm_loop.cc): the Keras LSTM layers of the model fixtures run as
// BlockLSTM (or, masked, as a loop of LSTMBlockCell) and still give
// TensorFlow's answers; a cell written out of a loop, with its operands in
// the other order, fuses and matches the unoptimized graph, as do two
// stacked cells listed last-first; cells that do not fit (a gate read
// elsewhere, the new state fetched, another gate activation, a state
// broadcast over the batch) stay as written.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "graph/protos/graph.pb.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

std::map<std::string, int> OpCounts(const RunMetadata& metadata) {
  std::map<std::string, int> counts;
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) ++counts[n.op()];
  }
  return counts;
}

// Each Keras LSTM layer's cell fuses; a plain layer's loop then becomes
// one BlockLSTM (lstm_loop.cc), a masked layer's loop (it selects the old
// state at padded steps) stays a loop around the cell.
TEST(LstmCellFusionTest, KerasLstmLayersRunAsBlockCellsAndMatchTensorFlow) {
  const std::vector<testing::FixtureModel> models =
      testing::ReadFixtureManifest("tests/fixtures/models/");
  struct Want {
    int cells, loops;  // LSTMBlockCell and BlockLSTM nodes once optimized
  };
  const std::map<std::string, Want> wants = {{"text_lstm", {0, 1}},
                                             {"text_bilstm", {0, 2}},
                                             {"text_lstm_states", {0, 1}},
                                             {"text_lstm_masked", {2, 0}}};
  int seen = 0;
  for (const testing::FixtureModel& m : models) {
    auto want = wants.find(m.name);
    if (want == wants.end()) continue;
    ++seen;
    SCOPED_TRACE(m.name);
    for (auto level : {SessionOptions::Optimize::kDefault, SessionOptions::Optimize::kNone}) {
      const bool optimized = level == SessionOptions::Optimize::kDefault;
      SCOPED_TRACE(optimized ? "optimized" : "as written");
      SessionOptions options;
      options.optimize = level;
      RunMetadata metadata;
      // RunFixture checks every fetch against TensorFlow's.
      absl::Status s = testing::RunFixture(m, options, &metadata);
      ASSERT_TRUE(s.ok()) << s;
      std::map<std::string, int> ops = OpCounts(metadata);
      EXPECT_EQ(ops["LSTMBlockCell"], optimized ? want->second.cells : 0);
      EXPECT_EQ(ops["BlockLSTM"], optimized ? want->second.loops : 0);
      if (optimized) EXPECT_EQ(ops["Split"], 0);
      // A fused loop leaves no loop behind.
      if (optimized && want->second.loops > 0) EXPECT_EQ(ops["NextIteration"], 0);
      if (optimized && want->second.loops == 0) EXPECT_GT(ops["NextIteration"], 0);
    }
  }
  EXPECT_EQ(seen, static_cast<int>(wants.size()))
      << "tests/fixtures/models/MANIFEST lacks one of the LSTM models";
}

// Builders for a hand-written cell: x [2, 3], h and c [2, 4].
NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
             const std::vector<std::string>& inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  if (op != "Const" && op != "Placeholder") (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  return n;
}

void AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = Add(g, name, "Const", {});
  (*n->mutable_attr())["dtype"].set_type(value.dtype());
  value.AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
}

Tensor Random(const std::vector<int64_t>& dims, int seed) {
  return testing::MakeTensor<float>(
      testing::RandomDoubles(testing::NumElementsOf(dims), -1, 1, seed), dims);
}

// One Keras cell step named `p` + node, reading x, `h` and `c`, with every
// binary op's operands swapped from Keras' order; its new state is p +
// "h_new" and p + "c_new".
void AddCell(GraphDef* g, const std::string& p, const std::string& h, const std::string& c,
             int seed) {
  AddConst(g, p + "W", Random({3, 16}, seed));
  AddConst(g, p + "U", Random({4, 16}, seed + 1));
  AddConst(g, p + "b", Random({16}, seed + 2));
  AddConst(g, p + "axis", testing::MakeTensor<int32_t>({1}, {}));
  Add(g, p + "xw", "MatMul", {"x", p + "W"});
  Add(g, p + "hu", "MatMul", {h, p + "U"});
  Add(g, p + "z", "AddV2", {p + "hu", p + "xw"});
  Add(g, p + "zb", "BiasAdd", {p + "z", p + "b"});
  NodeDef* split = Add(g, p + "gates", "Split", {p + "axis", p + "zb"});
  (*split->mutable_attr())["num_split"].set_i(4);
  Add(g, p + "i", "Sigmoid", {p + "gates"});
  Add(g, p + "f", "Sigmoid", {p + "gates:1"});
  Add(g, p + "g", "Tanh", {p + "gates:2"});
  Add(g, p + "o", "Sigmoid", {p + "gates:3"});
  Add(g, p + "fc", "Mul", {c, p + "f"});
  Add(g, p + "ig", "Mul", {p + "g", p + "i"});
  Add(g, p + "c_new", "AddV2", {p + "ig", p + "fc"});
  Add(g, p + "tc", "Tanh", {p + "c_new"});
  Add(g, p + "h_new", "Mul", {p + "tc", p + "o"});
}

// Placeholders x [2, 3], h and c [2, 4] (c of `c_dims` when given).
void AddInputs(GraphDef* g, std::vector<int64_t> c_dims = {2, 4}) {
  const std::vector<std::pair<const char*, std::vector<int64_t>>> inputs = {
      {"x", {2, 3}}, {"h", {2, 4}}, {"c", c_dims}};
  for (const auto& [name, dims] : inputs) {
    NodeDef* p = Add(g, name, "Placeholder", {});
    (*p->mutable_attr())["dtype"].set_type(DT_FLOAT);
    TensorShapeProto* shape = (*p->mutable_attr())["shape"].mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_size(d);
  }
}

GraphDef KerasCell() {
  GraphDef g;
  AddInputs(&g);
  AddCell(&g, "", "h", "c", 1);
  // Readers of the new state, as the next step would be.
  Add(&g, "h_out", "Identity", {"h_new"});
  Add(&g, "c_out", "Identity", {"c_new"});
  return g;
}

// Runs `g` optimized and as written, fetching `fetches`: whether an
// LSTMBlockCell ran when optimized, and both runs' results agree.
void RunBothWays(const GraphDef& g, const std::vector<std::string>& fetches, int expect_fused,
                 std::vector<int64_t> c_dims = {2, 4}) {
  std::vector<Tensor> results[2];
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", Random({2, 3}, 4)}, {"h", Random({2, 4}, 5)}, {"c", Random(c_dims, 6)}};
  for (auto level : {SessionOptions::Optimize::kDefault, SessionOptions::Optimize::kNone}) {
    const bool optimized = level == SessionOptions::Optimize::kDefault;
    SCOPED_TRACE(optimized ? "optimized" : "as written");
    SessionOptions options;
    options.optimize = level;
    auto session = Session::Create(g, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunOptions run;
    run.set_output_partition_graphs(true);
    RunMetadata metadata;
    absl::Status s =
        (*session)->Run(run, feeds, fetches, {}, &results[optimized ? 0 : 1], &metadata);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(OpCounts(metadata)["LSTMBlockCell"], optimized ? expect_fused : 0);
  }
  ASSERT_EQ(results[0].size(), fetches.size());
  ASSERT_EQ(results[1].size(), fetches.size());
  for (size_t k = 0; k < fetches.size(); ++k) {
    std::string why;
    EXPECT_TRUE(testing::AllClose(results[0][k], results[1][k], 1e-5, 1e-6, &why))
        << fetches[k] << ": " << why;
  }
}

TEST(LstmCellFusionTest, ACellOutOfALoopFusesInEitherOperandOrder) {
  RunBothWays(KerasCell(), {"h_out", "c_out"}, 1);
}

TEST(LstmCellFusionTest, StackedCellsListedLastFirstBothFuse) {
  // Cell 2 reads cell 1's new state; the GraphDef lists cell 2 first.
  GraphDef g;
  AddInputs(&g);
  AddCell(&g, "one/", "h", "c", 1);
  AddCell(&g, "two/", "one/h_new", "one/c_new", 11);
  Add(&g, "h_out", "Identity", {"two/h_new"});
  Add(&g, "c_out", "Identity", {"two/c_new"});
  std::reverse(g.mutable_node()->begin(), g.mutable_node()->end());
  RunBothWays(g, {"h_out", "c_out"}, 2);
}

TEST(LstmCellFusionTest, AStateBroadcastOverTheBatchStaysAsWritten) {
  // c is one row, [4], that the Mul spreads over the batch: not a cell
  // LSTMBlockCell computes.
  GraphDef g;
  AddInputs(&g, {4});
  AddCell(&g, "", "h", "c", 1);
  Add(&g, "h_out", "Identity", {"h_new"});
  Add(&g, "c_out", "Identity", {"c_new"});
  RunBothWays(g, {"h_out", "c_out"}, 0, {4});
}

TEST(LstmCellFusionTest, FetchedNewStateKeepsItsValue) {
  // h_new and c_new themselves are fetched: they must keep their names and
  // values, so the cell stays as written.
  RunBothWays(KerasCell(), {"h_new", "c_new"}, 0);
}

TEST(LstmCellFusionTest, AGateReadElsewhereStaysAsWritten) {
  GraphDef g = KerasCell();
  Add(&g, "f_out", "Identity", {"f"});
  RunBothWays(g, {"h_out", "c_out", "f_out"}, 0);
}

TEST(LstmCellFusionTest, OtherGateActivationsStayAsWritten) {
  // A hard-sigmoid style gate (Relu6 in place of the forget gate's Sigmoid)
  // is not the cell LSTMBlockCell computes.
  GraphDef g = KerasCell();
  for (NodeDef& n : *g.mutable_node()) {
    if (n.name() == "f") n.set_op("Relu6");
  }
  RunBothWays(g, {"h_out", "c_out"}, 0);
}

}  // namespace
}  // namespace graphrun
