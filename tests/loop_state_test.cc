// Loops that carry a TensorList or a TensorArray, built by hand as v1
// control flow and run through a Session: the results are the loop index
// (so the expected values are plain counting), a 1000-step TensorList loop
// updates one list in place (no list is copied, whatever the number of
// threads or parallel_iterations), and every step gets fresh TensorArrays.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "kernels/cpu/tensor_list.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// Text-format nodes, with ' for ".
std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& attrs) {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  return absl::StrCat(s, attrs, " }\n");
}
std::string Type(const std::string& key, const std::string& type) {
  return absl::StrCat("attr { key: '", key, "' value { type: ", type, " } } ");
}
std::string IntConst(const std::string& name, const std::vector<int>& values,
                     const std::string& control = "") {
  std::string shape = values.size() == 1 ? "" : absl::StrCat("dim { size: ", values.size(), " }");
  std::string vals;
  for (int v : values) absl::StrAppend(&vals, "int_val: ", v, " ");
  return Node(name, "Const", control.empty() ? std::vector<std::string>{}
                                             : std::vector<std::string>{"^" + control},
              Type("dtype", "DT_INT32") +
                  absl::StrCat("attr { key: 'value' value { tensor { dtype: DT_INT32 "
                               "tensor_shape { ",
                               shape, " } ", vals, "} } }"));
}
std::string Enter(const std::string& name, const std::string& input, const std::string& type,
                  bool constant, int parallel) {
  return Node(name, "Enter", {input},
              Type("T", type) +
                  absl::StrCat("attr { key: 'frame_name' value { s: 'loop' } } "
                               "attr { key: 'is_constant' value { b: ",
                               constant ? "true" : "false",
                               " } } attr { key: 'parallel_iterations' value { i: ", parallel,
                               " } }"));
}

// A loop over i in [0, n) (n fed) carrying `carried` (type `type`, entering
// from node `init`): the body makes `body` nodes that read "id_i" (i) and
// "id_c" (the carried value) and produce "next_c". Fetch "exit_c".
std::string Loop(const std::string& type, const std::string& init, const std::string& body,
                 int parallel) {
  std::string g;
  g += Node("n", "Placeholder", {}, Type("dtype", "DT_INT32"));
  g += IntConst("zero", {0});
  g += Enter("enter_i", "zero", "DT_INT32", false, parallel);
  g += Enter("enter_c", init, type, false, parallel);
  g += Enter("enter_n", "n", "DT_INT32", true, parallel);
  g += Node("merge_i", "Merge", {"enter_i", "next_i"},
            Type("T", "DT_INT32") + "attr { key: 'N' value { i: 2 } }");
  g += Node("merge_c", "Merge", {"enter_c", "next_c_it"},
            Type("T", type) + "attr { key: 'N' value { i: 2 } }");
  g += Node("less", "Less", {"merge_i", "enter_n"}, Type("T", "DT_INT32"));
  g += Node("cond", "LoopCond", {"less"}, "");
  g += Node("switch_i", "Switch", {"merge_i", "cond"}, Type("T", "DT_INT32"));
  g += Node("switch_c", "Switch", {"merge_c", "cond"}, Type("T", type));
  g += Node("id_i", "Identity", {"switch_i:1"}, Type("T", "DT_INT32"));
  g += Node("id_c", "Identity", {"switch_c:1"}, Type("T", type));
  g += IntConst("one", {1}, "id_i");
  g += Node("add_i", "AddV2", {"id_i", "one"}, Type("T", "DT_INT32"));
  g += Node("next_i", "NextIteration", {"add_i"}, Type("T", "DT_INT32"));
  g += body;
  g += Node("next_c_it", "NextIteration", {"next_c"}, Type("T", type));
  g += Node("exit_i", "Exit", {"switch_i:0"}, Type("T", "DT_INT32"));
  g += Node("exit_c", "Exit", {"switch_c:0"}, Type("T", type));
  return g;
}

