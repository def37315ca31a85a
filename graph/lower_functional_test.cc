#include "graph/lower_functional.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/testing/graphdef_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::FindNode;
using testing::NodeInputs;
using testing::ParseTextGraph;

// Small text-format pieces for hand-written graphs and functions.
std::string T(const char* key, const char* type) {
  return absl::StrCat("attr { key: '", key, "' value { type: ", type, " } } ");
}
std::string Types(const char* key, const std::vector<const char*>& types) {
  std::string out = absl::StrCat("attr { key: '", key, "' value { list { ");
  for (const char* t : types) absl::StrAppend(&out, "type: ", t, " ");
  return out + "} } } ";
}
std::string Func(const char* key, const char* name) {
  return absl::StrCat("attr { key: '", key, "' value { func { name: '", name, "' } } } ");
}
std::string IntConst(const char* name, int v, const char* field = "node") {
  return absl::StrCat(field, " { name: '", name, "' op: 'Const' ", T("dtype", "DT_INT32"),
                      "attr { key: 'value' value { tensor { dtype: DT_INT32 ",
                      "tensor_shape {} int_val: ", v, " } } } } ");
}
std::string Placeholder(const char* name, const char* type) {
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' ", T("dtype", type),
                      "attr { key: 'shape' value { shape {} } } } ");
}

// `text` with its first `from` replaced by `to`.
std::string Sub(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' in the test graph";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string OpOf(const GraphDef& g, const std::string& name) {
  const NodeDef* n = FindNode(g, name);
  return n == nullptr ? "<none>" : n->op();
}

// add_one(a: int32) -> y: int32, with a Const in its body.
const std::string kAddOne = absl::StrCat(
    "function { signature { name: 'add_one' input_arg { name: 'a' type: DT_INT32 } ",
    "output_arg { name: 'y' type: DT_INT32 } } ", IntConst("one", 1, "node_def"),
    "node_def { name: 'add' op: 'AddV2' input: 'a' input: 'one:output:0' ",
    T("T", "DT_INT32"), "} ret { key: 'y' value: 'add:z:0' } } ");

std::string CallGraph(const std::string& call_extra) {
  return absl::StrCat(Placeholder("x", "DT_INT32"), Placeholder("g", "DT_INT32"),
                      Placeholder("h", "DT_INT32"),
                      "node { name: 'call' op: 'PartitionedCall' input: 'x' ", call_extra,
                      Types("Tin", {"DT_INT32"}), Types("Tout", {"DT_INT32"}),
                      Func("f", "add_one"), "} ",
                      "node { name: 'out' op: 'Identity' input: 'call' ", T("T", "DT_INT32"),
                      "} library { ", kAddOne, "}");
}

TEST(LowerFunctionalTest, InlinesACallWithIdentitiesForArgsAndResults) {
  GraphDef in = ParseTextGraph(CallGraph(""));
  EXPECT_TRUE(NeedsLowering(in));
  auto out = LowerFunctionalOps(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(NeedsLowering(*out));
  EXPECT_EQ(OpOf(*out, "call"), "IdentityN");
  EXPECT_EQ(NodeInputs(*out, "call"), std::vector<std::string>{"call/output/y"});
  EXPECT_EQ(OpOf(*out, "call/input/a"), "Identity");
  EXPECT_EQ(NodeInputs(*out, "call/input/a"), std::vector<std::string>{"x"});
  // The body's source node waits for the first argument.
  EXPECT_EQ(NodeInputs(*out, "call/one"), std::vector<std::string>{"^call/input/a"});
  EXPECT_EQ(NodeInputs(*out, "call/add"),
            (std::vector<std::string>{"call/input/a", "call/one"}));
  EXPECT_EQ(NodeInputs(*out, "call/output/y"), std::vector<std::string>{"call/add"});
  EXPECT_EQ(out->library().function_size(), 1);  // the library is kept
  // And the importer takes it (it lowers by itself, too).
  auto graph = ImportGraphDef(in);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->FindNode("call")->op(), "IdentityN");
  EXPECT_EQ((*graph)->FindNode("out")->output_shape(0).DebugString(), "[]");
}

