// Scope, Output, Operation: the handles of the C++ graph-building API.
//
// A root Scope owns a new Graph; copies and derived scopes (sub-scopes,
// WithOpName, WithDevice, WithControlDependencies) share that graph, the
// per-name counters and the first error. Builders (graph/cc/ops.h,
// graph/cc/const.h, NodeBuilder::Finalize(scope)) never abort on user
// errors: the first error is recorded in the scope and later builders become
// no-ops that return an empty Output, as in TensorFlow:
//
//   Scope root = Scope::NewRootScope();
//   Scope layer = root.NewSubScope("layer1");
//   Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
//   Output y = Relu(layer, x);                        // "layer1/Relu"
//   absl::StatusOr<GraphDef> def = root.ToGraphDef();  // error if any
//
// Outputs and Operations point into the graph: valid while any Scope of
// the root lives. Not thread-safe: build a graph from one thread.
#ifndef GRAPHRUN_GRAPH_CC_SCOPE_H_
#define GRAPHRUN_GRAPH_CC_SCOPE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace cc {

class Output;

// A node of the graph, for ops without outputs (NoOp) and for control
// dependencies. Empty (node() == nullptr) when its builder failed.
class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* node) : node_(node) {}

  Node* node() const { return node_; }
  bool empty() const { return node_ == nullptr; }
  // The node's name; "" when empty.
  std::string name() const;
  int num_outputs() const { return node_ ? node_->num_outputs() : 0; }
  // Output i; an empty Output when this is empty.
  Output output(int i) const;
  // Every output, in order; empty when this is empty.
  std::vector<Output> outputs() const;

 private:
  Node* node_ = nullptr;
};

// One output tensor of a node: (node, index). Empty (node() == nullptr)
// when its builder failed.
class Output {
 public:
  Output() = default;
  Output(Node* node, int index) : node_(node), index_(index) {}

  Node* node() const { return node_; }
  int index() const { return index_; }
  bool empty() const { return node_ == nullptr; }
  Operation op() const { return Operation(node_); }
  // Converts to the Operation that produces it (for control dependencies).
  operator Operation() const { return Operation(node_); }  // NOLINT

  // The element type; DT_INVALID when empty.
  DataType dtype() const;
  // "x:1" (also "x:0" for output 0, as TensorFlow feeds and fetches are
  // written); "" when empty.
  std::string name() const;
  // The shape inference stored for this output (unknown before
  // Scope::ToGraphDef or InferShapes ran).
  PartialShape shape() const;

  bool operator==(const Output& o) const {
    return node_ == o.node_ && index_ == o.index_;
  }
  bool operator!=(const Output& o) const { return !(*this == o); }

 private:
  Node* node_ = nullptr;
  int index_ = 0;
};

class Scope {
 public:
  // A scope with a new, empty Graph and no name prefix.
  static Scope NewRootScope();

  // A scope whose ops are named "<prefix>/<child>/..."; a child name used
  // before in this scope gets a suffix ("layer1_1"), as TensorFlow does.
  // An empty child name keeps the current prefix.
  Scope NewSubScope(absl::string_view child) const;
  // The next op built in the returned scope is named `op_name` (under the
  // prefix); a name already taken gets a suffix ("x_1").
  Scope WithOpName(absl::string_view op_name) const;
  // Ops built in the returned scope request `device` ("/device:GPU:0").
  Scope WithDevice(absl::string_view device) const;
  // Ops built in the returned scope also get control inputs from `deps`
  // (added to those this scope already has).
  Scope WithControlDependencies(absl::Span<const Operation> deps) const;
  Scope WithControlDependencies(const Operation& dep) const;
  Scope WithControlDependencies(const Output& dep) const;
  // The returned scope adds no control dependencies.
  Scope WithNoControlDependencies() const;

  // The first error any builder of this root recorded; OK if none.
  absl::Status status() const;
  bool ok() const;
  // Records `status` if it is an error and no error was recorded before.
  void UpdateStatus(const absl::Status& status) const;

  // The graph every scope of this root builds into.
  Graph* graph() const;

  // The whole graph (not just this sub-scope). Returns the recorded error
  // if there is one; otherwise runs shape inference (a shape error is then
  // recorded and returned) and returns the GraphDef.
  absl::StatusOr<GraphDef> ToGraphDef() const;

  // The name for the next op of type `default_name`: the WithOpName name or
  // else `default_name`, under the prefix, made unique ("MatMul",
  // "MatMul_1"...). Each call reserves the name it returns.
  std::string GetUniqueNameForOp(absl::string_view default_name) const;

  // "layer1/dense"; "" at the root.
  const std::string& name_prefix() const { return prefix_; }
  const std::string& device() const { return device_; }
  const std::vector<Operation>& control_deps() const { return control_deps_; }

 private:
  struct SharedState;
  explicit Scope(std::shared_ptr<SharedState> state);
  // `base` joined under the prefix, made unique in the root's names.
  std::string UniqueName(absl::string_view base) const;

  std::shared_ptr<SharedState> state_;
  std::string prefix_;
  std::string op_name_;
  std::string device_;
  std::vector<Operation> control_deps_;
};

}  // namespace cc
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CC_SCOPE_H_
