// InlineFunctionBody: one FunctionDef body written out as graph NodeDefs.
//
// The building block of LowerFunctionalOps (graph/lower_functional.h, whose
// tests cover it). Each argument enters through an Identity
// ("<prefix>/input/<arg>"), each body node becomes "<prefix>/<node>" with
// its inputs rewritten from function syntax ("arg", "node:out_arg:i", "^node")
// to graph syntax ("node:k", output arg names resolved through the op's
// definition or the called function's signature), attr placeholders bound
// from the call's attrs, colocations renamed; each result leaves through an
// Identity ("<prefix>/output/<result>"). Nodes with no inputs get a control
// edge from the site's gate (or the first argument), so they run in the
// frame or branch the call is in. Nested calls and control flow in the body
// are copied as they are, for the caller to lower in turn.
//
// Errors are InvalidArgument (Unimplemented for list-typed arguments or
// results) naming the body node; callers add the function's name.
// Stateless; thread-compatible (the sink is the caller's).
#ifndef GRAPHRUN_GRAPH_FUNCTION_INLINER_H_
#define GRAPHRUN_GRAPH_FUNCTION_INLINER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attr_slice.h"
#include "graph/op_registry.h"
#include "graph/protos/function.pb.h"
#include "graph/protos/node_def.pb.h"

namespace graphrun {

// Where the inlined nodes go: the graph under construction.
class NodeSink {
 public:
  virtual ~NodeSink() = default;
  // `base`, or `base_1`, `base_2`...: a name no node has yet, now taken.
  virtual std::string UniqueName(absl::string_view base) = 0;
  // Appends a node; the pointer stays valid while the sink lives.
  virtual NodeDef* Add(NodeDef node) = 0;
};

// What a body is inlined into.
struct InlineSite {
  std::string prefix;                       // body node "n" -> "prefix/n"
  std::vector<std::string> args;            // one tensor per argument
  std::vector<std::string> control_inputs;  // nodes the whole body waits for
  std::string device;                       // for body nodes without one
  const AttrMap* attrs = nullptr;           // the call's attrs (required)
};

struct InlinedFunction {
  std::vector<std::string> outputs;  // one tensor per result, in order
  std::vector<DataType> output_types;
  std::vector<std::string> control_outputs;  // nodes (control_ret)
};

// Library functions by name.
using FunctionMap = absl::flat_hash_map<std::string, const FunctionDef*>;

absl::StatusOr<InlinedFunction> InlineFunctionBody(const FunctionDef& f,
                                                   const InlineSite& site,
                                                   const FunctionMap& library,
                                                   const OpRegistry& registry,
                                                   NodeSink* sink);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_FUNCTION_INLINER_H_
