// A step that writes no state reads its resource variables as constants of
// its plan from its second run on; any step that may write state makes
// that plan stale, so the next run sees the variable's new value and the
// step is no longer frozen. Expected values are the variable's assigned
// values times the feed, written out by hand.
#include "runtime/frozen_reads.h"

#include <memory>
#include <string>
#include <vector>

#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

std::string FloatConst(const std::string& name, float a, float b) {
  return "node { name: '" + name +
         "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
         "float_val: [" + std::to_string(a) + ", " + std::to_string(b) + "] } } } }\n";
}

std::string Assign(const std::string& name, const std::string& value) {
  return "node { name: '" + name + "' op: 'AssignVariableOp' input: 'w' input: '" + value +
         "' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
}

// w: a resource variable [2]; set1/set2/set3 assign it (1, 2), (3, 4),
// (5, 6); y = ReadVariableOp(w) * x; z = ReadVariableOp(w) * (10, 100).
GraphDef TestGraph() {
  std::string text = R"pb(
    node { name: 'w' op: 'VarHandleOp'
           attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'shape' value { shape { dim { size: 2 } } } }
           attr { key: 'shared_name' value { s: 'w' } } }
    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'read' op: 'ReadVariableOp' input: 'w'
           attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'y' op: 'Mul' input: 'read' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'z' op: 'Mul' input: 'read' input: 'k' attr { key: 'T' value { type: DT_FLOAT } } }
  )pb";
  text += FloatConst("k", 10, 100) + FloatConst("c1", 1, 2) + FloatConst("c2", 3, 4) +
          FloatConst("c3", 5, 6);
  text += Assign("set1", "c1") + Assign("set2", "c2") + Assign("set3", "c3");
  auto g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

Tensor Vec(float a, float b) {
  Tensor t(DT_FLOAT, TensorShape({2}));
  t.flat<float>()[0] = a;
  t.flat<float>()[1] = b;
  return t;
}

struct Step {
  std::vector<float> value;
  int reads = 0;  // ReadVariableOps in the step's partition graphs
};

Step RunStep(Session* s, const std::string& fetch, bool feed_x = true) {
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  std::vector<std::pair<std::string, Tensor>> feeds;
  if (feed_x) feeds.emplace_back("x", Vec(2, 3));
  absl::Status st = s->Run(options, feeds, {fetch}, {}, &out, &metadata);
  EXPECT_TRUE(st.ok()) << st;
  Step step;
  if (!st.ok()) return step;
  step.value.assign(out[0].flat<float>().begin(), out[0].flat<float>().end());
  for (const GraphDef& g : metadata.partition_graphs()) {
    for (const NodeDef& n : g.node()) step.reads += n.op() == "ReadVariableOp" ? 1 : 0;
  }
  return step;
}

void Target(Session* s, const std::string& target) {
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {}, {target}, &out);
  ASSERT_TRUE(st.ok()) << st;
}

