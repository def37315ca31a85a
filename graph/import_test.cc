#include "graph/import.h"

#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "graph/graph_io.h"
#include "graph/shape_inference.h"

namespace graphrun {
namespace {

// Test-only ops, so these tests do not depend on the real op set.
REGISTER_OP("TSource")
    .Output("y: T")
    .Attr("T: {float, int32, int64} = DT_FLOAT")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn([](InferenceContext* c) {
      PartialShape s;
      absl::Status st = c->GetAttr("shape", &s);
      if (!st.ok()) return st;
      c->set_output(0, s);
      return absl::OkStatus();
    });
REGISTER_OP("TUnary").Input("x: T").Output("y: T").Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape);
REGISTER_OP("TBinary").Input("a: T").Input("b: T").Output("z: T").Attr("T: type")
    .SetShapeFn(shape_fns::BroadcastBinaryShape);
REGISTER_OP("TList").Input("xs: N * T").Output("y: T").Attr("N: int >= 1")
    .Attr("T: type");
REGISTER_OP("TTypeList").Input("xs: Tlist").Output("ys: Tlist")
    .Attr("Tlist: list(type) >= 0");
REGISTER_OP("TMulti").Input("x: float").Output("a: float").Output("b: int32");
REGISTER_OP("TConstLike").Output("y: dtype").Attr("value: tensor")
    .Attr("dtype: type");
REGISTER_OP("TAttrs")
    .Attr("i: int >= 2")
    .Attr("f: float = 0.5")
    .Attr("b: bool = false")
    .Attr("s: {'SAME', 'VALID'} = 'SAME'")
    .Attr("t: {float, half} = DT_HALF")
    .Attr("sh: shape = { dim { size: 2 } }")
    .Attr("li: list(int) = [1, 2]")
    .Attr("lf: list(float) = []")
    .Attr("ls: list(string) = ['a']")
    .Attr("lt: list(type) = [DT_INT32]")
    .Attr("lsh: list(shape) = []");

absl::StatusOr<std::unique_ptr<Graph>> ImportText(const std::string& text) {
  auto def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def);
}

void ExpectError(const std::string& text, const std::string& fragment) {
  auto g = ImportText(text);
  ASSERT_FALSE(g.ok()) << "expected an error containing: " << fragment;
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
  EXPECT_NE(g.status().message().find(fragment), std::string::npos)
      << "error was: " << g.status().message() << "\nexpected: " << fragment;
}