TEST(LowerFunctionalTest, ControlInputsGateTheBody) {
  auto one = LowerFunctionalOps(ParseTextGraph(CallGraph("input: '^g' ")));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(NodeInputs(*one, "call/input/a"), (std::vector<std::string>{"x", "^g"}));
  EXPECT_EQ(NodeInputs(*one, "call/one"), std::vector<std::string>{"^g"});

  auto two = LowerFunctionalOps(ParseTextGraph(CallGraph("input: '^g' input: '^h' ")));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(OpOf(*two, "call/input_control_node"), "NoOp");
  EXPECT_EQ(NodeInputs(*two, "call/input_control_node"),
            (std::vector<std::string>{"^g", "^h"}));
  EXPECT_EQ(NodeInputs(*two, "call/one"),
            std::vector<std::string>{"^call/input_control_node"});
  EXPECT_TRUE(ImportGraphDef(ParseTextGraph(CallGraph("input: '^g' input: '^h' "))).ok());
}

// A direct call (the node's op is the function's name) binds the
// function's attrs: a polymorphic argument type and a placeholder attr.
// Outputs of list args ("split:output:1") map to flat output indices.
TEST(LowerFunctionalTest, DirectCallsBindAttrsAndListOutputsResolve) {
  const std::string text = absl::StrCat(
      Placeholder("v", "DT_FLOAT"),
      "node { name: 'pick' op: 'second_half' input: 'v' ", T("T", "DT_FLOAT"), "} ",
      "library { function { signature { name: 'second_half' ",
      "input_arg { name: 'x' type_attr: 'T' } output_arg { name: 'y' type_attr: 'T' } ",
      "attr { name: 'T' type: 'type' } } ", IntConst("dim", 0, "node_def"),
      "node_def { name: 'split' op: 'Split' input: 'dim:output:0' input: 'x' ",
      "attr { key: 'T' value { placeholder: 'T' } } ",
      "attr { key: 'num_split' value { i: 2 } } } ",
      "node_def { name: 'both' op: 'IdentityN' input: 'split:output:0' ",
      "input: 'split:output:1' ", Types("T", {"DT_FLOAT", "DT_FLOAT"}), "} ",
      "ret { key: 'y' value: 'both:output:1' } } }");
  auto out = LowerFunctionalOps(ParseTextGraph(text));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(OpOf(*out, "pick"), "IdentityN");
  EXPECT_EQ(NodeInputs(*out, "pick/both"),
            (std::vector<std::string>{"pick/split", "pick/split:1"}));
  EXPECT_EQ(NodeInputs(*out, "pick/output/y"), std::vector<std::string>{"pick/both:1"});
  const NodeDef* split = FindNode(*out, "pick/split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->attr().at("T").type(), DT_FLOAT);
  EXPECT_EQ(FindNode(*out, "pick/output/y")->attr().at("T").type(), DT_FLOAT);
}

// i = 0; while (i < n) i = i + 1.
std::string CountingLoop(const char* op = "StatelessWhile") {
  return absl::StrCat(
      Placeholder("n", "DT_INT32"), IntConst("zero", 0),
      "node { name: 'w' op: '", op, "' input: 'zero' input: 'n' ",
      Types("T", {"DT_INT32", "DT_INT32"}), Func("cond", "cond"), Func("body", "body"),
      "attr { key: 'parallel_iterations' value { i: 3 } } } ",
      "node { name: 'out' op: 'Identity' input: 'w' ", T("T", "DT_INT32"), "} ",
      "library { function { signature { name: 'cond' ",
      "input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'limit' type: DT_INT32 } ",
      "output_arg { name: 'r' type: DT_BOOL } } ",
      "node_def { name: 'less' op: 'Less' input: 'i' input: 'limit' ", T("T", "DT_INT32"),
      "} ret { key: 'r' value: 'less:z:0' } } ",
      "function { signature { name: 'body' ",
      "input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'limit' type: DT_INT32 } ",
      "output_arg { name: 'i_next' type: DT_INT32 } ",
      "output_arg { name: 'limit_out' type: DT_INT32 } } ", IntConst("one", 1, "node_def"),
      "node_def { name: 'add' op: 'AddV2' input: 'i' input: 'one:output:0' ",
      T("T", "DT_INT32"), "} ret { key: 'i_next' value: 'add:z:0' } ",
      "ret { key: 'limit_out' value: 'limit' } } }");
}

TEST(LowerFunctionalTest, WhileBecomesAFrame) {
  auto out = LowerFunctionalOps(ParseTextGraph(CountingLoop()));
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i : {0, 1}) {
    SCOPED_TRACE(i);
    const std::string k = absl::StrCat(i);
    const NodeDef* enter = FindNode(*out, "w/enter_" + k);
    ASSERT_NE(enter, nullptr);
    EXPECT_EQ(enter->op(), "Enter");
    EXPECT_EQ(enter->attr().at("frame_name").s(), "w");
    EXPECT_EQ(enter->attr().at("parallel_iterations").i(), 3);
    EXPECT_FALSE(enter->attr().at("is_constant").b());  // all vars go around
    EXPECT_EQ(NodeInputs(*out, "w/merge_" + k),
              (std::vector<std::string>{"w/enter_" + k, "w/next_iteration_" + k}));
    EXPECT_EQ(NodeInputs(*out, "w/switch_" + k),
              (std::vector<std::string>{"w/merge_" + k, "w/loop_cond"}));
    EXPECT_EQ(NodeInputs(*out, "w/exit_" + k), std::vector<std::string>{"w/switch_" + k});
    EXPECT_EQ(OpOf(*out, "w/next_iteration_" + k), "NextIteration");
  }
  EXPECT_EQ(NodeInputs(*out, "w/cond/input/i"), std::vector<std::string>{"w/merge_0"});
  EXPECT_EQ(NodeInputs(*out, "w/loop_cond"), std::vector<std::string>{"w/cond/output/r"});
  EXPECT_EQ(NodeInputs(*out, "w/body/input/i"), std::vector<std::string>{"w/switch_0:1"});
  EXPECT_EQ(NodeInputs(*out, "w/body/one"), std::vector<std::string>{"^w/body/input/i"});
  EXPECT_EQ(NodeInputs(*out, "w/next_iteration_0"),
            std::vector<std::string>{"w/body/output/i_next"});
  EXPECT_EQ(NodeInputs(*out, "w/body/output/limit_out"),
            std::vector<std::string>{"w/body/input/limit"});
  EXPECT_EQ(OpOf(*out, "w"), "IdentityN");
  EXPECT_EQ(NodeInputs(*out, "w"), (std::vector<std::string>{"w/exit_0", "w/exit_1"}));

  // The frames are well formed: the body's constant runs in frame 'w'.
  auto graph = ImportGraphDef(*out);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto info = BuildControlFlowInfo(**graph);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ((*info)[(*graph)->FindNode("w/body/one")->id()].frame_name, "w");
  EXPECT_EQ((*info)[(*graph)->FindNode("w/cond/less")->id()].frame_name, "w");
  EXPECT_EQ((*info)[(*graph)->FindNode("out")->id()].frame_name, "");
}

