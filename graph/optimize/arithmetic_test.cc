#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/optimizer.h"
#include "graph/testing/graphdef_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::ConstValue;
using testing::CountOp;
using testing::FindNode;
using testing::NodeInputs;
using testing::ParseTextGraph;

std::string Dims(const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) absl::StrAppend(&dims, " dim { size: ", d, " }");
  return dims;
}

std::string Const(const std::string& name, const std::string& dtype,
                  const std::vector<int64_t>& shape, const std::string& values,
                  const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ", extra,
                      " attr { key: 'dtype' value { type: ", dtype,
                      " } }"
                      " attr { key: 'value' value { tensor { dtype: ",
                      dtype, " tensor_shape {", Dims(shape), " } ", values, " } } } }\n");
}

std::string FloatConst(const std::string& name, const std::vector<int64_t>& shape, float v,
                       const std::string& extra = "") {
  return Const(name, "DT_FLOAT", shape, absl::StrCat("float_val: ", v), extra);
}

std::string Placeholder(const std::string& name, const std::string& dtype = "DT_FLOAT") {
  return absl::StrCat("node { name: '", name,
                      "' op: 'Placeholder' attr { key: 'dtype' value {"
                      " type: ",
                      dtype, " } } }\n");
}

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& dtype = "DT_FLOAT",
                 const std::string& extra = "") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& in : inputs) absl::StrAppend(&s, " input: '", in, "'");
  return absl::StrCat(s, " attr { key: 'T' value { type: ", dtype, " } } ", extra, "}\n");
}

struct Result {
  GraphDef graph;
  OptimizationReport::Pass pass;
};

Result Simplify(const std::string& text, const std::vector<std::string>& preserve,
                const absl::flat_hash_map<std::string, std::vector<PartialShape>>& shapes = {}) {
  Result r{ParseTextGraph(text), {}};
  OptimizerOptions options;
  options.preserve.insert(preserve.begin(), preserve.end());
  options.shapes = shapes;
  absl::Status s = SimplifyArithmetic(&r.graph, options, &r.pass);
  EXPECT_TRUE(s.ok()) << s;
  return r;
}

