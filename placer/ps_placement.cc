#include "placer/ps_placement.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "placer/device_name.h"
#include "placer/variable_split.h"

namespace graphrun {
namespace placer {
namespace {

bool IsVariable(const std::string& op) {
  return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
}

int Find(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

void Union(std::vector<int>& parent, int a, int b) {
  a = Find(parent, a);
  b = Find(parent, b);
  if (a != b) parent[std::max(a, b)] = std::min(a, b);
}

// Bytes of a variable node from its dtype and shape attrs (0 when a
// dimension is unknown).
int64_t VariableBytes(const NodeDef& def) {
  auto dtype = def.attr().find("dtype");
  auto shape = def.attr().find("shape");
  if (dtype == def.attr().end() || shape == def.attr().end()) return 0;
  int64_t n = DataTypeSize(BaseType(dtype->second.type()));
  for (const auto& d : shape->second.shape().dim()) {
    if (d.size() < 0) return 0;
    n *= d.size();
  }
  return n;
}

// The ps task `def` requests, or -1.
int PsTaskOf(const NodeDef& def) {
  if (def.device().empty()) return -1;
  absl::StatusOr<DeviceName> d = ParseDeviceName(def.device());
  if (!d.ok() || !d->has_job || d->job != "ps") return -1;
  return d->has_task ? d->task : 0;
}

struct Groups {
  std::vector<int> root;  // node index -> group root
  // group root -> its variable node indices
  std::map<int, std::vector<int>> variables;
};

absl::StatusOr<Groups> FindGroups(const GraphDef& graph) {
  GR_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, ImportGraphDef(graph));
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < graph.node_size(); ++i) index[graph.node(i).name()] = i;
  std::vector<int> parent(graph.node_size());
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < graph.node_size(); ++i) {
    const NodeDef& def = graph.node(i);
    auto c = def.attr().find("_class");
    if (c == def.attr().end()) continue;
    for (const std::string& s : c->second.list().s()) {
      if (!absl::StartsWith(s, "loc:@")) continue;
      auto it = index.find(s.substr(5));
      if (it != index.end()) Union(parent, i, it->second);
    }
  }
  for (const auto& node : g->nodes()) {
    auto dst = index.find(node->name());
    if (dst == index.end()) continue;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControl() || e->dst_input >= node->num_inputs()) continue;
      const DataType t = node->input_type(e->dst_input);
      if (!IsRefType(t) && t != DT_RESOURCE) continue;
      auto src = index.find(e->src->name());
      if (src != index.end()) Union(parent, src->second, dst->second);
    }
  }
  Groups out;
  out.root.resize(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    out.root[i] = Find(parent, i);
    if (IsVariable(graph.node(i).op())) out.variables[out.root[i]].push_back(i);
  }
  return out;
}

std::string PsDevice(const std::string& old, int task) {
  DeviceName d;
  if (!old.empty()) {
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(old);
    if (parsed.ok()) d = *parsed;
  }
  d.has_job = true;
  d.job = "ps";
  d.has_replica = false;
  d.has_task = true;
  d.task = task;
  return DeviceNameToString(d);
}

void Summarize(PsPlacement* p) {
  std::sort(p->groups.begin(), p->groups.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.variable < b.variable;
  });
  const int64_t total =
      std::accumulate(p->bytes_per_task.begin(), p->bytes_per_task.end(), int64_t{0});
  if (total > 0) {
    const int64_t max = *std::max_element(p->bytes_per_task.begin(), p->bytes_per_task.end());
    p->max_over_mean =
        static_cast<double>(max) * p->bytes_per_task.size() / static_cast<double>(total);
  }
}

PsVariableGroup Describe(const GraphDef& graph, const std::vector<int>& vars) {
  PsVariableGroup out;
  out.variable = graph.node(vars.front()).name();
  for (int v : vars) {
    // The shortest name (the variable, not its slots), then the first.
    const std::string& name = graph.node(v).name();
    if (name.size() < out.variable.size() ||
        (name.size() == out.variable.size() && name < out.variable)) {
      out.variable = name;
    }
    out.bytes += VariableBytes(graph.node(v));
  }
  out.variables = static_cast<int>(vars.size());
  return out;
}

// The ps task each group's first pinned member names (group root -> task).
absl::flat_hash_map<int, int> PinnedTasks(const GraphDef& graph, const Groups& groups) {
  absl::flat_hash_map<int, int> pinned;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (pinned.contains(groups.root[i])) continue;
    const int task = PsTaskOf(graph.node(i));
    if (task >= 0) pinned[groups.root[i]] = task;
  }
  return pinned;
}

