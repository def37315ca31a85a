// Dead-branch pruning. A Switch whose predicate is a constant forwards its
// input to the same output every step; its other output is always dead, and
// so is every node that needs it, but for a Merge, which dies only when all
// its data inputs do. Those nodes are removed. A Merge left with one live
// input (TensorFlow v1's tf.cond: Switch ... Merge) becomes that input:
// bypassed, or an Identity of it where it must keep its name or its control
// inputs; consumers of its value_index (output 1) read a Const of the
// taken input's index instead. The Switch itself is bypassed.
//
// Left alone: Switches inside while-loop frames (a loop's own Switches hang
// on its LoopCond; a cond inside a loop body keeps its form too), preserved
// Switches, and a Switch whose dead nodes would include a preserved node,
// a loop node (Enter, Exit, NextIteration, LoopCond), a ControlTrigger or a
// Merge of more than two inputs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

bool IsEnter(absl::string_view op) { return op == "Enter" || op == "RefEnter"; }
bool IsExit(absl::string_view op) { return op == "Exit" || op == "RefExit"; }
bool IsNextIteration(absl::string_view op) {
  return op == "NextIteration" || op == "RefNextIteration";
}

// Nodes a dead region may not swallow: loop structure and ControlTrigger
// (which runs even when its inputs are dead).
bool StopsPruning(absl::string_view op) {
  return IsEnter(op) || IsExit(op) || IsNextIteration(op) || op == "LoopCond" ||
         op == "ControlTrigger" || op == "RefMerge";
}

// Producers whose control edges need not carry the deadness of the output
// a Merge forwarded (as identity removal).
bool IsControlFlowProducer(absl::string_view op) {
  return op == "Switch" || op == "RefSwitch" || op == "Merge" || op == "RefMerge" || IsEnter(op) ||
         IsExit(op) || IsNextIteration(op) || op == "LoopCond" || op == "_Recv" ||
         op == "_HostRecv";
}

// The value of a predicate: a bool scalar Const, seen through Identity
// nodes.
bool ConstantPredicate(const GraphView& view, int i, bool* value) {
  for (int hops = 0; hops < 16; ++hops) {
    const NodeDef& def = view.node(i);
    if (def.op() == "Identity" && view.num_data_inputs(i) == 1) {
      i = view.producer(i, 0);
      continue;
    }
    if (def.op() != "Const") return false;
    auto v = def.attr().find("value");
    if (v == def.attr().end() || v->second.tensor().dtype() != DT_BOOL) return false;
    auto t = Tensor::FromProto(v->second.tensor());
    if (!t.ok() || t->NumElements() != 1) return false;
    *value = t->flat<bool>()[0];
    return true;
  }
  return false;
}

// Loop-frame depth of each node: Enter adds one, Exit takes one away
// (NextIteration back edges are not followed).
std::vector<int> LoopDepths(const GraphView& view, const std::vector<int>& order) {
  std::vector<int> depth(view.num_nodes(), 0);
  for (int i : order) {
    const std::string& op = view.node(i).op();
    int d = 0;
    for (int pos = 0; pos < view.num_inputs(i); ++pos) {
      const int p = view.producer(i, pos);
      if (!IsNextIteration(view.node(p).op())) d = std::max(d, depth[p]);
    }
    if ((IsEnter(op) || IsExit(op)) && view.num_inputs(i) > 0) {
      d = depth[view.producer(i, 0)] + (IsEnter(op) ? 1 : -1);
    }
    depth[i] = std::max(d, 0);
  }
  return depth;
}

}  // namespace

