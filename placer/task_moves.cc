#include "placer/task_moves.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placer/device_name.h"

namespace graphrun {
namespace placer {
namespace {

// The device `node` gets, or "" when it stays.
absl::StatusOr<std::string> MovedDevice(const NodeDef& node, const TaskMoves& moves) {
  if (node.device().empty()) return std::string();
  absl::StatusOr<DeviceName> name = ParseDeviceName(node.device());
  if (!name.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "': ", name.status().message()));
  }
  if (!name->has_job || !name->has_task) return std::string();
  auto job = moves.find(name->job);
  if (job == moves.end()) return std::string();
  auto to = job->second.find(name->task);
  if (to == job->second.end() || to->second == name->task) return std::string();
  name->task = to->second;
  return DeviceNameToString(*name);
}

}  // namespace

absl::StatusOr<int> MoveTasks(GraphDef* graph, const TaskMoves& moves) {
  // Every new device first, so a bad one leaves the graph as it was.
  std::vector<std::pair<NodeDef*, std::string>> changes;
  auto visit = [&](NodeDef* node) -> absl::Status {
    absl::StatusOr<std::string> device = MovedDevice(*node, moves);
    if (!device.ok()) return device.status();
    if (!device->empty()) changes.emplace_back(node, *std::move(device));
    return absl::OkStatus();
  };
  for (NodeDef& node : *graph->mutable_node()) {
    absl::Status s = visit(&node);
    if (!s.ok()) return s;
  }
  for (FunctionDef& f : *graph->mutable_library()->mutable_function()) {
    for (NodeDef& node : *f.mutable_node_def()) {
      absl::Status s = visit(&node);
      if (!s.ok()) return s;
    }
  }
  for (auto& [node, device] : changes) node->set_device(std::move(device));
  return static_cast<int>(changes.size());
}

absl::StatusOr<std::map<int, int>> MovesWithout(const std::vector<int>& tasks,
                                                const std::vector<int>& lost, bool renumber) {
  const std::set<int> all(tasks.begin(), tasks.end());
  const std::set<int> gone(lost.begin(), lost.end());
  for (int t : gone) {
    if (all.count(t) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "task ", t, " is not one of the job's tasks (", absl::StrJoin(all, ", "), ")"));
    }
  }
  std::vector<int> remaining;
  for (int t : all) {
    if (gone.count(t) == 0) remaining.push_back(t);
  }
  if (remaining.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no task remains: all ", all.size(), " are gone"));
  }
  std::map<int, int> index;  // a remaining task -> the index it keeps or gets
  for (size_t i = 0; i < remaining.size(); ++i) {
    index[remaining[i]] = renumber ? static_cast<int>(i) : remaining[i];
  }
  std::map<int, int> moves;
  for (int t : remaining) moves[t] = index[t];
  int i = 0;
  for (int t : gone) moves[t] = index[remaining[i++ % remaining.size()]];
  return moves;
}

}  // namespace placer
}  // namespace graphrun
