#include "graph/optimize/graph_view.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphrun {
namespace optimize {

absl::StatusOr<GraphView> GraphView::Create(GraphDef* graph) {
  GraphView v(graph);
  const int n = graph->node_size();
  v.index_.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (!v.index_.emplace(graph->node(i).name(), i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", graph->node(i).name(), "' is defined twice"));
    }
  }
  v.inputs_.resize(n);
  v.consumers_.resize(n);
  v.removed_.assign(n, false);
  for (int i = 0; i < n; ++i) {
    const NodeDef& def = graph->node(i);
    for (int pos = 0; pos < def.input_size(); ++pos) {
      auto id = ParseTensorId(def.input(pos), /*allow_internal_names=*/true);
      if (!id.ok()) return id.status();
      const int p = v.Find(id->node);
      if (p < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", def.name(), "' has input '", def.input(pos), "': no such node"));
      }
      v.inputs_[i].emplace_back(*std::move(id), p);
      v.consumers_[p].emplace_back(i, pos);
    }
  }
  return v;
}

int GraphView::Find(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int GraphView::num_data_inputs(int i) const {
  int k = 0;
  for (const auto& in : inputs_[i]) k += !in.first.IsControl();
  return k;
}

bool GraphView::HasControlConsumers(int i) const {
  for (const auto& [c, pos] : consumers_[i]) {
    if (!removed_[c] && inputs_[c][pos].first.IsControl()) return true;
  }
  return false;
}

void GraphView::SetInput(int consumer, int pos, const TensorId& to) {
  const int old = inputs_[consumer][pos].second;
  if (old >= 0) {
    auto& list = consumers_[old];
    list.erase(std::remove(list.begin(), list.end(), std::make_pair(consumer, pos)),
               list.end());
  }
  // A node added to the GraphDef after the view was made has no index
  // (-1): the input is rewritten, not tracked.
  const int p = Find(to.node);
  inputs_[consumer][pos] = {to, p};
  if (p >= 0) consumers_[p].emplace_back(consumer, pos);
  node(consumer).set_input(pos, to.ToString());
}

void GraphView::TruncateInputs(int i, int from) {
  for (int pos = from; pos < num_inputs(i); ++pos) {
    if (inputs_[i][pos].second < 0) continue;
    auto& list = consumers_[inputs_[i][pos].second];
    list.erase(std::remove(list.begin(), list.end(), std::make_pair(i, pos)), list.end());
  }
  inputs_[i].resize(from);
  NodeDef& def = node(i);
  while (def.input_size() > from) def.mutable_input()->RemoveLast();
}

void GraphView::AddControlInput(int i, int producer) {
  for (const auto& in : inputs_[i]) {
    if (in.first.IsControl() && in.second == producer) return;
  }
  TensorId id{node(producer).name(), kControlSlot};
  const int pos = num_inputs(i);
  node(i).add_input(id.ToString());
  inputs_[i].emplace_back(std::move(id), producer);
  consumers_[producer].emplace_back(i, pos);
}

absl::StatusOr<std::vector<int>> GraphView::TopologicalOrder() const {
  const int n = num_nodes();
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    for (const auto& in : inputs_[i]) {
      if (node(in.second).op() != "NextIteration" && node(in.second).op() != "RefNextIteration") {
        ++pending[i];
      }
    }
  }
  std::vector<int> order;
  order.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const int i = order[k];
    if (node(i).op() == "NextIteration" || node(i).op() == "RefNextIteration") continue;
    for (const auto& [c, pos] : consumers_[i]) {
      if (--pending[c] == 0) order.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    std::vector<std::string> stuck;
    for (int i = 0; i < n && stuck.size() < 5; ++i) {
      if (pending[i] > 0) stuck.push_back(node(i).name());
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "the graph has a cycle through nodes ", absl::StrJoin(stuck, ", ")));
  }
  return order;
}

void GraphView::Compact() {
  auto* nodes = graph_->mutable_node();
  int w = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    if (removed_[i]) continue;
    if (w != i) nodes->SwapElements(w, i);
    ++w;
  }
  while (nodes->size() > w) nodes->RemoveLast();
}

std::string UniqueName(const GraphView& view, const std::vector<NodeDef>& added,
                       const std::string& base) {
  auto taken = [&](const std::string& name) {
    if (view.Find(name) >= 0) return true;
    for (const NodeDef& n : added) {
      if (n.name() == name) return true;
    }
    return false;
  };
  std::string name = base;
  for (int k = 0; taken(name); ++k) name = absl::StrCat(base, "_", k);
  return name;
}

void AddControlInputsOf(const GraphView& view, const std::vector<int>& nodes, NodeDef* to) {
  std::vector<std::string> seen;
  for (int node : nodes) {
    for (int pos = view.num_data_inputs(node); pos < view.num_inputs(node); ++pos) {
      std::string in = view.input(node, pos).ToString();
      if (std::find(seen.begin(), seen.end(), in) != seen.end()) continue;
      to->add_input(in);
      seen.push_back(std::move(in));
    }
  }
}

bool IsControlFlowOrPlumbing(absl::string_view op) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "ControlTrigger",
      "RefEnter", "RefExit", "RefMerge", "RefSwitch", "RefNextIteration",
      "_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv",
      "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "NoOp", "Const"};
  return kOps->contains(op);
}

const AttrValue* FindAttr(const NodeDef& node, absl::string_view name) {
  auto it = node.attr().find(std::string(name));
  return it == node.attr().end() ? nullptr : &it->second;
}

bool IsFloat(const NodeDef& node) {
  const AttrValue* t = FindAttr(node, "T");
  return t != nullptr && t->type() == DT_FLOAT;
}

bool CpuOrUnpinned(const std::string& device) {
  // "/job:worker/task:0" (a replica_device_setter pin) names a task, not a
  // device type: as unpinned as "".
  const std::string d = absl::AsciiStrToLower(device);
  if (absl::StrContains(d, "gpu")) return false;
  return absl::StrContains(d, "cpu") || !absl::StrContains(d, "device:");
}

}  // namespace optimize
}  // namespace graphrun