// A GraphDef that uses every field of every message graphrun models.
constexpr char kEveryField[] = R"pb(
  node {
    name: "src"
    op: "TSource"
    device: "/job:worker/replica:0/task:1/device:GPU:3"
    attr { key: "T" value { type: DT_INT64 } }
    attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 name: "feat" } } } }
    attr { key: "_class" value { list { s: "loc:@src" } } }
    attr { key: "_unknown_attr_from_newer_tf" value { i: 7 } }
    experimental_debug_info { original_node_names: "orig" original_func_names: "fn" }
    experimental_type { type_id: TFT_PRODUCT args { type_id: TFT_NAMED } s: "x" }
  }
  node {
    name: "attrs"
    op: "TAttrs"
    input: "^src"
    attr { key: "i" value { i: 9 } }
    attr { key: "f" value { f: 1.25 } }
    attr { key: "b" value { b: true } }
    attr { key: "s" value { s: "VALID" } }
    attr { key: "t" value { type: DT_FLOAT } }
    attr { key: "sh" value { shape { unknown_rank: true } } }
    attr { key: "li" value { list { i: [ 3, -4 ] } } }
    attr { key: "lf" value { list { f: [ 0.5 ] } } }
    attr { key: "ls" value { list { s: [ "x", "y" ] } } }
    attr { key: "lt" value { list { type: [ DT_HALF, DT_BFLOAT16 ] } } }
    attr { key: "lsh" value { list { shape { dim { size: 1 } } shape { unknown_rank: true } } } }
    attr { key: "extra_tensor" value { tensor {
      dtype: DT_FLOAT tensor_shape { dim { size: 2 } } version_number: 1
      tensor_content: "\000\000\200?\000\000\000@"
      half_val: 1 float_val: 2 double_val: 3 int_val: 4 string_val: "s"
      scomplex_val: [5, 6] int64_val: 7 bool_val: true dcomplex_val: [8, 9]
      resource_handle_val { device: "d" container: "c" name: "n" hash_code: 10
        maybe_type_name: "t" dtypes_and_shapes { dtype: DT_FLOAT shape { dim { size: 1 } } } }
      variant_val { type_name: "v" metadata: "m" tensors { dtype: DT_INT32 } }
      uint32_val: 11 uint64_val: 12 float8_val: "\001"
    } } }
    attr { key: "extra_func" value { func { name: "f" attr { key: "k" value { i: 1 } } } } }
    attr { key: "extra_placeholder" value { placeholder: "ph" } }
    attr { key: "extra_list" value { list {
      tensor { dtype: DT_BOOL } func { name: "g" } b: [ true, false ] } } }
    attr { key: "extra_empty_list" value { list {} } }
  }
  node { name: "u" op: "TUnary" input: "src" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "m" op: "TMulti" input: "f:0" }
  node { name: "f" op: "TSource" }
  node { name: "l" op: "TList" input: "f" input: "f:0" input: "^u"
         attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "tl" op: "TTypeList" input: "m:1" input: "f"
         attr { key: "Tlist" value { list { type: [ DT_INT32, DT_FLOAT ] } } } }
  versions { producer: 1882 min_consumer: 12 bad_consumers: [ 3, 5 ] }
  version: 17
  library {
    function {
      signature {
        name: "unused_fn"
        input_arg { name: "a" description: "first" type: DT_FLOAT
          handle_data { dtype: DT_FLOAT shape { dim { size: 2 } } } }
        input_arg { name: "b" type_attr: "T" number_attr: "N" is_ref: true
          experimental_full_type { type_id: TFT_TENSOR args { type_id: TFT_VAR s: "T" } } }
        input_arg { name: "c" type_list_attr: "L" }
        output_arg { name: "y" type: DT_FLOAT }
        control_output: "side"
        attr { name: "T" type: "type" default_value { type: DT_FLOAT } description: "t"
          has_minimum: true minimum: 1 allowed_values { list { type: [ DT_FLOAT ] } } }
        deprecation { version: 9 explanation: "use another" }
        summary: "s" description: "d" is_commutative: true is_aggregate: true
        is_stateful: true allows_uninitialized_input: true is_distributed_communication: true
      }
      attr { key: "_construction_context" value { s: "kEagerRuntime" } }
      arg_attr { key: 0 value { attr { key: "_user_specified_name" value { s: "a" } } } }
      resource_arg_unique_id { key: 1 value: 0 }
      node_def { name: "side" op: "TSource" input: "a"
        experimental_type { type_id: TFT_PRODUCT args { type_id: TFT_LEGACY_VARIANT } } }
      ret { key: "y" value: "side:y:0" }
      control_ret { key: "side" value: "side" }
    }
    gradient { function_name: "unused_fn" gradient_func: "unused_grad" }
  }
)pb";