GraphDef Parse(const std::string& text) {
  auto g = ParseGraphDef(absl::StrReplaceAll(text, {{"'", "\""}}), GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : GraphDef();
}

// list = TensorListReserve([1], n); each step sets list[i] = [i]; then
// TensorListStack.
GraphDef ListLoop(int parallel) {
  const std::string list_attrs = Type("element_dtype", "DT_INT32");
  std::string body;
  body += IntConst("axis", {0}, "id_i");
  body += Node("item", "ExpandDims", {"id_i", "axis"},
               Type("T", "DT_INT32") + Type("Tdim", "DT_INT32"));
  body += Node("next_c", "TensorListSetItem", {"id_c", "id_i", "item"}, list_attrs);
  std::string g;
  g += Node("reserve", "TensorListReserve", {"element_shape_vec", "n"},
            list_attrs + Type("shape_type", "DT_INT32"));
  g += Loop("DT_VARIANT", "reserve", body, parallel);
  g += Node("stack", "TensorListStack", {"exit_c", "element_shape_vec"}, list_attrs);
  // A one-element shape vector [1].
  g += Node("element_shape_vec", "Const", {},
            Type("dtype", "DT_INT32") +
                "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { "
                "size: 1 } } int_val: 1 } } }");
  return Parse(g);
}

TEST(LoopStateTest, TensorListLoopWritesOneListInPlace) {
  constexpr int kSteps = 1000;
  for (int parallel : {1, 32}) {
    for (int threads : {1, 0}) {
      SCOPED_TRACE(absl::StrCat("parallel_iterations ", parallel, ", threads ", threads));
      SessionOptions options;
      options.inter_op_threads = threads;
      auto session = Session::Create(ListLoop(parallel), options);
      ASSERT_TRUE(session.ok()) << session.status();
      const int64_t copies_before = list_kernels::ListCopies();
      std::vector<Tensor> out;
      absl::Status s =
          (*session)->Run({{"n", Tensor::Scalar<int32_t>(kSteps)}}, {"stack:0"}, {}, &out);
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(list_kernels::ListCopies(), copies_before);
      ASSERT_EQ(out[0].shape(), TensorShape({kSteps, 1}));
      for (int i = 0; i < kSteps; ++i) ASSERT_EQ(out[0].flat<int32_t>()[i], i) << i;
    }
  }
}

// ta = TensorArrayV3(n); each step writes [i] at i (the flow is the loop
// variable); then TensorArrayGatherV3 of 0..n-1.
GraphDef ArrayLoop() {
  std::string body;
  body += IntConst("axis", {0}, "id_i");
  body += Node("item", "ExpandDims", {"id_i", "axis"},
               Type("T", "DT_INT32") + Type("Tdim", "DT_INT32"));
  body += Node("next_c", "TensorArrayWriteV3", {"enter_ta", "id_i", "item", "id_c"},
               Type("T", "DT_INT32"));
  std::string g;
  g += Node("ta", "TensorArrayV3", {"n"},
            Type("dtype", "DT_INT32") +
                "attr { key: 'element_shape' value { shape { dim { size: 1 } } } }");
  g += Enter("enter_ta", "ta", "DT_RESOURCE", true, 10);
  g += Loop("DT_FLOAT", "ta:1", body, 10);
  g += IntConst("start", {0});
  g += IntConst("delta", {1});
  g += Node("indices", "Range", {"start", "n", "delta"}, Type("Tidx", "DT_INT32"));
  g += Node("gather", "TensorArrayGatherV3", {"ta", "indices", "exit_c"},
            Type("dtype", "DT_INT32") +
                "attr { key: 'element_shape' value { shape { dim { size: 1 } } } }");
  g += Node("size", "TensorArraySizeV3", {"ta", "exit_c"}, "");
  return Parse(g);
}

TEST(LoopStateTest, TensorArrayLoopAndFreshArraysEachStep) {
  auto session = Session::Create(ArrayLoop(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  // Twice: a second step writing the same indices works because each step
  // makes its own array.
  for (int n : {7, 7, 3}) {
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({{"n", Tensor::Scalar<int32_t>(n)}},
                                     {"gather:0", "size:0"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out[0].shape(), TensorShape({n, 1}));
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[0].flat<int32_t>()[i], i);
    EXPECT_EQ(out[1].scalar<int32_t>(), n);
  }
}

}  // namespace
}  // namespace graphrun