std::unique_ptr<Session> NewSession(bool freeze = true) {
  SessionOptions options;
  options.freeze_read_only_variables = freeze;
  auto s = Session::Create(TestGraph(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

TEST(FrozenReadsTest, SecondRunReadsTheVariableAsAConstant) {
  auto s = NewSession();
  Target(s.get(), "set1");
  Step first = RunStep(s.get(), "y");
  EXPECT_EQ(first.value, (std::vector<float>{2, 6}));
  EXPECT_EQ(first.reads, 1);  // built as written
  for (int i = 0; i < 3; ++i) {
    Step later = RunStep(s.get(), "y");
    EXPECT_EQ(later.value, (std::vector<float>{2, 6}));
    EXPECT_EQ(later.reads, 0) << "run " << i + 2;  // the read is a constant now
  }
}

TEST(FrozenReadsTest, AWriteMakesTheFrozenPlanStale) {
  auto s = NewSession();
  Target(s.get(), "set1");
  RunStep(s.get(), "y");
  EXPECT_EQ(RunStep(s.get(), "y").reads, 0);
  Target(s.get(), "set2");
  Step after = RunStep(s.get(), "y");
  EXPECT_EQ(after.value, (std::vector<float>{6, 12}));
  EXPECT_EQ(after.reads, 1);  // rebuilt, and no longer frozen
  Target(s.get(), "set3");
  EXPECT_EQ(RunStep(s.get(), "y").value, (std::vector<float>{10, 18}));
  EXPECT_EQ(RunStep(s.get(), "y").value, (std::vector<float>{10, 18}));
  // Another step is frozen on its own account, with the values of now.
  Step z1 = RunStep(s.get(), "z", false);
  Step z2 = RunStep(s.get(), "z", false);
  EXPECT_EQ(z2.value, (std::vector<float>{50, 600}));
  EXPECT_EQ(z1.reads, 1);
  EXPECT_EQ(z2.reads, 0);
  Target(s.get(), "set1");
  EXPECT_EQ(RunStep(s.get(), "z", false).value, (std::vector<float>{10, 200}));
}

TEST(FrozenReadsTest, OffKeepsTheRead) {
  auto s = NewSession(false);
  Target(s.get(), "set1");
  RunStep(s.get(), "y");
  Step second = RunStep(s.get(), "y");
  EXPECT_EQ(second.value, (std::vector<float>{2, 6}));
  EXPECT_EQ(second.reads, 1);
}

TEST(FrozenReadsTest, UninitializedReadStillFailsNamingTheVariable) {
  auto s = NewSession();
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out;
    absl::Status st = s->Run({{"x", Vec(2, 3)}}, {"y"}, {}, &out);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << "run " << i + 1 << ": " << st;
    EXPECT_NE(std::string(st.message()).find("w"), std::string::npos) << st;
  }
  Target(s.get(), "set2");
  EXPECT_EQ(RunStep(s.get(), "y").value, (std::vector<float>{6, 12}));
}

TEST(FrozenReadsTest, FindsWritesAndReads) {
  auto g = ImportGraphDef(TestGraph());
  ASSERT_TRUE(g.ok()) << g.status();
  ReadOnlyStep serving = FindReadOnlyStep(**g, {"x"}, {"y:0"}, {});
  EXPECT_FALSE(serving.writes_state);
  EXPECT_EQ(serving.reads, (std::vector<std::string>{"read"}));
  ReadOnlyStep assign = FindReadOnlyStep(**g, {"x"}, {"y:0"}, {"set1"});
  EXPECT_TRUE(assign.writes_state);
  ReadOnlyStep fed = FindReadOnlyStep(**g, {"read"}, {"y:0"}, {});
  EXPECT_TRUE(fed.reads.empty());  // a fed read does not run
}

// A step's TensorArrays are its own (each step makes them anew): writing
// one is no write a later step can see, so the step still freezes its reads.
TEST(FrozenReadsTest, TensorArraysOfTheStepAreNoWrite) {
  GraphDef def = TestGraph();
  auto more = ParseGraphDef(R"pb(
    node { name: 'n' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
           attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
    node { name: 'i' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
           attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: 'ta' op: 'TensorArrayV3' input: 'n'
           attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'put' op: 'TensorArrayWriteV3' input: 'ta' input: 'i' input: 'y' input: 'ta:1'
           attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'got' op: 'TensorArrayReadV3' input: 'ta' input: 'i' input: 'put'
           attr { key: 'dtype' value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(more.ok()) << more.status();
  for (const NodeDef& n : more->node()) *def.add_node() = n;
  auto g = ImportGraphDef(def);
  ASSERT_TRUE(g.ok()) << g.status();
  ReadOnlyStep step = FindReadOnlyStep(**g, {"x"}, {"got:0"}, {});
  EXPECT_FALSE(step.writes_state);
  EXPECT_EQ(step.reads, (std::vector<std::string>{"read"}));
  // Assigning the variable in the same step still writes.
  EXPECT_TRUE(FindReadOnlyStep(**g, {"x"}, {"got:0"}, {"set1"}).writes_state);
}

}  // namespace
}  // namespace graphrun