TEST(ImportTest, EveryFieldRoundTripsBinaryAndText) {
  auto def = ParseGraphDef(kEveryField, GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  // Add a field graphrun does not model, as a newer producer might.
  def->mutable_node(0)->GetReflection()->MutableUnknownFields(def->mutable_node(0))
      ->AddVarint(99, 12345);
  def->set_debug_info(std::string("\x0a\x03" "abc", 5));

  auto graph = ImportGraphDef(*def);
  ASSERT_TRUE(graph.ok()) << graph.status();
  GraphDef out = (*graph)->ToGraphDef();
  const std::string in_bytes = SerializeDeterministically(*def);
  EXPECT_EQ(SerializeDeterministically(out), in_bytes);

  // Binary bytes -> parse -> import -> export -> bytes: identical.
  auto reparsed = ParseGraphDef(in_bytes, GraphFormat::kBinary);
  ASSERT_TRUE(reparsed.ok());
  auto graph2 = ImportGraphDef(*reparsed);
  ASSERT_TRUE(graph2.ok());
  EXPECT_EQ(SerializeDeterministically((*graph2)->ToGraphDef()), in_bytes);

  // Text: print -> parse gives the same message (modelled fields).
  GraphDef modelled = *def;
  modelled.mutable_node(0)->GetReflection()->MutableUnknownFields(
      modelled.mutable_node(0))->Clear();
  auto text = SerializeGraphDef(modelled, GraphFormat::kText);
  ASSERT_TRUE(text.ok());
  auto from_text = ParseGraphDef(*text, GraphFormat::kText);
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  EXPECT_EQ(SerializeDeterministically(modelled),
            SerializeDeterministically(*from_text));
}

TEST(ImportTest, TypesEdgesAndShapes) {
  auto def = ParseGraphDef(kEveryField, GraphFormat::kText);
  auto graph = ImportGraphDef(*def);
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  EXPECT_EQ(g.num_nodes(), 7);
  const Node* u = g.FindNode("u");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->input_type(0), DT_INT64);
  EXPECT_EQ(u->output_shape(0).DebugString(), "[?,4]");
  const Node* l = g.FindNode("l");
  EXPECT_EQ(l->num_inputs(), 2);
  int control = 0;
  for (const Edge* e : l->in_edges()) control += e->IsControl();
  EXPECT_EQ(control, 1);
  const Node* tl = g.FindNode("tl");
  EXPECT_EQ(tl->input_types(), (std::vector<DataType>{DT_INT32, DT_FLOAT}));
  EXPECT_EQ(tl->output_types(), (std::vector<DataType>{DT_INT32, DT_FLOAT}));
  const Node* attrs = g.FindNode("attrs");
  std::vector<int64_t> li;
  ASSERT_TRUE(attrs->attrs().Get("li", &li).ok());
  EXPECT_EQ(li, (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(g.library().function(0).signature().name(), "unused_fn");
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order->size(), 7u);
}

TEST(ImportTest, DefaultsApplyButAreNotWrittenBack) {
  auto g = ImportText(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 2 } } })pb");
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* a = (*g)->FindNode("a");
  std::string s;
  ASSERT_TRUE(a->attrs().Get("s", &s).ok());
  EXPECT_EQ(s, "SAME");
  std::vector<DataType> lt;
  ASSERT_TRUE(a->attrs().Get("lt", &lt).ok());
  EXPECT_EQ(lt, std::vector<DataType>{DT_INT32});
  EXPECT_EQ((*g)->ToGraphDef().node(0).attr_size(), 1);
}

TEST(ImportTest, InputNodeName) {
  EXPECT_EQ(InputNodeName("x"), "x");
  EXPECT_EQ(InputNodeName("x:3"), "x");
  EXPECT_EQ(InputNodeName("^x"), "x");
  EXPECT_EQ(InputNodeName("scope/x:10"), "scope/x");
  EXPECT_EQ(InputNodeName("^scope/x"), "scope/x");
}

TEST(ImportTest, ParseTensorId) {
  EXPECT_EQ(*ParseTensorId("x"), (TensorId{"x", 0}));
  EXPECT_EQ(*ParseTensorId("a/b_1:12"), (TensorId{"a/b_1", 12}));
  EXPECT_EQ(*ParseTensorId("^x"), (TensorId{"x", kControlSlot}));
  for (const char* bad : {"", "^", "x:", "x:abc", "^x:1", ":1", "x:-1",
                          "x:99999999999", "_x", "x y", "x:1:2"}) {
    EXPECT_FALSE(ParseTensorId(bad).ok()) << bad;
  }
  EXPECT_EQ(TensorId({"x", 0}).ToString(), "x");
  EXPECT_EQ(TensorId({"x", 2}).ToString(), "x:2");
  EXPECT_EQ(TensorId({"x", kControlSlot}).ToString(), "^x");
}

TEST(ImportErrorsTest, InputPipelineNamesWhatToCut) {
  ExpectError(R"pb(node { name: "it" op: "IteratorV2" }
                   node { name: "batch" op: "IteratorGetNext" input: "it" })pb",
              "node 'it' (IteratorV2): Op type not registered 'IteratorV2': graphrun has no "
              "definition of this op. It belongs to an input pipeline (tf.data iterator, "
              "queue or reader), which graphrun does not run: cut the graph at 'it'");
  ExpectError(R"pb(node { name: "q" op: "FIFOQueueV2" })pb", "cut the graph at 'q'");
}

TEST(ImportErrorsTest, UnknownOp) {
  ExpectError(R"pb(node { name: "n" op: "NoSuchOp" })pb",
              "node 'n' (NoSuchOp): Op type not registered 'NoSuchOp'");
  auto def = ParseGraphDef(R"pb(node { name: "n" op: "NoSuchOp" input: "m:3" }
                                node { name: "m" op: "AlsoUnknown" })pb",
                           GraphFormat::kText);
  ImportOptions lenient;
  lenient.allow_unknown_ops = true;
  auto g = ImportGraphDef(*def, lenient);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("n")->op_def(), nullptr);
}