TEST(ArithmeticTest, NeutralScalarsAreBypassed) {
  Result r = Simplify(Placeholder("x") + FloatConst("one", {}, 1) + FloatConst("zero", {}, 0) +
                          Node("a", "Mul", {"x", "one"}) + Node("b", "Mul", {"one", "a"}) +
                          Node("c", "AddV2", {"zero", "b"}) + Node("d", "Sub", {"c", "zero"}) +
                          Node("e", "RealDiv", {"d", "one"}) + Node("y", "Relu", {"e"}) +
                          "node { name: 'after' op: 'NoOp' input: '^e' }\n",
                      {"x", "y", "after"});
  for (const char* gone : {"a", "b", "c", "d", "e"})
    EXPECT_EQ(FindNode(r.graph, gone), nullptr) << gone;
  EXPECT_EQ(NodeInputs(r.graph, "y"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(NodeInputs(r.graph, "after"), (std::vector<std::string>{"^x"}));
  EXPECT_EQ(r.pass.changes.size(), 5u);
  EXPECT_EQ(r.pass.merged_into.at("e"), "x");
  EXPECT_NE(r.pass.changes[0].find("bypassed 'a' (Mul by 1)"), std::string::npos)
      << r.pass.changes[0];
}

TEST(ArithmeticTest, NotNeutral) {
  Result r = Simplify(Placeholder("x") + FloatConst("one", {}, 1) + FloatConst("zero", {}, 0) +
                          FloatConst("two", {}, 2) + Node("a", "Sub", {"zero", "x"}) +
                          Node("b", "RealDiv", {"one", "x"}) + Node("c", "Mul", {"x", "two"}) +
                          Node("d", "Mul", {"x", "zero"}) + Node("e", "AddV2", {"x", "one"}),
                      {"a", "b", "c", "d", "e"});
  EXPECT_TRUE(r.pass.changes.empty());
  EXPECT_EQ(r.graph.node_size(), 9);
}

TEST(ArithmeticTest, NeutralTensorsOnlyWhereXKeepsItsShape) {
  const std::string g = Placeholder("x") + FloatConst("ones3", {3}, 1) +
                        FloatConst("ones23", {2, 3}, 1) + FloatConst("zeros13", {1, 3}, 0) +
                        Node("a", "Mul", {"x", "ones3"}) + Node("b", "Mul", {"x", "ones23"}) +
                        Node("c", "AddV2", {"zeros13", "x"});
  // x is [2,3]: [3] and [2,3] and [1,3] broadcast into it.
  Result known = Simplify(g, {"x", "a", "b", "c"}, {{"x", {PartialShape({2, 3})}}});
  for (const char* n : {"a", "b", "c"}) {
    ASSERT_NE(FindNode(known.graph, n), nullptr) << n;
    EXPECT_EQ(FindNode(known.graph, n)->op(), "Identity") << n;  // preserved: kept by name
    EXPECT_EQ(NodeInputs(known.graph, n), (std::vector<std::string>{"x"})) << n;
  }
  // x is [3]: a [2,3] or [1,3] operand would widen it; [3] does not.
  Result wider = Simplify(g, {"x", "a", "b", "c"}, {{"x", {PartialShape({3})}}});
  EXPECT_EQ(FindNode(wider.graph, "a")->op(), "Identity");
  EXPECT_EQ(FindNode(wider.graph, "b")->op(), "Mul");
  EXPECT_EQ(FindNode(wider.graph, "c")->op(), "AddV2");
  // x of unknown shape, or [?,?]: only scalars are safe.
  Result unknown = Simplify(g, {"x", "a", "b", "c"});
  EXPECT_TRUE(unknown.pass.changes.empty());
  Result partial = Simplify(g, {"x", "a", "b", "c"}, {{"x", {PartialShape({-1, -1})}}});
  EXPECT_TRUE(partial.pass.changes.empty());
}

TEST(ArithmeticTest, KeepsControlContext) {
  // `one` lives in a cond branch (a control input from the pivot); the Mul
  // after a Switch, and a Mul with a control input of its own, stay as
  // Identities that keep them.
  Result r = Simplify(
      Placeholder("x") + Placeholder("p", "DT_BOOL") + Node("sw", "Switch", {"x", "p"}) +
          Node("pivot", "Identity", {"sw:1"}) + FloatConst("one", {}, 1, "input: '^pivot'") +
          FloatConst("plain_one", {}, 1) + Node("in_branch", "Mul", {"sw:1", "one"}) +
          Node("after_switch", "Mul", {"sw:1", "plain_one"}) +
          "node { name: 'gate' op: 'NoOp' }\n" + Node("gated", "Mul", {"x", "plain_one", "^gate"}) +
          Node("y1", "Relu", {"in_branch"}) + Node("y2", "Relu", {"after_switch"}) +
          Node("y3", "Relu", {"gated"}),
      {"x", "p", "y1", "y2", "y3"});
  EXPECT_EQ(FindNode(r.graph, "in_branch")->op(), "Identity");
  EXPECT_EQ(NodeInputs(r.graph, "in_branch"), (std::vector<std::string>{"sw:1", "^pivot"}));
  EXPECT_EQ(FindNode(r.graph, "after_switch")->op(), "Identity");
  EXPECT_EQ(NodeInputs(r.graph, "after_switch"), (std::vector<std::string>{"sw:1"}));
  EXPECT_EQ(FindNode(r.graph, "gated")->op(), "Identity");
  EXPECT_EQ(NodeInputs(r.graph, "gated"), (std::vector<std::string>{"x", "^gate"}));
  EXPECT_EQ(NodeInputs(r.graph, "y3"), (std::vector<std::string>{"gated"}));
}

// TensorFlow's `y = y + 1` written 10,000 times: one AddV2 of 10,000.
TEST(ArithmeticTest, LongIntegerChainBecomesOneAdd) {
  constexpr int kSteps = 10000;
  std::string text = Placeholder("y", "DT_INT32");
  std::string prev = "y";
  for (int k = 0; k < kSteps; ++k) {
    const std::string name = k == 0 ? "add" : absl::StrCat("add_", k);
    text += Const(name + "/y", "DT_INT32", {}, "int_val: 1");
    text += Node(name, "AddV2", {prev, name + "/y"}, "DT_INT32");
    prev = name;
  }
  GraphDef g = ParseTextGraph(text);
  OptimizerOptions options;
  options.preserve = {"y", prev};
  OptimizationReport report;
  ASSERT_TRUE(OptimizeGraph(&g, options, &report).ok());
  ASSERT_EQ(g.node_size(), 3);  // y, the last AddV2, its constant
  EXPECT_EQ(CountOp(g, "AddV2"), 1);
  const std::vector<std::string> in = NodeInputs(g, prev);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], "y");
  Tensor c = ConstValue(g, in[1]);
  ASSERT_EQ(c.dtype(), DT_INT32);
  ASSERT_EQ(c.dims(), 0);
  EXPECT_EQ(c.flat<int32_t>()[0], kSteps);
  // Every removed Add lives on in the last one.
  EXPECT_EQ(report.merged_into.at("add"), prev);
  EXPECT_EQ(report.merged_into.at("add_5000"), prev);
}