TEST(LowerFunctionalTest, WhileControlInputsReachEveryEnter) {
  const std::string text = Sub(CountingLoop("While"), "input: 'n' ", "input: 'n' input: '^n' ");
  auto out = LowerFunctionalOps(ParseTextGraph(text));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(NodeInputs(*out, "w/control_inputs"), std::vector<std::string>{"^n"});
  EXPECT_EQ(NodeInputs(*out, "w/enter_1"),
            (std::vector<std::string>{"n", "^w/control_inputs"}));
}

// then: x * 2, else: -x.
std::string Cond(const std::string& extra_library = "") {
  return absl::StrCat(
      Placeholder("p", "DT_BOOL"), Placeholder("x", "DT_INT32"),
      "node { name: 'c' op: 'StatelessIf' input: 'p' input: 'x' ", T("Tcond", "DT_BOOL"),
      Types("Tin", {"DT_INT32"}), Types("Tout", {"DT_INT32"}),
      Func("then_branch", "twice"), Func("else_branch", "negate"), "} ",
      "library { function { signature { name: 'twice' input_arg { name: 'a' type: DT_INT32 } ",
      "output_arg { name: 'y' type: DT_INT32 } } ", IntConst("two", 2, "node_def"),
      "node_def { name: 'mul' op: 'Mul' input: 'a' input: 'two:output:0' ",
      T("T", "DT_INT32"), "} ret { key: 'y' value: 'mul:z:0' } } ",
      "function { signature { name: 'negate' input_arg { name: 'a' type: DT_INT32 } ",
      "output_arg { name: 'y' type: DT_INT32 } control_output: 'neg' } ",
      "node_def { name: 'neg' op: 'Neg' input: 'a' ", T("T", "DT_INT32"),
      "} ret { key: 'y' value: 'neg:y:0' } control_ret { key: 'neg' value: 'neg' } } ",
      extra_library, "}");
}

