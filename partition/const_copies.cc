#include "partition/const_copies.h"

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/import.h"
#include "partition/control_edges.h"

namespace graphrun {

absl::StatusOr<ConstCopies> CopyConstsToReaders(const Graph& graph,
                                                const PartitionOptions& options) {
  const auto device_of = [&options](const Node& n) {
    return options.node_to_loc ? options.node_to_loc(n) : n.def().device();
  };
  const auto task_of = [&options](const std::string& device) {
    return options.task_of ? options.task_of(device) : DefaultTaskOf(device);
  };
  const auto is_cpu = [](const std::string& device) {
    return absl::EqualsIgnoreCase(DeviceTypeOfFullName(device), "CPU");
  };
  ConstCopies out;
  // The Consts some reader on another task's CPU device reads, and where.
  std::set<std::string> copied_consts;
  for (const auto& node : graph.nodes()) {
    if (node->op() != "Const" || !node->in_edges().empty()) continue;
    const std::string task = task_of(device_of(*node));
    for (const Edge* e : node->out_edges()) {
      const std::string reader = device_of(*e->dst);
      if (task_of(reader) != task && is_cpu(reader)) {
        copied_consts.insert(node->name());
        break;
      }
    }
  }
  if (copied_consts.empty()) return out;
  for (const auto& node : graph.nodes()) out.device[node->name()] = device_of(*node);
  out.graph = graph.ToGraphDef();
  std::map<std::pair<std::string, std::string>, std::string> copy_of;  // (const, device)
  std::map<std::string, const NodeDef*> const_defs;
  for (const NodeDef& n : out.graph.node()) {
    if (copied_consts.count(n.name()) != 0) const_defs[n.name()] = &n;
  }
  std::vector<NodeDef> added;
  for (NodeDef& n : *out.graph.mutable_node()) {
    const std::string& reader = out.device.at(n.name());
    for (std::string& input : *n.mutable_input()) {
      const bool control = absl::StartsWith(input, "^");
      std::string name = control ? input.substr(1) : input;
      if (absl::EndsWith(name, ":0")) name.resize(name.size() - 2);
      auto def = const_defs.find(name);
      if (def == const_defs.end()) continue;
      const std::string& at = out.device.at(name);
      if (task_of(reader) == task_of(at) || !is_cpu(reader)) continue;
      std::string& copy = copy_of[{name, reader}];
      if (copy.empty()) {
        copy = absl::StrCat(name, "/_copy_", out.copies++);
        NodeDef c = *def->second;
        c.set_name(copy);
        c.set_device(reader);
        out.device[copy] = reader;
        added.push_back(std::move(c));
      }
      input = control ? absl::StrCat("^", copy) : copy;
    }
  }
  for (NodeDef& c : added) *out.graph.add_node() = std::move(c);
  return out;
}

absl::StatusOr<std::map<std::string, GraphDef>> PartitionCopyingConsts(
    const Graph& graph, PartitionOptions options, PartitionStats* stats) {
  absl::StatusOr<ConstCopies> copies = CopyConstsToReaders(graph, options);
  if (!copies.ok()) return copies.status();
  if (copies->copies == 0) {
    copies->graph = graph.ToGraphDef();
    for (const auto& node : graph.nodes()) {
      copies->device[node->name()] =
          options.node_to_loc ? options.node_to_loc(*node) : node->def().device();
    }
  }
  const std::function<std::string(const std::string&)> task_of =
      options.task_of ? options.task_of
                      : std::function<std::string(const std::string&)>(DefaultTaskOf);
  absl::StatusOr<ControlEdgeChanges> control =
      GatherControlEdges(&copies->graph, &copies->device, task_of);
  if (!control.ok()) return control.status();
  if (copies->copies == 0 && control->moved == 0 && control->gathered == 0) {
    return Partition(graph, options, stats);
  }
  ImportOptions import;
  import.infer_shapes = false;
  import.allow_internal_names = true;
  absl::StatusOr<std::unique_ptr<Graph>> copied = ImportGraphDef(copies->graph, import);
  if (!copied.ok()) return copied.status();
  const std::map<std::string, std::string>& device = copies->device;
  options.node_to_loc = [&device](const Node& n) { return device.at(n.name()); };
  return Partition(**copied, options, stats);
}

}  // namespace graphrun
