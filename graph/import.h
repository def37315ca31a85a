// ImportGraphDef: GraphDef -> validated Graph, and the node-input syntax.
//
// Validation, each failure an InvalidArgument that names the node and op:
// node names (syntax, duplicates), input references ("x", "x:1", "^x";
// data inputs before control inputs), unknown ops (unless allowed), attrs
// against the op's definition, input count and dtypes, dangling inputs,
// colocation targets, cycles, and shape inference (huge or inconsistent
// shapes, constants that do not decode). Function calls and functional
// If/Case/While are lowered first (graph/lower_functional.h), so the Graph
// holds their v1 form. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_IMPORT_H_
#define GRAPHRUN_GRAPH_IMPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

// A parsed node input: node name and output index (kControlSlot for "^x").
struct TensorId {
  std::string node;
  int index = 0;
  bool IsControl() const { return index == kControlSlot; }
  // "x" for index 0, "x:k", "^x" — TensorFlow's writing.
  std::string ToString() const;
  bool operator==(const TensorId& o) const {
    return node == o.node && index == o.index;
  }
};

// Parses "x", "x:3" and "^x". InvalidArgument for "", "^", "x:", "x:abc",
// "^x:1", negative or oversized indices, and names TensorFlow would reject.
// With `allow_internal_names`, names may also start with '_'.
absl::StatusOr<TensorId> ParseTensorId(absl::string_view input,
                                       bool allow_internal_names = false);

// The node an input of a NodeDef names: "x" for "x", "x:3" and "^x". No
// checks (ParseTensorId checks); for inputs of graphs already imported or
// written by graphrun.
absl::string_view InputNodeName(absl::string_view input);

// True if `name` is a valid node name: [A-Za-z0-9.][A-Za-z0-9_.\-/>]*.
bool IsValidNodeName(absl::string_view name);

struct ImportOptions {
  const OpRegistry* registry = OpRegistry::Global();
  // Keep nodes whose op is not registered (types unknown, not checked)
  // instead of failing: for `graphrun inspect`, which reports them.
  bool allow_unknown_ops = false;
  // Run shape inference (and constant decoding) after building the graph.
  bool infer_shapes = true;
  // Accept names that start with '_' (the runtime's own nodes: _Arg, _Send).
  bool allow_internal_names = false;
  // Largest constant that may be declared in the graph.
  int64_t max_constant_bytes = int64_t{4} << 30;
  // Inline function calls and lower If/Case/While to v1 control flow
  // (graph/lower_functional.h) before anything else. Off, a node that calls
  // a library function is an error unless unknown ops are allowed.
  bool lower_functional_ops = true;
  // Then turn collective ops whose members all sit in the graph into edges
  // between their devices (graph/lower_collectives.h).
  bool lower_collective_ops = true;
};

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(
    const GraphDef& graph_def, const ImportOptions& options = {});

// Runs each node's shape function in topological order and stores the
// output shapes. Errors name the node, its op and its input shapes.
absl::Status InferShapes(Graph* graph, const ImportOptions& options = {});

// "node 'x' (MatMul)" — how errors name a node.
std::string NodeLabel(const Node& node);
std::string NodeLabel(const NodeDef& node);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_IMPORT_H_