TEST(LowerFunctionalTest, IfBecomesSwitchesAndMerges) {
  auto out = LowerFunctionalOps(ParseTextGraph(Cond()));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(NodeInputs(*out, "c/switch_pred"), (std::vector<std::string>{"p", "p"}));
  EXPECT_EQ(NodeInputs(*out, "c/pivot_t"), std::vector<std::string>{"c/switch_pred:1"});
  EXPECT_EQ(NodeInputs(*out, "c/pivot_f"), std::vector<std::string>{"c/switch_pred"});
  EXPECT_EQ(NodeInputs(*out, "c/switch_0"), (std::vector<std::string>{"x", "p"}));
  EXPECT_EQ(NodeInputs(*out, "c/then/input/a"),
            (std::vector<std::string>{"c/switch_0:1", "^c/pivot_t"}));
  EXPECT_EQ(NodeInputs(*out, "c/else/input/a"),
            (std::vector<std::string>{"c/switch_0", "^c/pivot_f"}));
  EXPECT_EQ(NodeInputs(*out, "c/then/two"), std::vector<std::string>{"^c/pivot_t"});
  EXPECT_EQ(NodeInputs(*out, "c/merge_0"),
            (std::vector<std::string>{"c/then/output/y", "c/else/output/y"}));
  // The else branch's control output holds back branch_executed.
  EXPECT_EQ(NodeInputs(*out, "c/else_done"),
            (std::vector<std::string>{"c/pivot_f", "^c/else/neg"}));
  EXPECT_EQ(NodeInputs(*out, "c/branch_executed"),
            (std::vector<std::string>{"c/pivot_t", "c/else_done"}));
  EXPECT_EQ(NodeInputs(*out, "c"),
            (std::vector<std::string>{"c/merge_0", "^c/branch_executed"}));
  EXPECT_TRUE(ImportGraphDef(*out).ok());
}

TEST(LowerFunctionalTest, CaseChainsSwitchesOnTheIndex) {
  const std::string text = absl::StrCat(
      Placeholder("k", "DT_INT32"), Placeholder("x", "DT_INT32"),
      "node { name: 'sw' op: 'Case' input: 'k' input: 'x' ", Types("Tin", {"DT_INT32"}),
      Types("Tout", {"DT_INT32"}),
      "attr { key: 'branches' value { list { func { name: 'twice' } func { name: 'negate' } ",
      "func { name: 'twice' } } } } } ",
      Cond().substr(Cond().find("library")));
  auto out = LowerFunctionalOps(ParseTextGraph(text));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(NodeInputs(*out, "sw/is_1"),
            (std::vector<std::string>{"sw/branch_index", "sw/index_1"}));
  EXPECT_EQ(NodeInputs(*out, "sw/switch_pred_1"),
            (std::vector<std::string>{"sw/switch_pred_0", "sw/is_1"}));
  EXPECT_EQ(NodeInputs(*out, "sw/switch_1_0"), (std::vector<std::string>{"sw/switch_0_0", "sw/is_1"}));
  EXPECT_EQ(NodeInputs(*out, "sw/pivot_2"), std::vector<std::string>{"sw/switch_pred_1"});
  EXPECT_EQ(NodeInputs(*out, "sw/branch_2/input/a"),
            (std::vector<std::string>{"sw/switch_1_0", "^sw/pivot_2"}));
  EXPECT_EQ(NodeInputs(*out, "sw/merge_0"),
            (std::vector<std::string>{"sw/branch_0/output/y", "sw/branch_1/output/y",
                                      "sw/branch_2/output/y"}));
  EXPECT_TRUE(ImportGraphDef(*out).ok());
}

