// WhileLoop and Cond: v1 control flow from C++, in the shape TensorFlow's
// tf.while_loop / tf.cond (control flow v1) give it, so the graphs run on
// graphrun's executor and load in TensorFlow.
//
//   Scope root = Scope::NewRootScope();
//   Output n = Placeholder(root.WithOpName("n"), DT_INT32);
//   auto outs = WhileLoop(
//       root.NewSubScope("count"), {Const(root, 0)},
//       [&](const Scope& s, const std::vector<Output>& v) { return Less(s, v[0], Enter(...)); },
//       [&](const Scope& s, const std::vector<Output>& v) {
//         return std::vector<Output>{Add(s, v[0], Const(s, 1))};
//       });
//
// Inside `cond` and `body`, ops built in the given scope run in the loop's
// frame: the scope carries a control input from the iteration's pivot, so
// even constants run once per iteration. A value from outside the loop must
// enter the frame: use LoopInvariant(scope, value) (a constant Enter). Errors
// are recorded in the scope, as for every builder.
#ifndef GRAPHRUN_GRAPH_CC_CONTROL_FLOW_H_
#define GRAPHRUN_GRAPH_CC_CONTROL_FLOW_H_

#include <functional>
#include <string>
#include <vector>

#include "graph/cc/scope.h"

namespace graphrun {
namespace cc {

using LoopCondFn = std::function<Output(const Scope&, const std::vector<Output>&)>;
using LoopBodyFn =
    std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>;
using BranchFn = std::function<std::vector<Output>(const Scope&)>;

struct WhileLoopOptions {
  // The frame's name; "" = the scope's prefix + "/while".
  std::string frame_name;
  int parallel_iterations = 10;
};

// The loop variables' values after the last iteration (one Exit each);
// empty on error.
std::vector<Output> WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars,
                              const LoopCondFn& cond, const LoopBodyFn& body,
                              const WhileLoopOptions& options = {});

// Inside a WhileLoop's cond or body: `value` from outside the loop, entered
// into the current frame as a loop invariant.
Output LoopInvariant(const Scope& scope, const Output& value);

// pred ? true_fn() : false_fn(), one Merge per output; both branches must
// return as many outputs. Ops built in a branch's scope run only when that
// branch is taken (their scope carries the branch's pivot).
std::vector<Output> Cond(const Scope& scope, const Output& pred, const BranchFn& true_fn,
                         const BranchFn& false_fn);

}  // namespace cc
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CC_CONTROL_FLOW_H_