// Splits the groups being placed that hold more than half an even share.
absl::Status SplitLargeGroups(GraphDef* graph, const PsPlacementOptions& options,
                              PsPlacement* out) {
  GR_ASSIGN_OR_RETURN(Groups groups, FindGroups(*graph));
  const absl::flat_hash_map<int, int> pinned = PinnedTasks(*graph, groups);
  int64_t total = 0;
  for (const auto& [root, vars] : groups.variables) total += Describe(*graph, vars).bytes;
  const int64_t half_share = total / options.num_ps_tasks / 2;
  std::vector<std::pair<std::vector<std::string>, PsVariableSplit>> todo;
  for (const auto& [root, vars] : groups.variables) {
    if (!options.override_pins && pinned.contains(root)) continue;
    PsVariableSplit split;
    split.bytes = Describe(*graph, vars).bytes;
    if (split.bytes <= half_share || split.bytes < 2 * options.min_part_bytes) continue;
    // The largest variable, and those of its dtype and shape (its slots).
    int largest = vars.front();
    for (int v : vars) {
      if (VariableBytes(graph->node(v)) > VariableBytes(graph->node(largest))) largest = v;
    }
    const NodeDef& main = graph->node(largest);
    auto same = [&](const NodeDef& n) {
      for (const char* attr : {"dtype", "shape"}) {
        auto a = n.attr().find(attr), b = main.attr().find(attr);
        if ((a == n.attr().end()) != (b == main.attr().end())) return false;
        if (a != n.attr().end() && a->second.SerializeAsString() != b->second.SerializeAsString()) {
          return false;
        }
      }
      return true;
    };
    std::vector<std::string> names;
    for (int v : vars) {
      if (same(graph->node(v))) names.push_back(graph->node(v).name());
    }
    split.variable = main.name();
    split.variables = static_cast<int>(names.size());
    todo.emplace_back(std::move(names), std::move(split));
  }
  for (auto& [names, split] : todo) {
    int64_t parts = (split.bytes + half_share - 1) / std::max<int64_t>(half_share, 1);
    parts = std::min<int64_t>({parts, split.bytes / options.min_part_bytes, 64});
    if (parts < 2) continue;
    GR_ASSIGN_OR_RETURN(SplitResult r, SplitVariables(graph, names, static_cast<int>(parts)));
    split.rows = r.rows;
    split.why_not = r.why_not;
    out->splits.push_back(std::move(split));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PsPlacement> DescribePsPins(const GraphDef& graph, int num_ps_tasks) {
  if (num_ps_tasks < 1) return absl::InvalidArgumentError("no ps tasks to describe");
  GR_ASSIGN_OR_RETURN(Groups groups, FindGroups(graph));
  PsPlacement out;
  out.bytes_per_task.assign(num_ps_tasks, 0);
  for (const auto& [root, vars] : groups.variables) {
    PsVariableGroup g = Describe(graph, vars);
    g.task = PsTaskOf(graph.node(vars.front()));
    if (g.task >= 0 && g.task < num_ps_tasks) out.bytes_per_task[g.task] += g.bytes;
    out.groups.push_back(std::move(g));
  }
  Summarize(&out);
  return out;
}

absl::StatusOr<PsPlacement> PlaceVariablesOnPs(GraphDef* graph, const PsPlacementOptions& options) {
  if (options.num_ps_tasks < 1) {
    return absl::InvalidArgumentError("placing variables on ps tasks needs at least one");
  }
  PsPlacement out;
  if (options.min_part_bytes > 0 && options.num_ps_tasks > 1) {
    GR_RETURN_IF_ERROR(SplitLargeGroups(graph, options, &out));
  }
  GR_ASSIGN_OR_RETURN(Groups groups, FindGroups(*graph));
  out.bytes_per_task.assign(options.num_ps_tasks, 0);
  const absl::flat_hash_map<int, int> pinned_task = PinnedTasks(*graph, groups);
  // Groups that keep their pins load their task first.
  std::vector<std::pair<int, PsVariableGroup>> to_place;  // root, group
  for (const auto& [root, vars] : groups.variables) {
    PsVariableGroup g = Describe(*graph, vars);
    auto it = pinned_task.find(root);
    const int pinned = it == pinned_task.end() ? -1 : it->second;
    if (pinned >= options.num_ps_tasks && !options.override_pins) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", g.variable, "' is pinned to /job:ps/task:", pinned, ", but the cluster has ",
          options.num_ps_tasks, " ps task(s) (/job:ps/task:0..", options.num_ps_tasks - 1,
          "); --ps_placement=auto places it anew"));
    }
    if (pinned >= 0 && !options.override_pins) {
      g.task = pinned;
      g.why = "kept the graph's pin";
      out.bytes_per_task[pinned] += g.bytes;
      out.groups.push_back(std::move(g));
      continue;
    }
    to_place.emplace_back(root, std::move(g));
  }
  std::sort(to_place.begin(), to_place.end(), [](const auto& a, const auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                            : a.second.variable < b.second.variable;
  });
  absl::flat_hash_map<int, int> task_of_root;
  for (auto& [root, g] : to_place) {
    const int task = static_cast<int>(
        std::min_element(out.bytes_per_task.begin(), out.bytes_per_task.end()) -
        out.bytes_per_task.begin());
    g.why = absl::StrCat("the ps task with the fewest variable bytes (", out.bytes_per_task[task],
                         " before this group's ", g.bytes, ")");
    g.task = task;
    g.moved = true;
    out.bytes_per_task[task] += g.bytes;
    task_of_root[root] = task;
    out.groups.push_back(g);
  }
  for (int i = 0; i < graph->node_size(); ++i) {
    NodeDef* def = graph->mutable_node(i);
    auto it = task_of_root.find(groups.root[i]);
    if (it != task_of_root.end()) {
      def->set_device(PsDevice(def->device(), it->second));
      continue;
    }
    if (groups.variables.count(groups.root[i]) > 0) continue;  // a pinned group
    DeviceName d;
    if (!def->device().empty()) {
      absl::StatusOr<DeviceName> parsed = ParseDeviceName(def->device());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("node '", def->name(), "' requests device '",
                                                       def->device(), "': ",
                                                       parsed.status().message()));
      }
      d = *parsed;
    }
    if (d.has_job) continue;
    d.has_job = true;
    d.job = "worker";
    def->set_device(DeviceNameToString(d));
  }
  Summarize(&out);
  return out;
}

}  // namespace placer
}  // namespace graphrun