// A loop whose body holds a cond and another loop, which calls a function:
// every level is lowered and the frames nest.
TEST(LowerFunctionalTest, NestedLoopsCondsAndCalls) {
  std::string outer = Sub(CountingLoop(), "func { name: 'body'", "func { name: 'outer_body'");
  // The outer body: i + 1, then an inner counting loop from i up to limit
  // (calling add_one), then a cond on (i < limit) that doubles or negates.
  const std::string body = absl::StrCat(
      "function { signature { name: 'outer_body' ",
      "input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'limit' type: DT_INT32 } ",
      "output_arg { name: 'i_next' type: DT_INT32 } ",
      "output_arg { name: 'limit_out' type: DT_INT32 } } ",
      "node_def { name: 'inner' op: 'While' input: 'i' input: 'limit' ",
      Types("T", {"DT_INT32", "DT_INT32"}), Func("cond", "cond"), Func("body", "inner_body"),
      "} node_def { name: 'less' op: 'Less' input: 'i' input: 'limit' ", T("T", "DT_INT32"),
      "} node_def { name: 'c' op: 'If' input: 'less:z:0' input: 'inner:output:0' ",
      T("Tcond", "DT_BOOL"), Types("Tin", {"DT_INT32"}), Types("Tout", {"DT_INT32"}),
      Func("then_branch", "add_one"), Func("else_branch", "add_one"), "} ",
      "ret { key: 'i_next' value: 'c:output:0' } ret { key: 'limit_out' value: 'limit' } } ",
      "function { signature { name: 'inner_body' ",
      "input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'limit' type: DT_INT32 } ",
      "output_arg { name: 'i_next' type: DT_INT32 } ",
      "output_arg { name: 'limit_out' type: DT_INT32 } } ",
      "node_def { name: 'call' op: 'StatefulPartitionedCall' input: 'i' ",
      Types("Tin", {"DT_INT32"}), Types("Tout", {"DT_INT32"}), Func("f", "add_one"), "} ",
      "ret { key: 'i_next' value: 'call:output:0' } ret { key: 'limit_out' value: 'limit' } } ",
      kAddOne);
  outer.insert(outer.rfind('}'), body);
  auto out = LowerFunctionalOps(ParseTextGraph(outer));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(NeedsLowering(*out));
  const NodeDef* inner_enter = FindNode(*out, "w/body/inner/enter_0");
  ASSERT_NE(inner_enter, nullptr);
  EXPECT_EQ(inner_enter->attr().at("frame_name").s(), "w/body/inner");
  EXPECT_EQ(OpOf(*out, "w/body/inner/body/call/add"), "AddV2");
  EXPECT_EQ(OpOf(*out, "w/body/c/then/add"), "AddV2");

  auto graph = ImportGraphDef(*out);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto info = BuildControlFlowInfo(**graph);
  ASSERT_TRUE(info.ok()) << info.status();
  const Graph& g = **graph;
  auto frame = [&](const char* name) {
    const Node* n = g.FindNode(name);
    EXPECT_NE(n, nullptr) << name;
    return n == nullptr ? std::string("?") : (*info)[n->id()].frame_name;
  };
  EXPECT_EQ(frame("w/body/inner/body/call/one"), "w/body/inner");
  EXPECT_EQ(frame("w/body/c/then/one"), "w");
  EXPECT_EQ(frame("w/body/inner"), "w");
  const Node* call_one = g.FindNode("w/body/inner/body/call/one");
  ASSERT_NE(call_one, nullptr);
  const Node* parent = (*info)[call_one->id()].parent_frame;  // an Enter of 'w'
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(parent->def().attr().at("frame_name").s(), "w");
}

void ExpectLowerError(const std::string& text, const std::vector<std::string>& fragments) {
  auto out = LowerFunctionalOps(ParseTextGraph(text));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  for (const std::string& f : fragments) {
    EXPECT_TRUE(absl::StrContains(out.status().message(), f))
        << out.status().message() << "\nexpected: " << f;
  }
  // Import gives the same verdict.
  auto g = ImportGraphDef(ParseTextGraph(text));
  EXPECT_FALSE(g.ok());
}