TEST(ArithmeticTest, IntegerConstantsWrapAsTheKernelsDo) {
  // ((x * 65536) * 65536) * 3 in int32: 2^32 * 3 wraps to 0; in int64 it
  // does not.
  for (const char* dtype : {"DT_INT32", "DT_INT64"}) {
    const std::string type(dtype);
    const std::string val = type == "DT_INT32" ? "int_val" : "int64_val";
    Result r =
        Simplify(Placeholder("x", type) + Const("a", type, {}, val + ": 65536") +
                     Const("b", type, {}, val + ": 65536") + Const("c", type, {}, val + ": 3") +
                     Node("m1", "Mul", {"x", "a"}, type) + Node("m2", "Mul", {"m1", "b"}, type) +
                     Node("m3", "Mul", {"c", "m2"}, type),
                 {"x", "m3"});
    const std::vector<std::string> in = NodeInputs(r.graph, "m3");
    ASSERT_EQ(in.size(), 2u) << dtype;
    EXPECT_EQ(in[1], "x") << dtype;  // the constant side is where c was
    Tensor k = ConstValue(r.graph, in[0]);
    if (type == "DT_INT32") {
      const uint32_t want = static_cast<uint32_t>(65536u * 65536u * 3u);
      EXPECT_EQ(static_cast<uint32_t>(k.flat<int32_t>()[0]), want);
    } else {
      EXPECT_EQ(k.flat<int64_t>()[0], int64_t{65536} * 65536 * 3);
    }
    EXPECT_EQ(FindNode(r.graph, "m1"), nullptr);
    EXPECT_EQ(FindNode(r.graph, "m2"), nullptr);
  }
}

TEST(ArithmeticTest, FloatChainsReassociate) {
  Result r = Simplify(Placeholder("x") + FloatConst("a", {}, 0.1f) + FloatConst("b", {}, 0.2f) +
                          Const("v", "DT_FLOAT", {2}, "float_val: 3 float_val: -1") +
                          FloatConst("s", {}, 0.5f) + Node("s1", "AddV2", {"a", "x"}) +
                          Node("s2", "Add", {"s1", "b"}) + Node("p1", "Mul", {"x", "v"}) +
                          Node("p2", "Mul", {"s", "p1"}) + Node("shared", "AddV2", {"x", "a"}) +
                          Node("uses_shared", "AddV2", {"shared", "b"}) +
                          Node("other", "Relu", {"shared"}),
                      {"x", "s2", "p2", "uses_shared", "other"});
  std::vector<std::string> in = NodeInputs(r.graph, "s2");
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], "x");
  EXPECT_EQ(ConstValue(r.graph, in[1]).flat<float>()[0], 0.1f + 0.2f);
  EXPECT_EQ(FindNode(r.graph, "s1"), nullptr);
  in = NodeInputs(r.graph, "p2");
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[1], "x");
  Tensor pv = ConstValue(r.graph, in[0]);
  ASSERT_EQ(pv.NumElements(), 2);
  EXPECT_EQ(pv.flat<float>()[0], 1.5f);
  EXPECT_EQ(pv.flat<float>()[1], -0.5f);
  // An inner Add used elsewhere stays; the outer one no longer needs it.
  EXPECT_NE(FindNode(r.graph, "shared"), nullptr);
  EXPECT_EQ(NodeInputs(r.graph, "uses_shared")[0], "x");
  EXPECT_EQ(NodeInputs(r.graph, "other"), (std::vector<std::string>{"shared"}));
}

