// Text-format GraphDef pieces for v1 control-flow tests: constants,
// placeholders, Enter/Merge/Switch/NextIteration/Exit nodes and a counting
// loop, written with single quotes (LoopGraphDef turns them into a
// GraphDef). Test-only.
#ifndef GRAPHRUN_RUNTIME_TESTING_LOOP_GRAPHS_H_
#define GRAPHRUN_RUNTIME_TESTING_LOOP_GRAPHS_H_

#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"

namespace graphrun {
namespace testing {

inline std::string DeviceField(const std::string& device) {
  return device.empty() ? "" : absl::StrCat("device: '", device, "' ");
}

inline std::string IntConst(const std::string& name, int v, const std::string& control = "",
                            const std::string& device = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ",
                      control.empty() ? "" : absl::StrCat("input: '^", control, "' "),
                      DeviceField(device),
                      "attr { key: 'dtype' value { type: DT_INT32 } } "
                      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} "
                      "int_val: ",
                      v, " } } } }\n");
}

inline std::string FloatConst(const std::string& name, float v, const std::string& control = "",
                              const std::string& device = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ",
                      control.empty() ? "" : absl::StrCat("input: '^", control, "' "),
                      DeviceField(device),
                      "attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} "
                      "float_val: ",
                      v, " } } } }\n");
}

inline std::string Enter(const std::string& name, const std::string& input,
                         const std::string& frame, const std::string& type, bool constant,
                         int parallel = 10, const std::string& device = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Enter' input: '", input, "' ",
                      DeviceField(device), "attr { key: 'T' value { type: ", type,
                      " } } attr { key: 'frame_name' value { s: '", frame,
                      "' } } attr { key: 'is_constant' value { b: ", constant ? "true" : "false",
                      " } } attr { key: 'parallel_iterations' value { i: ", parallel, " } } }\n");
}

// A node with inputs and (unless `type` is "") attr T; Merge gets N = 2.
inline std::string Op(const std::string& name, const std::string& op,
                      std::initializer_list<std::string> inputs,
                      const std::string& type = "DT_INT32", const std::string& device = "") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  s += DeviceField(device);
  if (!type.empty()) absl::StrAppend(&s, "attr { key: 'T' value { type: ", type, " } } ");
  if (op == "Merge") absl::StrAppend(&s, "attr { key: 'N' value { i: 2 } } ");
  return s + "}\n";
}

inline std::string Placeholder(const std::string& name, const std::string& type) {
  return absl::StrCat("node { name: '", name,
                      "' op: 'Placeholder' attr { key: 'dtype' value { type: ", type,
                      " } } }\n");
}

// A counting loop over i in frame `f`: i from `start`, while i < `limit`
// (a constant Enter), i += 1; `body_op` (if any) is applied to i first.
// Nodes: f/enter_i, f/enter_n, f/merge_i, f/less, f/cond (the LoopCond),
// f/switch_i, f/id_i (i inside the body), f/one, f/add_i, f/next_i and
// f/exit_i (the final count).
inline std::string CountingLoop(const std::string& f, const std::string& start,
                                const std::string& limit, int parallel,
                                const std::string& body_op = "") {
  std::string s;
  s += Enter(f + "/enter_i", start, f, "DT_INT32", false, parallel);
  s += Enter(f + "/enter_n", limit, f, "DT_INT32", true, parallel);
  s += Op(f + "/merge_i", "Merge", {f + "/enter_i", f + "/next_i"});
  s += Op(f + "/less", "Less", {f + "/merge_i", f + "/enter_n"});
  s += Op(f + "/cond", "LoopCond", {f + "/less"}, "");
  s += Op(f + "/switch_i", "Switch", {f + "/merge_i", f + "/cond"});
  s += Op(f + "/id_i", "Identity", {f + "/switch_i:1"});
  std::string cur = f + "/id_i";
  if (!body_op.empty()) {
    s += Op(f + "/body", body_op, {cur}, "");
    cur = f + "/body";
  }
  s += IntConst(f + "/one", 1, f + "/id_i");
  s += Op(f + "/add_i", "AddV2", {cur, f + "/one"});
  s += Op(f + "/next_i", "NextIteration", {f + "/add_i"});
  s += Op(f + "/exit_i", "Exit", {f + "/switch_i"});
  return s;
}

inline absl::StatusOr<GraphDef> LoopGraphDef(const std::string& text) {
  return ParseGraphDef(absl::StrReplaceAll(text, {{"'", "\""}}), GraphFormat::kText);
}

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_TESTING_LOOP_GRAPHS_H_