TEST(LowerFunctionalTest, RecursionIsAnErrorNamingTheFunction) {
  // f calls itself by name.
  ExpectLowerError(
      "node { name: 'top' op: 'f' } library { function { signature { name: 'f' } "
      "node_def { name: 'again' op: 'f' } } }",
      {"node 'top/again' (f) in function 'f'", "function 'f' calls itself (f -> f)"});
  // f -> g -> f through PartitionedCall.
  const std::string call_g = absl::StrCat(
      "node_def { name: 'cg' op: 'PartitionedCall' ", Types("Tin", {}), Types("Tout", {}),
      Func("f", "g"), "} ");
  const std::string call_f = absl::StrCat(
      "node_def { name: 'cf' op: 'PartitionedCall' ", Types("Tin", {}), Types("Tout", {}),
      Func("f", "f"), "} ");
  ExpectLowerError(absl::StrCat("node { name: 'top' op: 'f' } library { ",
                                "function { signature { name: 'f' } ", call_g, "} ",
                                "function { signature { name: 'g' } ", call_f, "} }"),
                   {"function 'f' calls itself (f -> g -> f)", "in function 'f' > 'g'"});
  // A loop whose body runs the same loop.
  const std::string loop = Sub(CountingLoop(), "ret { key: 'i_next' value: 'add:z:0' }",
               absl::StrCat("node_def { name: 'again' op: 'While' input: 'i' input: 'limit' ",
                            Types("T", {"DT_INT32", "DT_INT32"}), Func("cond", "cond"),
                            Func("body", "body"), "} ",
                            "ret { key: 'i_next' value: 'again:output:0' }"));
  ExpectLowerError(loop, {"function 'body' calls itself (body -> body)"});
}

TEST(LowerFunctionalTest, BadFunctionsAreNamedWithTheirNode) {
  ExpectLowerError(Sub(CallGraph(""), "func { name: 'add_one'", "func { name: 'nope'"), {"node 'call' (PartitionedCall)",
                             "function 'nope' is not in the graph's function library"});

  ExpectLowerError(Sub(CallGraph(""), "op: 'AddV2'", "op: 'NoSuchOp'"),
                   {"node 'call' (PartitionedCall): function 'add_one': node 'add' "
                    "(NoSuchOp): Op type not registered 'NoSuchOp'"});

  ExpectLowerError(Sub(CallGraph(""), "'add:z:0'", "'add:q:0'"), {"function 'add_one'", "has no output named 'q'"});

  ExpectLowerError(Sub(CallGraph(""), "'add:z:0'", "'add:z:1'"), {"output 'z' of node 'add' (AddV2) has 1 tensors"});

  ExpectLowerError(Sub(CallGraph(""), "input: 'a' input: 'one", "input: 'b' input: 'one"), {"input \"b\" names no node or argument of the function"});

  ExpectLowerError(CallGraph("input: 'g' "), {"function 'add_one': takes 1 arguments but is given 2"});

  ExpectLowerError(Sub(CountingLoop(), "name: 'limit_out' type: DT_INT32",
                       "name: 'limit_out' type: DT_FLOAT"), {"node 'w' (StatelessWhile)", "body function 'body' returns 2"});

  ExpectLowerError(Sub(CountingLoop(), "name: 'r' type: DT_BOOL", "name: 'r' type: DT_INT32"),
                   {"cond function 'cond' must return a single bool, not int32"});
}

TEST(LowerFunctionalTest, GrowthIsBounded) {
  LowerFunctionalOptions options;
  options.max_nodes = 8;
  auto out = LowerFunctionalOps(ParseTextGraph(CountingLoop()), options);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "past 8 nodes")) << out.status();
}

TEST(LowerFunctionalTest, ReachableFunctionsSkipsUnusedOnes) {
  GraphDef g = ParseTextGraph(Cond(kAddOne));
  std::vector<std::string> names;
  for (const FunctionDef* f : ReachableFunctions(g)) names.push_back(f->signature().name());
  // else_branch before then_branch: attrs are read in name order.
  EXPECT_EQ(names, (std::vector<std::string>{"negate", "twice"}));
  EXPECT_TRUE(ReachableFunctions(ParseTextGraph(Placeholder("x", "DT_FLOAT"))).empty());
}

TEST(LowerFunctionalTest, GraphsWithoutCallsAreLeftAlone) {
  GraphDef g = ParseTextGraph(absl::StrCat(Placeholder("x", "DT_INT32"), "library { ", kAddOne, "}"));
  EXPECT_FALSE(NeedsLowering(g));
  auto out = LowerFunctionalOps(g);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(SerializeDeterministically(*out), SerializeDeterministically(g));
}

}  // namespace
}  // namespace graphrun