TEST(ArithmeticTest, ChainConstantsKeepTheirControlInputs) {
  Result r = Simplify(Placeholder("x") + "node { name: 'pivot' op: 'NoOp' }\n" +
                          "node { name: 'gate' op: 'NoOp' }\n" +
                          FloatConst("a", {}, 2, "input: '^pivot'") + FloatConst("b", {}, 3) +
                          Node("m1", "Mul", {"x", "a", "^gate"}) + Node("m2", "Mul", {"m1", "b"}),
                      {"x", "m2"});
  const std::vector<std::string> in = NodeInputs(r.graph, "m2");
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0], "x");
  EXPECT_EQ(in[2], "^gate");  // m1's control input moves to m2
  EXPECT_EQ(NodeInputs(r.graph, in[1]), (std::vector<std::string>{"^pivot"}));
  EXPECT_EQ(ConstValue(r.graph, in[1]).flat<float>()[0], 6.f);
}

std::string Perm(const std::string& name, const std::vector<int>& perm) {
  std::string vals;
  for (int p : perm) absl::StrAppend(&vals, " int_val: ", p);
  return Const(name, "DT_INT32", {static_cast<int64_t>(perm.size())}, vals);
}

TEST(ArithmeticTest, Transposes) {
  Result r = Simplify(
      Placeholder("x") + Perm("id", {0, 1, 2}) + Perm("p", {1, 2, 0}) + Perm("inv", {2, 0, 1}) +
          Node("t0", "Transpose", {"x", "id"}) + Node("t1", "Transpose", {"x", "p"}) +
          Node("t2", "Transpose", {"t1", "inv"}) + Node("t3", "Transpose", {"x", "p"}) +
          Node("t4", "Transpose", {"t3", "p"}) + Node("y0", "Relu", {"t0"}) +
          Node("y2", "Relu", {"t2"}) + Node("y4", "Relu", {"t4"}),
      {"x", "y0", "y2", "y4"});
  EXPECT_EQ(NodeInputs(r.graph, "y0"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(NodeInputs(r.graph, "y2"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(FindNode(r.graph, "t1"), nullptr);                             // nothing reads it any more
  EXPECT_EQ(NodeInputs(r.graph, "y4"), (std::vector<std::string>{"t4"}));  // not inverses
  EXPECT_NE(FindNode(r.graph, "t3"), nullptr);
}

std::string Shape(const std::string& name, const std::vector<int>& dims) {
  return Perm(name, dims);
}

TEST(ArithmeticTest, Reshapes) {
  const std::string g =
      Placeholder("x") + Shape("s23", {2, 3}) + Shape("s_1_3", {-1, 3}) + Shape("s6", {6}) +
      Shape("s32", {3, 2}) + Node("same", "Reshape", {"x", "s23"}) +
      Node("inferred", "Reshape", {"x", "s_1_3"}) + Node("other", "Reshape", {"x", "s32"}) +
      Node("flat", "Reshape", {"x", "s6"}) + Node("back", "Reshape", {"flat", "s32"}) +
      Node("y1", "Relu", {"same"}) + Node("y2", "Relu", {"inferred"}) +
      Node("y3", "Relu", {"other"}) + Node("y4", "Relu", {"back"});
  Result r = Simplify(g, {"x", "y1", "y2", "y3", "y4"}, {{"x", {PartialShape({-1, 3})}}});
  // [?,3] to [2,3] cannot be proved the same; to [-1,3] it is.
  EXPECT_EQ(NodeInputs(r.graph, "y1"), (std::vector<std::string>{"same"}));
  EXPECT_EQ(NodeInputs(r.graph, "y2"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(NodeInputs(r.graph, "y3"), (std::vector<std::string>{"other"}));
  // Reshape of a Reshape reshapes the original.
  EXPECT_EQ(NodeInputs(r.graph, "back"), (std::vector<std::string>{"x", "s32"}));
  EXPECT_EQ(FindNode(r.graph, "flat"), nullptr);
  EXPECT_EQ(r.pass.merged_into.at("flat"), "back");

  Result known = Simplify(g, {"x", "y1", "y2", "y3", "y4"}, {{"x", {PartialShape({2, 3})}}});
  EXPECT_EQ(NodeInputs(known.graph, "y1"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(NodeInputs(known.graph, "y3"), (std::vector<std::string>{"other"}));
}

std::string Cast(const std::string& name, const std::string& in, const std::string& src,
                 const std::string& dst, const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Cast' input: '", in,
                      "' attr { key: 'SrcT' value { type: ", src,
                      " } } attr { key: 'DstT' value { type: ", dst, " } } ", extra, "}\n");
}

TEST(ArithmeticTest, Casts) {
  Result r = Simplify(Placeholder("f") + Placeholder("i", "DT_INT32") +
                          Cast("same", "f", "DT_FLOAT", "DT_FLOAT") +
                          Cast("wide", "i", "DT_INT32", "DT_INT64") +
                          Cast("to_float", "wide", "DT_INT64", "DT_FLOAT") +
                          Cast("d", "f", "DT_FLOAT", "DT_DOUBLE") +
                          Cast("round_trip", "d", "DT_DOUBLE", "DT_FLOAT") +
                          Cast("narrow", "f", "DT_FLOAT", "DT_INT32") +
                          Cast("lossy", "narrow", "DT_INT32", "DT_FLOAT") +
                          Cast("d2", "f", "DT_FLOAT", "DT_DOUBLE") +
                          Cast("truncated", "d2", "DT_DOUBLE", "DT_HALF",
                               "attr { key: 'Truncate' value { b: true } }") +
                          Node("y1", "Relu", {"same"}) + Node("y2", "Relu", {"to_float"}) +
                          Node("y3", "Relu", {"round_trip"}) + Node("y4", "Relu", {"lossy"}) +
                          Node("y5", "Relu", {"truncated"}, "DT_HALF"),
                      {"f", "i", "y1", "y2", "y3", "y4", "y5"});
  EXPECT_EQ(NodeInputs(r.graph, "y1"), (std::vector<std::string>{"f"}));
  EXPECT_EQ(NodeInputs(r.graph, "to_float"), (std::vector<std::string>{"i"}));
  EXPECT_EQ(FindNode(r.graph, "to_float")->attr().at("SrcT").type(), DT_INT32);
  EXPECT_EQ(FindNode(r.graph, "wide"), nullptr);
  EXPECT_EQ(NodeInputs(r.graph, "y3"), (std::vector<std::string>{"f"}));  // float->double->float
  EXPECT_EQ(NodeInputs(r.graph, "lossy"), (std::vector<std::string>{"narrow"}));
  EXPECT_EQ(NodeInputs(r.graph, "truncated"), (std::vector<std::string>{"d2"}));
}

TEST(ArithmeticTest, ChangesAreLoggedByTheOptimizer) {
  GraphDef g = ParseTextGraph(Placeholder("x") + FloatConst("one", {}, 1) + Node("a", "Mul", {"x", "one"}) +
                     Node("y", "Relu", {"a"}));
  OptimizerOptions options;
  options.preserve = {"x", "y"};
  OptimizationReport report;
  ASSERT_TRUE(OptimizeGraph(&g, options, &report).ok());
  const std::string log = report.ToString();
  EXPECT_NE(log.find("arithmetic: 1 change, 4 -> 3 nodes"), std::string::npos) << log;
  EXPECT_NE(log.find("bypassed 'a' (Mul by 1)"), std::string::npos) << log;
  EXPECT_EQ(report.merged_into.at("a"), "x");
  EXPECT_EQ(g.node_size(), 2);  // `one` pruned
}

}  // namespace
}  // namespace graphrun
