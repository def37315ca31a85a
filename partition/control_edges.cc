#include "partition/control_edges.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphrun {
namespace {

bool IsControlFlow(const std::string& op) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Enter", "RefEnter", "Exit",     "RefExit",          "Switch",   "RefSwitch",
      "Merge", "RefMerge", "LoopCond", "NextIteration", "RefNextIteration", "_SwitchN"};
  return ops->contains(op);
}

// The node an input names ("^a", "a:1" and "a" name a).
std::string NodeOf(const std::string& input) {
  std::string name = absl::StartsWith(input, "^") ? input.substr(1) : input;
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos &&
      std::all_of(name.begin() + colon + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    name.resize(colon);
  }
  return name;
}

using TaskFn = std::function<std::string(const std::string&)>;

// Messages between tasks a step sends: one per output (or control source)
// and receiving task.
size_t CrossTaskMessages(const GraphDef& graph, const std::map<std::string, std::string>& device,
                         const TaskFn& task_of) {
  std::set<std::pair<std::string, std::string>> messages;
  for (const NodeDef& n : graph.node()) {
    const std::string dst = task_of(device.at(n.name()));
    for (const std::string& in : n.input()) {
      if (task_of(device.at(NodeOf(in))) != dst) messages.emplace(in, dst);
    }
  }
  return messages.size();
}

}  // namespace

absl::StatusOr<ControlEdgeChanges> GatherControlEdges(
    GraphDef* graph, std::map<std::string, std::string>* device, const TaskFn& task_of) {
  ControlEdgeChanges changes;
  for (const NodeDef& n : graph->node()) {
    if (IsControlFlow(n.op())) return changes;
    if (device->count(n.name()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("node '", n.name(), "' has no device"));
    }
    for (const std::string& in : n.input()) {
      if (device->count(NodeOf(in)) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", n.name(), "' reads '", in, "', which has no device"));
      }
    }
  }
  const auto task = [&](const std::string& name) { return task_of(device->at(name)); };

  // NoOps to their readers' task.
  absl::flat_hash_map<std::string, std::vector<int>> readers;  // by control
  for (int i = 0; i < graph->node_size(); ++i) {
    for (const std::string& in : graph->node(i).input()) {
      if (absl::StartsWith(in, "^")) readers[in.substr(1)].push_back(i);
    }
  }
  for (const NodeDef& n : graph->node()) {
    if (n.op() != "NoOp") continue;
    auto r = readers.find(n.name());
    if (r == readers.end()) continue;
    std::set<std::string> reader_tasks;
    for (int i : r->second) reader_tasks.insert(task(graph->node(i).name()));
    const std::string here = task(n.name());
    if (reader_tasks.size() != 1 || *reader_tasks.begin() == here) continue;
    const std::string there = *reader_tasks.begin();
    int before = 1, after = 0;  // its inputs from elsewhere, and its signal out
    for (const std::string& in : n.input()) {
      before += task(NodeOf(in)) != here;
      after += task(NodeOf(in)) != there;
    }
    if (after < before) {
      (*device)[n.name()] = device->at(graph->node(r->second.front()).name());
      ++changes.moved;
    }
  }

  // Control inputs from several nodes of one task, gathered there.
  GraphDef trial = *graph;
  std::map<std::string, std::string> trial_device = *device;
  std::set<std::string> names;
  for (const NodeDef& n : graph->node()) names.insert(n.name());
  std::map<std::tuple<std::string, std::string, std::vector<std::string>>, std::string> gathers;
  std::vector<NodeDef> added;
  int gathered = 0;
  for (NodeDef& d : *trial.mutable_node()) {
    const std::string dst = task(d.name());
    std::map<std::string, std::vector<std::string>> by_task;  // source task -> sources
    for (const std::string& in : d.input()) {
      if (!absl::StartsWith(in, "^")) continue;
      const std::string src_task = task(in.substr(1));
      if (src_task != dst) by_task[src_task].push_back(in.substr(1));
    }
    for (auto& [src_task, sources] : by_task) {
      std::sort(sources.begin(), sources.end());
      sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
      if (sources.size() < 2) continue;
      std::string& gather = gathers[{src_task, dst, sources}];
      if (gather.empty()) {
        int k = 0;
        do {
          gather = absl::StrCat(sources.front(), "/_gather_", k++);
        } while (names.count(gather) > 0);
        names.insert(gather);
        NodeDef g;
        g.set_name(gather);
        g.set_op("NoOp");
        for (const std::string& s : sources) g.add_input(absl::StrCat("^", s));
        trial_device[gather] = device->at(sources.front());
        added.push_back(std::move(g));
        ++gathered;
      }
      const std::set<std::string> drop(sources.begin(), sources.end());
      std::vector<std::string> inputs;
      for (const std::string& in : d.input()) {
        if (!absl::StartsWith(in, "^") || drop.count(in.substr(1)) == 0) inputs.push_back(in);
      }
      inputs.push_back(absl::StrCat("^", gather));
      d.clear_input();
      for (std::string& in : inputs) d.add_input(std::move(in));
    }
  }
  for (NodeDef& g : added) *trial.add_node() = std::move(g);
  if (gathered > 0 && CrossTaskMessages(trial, trial_device, task_of) <
                          CrossTaskMessages(*graph, *device, task_of)) {
    *graph = std::move(trial);
    *device = std::move(trial_device);
    changes.gathered = gathered;
  }
  return changes;
}

}  // namespace graphrun
