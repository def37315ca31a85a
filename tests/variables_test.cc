// Variables across steps in a Session: ref variables (VariableV2, Assign,
// AssignAdd, read through a ref edge) and resource variables (VarHandleOp
// and the *VariableOp ops) keep their values from one Run to the next,
// reads of a variable never assigned fail naming it, a read keeps its
// value when the variable is updated later in the step, and refs cross
// devices by value. Expected values are the arithmetic written out.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

std::string Quoted(std::string text) {
  for (char& c : text) {
    if (c == '\'') c = '"';
  }
  return text;
}

std::string FloatConst(const std::string& name, const std::vector<float>& values) {
  std::string vals;
  for (float v : values) absl::StrAppend(&vals, " float_val: ", v);
  return absl::StrCat("node { name: '", name,
                      "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim "
                      "{ size: ",
                      values.size(), " } }", vals, " } } } }\n");
}

// w: a ref variable of shape [2]; init assigns [1, 2], inc adds [10, 20],
// bad assigns what is fed to `any` (shape unknown until run); read is Identity(w), doubled is w * 2 (a ref edge into
// a Mul).
std::string RefGraph(const std::string& read_device = "") {
  return Quoted(absl::StrCat(
      "node { name: 'w' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'shape' value { shape { dim { size: 2 } } } } }\n",
      FloatConst("one_two", {1, 2}), FloatConst("ten_twenty", {10, 20}),
      "node { name: 'any' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n",
      "node { name: 'init' op: 'Assign' input: 'w' input: 'one_two' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'inc' op: 'AssignAdd' input: 'w' input: 'ten_twenty' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'bad' op: 'Assign' input: 'w' input: 'any' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'is_init' op: 'IsVariableInitialized' input: 'w' "
      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'read' op: 'Identity' input: 'w' device: '", read_device,
      "' attr { key: 'T' value { type: DT_FLOAT } } }\n",
      FloatConst("two", {2}),
      "node { name: 'doubled' op: 'Mul' input: 'w' input: 'two' device: '", read_device,
      "' attr { key: 'T' value { type: DT_FLOAT } } }\n"));
}

