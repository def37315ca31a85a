// Identity removal, common-subexpression elimination and pruning.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

bool IsIdentityLike(absl::string_view op) {
  return op == "Identity" || op == "StopGradient" || op == "PreventGradient" ||
         op == "Snapshot";
}

// Control-flow producers. An Identity after one of them is often a pivot:
// nodes that must run only in a cond branch, or once per loop iteration,
// wait on it by a control edge, and a control edge from the Switch itself
// would fire on either branch. Such an Identity stays; one that only passes
// the value on (a lowered function's input or output, as a while loop's
// body has one per loop variable) is bypassed like any other: its consumers
// are in the same frame and see the same value, dead or alive.
bool IsControlFlowProducer(absl::string_view op) {
  return op == "Switch" || op == "RefSwitch" || op == "Merge" || op == "RefMerge" ||
         op == "Enter" || op == "RefEnter" || op == "Exit" || op == "RefExit" ||
         op == "NextIteration" || op == "RefNextIteration" || op == "LoopCond";
}

// Whether output `index` of `src` is a reference (a VariableV2's, or a
// ref-forwarding op's).
bool ReadsAReference(const OptimizerOptions& options, const NodeDef& src, int index) {
  const OpDef* op_def = options.registry == nullptr ? nullptr : options.registry->Find(src.op());
  if (op_def == nullptr || index < 0) return false;
  // Ops with list outputs are not references; a plain output maps by index.
  for (const ArgDef& arg : op_def->outputs) {
    if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) return false;
  }
  return index < static_cast<int>(op_def->outputs.size()) && op_def->outputs[index].is_ref;
}

// Recv outputs stay behind their Identity: the partitioner's transfers are
// matched by name.
// "/job:J" and "/task:T" of a requested device ("" when absent).
std::pair<absl::string_view, absl::string_view> JobAndTask(absl::string_view device) {
  auto field = [device](absl::string_view key) -> absl::string_view {
    const size_t p = device.find(key);
    if (p == absl::string_view::npos) return "";
    const size_t end = device.find('/', p + 1);
    return device.substr(p, end == absl::string_view::npos ? absl::string_view::npos : end - p);
  };
  return {field("/job:"), field("/task:")};
}

// True when both devices name a job and a task, and they differ.
bool OtherTask(absl::string_view a, absl::string_view b) {
  const auto [job_a, task_a] = JobAndTask(a);
  const auto [job_b, task_b] = JobAndTask(b);
  return !job_a.empty() && !job_b.empty() && !task_a.empty() && !task_b.empty() &&
         (job_a != job_b || task_a != task_b);
}

bool MustKeepIdentityAfter(absl::string_view op) { return op == "_Recv" || op == "_HostRecv"; }

// Consumers that do not take over an Identity's control inputs: a Merge
// fires on its first live input, so a control input would not make it dead
// with the Identity (and one from inside a loop body would hold the loop's
// first iteration). Enters are left alone too: they open the loop's frame.
bool TakesNoExtraControlInputs(absl::string_view op) {
  return op == "Merge" || op == "RefMerge" || op == "Enter" || op == "RefEnter";
}

// Points every consumer of node i's output 0 at `to`, and its control
// consumers at `to`'s node.
void Bypass(GraphView* view, int i, const TensorId& to) {
  const auto consumers = view->consumers(i);  // copy: SetInput edits it
  for (const auto& [c, pos] : consumers) {
    if (view->removed(c)) continue;
    if (view->input(c, pos).IsControl()) {
      view->SetInput(c, pos, TensorId{to.node, kControlSlot});
    } else {
      TensorId id = to;
      if (view->input(c, pos).index != 0) id.index = view->input(c, pos).index;
      view->SetInput(c, pos, id);
    }
  }
}

}  // namespace

