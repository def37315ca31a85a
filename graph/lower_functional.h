// LowerFunctionalOps: TensorFlow 2 functional control flow -> v1 control flow.
//
// A TF2 graph calls functions from its library: PartitionedCall,
// StatefulPartitionedCall or a node whose op is a function's name call one;
// If/StatelessIf, Case/StatelessCase and While/StatelessWhile run them as
// branches, loop condition and loop body. This pass rewrites a GraphDef so
// that no node calls a function, the way TensorFlow's lowering passes do, and
// one executor (runtime/executor.h) runs both forms:
//
//  - a call inlines the function body: its nodes join the graph under the
//    call's name ("call/<body node>"), each argument enters through an
//    Identity and each result leaves through one;
//  - If: Switch on the predicate for every input, then/else bodies inlined
//    behind the pivots Identity(Switch(pred, pred):1/:0), Merge per output;
//    Case: a chain of such switches on branch_index == k, the last branch
//    also taking an out-of-range index;
//  - While: per loop variable Enter (frame_name = the While node's name,
//    parallel_iterations from the attr) -> Merge -> Switch on LoopCond(cond)
//    -> body -> NextIteration back into the Merge, Exit on the false side.
//    All loop variables go around the loop (no constant Enters).
//  - the rewritten node keeps its name as an IdentityN over the results (a
//    NoOp when there are none), so "while:1" and "^while" still resolve;
//    its control inputs gate everything the rewrite adds.
//  - body nodes with no inputs get a control edge from the body's first
//    argument (or its pivot), so constants run in the loop frame or branch.
//
// Bodies may contain further calls, conds and loops; they are lowered in
// turn. Errors are InvalidArgument naming the node and function: a missing
// function, arity or type mismatches, an op of no known definition in a body,
// a function that calls itself (directly or through others), a graph that
// inlining would grow past `max_nodes`. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_LOWER_FUNCTIONAL_H_
#define GRAPHRUN_GRAPH_LOWER_FUNCTIONAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

struct LowerFunctionalOptions {
  // Op definitions of the nodes inside function bodies (their output arg
  // names turn "node:out:i" references into output indices).
  const OpRegistry* registry = OpRegistry::Global();
  // Largest graph inlining may produce.
  int64_t max_nodes = int64_t{1} << 22;
};

// While, StatelessWhile, If, StatelessIf, Case, StatelessCase,
// PartitionedCall, StatefulPartitionedCall.
bool IsFunctionalOp(absl::string_view op);

// True if some node of the graph is functional or calls a library function.
bool NeedsLowering(const GraphDef& graph_def);

// The lowered graph: the same nodes, except that each functional node is
// replaced as described above; versions and library are kept.
absl::StatusOr<GraphDef> LowerFunctionalOps(
    const GraphDef& graph_def, const LowerFunctionalOptions& options = {});

// The library functions the graph's nodes use, directly or through other
// functions (func attrs, in attr-name order, and calls by name), each once,
// in the order found.
// Functions that nothing uses are left out; names missing from the library
// are skipped.
std::vector<const FunctionDef*> ReachableFunctions(const GraphDef& graph_def);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_LOWER_FUNCTIONAL_H_