std::unique_ptr<Session> NewSession(const std::string& text, SessionOptions options = {}) {
  absl::StatusOr<GraphDef> graph = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  auto session = Session::Create(*graph, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

TEST(VariablesTest, RefVariableKeepsItsValueAcrossRuns) {
  std::unique_ptr<Session> s = NewSession(RefGraph());
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"read", "is_init"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
  EXPECT_TRUE(out[1].scalar<bool>());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(s->Run({}, {}, {"inc"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"read", "doubled", "w"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{21, 42}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{42, 84}));
  // Fetching the variable itself gives its value.
  EXPECT_EQ(out[2].dtype(), DT_FLOAT);
  EXPECT_EQ(Floats(out[2]), (std::vector<float>{21, 42}));
  // A fetched value is a snapshot: later updates do not change it.
  const Tensor before = out[0];
  ASSERT_TRUE(s->Run({}, {}, {"inc"}, &out).ok());
  EXPECT_EQ(Floats(before), (std::vector<float>{21, 42}));
}

TEST(VariablesTest, ReadingAnUninitializedRefVariableFailsNamingIt) {
  std::unique_ptr<Session> s = NewSession(RefGraph());
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "Attempting to use uninitialized value w")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "'read'")) << st;
  st = s->Run({}, {}, {"inc"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
}

TEST(VariablesTest, AssignWithAnotherShapeIsRefusedAndKeepsTheValue) {
  std::unique_ptr<Session> s = NewSession(RefGraph());
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  const absl::Status st =
      s->Run({{"any", Tensor::FromVector<float>({1, 2, 3})}}, {}, {"bad"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "[3]")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "variable w")) << st;
  ASSERT_TRUE(s->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
}

TEST(VariablesTest, EachSessionHasItsOwnVariables) {
  std::unique_ptr<Session> a = NewSession(RefGraph());
  std::unique_ptr<Session> b = NewSession(RefGraph());
  ASSERT_TRUE(a != nullptr && b != nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(a->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(b->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
}

TEST(VariablesTest, RefsCrossDevicesByValue) {
  SessionOptions options;
  options.cpu_devices = 2;
  std::unique_ptr<Session> s =
      NewSession(RefGraph("/job:localhost/replica:0/task:0/device:CPU:1"), options);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {}, {"inc"}, &out).ok());
  const absl::Status st = s->Run({}, {"read", "doubled"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{11, 22}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{22, 44}));
}

// v: a resource variable of shape [3, 2].
std::string ResourceGraph() {
  auto handle = [](const std::string& name) {
    return absl::StrCat("node { name: '", name,
                        "' op: 'VarHandleOp' attr { key: 'dtype' value { type: DT_FLOAT } } "
                        "attr { key: 'shape' value { shape { dim { size: 3 } dim { size: 2 } } } "
                        "} attr { key: 'shared_name' value { s: 'v' } } }\n");
  };
  auto op = [](const std::string& name, const std::string& type, const std::string& inputs,
               const std::string& extra = "") {
    return absl::StrCat("node { name: '", name, "' op: '", type, "' ", inputs,
                        " attr { key: 'dtype' value { type: DT_FLOAT } } ", extra, "}\n");
  };
  std::string t = handle("v") + handle("v_again");
  t += "node { name: 'six' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
       "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } "
       "dim { size: 2 } } float_val: 0 float_val: 1 float_val: 2 float_val: 3 float_val: 4 "
       "float_val: 5 } } } }\n";
  t += "node { name: 'rows' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
       "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
       "int_val: 2 int_val: 0 } } } }\n";
  t += "node { name: 'upd' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
       "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } "
       "dim { size: 2 } } float_val: 100 float_val: 200 float_val: 300 float_val: 400 } } } }\n";
  t += op("assign", "AssignVariableOp", "input: 'v' input: 'six'");
  t += op("add", "AssignAddVariableOp", "input: 'v_again' input: 'six'");
  t += op("read", "ReadVariableOp", "input: 'v'");
  t += op("read_then_add", "ReadVariableOp", "input: 'v'");
  t += op("add_after_read", "AssignAddVariableOp", "input: 'v' input: 'six' input: '^read_then_add'");
  t += op("read_after_add", "ReadVariableOp", "input: 'v' input: '^add_after_read'");
  t += "node { name: 'is_init' op: 'VarIsInitializedOp' input: 'v' }\n";
  t += op("gather", "ResourceGather", "input: 'v' input: 'rows'",
          "attr { key: 'Tindices' value { type: DT_INT32 } } ");
  t += op("scatter", "ResourceScatterAdd", "input: 'v' input: 'rows' input: 'upd'",
          "attr { key: 'Tindices' value { type: DT_INT32 } } ");
  return Quoted(t);
}

TEST(VariablesTest, ResourceVariableOps) {
  std::unique_ptr<Session> s = NewSession(ResourceGraph());
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "Error while reading resource variable v")) << st;
  ASSERT_TRUE(s->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());

  ASSERT_TRUE(s->Run({}, {}, {"assign"}, &out).ok());
  // The two handles with one shared_name are one variable.
  ASSERT_TRUE(s->Run({}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"read", "is_init"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(out[0].shape(), TensorShape({3, 2}));
  EXPECT_TRUE(out[1].scalar<bool>());

  // A read ordered before an update keeps the value it read.
  ASSERT_TRUE(s->Run({}, {"read_then_add", "read_after_add"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{0, 3, 6, 9, 12, 15}));

  ASSERT_TRUE(s->Run({}, {"gather"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{12, 15, 0, 3}));
  ASSERT_TRUE(s->Run({}, {}, {"scatter"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{300, 403, 6, 9, 112, 215}));
}

// A stateful random op carries on one stream whatever a step fetches, as
// TensorFlow's one kernel per node does: RandomUniform(seed 1, seed2 2)
// fetched through `a`, then through `b`, gives TensorFlow's first and
// second draws (recorded from TensorFlow 2.21).
TEST(VariablesTest, RandomOpsCarryOnOneStreamAcrossFetchLists) {
  std::unique_ptr<Session> s = NewSession(Quoted(
      "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
      "int_val: 4 } } } }\n"
      "node { name: 'r' op: 'RandomUniform' input: 'shape' attr { key: 'dtype' value { type: "
      "DT_FLOAT } } attr { key: 'T' value { type: DT_INT32 } } attr { key: 'seed' value { i: 1 "
      "} } attr { key: 'seed2' value { i: 2 } } }\n"
      "node { name: 'a' op: 'Identity' input: 'r' attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'b' op: 'Neg' input: 'r' attr { key: 'T' value { type: DT_FLOAT } } }\n"));
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"a"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]),
            (std::vector<float>{0.406396747f, 0.857599616f, 0.0553958416f, 0.0858722925f}));
  ASSERT_TRUE(s->Run({}, {"b"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]),
            (std::vector<float>{-0.00496613979f, -0.602197886f, -0.779739499f, -0.274677396f}));
}

}  // namespace
}  // namespace graphrun
