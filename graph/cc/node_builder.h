// NodeBuilder: adds one node of any registered op to a Graph.
//
// The generic layer under the generated op functions (graph/cc/ops.h):
// inputs are given per input arg of the op, in order (a list arg takes a
// list of Outputs); attrs the inputs determine (type attrs such as T, list
// counts such as N, type-list attrs) are inferred when not set; declared
// defaults are written into the NodeDef, as TensorFlow does.
//
//   absl::StatusOr<Node*> mm = NodeBuilder("mm", "MatMul")
//                                  .Input(a).Input(b)
//                                  .Attr("transpose_a", true)
//                                  .Finalize(graph);
//
// Errors name the op and node: "MatMul 'mm': inputs a and b must have the
// same type T, got float and int32". A builder is a value; not thread-safe.
#ifndef GRAPHRUN_GRAPH_CC_NODE_BUILDER_H_
#define GRAPHRUN_GRAPH_CC_NODE_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/cc/scope.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace cc {

// AttrValues from C++ values. A Tensor is stored in the typed field when it
// has at most one element, else as tensor_content (TensorFlow's rule).
AttrValue MakeAttrValue(int64_t v);
AttrValue MakeAttrValue(float v);
AttrValue MakeAttrValue(bool v);
AttrValue MakeAttrValue(absl::string_view v);
AttrValue MakeAttrValue(DataType v);
AttrValue MakeAttrValue(const PartialShape& v);
AttrValue MakeAttrValue(const TensorShape& v);
AttrValue MakeAttrValue(const Tensor& v);
AttrValue MakeAttrValue(absl::Span<const int64_t> v);
AttrValue MakeAttrValue(absl::Span<const int32_t> v);
AttrValue MakeAttrValue(absl::Span<const float> v);
AttrValue MakeAttrValue(const std::vector<bool>& v);
AttrValue MakeAttrValue(absl::Span<const DataType> v);
AttrValue MakeAttrValue(absl::Span<const std::string> v);
AttrValue MakeAttrValue(absl::Span<const PartialShape> v);
AttrValue MakeAttrValue(absl::Span<const TensorShape> v);
AttrValue MakeAttrValue(absl::Span<const Tensor> v);

class NodeBuilder {
 public:
  // `registry` must outlive the builder.
  NodeBuilder(absl::string_view name, absl::string_view op_name,
              const OpRegistry* registry = OpRegistry::Global());

  // The next input arg of the op: one tensor. A list arg given one Output
  // takes it as a list of one.
  NodeBuilder& Input(Output input);
  // The next input arg of the op: a list (an "N * T" or type-list arg).
  NodeBuilder& Input(absl::Span<const Output> inputs);
  NodeBuilder& ControlInput(Operation op);
  NodeBuilder& ControlInputs(absl::Span<const Operation> ops);
  NodeBuilder& Device(absl::string_view device);

  NodeBuilder& Attr(absl::string_view name, AttrValue value);
  NodeBuilder& Attr(absl::string_view name, int64_t v);
  NodeBuilder& Attr(absl::string_view name, int v);
  NodeBuilder& Attr(absl::string_view name, float v);
  NodeBuilder& Attr(absl::string_view name, double v);  // stored as float
  NodeBuilder& Attr(absl::string_view name, bool v);
  NodeBuilder& Attr(absl::string_view name, absl::string_view v);
  NodeBuilder& Attr(absl::string_view name, const char* v);
  NodeBuilder& Attr(absl::string_view name, DataType v);
  NodeBuilder& Attr(absl::string_view name, const PartialShape& v);
  NodeBuilder& Attr(absl::string_view name, const TensorShape& v);
  NodeBuilder& Attr(absl::string_view name, const Tensor& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<int64_t>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<int>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<float>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<bool>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<DataType>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<std::string>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<PartialShape>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<TensorShape>& v);
  NodeBuilder& Attr(absl::string_view name, const std::vector<Tensor>& v);
  // Braced lists: Attr("ksize", {1, 2, 2, 1}), Attr("Tout", {DT_FLOAT}).
  NodeBuilder& Attr(absl::string_view name, std::initializer_list<int> v);
  NodeBuilder& Attr(absl::string_view name, std::initializer_list<int64_t> v);
  NodeBuilder& Attr(absl::string_view name, std::initializer_list<float> v);
  NodeBuilder& Attr(absl::string_view name, std::initializer_list<DataType> v);
  NodeBuilder& Attr(absl::string_view name,
                    std::initializer_list<const char*> v);

  // Checks the inputs and attrs against the op, adds the node and its
  // edges to `graph` and returns it. On error nothing is added to the
  // graph. NotFound for an unknown op, InvalidArgument otherwise.
  absl::StatusOr<Node*> Finalize(Graph* graph) const;

  // Finalizes in `scope`'s graph with the scope's device (unless Device()
  // was set) and control dependencies added. An error is recorded in the
  // scope and gives an empty Operation; so does a scope that has an error
  // already (then nothing is added).
  Operation Finalize(const Scope& scope) const;

  const std::string& name() const { return name_; }
  const std::string& op_name() const { return op_name_; }

 private:
  struct InputArg {
    std::vector<Output> outputs;
    bool is_list = false;
  };
  // "MatMul 'mm': " + message.
  absl::Status Error(absl::StatusCode code, absl::string_view message) const;
  // Builds the NodeDef without touching the graph.
  absl::StatusOr<NodeDef> BuildNodeDef(const Graph& graph,
                                       const OpDef& op_def) const;

  std::string name_;
  std::string op_name_;
  const OpRegistry* registry_;
  std::vector<InputArg> inputs_;
  std::vector<Operation> control_inputs_;
  std::string device_;
  std::map<std::string, AttrValue> attrs_;
};

}  // namespace cc
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CC_NODE_BUILDER_H_
