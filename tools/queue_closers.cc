#include "tools/queue_closers.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "graph/import.h"

namespace graphrun {
namespace {

const NodeDef* Find(const GraphDef& graph, absl::string_view name) {
  for (const NodeDef& n : graph.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

bool CancelsPendingEnqueues(const NodeDef& close) {
  auto it = close.attr().find("cancel_pending_enqueues");
  return it != close.attr().end() && it->second.b();
}

}  // namespace

std::vector<std::string> QueueCloseOps(const GraphDef& graph,
                                       const std::vector<std::string>& runner_ops) {
  std::vector<std::string> queues;
  std::vector<std::string> closers;
  for (const std::string& op : runner_ops) {
    const NodeDef* runner = Find(graph, op);
    if (runner == nullptr || !absl::StartsWith(runner->op(), "QueueEnqueue") ||
        runner->input_size() == 0) {
      continue;
    }
    const std::string queue(InputNodeName(runner->input(0)));
    if (std::find(queues.begin(), queues.end(), queue) != queues.end()) continue;
    queues.push_back(queue);
    const NodeDef* best = nullptr;
    for (const NodeDef& n : graph.node()) {
      if ((n.op() != "QueueCloseV2" && n.op() != "QueueClose") || n.input_size() == 0 ||
          InputNodeName(n.input(0)) != queue) {
        continue;
      }
      if (best == nullptr || (CancelsPendingEnqueues(n) && !CancelsPendingEnqueues(*best))) {
        best = &n;
      }
    }
    if (best != nullptr) closers.push_back(best->name());
  }
  return closers;
}

}  // namespace graphrun