absl::Status RemoveIdentities(GraphDef* graph, const OptimizerOptions& options,
                              OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  // Identities other nodes are colocated with stay: the placer puts such a
  // group where the Identity can go, which its input's device may not be.
  absl::flat_hash_set<std::string> colocated_with;
  for (int i = 0; i < view.num_nodes(); ++i) {
    const AttrValue* c = optimize::FindAttr(view.node(i), "_class");
    if (c == nullptr) continue;
    for (const std::string& entry : c->list().s()) {
      if (absl::StartsWith(entry, "loc:@")) colocated_with.insert(entry.substr(5));
    }
  }
  for (int i : order) {
    const NodeDef& def = view.node(i);
    if (!IsIdentityLike(def.op()) || options.preserve.contains(def.name())) continue;
    if (colocated_with.contains(def.name())) continue;
    if (view.num_inputs(i) < 1 || view.input(i, 0).IsControl()) continue;
    const int p = view.producer(i, 0);
    const NodeDef& src = view.node(p);
    if (MustKeepIdentityAfter(src.op()) || src.device() != def.device()) continue;
    // An Identity of a reference (a v1 variable's `read`) takes a snapshot:
    // its consumers get a value, not the variable, and on another task they
    // may fetch it as soon as it is made instead of when they run.
    if (ReadsAReference(options, src, view.input(i, 0).index)) continue;
    if (IsControlFlowProducer(src.op()) && view.HasControlConsumers(i)) continue;
    // The Identity's control inputs (a lowered function's inputs wait on
    // the body's pivot) pass to each of its consumers.
    std::vector<int> waits_on;
    for (int pos = 1; pos < view.num_inputs(i); ++pos) waits_on.push_back(view.producer(i, pos));
    if (!waits_on.empty()) {
      bool movable = true;
      for (const auto& [c, pos] : view.consumers(i)) {
        if (view.removed(c)) continue;
        if (TakesNoExtraControlInputs(view.node(c).op())) movable = false;
        // A consumer pinned to another task would get the control inputs
        // as transfers of their own beside the data (a gradient's `tuple`
        // Identity before a ps task's update): one transfer instead.
        if (OtherTask(def.device(), view.node(c).device())) movable = false;
      }
      if (!movable) continue;
      const auto consumers = view.consumers(i);  // copy: AddControlInput edits the lists
      for (const auto& [c, pos] : consumers) {
        if (view.removed(c)) continue;
        for (int w : waits_on) view.AddControlInput(c, w);
      }
    }
    const TensorId to = view.input(i, 0);
    Bypass(&view, i, to);
    view.TruncateInputs(i, 0);
    view.MarkRemoved(i);
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("bypassed '", def.name(), "' (", def.op(), ")"));
      report->merged_into[def.name()] = to.node;
    }
  }
  view.Compact();
  return absl::OkStatus();
}

namespace {

bool IsCommutative(absl::string_view op) {
  return op == "Add" || op == "AddV2" || op == "Mul" || op == "Maximum" || op == "Minimum" ||
         op == "LogicalAnd" || op == "LogicalOr" || op == "Equal" || op == "NotEqual" ||
         op == "SquaredDifference" || op == "AddN";
}

// Op, device, attrs (sorted by name) and inputs (data inputs sorted for
// commutative ops; control inputs as a set).
std::string Signature(const GraphView& view, int i) {
  const NodeDef& def = view.node(i);
  std::string sig = absl::StrCat(def.op(), "\n", def.device(), "\n");
  std::vector<std::string> data, control;
  for (int pos = 0; pos < view.num_inputs(i); ++pos) {
    (view.input(i, pos).IsControl() ? control : data).push_back(view.input(i, pos).ToString());
  }
  if (IsCommutative(def.op())) std::sort(data.begin(), data.end());
  std::sort(control.begin(), control.end());
  control.erase(std::unique(control.begin(), control.end()), control.end());
  for (const auto& s : data) absl::StrAppend(&sig, s, ",");
  sig += "\n";
  for (const auto& s : control) absl::StrAppend(&sig, s, ",");
  sig += "\n";
  std::map<std::string, const AttrValue*> attrs;
  for (const auto& [k, v] : def.attr()) attrs.emplace(k, &v);
  for (const auto& [k, v] : attrs) absl::StrAppend(&sig, k, "=", v->SerializeAsString(), "\n");
  return sig;
}

}  // namespace

