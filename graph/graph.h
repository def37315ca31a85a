// Graph: the in-memory dataflow graph — nodes, data edges, control edges.
//
// Each Node keeps the NodeDef it came from (so export writes back every
// field, unknown attrs and unknown proto fields included), its op's
// definition, its input/output types and inferred output shapes. Edges are
// owned by the Graph; a data edge joins (src, output k) to (dst, input i), a
// control edge has both slots kControlSlot.
//
// Built by ImportGraphDef (graph/import.h) or the C++ API (graph/cc/);
// read-only afterwards in the runtime, so concurrent reads are safe.
#ifndef GRAPHRUN_GRAPH_GRAPH_H_
#define GRAPHRUN_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attr_slice.h"
#include "graph/op_registry.h"
#include "graph/protos/graph.pb.h"
#include "graph/protos/node_def.pb.h"
#include "graph/tensor_shape.h"

namespace graphrun {

inline constexpr int kControlSlot = -1;

class Node;

struct Edge {
  Node* src;
  int src_output;  // kControlSlot for a control edge
  Node* dst;
  int dst_input;   // kControlSlot for a control edge
  bool IsControl() const { return src_output == kControlSlot; }
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  // The device the NodeDef requests (possibly partial or empty).
  const std::string& requested_device() const { return def_.device(); }
  const NodeDef& def() const { return def_; }
  // nullptr for an op this build does not know (only with allow_unknown_ops).
  const OpDef* op_def() const { return op_def_; }
  AttrSlice attrs() const { return AttrSlice(&def_.attr(), op_def_); }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }
  // Inferred shape of output i (unknown rank before inference).
  const PartialShape& output_shape(int i) const { return output_shapes_[i]; }

  // Edges into / out of this node, data and control, in insertion order.
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge feeding input i; nullptr if none (only while building).
  const Edge* input_edge(int i) const;

  bool IsSource() const { return in_edges_.empty(); }
  bool IsStateful() const { return op_def_ != nullptr && op_def_->is_stateful; }

 private:
  friend class Graph;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  std::vector<PartialShape> output_shapes_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
};

class Graph {
 public:
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node for `def` with types from `op_def` (may be null for an
  // unknown op: then types are unknown). Does not add edges: the inputs in
  // `def` are resolved by AddEdge / by the importer. Fails if the name is
  // taken or the attrs do not fit the op.
  absl::StatusOr<Node*> AddNode(NodeDef def, const OpDef* op_def);
  // Data edge src:src_output -> dst:dst_input. Checks slots and dtypes.
  absl::StatusOr<const Edge*> AddEdge(Node* src, int src_output, Node* dst,
                                      int dst_input);
  const Edge* AddControlEdge(Node* src, Node* dst);
  // Feeds data input `dst_input` of `dst` from new_src:new_src_output
  // instead (same type checks as AddEdge) and rewrites the NodeDef's input
  // string: how a builder closes a while loop's back edge into a Merge.
  // InvalidArgument if that input has no edge yet.
  absl::Status UpdateEdge(Node* new_src, int new_src_output, Node* dst, int dst_input);

  Node* FindNode(absl::string_view name) const;
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  int num_edges() const { return static_cast<int>(edges_.size()); }
  // Nodes in insertion order (== GraphDef order after import).
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  Node* node(int id) const { return nodes_[id].get(); }

  const VersionDef& versions() const { return meta_.versions(); }
  void set_versions(const VersionDef& v) { *meta_.mutable_versions() = v; }
  const FunctionDefLibrary& library() const { return meta_.library(); }
  // Everything of the GraphDef but its nodes (versions, library, debug info,
  // unknown fields), kept as given so export loses nothing.
  void set_meta(GraphDef meta) {
    meta_ = std::move(meta);
    meta_.clear_node();
  }

  void set_output_shapes(Node* node, std::vector<PartialShape> shapes);

  // Kahn's order over data and control edges, leaving out while loops'
  // back edges (those out of NextIteration); InvalidArgument naming the
  // nodes of one cycle if there is one.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;

  // Writes the graph back. Nodes keep their NodeDef exactly as given.
  GraphDef ToGraphDef() const;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Edge>> edges_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  GraphDef meta_;
};

// Input and output types of a node of `op_def` with these attrs.
// InvalidArgument when an attr the signature needs is missing or wrong.
absl::Status ComputeArgTypes(const OpDef& op_def, const AttrSlice& attrs,
                             std::vector<DataType>* input_types,
                             std::vector<DataType>* output_types);

// Checks `attrs` against `op_def`: every declared attr present (or
// defaulted), of its declared type, within allowed values and minimums.
// Attrs the op does not declare are allowed (kept for round trips).
absl::Status ValidateAttrs(const OpDef& op_def, const AttrMap& attrs);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_GRAPH_H_
