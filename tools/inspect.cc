#include "tools/inspect.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/import.h"
#include "graph/lower_functional.h"
#include "graph/op_registry.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

std::string NameList(const std::vector<std::string>& names, int max) {
  std::vector<std::string> shown(
      names.begin(), names.begin() + std::min<size_t>(names.size(), max));
  std::string out = absl::StrJoin(shown, ", ");
  if (names.size() > shown.size()) {
    absl::StrAppend(&out, ", ... (", names.size() - shown.size(), " more)");
  }
  return out;
}

std::string ShapeOfPlaceholder(const Node& node) {
  const AttrValue* shape = node.attrs().Find("shape");
  if (shape == nullptr || shape->value_case() != AttrValue::kShape) return "<unknown>";
  auto s = PartialShape::FromProto(shape->shape());
  return s.ok() ? s->DebugString() : "<invalid>";
}

std::string DtypeOf(const Node& node, const char* attr) {
  const AttrValue* t = node.attrs().Find(attr);
  if (t == nullptr || t->value_case() != AttrValue::kType) return "?";
  return DataTypeString(t->type());
}

// The unread outputs of `g`'s nodes, as LikelyOutputs describes them.
std::vector<const Node*> UnreadNodes(const Graph& g) {
  std::vector<const Node*> out;
  for (const auto& node : g.nodes()) {
    bool consumed = false;
    for (const Edge* e : node->out_edges()) consumed |= !e->IsControl();
    if (consumed || node->num_outputs() == 0) continue;
    if (node->op() == "Const" || node->op() == "Placeholder" || node->op() == "PlaceholderV2") {
      continue;
    }
    out.push_back(node.get());
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> LikelyOutputs(const GraphDef& graph_def) {
  ImportOptions options;
  options.infer_shapes = false;
  auto graph = ImportGraphDef(graph_def, options);
  if (!graph.ok()) return graph.status();
  std::vector<std::string> out;
  for (const Node* node : UnreadNodes(**graph)) {
    for (int i = 0; i < node->num_outputs(); ++i) out.push_back(TensorId{node->name(), i}.ToString());
  }
  return out;
}

InspectReport InspectGraph(const GraphDef& graph_def,
                           const InspectOptions& options) {
  std::string out;
  absl::StrAppend(&out, "Graph: ", options.source, "\n");
  absl::StrAppend(&out, "  producer version ", graph_def.versions().producer(),
                  ", min consumer ", graph_def.versions().min_consumer(), "\n");
  const std::vector<const FunctionDef*> functions = ReachableFunctions(graph_def);
  if (graph_def.library().function_size() > 0) {
    absl::StrAppend(&out, "  function library: ",
                    graph_def.library().function_size(), " functions, ",
                    functions.size(),
                    " used (calls are inlined and If/Case/While lowered at import)\n");
  }

  // Import leniently (unknown ops kept, functional nodes as written) for the
  // structure, strictly for the verdict.
  ImportOptions lenient;
  lenient.allow_unknown_ops = true;
  lenient.lower_functional_ops = false;
  auto graph = ImportGraphDef(graph_def, lenient);
  if (!graph.ok()) {
    // Retry without shape inference so a shape error still gets a summary.
    lenient.infer_shapes = false;
    graph = ImportGraphDef(graph_def, lenient);
  }

  // Node count by op (from the GraphDef, so it works even if import fails).
  std::map<std::string, std::vector<std::string>> by_op;
  for (const NodeDef& n : graph_def.node()) by_op[n.op()].push_back(n.name());
  std::vector<std::pair<std::string, size_t>> counts;
  for (const auto& [op, names] : by_op) counts.emplace_back(op, names.size());
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  absl::StrAppend(&out, "\nNodes: ", graph_def.node_size(), " (", by_op.size(),
                  " distinct ops)\n");
  for (const auto& [op, n] : counts) {
    absl::StrAppend(&out, absl::StrFormat("  %-28s %6d\n", op, n));
  }

  if (graph.ok()) {
    const Graph& g = **graph;
    absl::StrAppend(&out, "\nInputs (feed these):\n");
    int inputs = 0;
    for (const auto& node : g.nodes()) {
      if (node->op() != "Placeholder" && node->op() != "PlaceholderV2" &&
          node->op() != "PlaceholderWithDefault") {
        continue;
      }
      ++inputs;
      std::string dtype = DtypeOf(*node, "dtype");
      std::string shape = node->op() != "PlaceholderWithDefault"
                              ? ShapeOfPlaceholder(*node)
                              : (node->num_outputs() > 0
                                     ? node->output_shape(0).DebugString()
                                     : "<unknown>");
      absl::StrAppend(&out, "  ", node->name(), ": ", dtype, " ", shape,
                      node->op() == "PlaceholderWithDefault" ? " (has a default)" : "",
                      "\n");
    }
    if (inputs == 0) absl::StrAppend(&out, "  (none: the graph takes no feeds)\n");

    absl::StrAppend(&out, "\nLikely outputs (fetch these):\n");
    int outputs = 0;
    for (const Node* node : UnreadNodes(g)) {
      ++outputs;
      for (int i = 0; i < node->num_outputs(); ++i) {
        absl::StrAppend(&out, "  ", TensorId{node->name(), i}.ToString(), ": ",
                        DataTypeString(node->output_type(i)), " ",
                        node->output_shape(i).DebugString(), "\n");
      }
    }
    for (const auto& node : g.nodes()) {
      if (node->op_def() != nullptr) continue;
      bool consumed = false;
      for (const Edge* e : node->out_edges()) consumed |= !e->IsControl();
      if (!consumed) {
        ++outputs;
        absl::StrAppend(&out, "  ", node->name(), ": (", node->op(),
                        ", outputs unknown)\n");
      }
    }
    if (outputs == 0) absl::StrAppend(&out, "  (none found)\n");
  }

  std::map<std::string, std::vector<std::string>> by_device;
  for (const NodeDef& n : graph_def.node()) by_device[n.device()].push_back(n.name());
  absl::StrAppend(&out, "\nRequested devices:\n");
  for (const auto& [device, names] : by_device) {
    absl::StrAppend(&out, absl::StrFormat(
        "  %-44s %6d nodes%s\n", device.empty() ? "(none: placer decides)" : device,
        names.size(),
        device.empty() ? "" : absl::StrCat(": ", NameList(names, options.max_names))));
  }

  // Ops of the graph and of the function bodies it uses; calls and
  // functional control flow are lowered away, so they are not listed.
  std::map<std::string, std::vector<std::string>> to_run;
  std::set<std::string> function_names;
  for (const FunctionDef& f : graph_def.library().function()) {
    function_names.insert(f.signature().name());
  }
  for (const auto& [op, names] : by_op) to_run[op] = names;
  for (const FunctionDef* f : functions) {
    for (const NodeDef& n : f->node_def()) {
      to_run[n.op()].push_back(
          absl::StrCat(n.name(), " (in function ", f->signature().name(), ")"));
    }
  }
  absl::StrAppend(&out, "\nOps this build cannot run:\n");
  int missing = 0;
  for (const auto& [op, names] : to_run) {
    if (IsFunctionalOp(op) || function_names.count(op)) continue;
    std::string why;
    if (options.why_cannot_run) {
      why = options.why_cannot_run(op);
    } else if (OpRegistry::Global()->Find(op) == nullptr) {
      why = "the op is not registered in graphrun";
    }
    if (why.empty()) continue;
    ++missing;
    absl::StrAppend(&out, "  ", op, " (", why, "): ",
                    NameList(names, options.max_names), "\n");
  }
  if (missing == 0) absl::StrAppend(&out, "  (none)\n");

  auto strict = ImportGraphDef(graph_def);
  absl::StrAppend(&out, "\nValidation: ",
                  strict.ok() ? "OK" : std::string(strict.status().message()),
                  "\n");
  return {std::move(out), strict.status()};
}

std::string RegisteredOpsTable() {
  const std::vector<std::string> ops = OpRegistry::Global()->ListOpNames();
  std::string out;
  int with_cpu = 0, with_gpu = 0;
  for (const std::string& op : ops) {
    // Device type -> dtypes of the first type constraint ("" = unconstrained).
    std::map<std::string, std::set<std::string>> types;
    for (const KernelDef* k : KernelRegistry::Global()->KernelsForOp(op)) {
      std::set<std::string>& t = types[k->device_type];
      if (k->type_constraints.empty()) {
        t.insert("any");
        continue;
      }
      for (DataType d : k->type_constraints.front().second) t.insert(DataTypeString(d));
    }
    with_cpu += types.count(kDeviceCpu) > 0;
    with_gpu += types.count("GPU") > 0;
    std::string line = absl::StrFormat("%-40s", op);
    for (const char* device : {kDeviceCpu, "GPU"}) {
      auto it = types.find(device);
      absl::StrAppend(&line, " ", device, ": ",
                      it == types.end() ? "-" : absl::StrJoin(it->second, ","));
    }
    absl::StrAppend(&out, line, "\n");
  }
  absl::StrAppend(&out, ops.size(), " ops registered: ", with_cpu, " with a CPU kernel, ",
                  with_gpu, " with a GPU kernel\n");
  return out;
}

}  // namespace graphrun