TEST(ImportErrorsTest, WrongInputCount) {
  ExpectError(R"pb(node { name: "a" op: "TSource" }
                   node { name: "u" op: "TUnary" input: "a" input: "a"
                          attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'u' (TUnary): has 2 data inputs but the op takes 1 (x)");
}

TEST(ImportErrorsTest, WrongInputDtype) {
  ExpectError(R"pb(node { name: "a" op: "TSource" attr { key: "T" value { type: DT_INT32 } } }
                   node { name: "u" op: "TUnary" input: "a"
                          attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'u' (TUnary): input 0 of node 'u' (TUnary) expects float but "
              "'a:0' (TSource) produces int32");
}

TEST(ImportErrorsTest, DanglingAndMalformedInputs) {
  ExpectError(R"pb(node { name: "u" op: "TUnary" input: "ghost"
                          attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'u' (TUnary): input \"ghost\" names node 'ghost', which is not in the graph");
  ExpectError(R"pb(node { name: "a" op: "TSource" }
                   node { name: "u" op: "TUnary" input: "a:abc"
                          attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'u' (TUnary): malformed input reference \"a:abc\"");
  ExpectError(R"pb(node { name: "u" op: "TSource" input: "^" })pb",
              "node 'u' (TSource): malformed input reference \"^\"");
  ExpectError(R"pb(node { name: "a" op: "TSource" }
                   node { name: "u" op: "TUnary" input: "a:5"
                          attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'a' (TSource) has 1 outputs; there is no output 5");
  ExpectError(R"pb(node { name: "a" op: "TSource" }
                   node { name: "l" op: "TList" input: "^a" input: "a"
                          attr { key: "N" value { i: 1 } } attr { key: "T" value { type: DT_FLOAT } } })pb",
              "control dependencies must come after regular dependencies");
}

TEST(ImportErrorsTest, NamesAndDuplicates) {
  ExpectError(R"pb(node { name: "a" op: "TSource" } node { name: "a" op: "TSource" })pb",
              "node 'a' (TSource): duplicate node name 'a'");
  ExpectError(R"pb(node { name: "bad name" op: "TSource" })pb",
              "node #0 (TSource) has an invalid name \"bad name\"");
  ExpectError(R"pb(node { name: "" op: "TSource" })pb", "node #0 (TSource) has an invalid name");
  ExpectError(R"pb(node { name: "x" })pb", "node 'x' (): the node has no op");
}

TEST(ImportErrorsTest, CycleNamesItsNodes) {
  ExpectError(R"pb(node { name: "s" op: "TSource" }
                   node { name: "a" op: "TBinary" input: "s" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
                   node { name: "b" op: "TUnary" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
                   node { name: "c" op: "TUnary" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
                   node { name: "d" op: "TUnary" input: "c" attr { key: "T" value { type: DT_FLOAT } } })pb",
              "graph has a cycle: a -> b -> c -> a (4 nodes cannot run)");
  ExpectError(R"pb(node { name: "self" op: "TSource" input: "^self" })pb",
              "graph has a cycle: self -> self");
}

TEST(ImportErrorsTest, BadAttrs) {
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { f: 2 } } })pb",
              "node 'a' (TAttrs): attr 'i' must be int but is float");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" })pb",
              "node 'a' (TAttrs): missing attr 'i' (int) required by op TAttrs");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 1 } } })pb",
              "attr 'i' is 1, below its minimum 2");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 2 } }
                          attr { key: "s" value { s: "FULL" } } })pb",
              "attr 's' is \"FULL\", which is not one of {SAME, VALID}");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 2 } }
                          attr { key: "t" value { type: DT_INT8 } } })pb",
              "attr 't' is int8, which is not in the allowed types {float, half}");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 2 } }
                          attr { key: "li" value { list { f: 1 } } } })pb",
              "attr 'li' must be list(int) but is list(float)");
  ExpectError(R"pb(node { name: "a" op: "TAttrs" attr { key: "i" value { i: 2 } }
                          attr { key: "t" value { type: DT_FLOAT_REF } } })pb",
              "attr 't' is float_ref");
}