absl::Status EliminateCommonSubexpressions(GraphDef* graph, const OptimizerOptions& options,
                                           OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  absl::flat_hash_map<std::string, int> seen;
  for (int i : order) {
    const NodeDef& def = view.node(i);
    const bool is_const = def.op() == "Const";
    if (!is_const && optimize::IsControlFlowOrPlumbing(def.op())) continue;
    const OpDef* op_def = options.registry->Find(def.op());
    if (op_def == nullptr || op_def->is_stateful) continue;
    // Large constants are compared whole: leave those alone.
    if (is_const && def.ByteSizeLong() > 4096) continue;
    auto [it, inserted] = seen.emplace(Signature(view, i), i);
    if (inserted || options.preserve.contains(def.name())) continue;
    const int keep = it->second;
    // Every output of the duplicate maps to the same output of `keep`.
    const auto consumers = view.consumers(i);
    for (const auto& [c, pos] : consumers) {
      TensorId id = view.input(c, pos);
      id.node = view.node(keep).name();
      view.SetInput(c, pos, id);
    }
    view.TruncateInputs(i, 0);
    view.MarkRemoved(i);
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("merged '", def.name(), "' into '",
                                             view.node(keep).name(), "' (", def.op(), ")"));
      report->merged_into[def.name()] = view.node(keep).name();
    }
  }
  view.Compact();
  return absl::OkStatus();
}

namespace {

// A stateless node whose outputs nothing reads, only waited for by control
// edges (the input gradient of a first layer, which v1 optimizers' gradient
// gating groups with the filter gradient), becomes a NoOp that waits for
// what the node's inputs came from: the same order and deadness, without
// the computation (TensorFlow's dependency optimizer does the same). Its
// producers may then be read by nothing in turn: consumers are visited
// before producers.
absl::Status NoOpUnread(GraphDef* graph, const OptimizerOptions& options,
                        OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  std::vector<int> data_readers(view.num_nodes(), 0);
  for (int i = 0; i < view.num_nodes(); ++i) {
    for (int pos = 0; pos < view.num_data_inputs(i); ++pos) ++data_readers[view.producer(i, pos)];
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int i = *it;
    NodeDef& def = view.node(i);
    const OpDef* op_def = options.registry->Find(def.op());
    if (data_readers[i] > 0 || view.consumers(i).empty() || op_def == nullptr ||
        op_def->is_stateful || options.preserve.contains(def.name()) ||
        optimize::IsControlFlowOrPlumbing(def.op()) || def.op() == "Identity" ||
        absl::StartsWith(def.op(), "_")) {
      continue;
    }
    std::vector<std::string> waits;
    for (int pos = 0; pos < view.num_inputs(i); ++pos) {
      const std::string& producer = view.node(view.producer(i, pos)).name();
      const std::string control = absl::StrCat("^", producer);
      if (std::find(waits.begin(), waits.end(), control) == waits.end()) {
        waits.push_back(control);
      }
      if (pos < view.num_data_inputs(i)) --data_readers[view.producer(i, pos)];
    }
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("'", def.name(), "' (", def.op(),
                                             ") became a NoOp: only control edges wait for it"));
    }
    def.set_op("NoOp");
    def.clear_attr();
    def.clear_input();
    for (const std::string& w : waits) def.add_input(w);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PruneUnused(GraphDef* graph, const OptimizerOptions& options,
                         OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  // Reverse reachability from what must stay: preserved nodes, stateful
  // nodes and the runtime's plumbing (feeds, fetches, Send/Recv, loops).
  std::vector<bool> live(view.num_nodes(), false);
  std::vector<int> stack;
  for (int i = 0; i < view.num_nodes(); ++i) {
    const NodeDef& def = view.node(i);
    const OpDef* op_def = options.registry->Find(def.op());
    const bool keep = options.preserve.contains(def.name()) || op_def == nullptr ||
                      op_def->is_stateful ||
                      (optimize::IsControlFlowOrPlumbing(def.op()) && def.op() != "Const" &&
                       def.op() != "NoOp");
    if (keep) {
      live[i] = true;
      stack.push_back(i);
    }
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    for (int pos = 0; pos < view.num_inputs(i); ++pos) {
      const int p = view.producer(i, pos);
      if (!live[p]) {
        live[p] = true;
        stack.push_back(p);
      }
    }
  }
  for (int i = 0; i < view.num_nodes(); ++i) {
    if (live[i]) continue;
    view.MarkRemoved(i);
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("removed '", view.node(i).name(), "' (",
                                             view.node(i).op(), ")"));
    }
  }
  view.Compact();
  return NoOpUnread(graph, options, report);
}

}  // namespace graphrun
