// An index over a GraphDef for the optimizer's passes: nodes by name,
// parsed inputs, consumers, topological order, in-place rewiring and
// removal. Internal to graph/optimize.
#ifndef GRAPHRUN_GRAPH_OPTIMIZE_GRAPH_VIEW_H_
#define GRAPHRUN_GRAPH_OPTIMIZE_GRAPH_VIEW_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/import.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace optimize {

class GraphView {
 public:
  // InvalidArgument if an input does not parse or names no node.
  static absl::StatusOr<GraphView> Create(GraphDef* graph);

  int num_nodes() const { return graph_->node_size(); }
  NodeDef& node(int i) { return *graph_->mutable_node(i); }
  const NodeDef& node(int i) const { return graph_->node(i); }
  // -1 if there is no such node.
  int Find(absl::string_view name) const;

  // Input `pos` of node `i`, parsed, and its producer's index.
  const TensorId& input(int i, int pos) const { return inputs_[i][pos].first; }
  int producer(int i, int pos) const { return inputs_[i][pos].second; }
  int num_inputs(int i) const { return static_cast<int>(inputs_[i].size()); }
  // Data inputs come before control inputs in a valid NodeDef.
  int num_data_inputs(int i) const;

  // (consumer, input position) for every input that names node i.
  const std::vector<std::pair<int, int>>& consumers(int i) const { return consumers_[i]; }
  bool HasControlConsumers(int i) const;

  // Points input `pos` of `consumer` at `to` ("y", "y:1" or "^y"). A node
  // the view does not know (added since) is written but not tracked.
  void SetInput(int consumer, int pos, const TensorId& to);
  // Drops node i's inputs from position `from` on.
  void TruncateInputs(int i, int from);
  // Adds a control input "^producer" to node i unless it has it already.
  void AddControlInput(int i, int producer);

  // Kahn's order over data and control inputs, leaving out the back edges
  // out of NextIteration; InvalidArgument on a cycle.
  absl::StatusOr<std::vector<int>> TopologicalOrder() const;

  void MarkRemoved(int i) { removed_[i] = true; }
  bool removed(int i) const { return removed_[i]; }
  // Erases the removed nodes from the GraphDef (the view is then stale).
  void Compact();

 private:
  explicit GraphView(GraphDef* graph) : graph_(graph) {}
  GraphDef* graph_;
  absl::flat_hash_map<std::string, int> index_;
  std::vector<std::vector<std::pair<TensorId, int>>> inputs_;
  std::vector<std::vector<std::pair<int, int>>> consumers_;
  std::vector<bool> removed_;
};

// `base`, or `base`_0, `base`_1, ...: the first name that neither a node of
// the view nor one of `added` (nodes a pass is about to add) has.
std::string UniqueName(const GraphView& view, const std::vector<NodeDef>& added,
                       const std::string& base);

// Appends to `to` the control inputs of each of `nodes`, each once, in
// order (a fused node keeps the ordering its parts had).
void AddControlInputsOf(const GraphView& view, const std::vector<int>& nodes, NodeDef* to);

// Control-flow and runtime plumbing nodes the passes leave alone.
bool IsControlFlowOrPlumbing(absl::string_view op);

// Node attr `name`, or null.
const AttrValue* FindAttr(const NodeDef& node, absl::string_view name);
// The node's "T" is float32.
bool IsFloat(const NodeDef& node);
// Nodes meant for the CPU, or not pinned to a device type (none, or only a
// job and task: the placer then picks the CPU for the fused CPU kernels the
// passes make).
bool CpuOrUnpinned(const std::string& device);

}  // namespace optimize
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OPTIMIZE_GRAPH_VIEW_H_