TEST(ImportErrorsTest, InvalidEnumValues) {
  GraphDef g;
  NodeDef* n = g.add_node();
  n->set_name("a");
  n->set_op("TAttrs");
  (*n->mutable_attr())["i"].set_i(2);
  (*n->mutable_attr())["t"].set_type(static_cast<DataType>(300));
  auto s = ImportGraphDef(g).status();
  EXPECT_NE(s.message().find("attr 't' has invalid type value 300"), std::string::npos) << s;
  (*n->mutable_attr())["t"].set_type(DT_FLOAT);
  (*n->mutable_attr())["lt"].mutable_list()->add_type(static_cast<DataType>(250));
  s = ImportGraphDef(g).status();
  EXPECT_NE(s.message().find("attr 'lt' has invalid type value 250"), std::string::npos) << s;
}

TEST(ImportErrorsTest, HugeDeclaredShapes) {
  ExpectError(R"pb(node { name: "c" op: "TConstLike"
                          attr { key: "dtype" value { type: DT_FLOAT } }
                          attr { key: "value" value { tensor { dtype: DT_FLOAT
                            tensor_shape { dim { size: 100000000000 } dim { size: 100000000000 } } } } } })pb",
              "node 'c' (TConstLike): attr 'value': shape is too large");
  ExpectError(R"pb(node { name: "c" op: "TConstLike"
                          attr { key: "dtype" value { type: DT_FLOAT } }
                          attr { key: "value" value { tensor { dtype: DT_FLOAT
                            tensor_shape { dim { size: 100000 } dim { size: 100000 } } } } } })pb",
              "node 'c' (TConstLike): attr 'value': tensor of shape [100000,100000] and "
              "type float is larger than the limit");
  ExpectError(R"pb(node { name: "p" op: "TSource"
                          attr { key: "shape" value { shape { dim { size: 100000000000 } dim { size: 100000000000 } } } } })pb",
              "node 'p' (TSource): shape is too large");
}

TEST(ImportErrorsTest, MissingOpsAreListedWithEveryNodeThatUsesThem) {
  auto def = ParseGraphDef(R"pb(
    node { name: "x" op: "TSource" attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "a" op: "FancyOp" input: "x" }
    node { name: "b" op: "FancyOp" input: "a" }
    node { name: "c" op: "OtherOp" input: "b" }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto g = ImportGraphDef(*def);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(g.status().message()),
            "node 'a' (FancyOp): Op type not registered 'FancyOp': graphrun has no definition "
            "of this op; 3 nodes use ops graphrun lacks: FancyOp (a, b); OtherOp (c)");
}

TEST(ImportErrorsTest, ShapeInferenceErrorsNameTheNode) {
  ExpectError(R"pb(node { name: "a" op: "TSource" attr { key: "shape" value { shape { dim { size: 2 } } } } }
                   node { name: "b" op: "TSource" attr { key: "shape" value { shape { dim { size: 3 } } } } }
                   node { name: "sum" op: "TBinary" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } })pb",
              "node 'sum' (TBinary): Dimensions must be equal, but are 2 and 3 "
              "(input shapes: [2], [3])");
}

TEST(ImportErrorsTest, ColocationWithUnknownNode) {
  ExpectError(R"pb(node { name: "a" op: "TSource"
                          attr { key: "_class" value { list { s: "loc:@nowhere" } } } })pb",
              "node 'a' (TSource): expects to be colocated with unknown node 'nowhere'");
}

// Calls are inlined before validation (graph/lower_functional.h, tested
// there); its errors are import errors.
TEST(ImportErrorsTest, FunctionCallsAreLoweredFirst) {
  constexpr char kSelfCall[] = R"pb(
    node { name: "call" op: "my_fn" }
    library { function { signature { name: "my_fn" } node_def { name: "again" op: "my_fn" } } })pb";
  ExpectError(kSelfCall, "function 'my_fn' calls itself (my_fn -> my_fn)");
  auto def = ParseGraphDef(kSelfCall, GraphFormat::kText);
  ASSERT_TRUE(def.ok());
  ImportOptions no_lowering;
  no_lowering.lower_functional_ops = false;
  auto g = ImportGraphDef(*def, no_lowering);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "node 'call' (my_fn): calls function 'my_fn' from the graph's library, and "
            "function calls are not being inlined");
  // Lenient import (for `graphrun inspect`) keeps the call as an unknown op.
  no_lowering.allow_unknown_ops = true;
  g = ImportGraphDef(*def, no_lowering);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("call")->op_def(), nullptr);
}