absl::Status PruneDeadBranches(GraphDef* graph, const OptimizerOptions& options,
                               OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  const std::vector<int> depth = LoopDepths(view, order);
  auto preserved = [&](int i) { return options.preserve.contains(view.node(i).name()); };
  auto note = [&](std::string line) {
    if (report != nullptr) report->changes.push_back(std::move(line));
  };

  // Find the dead nodes, one Switch at a time; a Switch whose dead region
  // hits something that must stay is undone and left alone.
  std::vector<bool> dead(view.num_nodes(), false);
  std::vector<uint8_t> merge_dead(view.num_nodes(), 0);  // bit k: data input k dead
  struct Pruned {
    int sw;
    int dead_port;
    std::vector<int> nodes;
  };
  std::vector<Pruned> pruned;
  for (int s : order) {
    if (view.node(s).op() != "Switch" || dead[s] || depth[s] > 0 || preserved(s) ||
        view.num_data_inputs(s) != 2 || view.input(s, 1).index != 0) {
      continue;
    }
    bool taken;
    if (!ConstantPredicate(view, view.producer(s, 1), &taken)) continue;
    const int dead_port = taken ? 0 : 1;  // output 1 is the true branch
    std::vector<int> newly_dead;
    std::vector<std::pair<int, uint8_t>> merge_log;  // (merge, mask before)
    std::vector<std::pair<int, int>> work;
    for (const auto& [c, pos] : view.consumers(s)) {
      if (view.input(c, pos).index == dead_port) work.emplace_back(c, pos);
    }
    bool ok = true;
    while (ok && !work.empty()) {
      const auto [c, pos] = work.back();
      work.pop_back();
      if (dead[c]) continue;
      const NodeDef& def = view.node(c);
      if (StopsPruning(def.op())) {
        ok = false;
        break;
      }
      if (def.op() == "Merge") {
        if (view.num_data_inputs(c) != 2) {
          ok = false;
          break;
        }
        // A Merge waits for its control inputs but does not die of them.
        if (view.input(c, pos).IsControl()) continue;
        merge_log.emplace_back(c, merge_dead[c]);
        merge_dead[c] |= static_cast<uint8_t>(1 << pos);
        if (merge_dead[c] != 3) continue;
      }
      if (preserved(c)) {
        ok = false;
        break;
      }
      dead[c] = true;
      newly_dead.push_back(c);
      for (const auto& consumer : view.consumers(c)) work.push_back(consumer);
    }
    if (!ok) {
      for (int c : newly_dead) dead[c] = false;
      for (auto it = merge_log.rbegin(); it != merge_log.rend(); ++it) {
        merge_dead[it->first] = it->second;
      }
      continue;
    }
    pruned.push_back({s, dead_port, std::move(newly_dead)});
  }
  if (pruned.empty()) return absl::OkStatus();

  // Remove the dead nodes.
  for (const Pruned& p : pruned) {
    const NodeDef& sw = view.node(p.sw);
    note(absl::StrCat("'", sw.name(), "' (Switch) has a constant predicate: output ", p.dead_port,
                      " is never taken, ", p.nodes.size(), " dead node",
                      p.nodes.size() == 1 ? "" : "s", " removed"));
    for (int c : p.nodes) {
      view.TruncateInputs(c, 0);
      view.MarkRemoved(c);
      note(absl::StrCat("removed '", view.node(c).name(), "' (", view.node(c).op(),
                        "): only runs on output ", p.dead_port, " of '", sw.name(), "'"));
    }
  }

  // Each Switch forwards its input on the live output: its consumers read
  // the input. (Not where a control consumer would then wait on a control-
  // flow node, whose control edges carry other deadness.)
  std::vector<std::pair<int, TensorId>> bypassed_switches;
  for (const Pruned& p : pruned) {
    const int s = p.sw;
    if (view.num_inputs(s) != 2) continue;  // control inputs: keep it
    const TensorId in = view.input(s, 0);
    const auto consumers = view.consumers(s);  // a copy: SetInput edits it
    bool control_consumers = false;
    for (const auto& [c, pos] : consumers) control_consumers |= view.input(c, pos).IsControl();
    if (control_consumers && IsControlFlowProducer(view.node(view.producer(s, 0)).op())) {
      continue;
    }
    for (const auto& [c, pos] : consumers) {
      const TensorId& id = view.input(c, pos);
      if (id.IsControl()) {
        view.SetInput(c, pos, TensorId{in.node, kControlSlot});
      } else if (id.index == 1 - p.dead_port) {
        view.SetInput(c, pos, in);
      }
    }
    bypassed_switches.emplace_back(s, in);
  }

  // Merges with dead inputs: drop control inputs from dead nodes; one live
  // data input left means the Merge is that input.
  std::vector<NodeDef> added;
  for (int m = 0; m < view.num_nodes(); ++m) {
    if (view.removed(m) || view.node(m).op() != "Merge") continue;
    bool touched = merge_dead[m] != 0;
    for (int pos = 0; pos < view.num_inputs(m) && !touched; ++pos) {
      touched = view.removed(view.producer(m, pos));
    }
    if (!touched) continue;
    NodeDef& def = view.node(m);
    const std::string name = def.name();
    std::vector<TensorId> data;
    std::vector<int> data_pos;
    std::vector<int> controls;
    for (int pos = 0; pos < view.num_inputs(m); ++pos) {
      const int p = view.producer(m, pos);
      if (view.input(m, pos).IsControl()) {
        if (!view.removed(p)) controls.push_back(p);
      } else if (!(merge_dead[m] & (1 << pos))) {
        data.push_back(view.input(m, pos));
        data_pos.push_back(pos);
      }
    }
    if (data.size() != 1) {
      // Both data inputs live: only control inputs from dead nodes go.
      std::vector<TensorId> keep = data;
      for (int c : controls) keep.push_back(TensorId{view.node(c).name(), kControlSlot});
      for (size_t k = 0; k < keep.size(); ++k) view.SetInput(m, static_cast<int>(k), keep[k]);
      view.TruncateInputs(m, static_cast<int>(keep.size()));
      note(absl::StrCat("'", name, "' (Merge) no longer waits for removed nodes"));
      continue;
    }
    const TensorId live = data[0];
    const int live_p = view.Find(live.node);
    // value_index: which input the Merge forwarded, now always the same.
    const auto consumers = view.consumers(m);  // a copy
    bool index_used = false, control_consumers = false;
    for (const auto& [c, pos] : consumers) {
      index_used |= view.input(c, pos).index == 1;
      control_consumers |= view.input(c, pos).IsControl();
    }
    if (index_used) {
      std::string const_name = absl::StrCat(name, "/value_index");
      auto taken = [&](const std::string& n) {
        if (view.Find(n) >= 0) return true;
        for (const NodeDef& a : added) {
          if (a.name() == n) return true;
        }
        return false;
      };
      for (int k = 1; taken(const_name); ++k) {
        const_name = absl::StrCat(name, "/value_index_", k);
      }
      NodeDef& c = added.emplace_back();
      c.set_name(const_name);
      c.set_op("Const");
      c.set_device(def.device());
      c.add_input(absl::StrCat("^", live.node));  // runs where the input runs
      (*c.mutable_attr())["dtype"].set_type(DT_INT32);
      Tensor::Scalar<int32_t>(data_pos[0])
          .AsProtoTensorContent((*c.mutable_attr())["value"].mutable_tensor());
      for (const auto& [cons, pos] : consumers) {
        if (view.input(cons, pos).index == 1) view.SetInput(cons, pos, TensorId{const_name, 0});
      }
      note(absl::StrCat("'", name, ":1' (value_index) is the Const '", const_name, "' (",
                        data_pos[0], ")"));
    }
    const bool bypass = !preserved(m) && controls.empty() && live_p >= 0 &&
                        !(control_consumers && IsControlFlowProducer(view.node(live_p).op()));
    if (bypass) {
      const auto rest = view.consumers(m);  // a copy
      for (const auto& [c, pos] : rest) {
        view.SetInput(c, pos,
                      view.input(c, pos).IsControl() ? TensorId{live.node, kControlSlot} : live);
      }
      view.TruncateInputs(m, 0);
      view.MarkRemoved(m);
      note(absl::StrCat("bypassed '", name, "' (Merge): only '", live.ToString(), "' is live"));
      if (report != nullptr) report->merged_into[name] = live.node;
      continue;
    }
    const DataType dtype = def.attr().count("T") ? def.attr().at("T").type() : DT_INVALID;
    view.SetInput(m, 0, live);
    view.TruncateInputs(m, 1);
    for (int c : controls) view.AddControlInput(m, c);
    def.set_op("Identity");
    google::protobuf::Map<std::string, AttrValue> attrs;
    attrs["T"].set_type(dtype);
    *def.mutable_attr() = std::move(attrs);
    note(absl::StrCat("'", name, "' (Merge) became an Identity of '", live.ToString(),
                      "': its other input is dead"));
  }

  // Switches nothing reads any more go.
  for (const auto& [s, in] : bypassed_switches) {
    if (!view.consumers(s).empty()) continue;
    const std::string& name = view.node(s).name();
    view.TruncateInputs(s, 0);
    view.MarkRemoved(s);
    note(absl::StrCat("bypassed '", name, "' (Switch): always forwards '", in.ToString(), "'"));
    if (report != nullptr) report->merged_into[name] = in.node;
  }
  view.Compact();
  for (NodeDef& n : added) *graph->add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace graphrun