// TensorFlow writes full types by enum name; numbers parse too, and a
// number this build does not name survives a binary round trip.
TEST(ImportTest, FullTypeIdsByNameAndNumber) {
  auto def = ParseGraphDef(R"pb(
    node { name: "a" op: "TSource" experimental_type { type_id: TFT_PRODUCT
      args { type_id: TFT_ARRAY args { type_id: TFT_TENSOR args { type_id: TFT_FLOAT } } } } }
    node { name: "b" op: "TSource" experimental_type { type_id: 10203 } })pb",
                           GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->node(0).experimental_type().type_id(), TFT_PRODUCT);
  EXPECT_EQ(def->node(0).experimental_type().args(0).args(0).args(0).type_id(), TFT_FLOAT);
  EXPECT_EQ(def->node(1).experimental_type().type_id(), TFT_LEGACY_VARIANT);
  auto text = SerializeGraphDef(*def, GraphFormat::kText);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("type_id: TFT_LEGACY_VARIANT"), std::string::npos) << *text;

  GraphDef unnamed = *def;
  unnamed.mutable_node(1)->mutable_experimental_type()->set_type_id(
      static_cast<FullTypeId>(77777));
  auto back = ParseGraphDef(SerializeDeterministically(unnamed), GraphFormat::kBinary);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(static_cast<int>(back->node(1).experimental_type().type_id()), 77777);
}

TEST(GraphIoTest, TextSyntaxErrorsHaveLineAndColumn) {
  auto g = ParseGraphDef("node {\n  name: \"a\"\n  op: TSource\n}\n", GraphFormat::kText);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("line 3, column 7"), std::string::npos)
      << g.status();
  auto h = ParseGraphDef("node { name: \"a\" \n bogus_field: 1 }", GraphFormat::kText);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("line 2"), std::string::npos) << h.status();
  EXPECT_NE(h.status().message().find("bogus_field"), std::string::npos) << h.status();
}

TEST(GraphIoTest, TruncatedAndCorruptBinary) {
  auto def = ParseGraphDef(kEveryField, GraphFormat::kText);
  std::string bytes;
  def->SerializeToString(&bytes);
  int failures = 0;
  for (size_t cut = 1; cut < bytes.size(); cut += 7) {
    auto g = ParseGraphDef(absl::string_view(bytes).substr(0, cut),
                           GraphFormat::kBinary);
    if (!g.ok()) {
      ++failures;
      EXPECT_NE(g.status().message().find("truncated or corrupt"), std::string::npos);
    } else {
      // A cut on a field boundary parses; import must still not crash.
      (void)ImportGraphDef(*g);
    }
  }
  EXPECT_GT(failures, 0);
  std::string garbage = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff";
  EXPECT_FALSE(ParseGraphDef(garbage, GraphFormat::kBinary).ok());
}

TEST(GraphIoTest, FormatDetection) {
  EXPECT_EQ(DetectGraphFormat("g.pbtxt", ""), GraphFormat::kText);
  EXPECT_EQ(DetectGraphFormat("g.pb", "node {"), GraphFormat::kBinary);
  EXPECT_EQ(DetectGraphFormat("g", "node { name: \"a\" }"), GraphFormat::kText);
  EXPECT_EQ(DetectGraphFormat("g", "# comment\nnode {}"), GraphFormat::kText);
  EXPECT_EQ(DetectGraphFormat("g", std::string("\x0a\x05\x0a\x01" "a", 5)),
            GraphFormat::kBinary);
  EXPECT_FALSE(ParseGraphFormat("yaml").ok());
}

TEST(GraphIoTest, AtomicWriteLeavesNothingOnFailure) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/g.pb";
  auto def = ParseGraphDef(kEveryField, GraphFormat::kText);
  ASSERT_TRUE(WriteGraphDefFile(path, *def, GraphFormat::kBinary).ok());
  auto back = ReadGraphDefFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node_size(), def->node_size());
  auto s = WriteGraphDefFile(dir + "/no/such/dir/g.pb", *def, GraphFormat::kBinary);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_EQ(ReadGraphDefFile(dir + "/missing.pb").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graphrun
