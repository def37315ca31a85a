#include "graph/cc/control_flow.h"

#include "absl/strings/str_cat.h"
#include "graph/cc/ops.h"

namespace graphrun {
namespace cc {
namespace {

struct FrameContext {
  std::string name;
  int parallel_iterations;
};
// The loops whose cond or body is being built on this thread, innermost
// last (builders are single-threaded; see scope.h).
thread_local std::vector<FrameContext> frames;

bool AnyEmpty(const std::vector<Output>& v) {
  for (const Output& o : v) {
    if (o.empty()) return true;
  }
  return false;
}

}  // namespace

Output LoopInvariant(const Scope& scope, const Output& value) {
  if (!scope.ok()) return Output();
  if (frames.empty()) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        "LoopInvariant is for the cond or body of a WhileLoop"));
    return Output();
  }
  // The Enter runs in the enclosing frame: no control input from inside.
  return Enter(scope.WithNoControlDependencies(), value, frames.back().name,
               EnterAttrs().IsConstant(true).ParallelIterations(
                   frames.back().parallel_iterations));
}

std::vector<Output> WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars,
                              const LoopCondFn& cond, const LoopBodyFn& body,
                              const WhileLoopOptions& options) {
  if (!scope.ok()) return {};
  if (loop_vars.empty() || AnyEmpty(loop_vars)) {
    scope.UpdateStatus(absl::InvalidArgumentError("WhileLoop needs at least one loop variable"));
    return {};
  }
  // Ops are named "<prefix>/while/Enter" ...; the frame after that scope.
  const Scope ws = scope.NewSubScope("while");
  const std::string frame =
      options.frame_name.empty() ? ws.name_prefix() : options.frame_name;
  // Everything but the Enters runs inside the frame: no control inputs
  // from the caller's scope (they are outside).
  const Scope in = ws.WithNoControlDependencies();
  const size_t n = loop_vars.size();
  const EnterAttrs enter_attrs = EnterAttrs().ParallelIterations(options.parallel_iterations);
  std::vector<Output> merges(n);
  for (size_t i = 0; i < n; ++i) {
    Output enter = Enter(ws.WithOpName("Enter"), loop_vars[i], frame,
                         enter_attrs);
    // The back edge (input 1) is closed below, once NextIteration exists.
    std::vector<Output> merge = Merge(in.WithOpName("Merge"),
                                      {enter, enter});
    if (merge.empty()) return {};
    merges[i] = merge[0];
  }

  frames.push_back({frame, options.parallel_iterations});
  Output pred = cond(in.WithControlDependencies(merges[0]), merges);
  frames.pop_back();
  if (!scope.ok()) return {};
  if (pred.empty()) {
    scope.UpdateStatus(absl::InvalidArgumentError("WhileLoop: cond returned no predicate"));
    return {};
  }
  Output loop_cond = LoopCond(in.WithOpName("LoopCond"), pred);

  std::vector<Output> body_in(n), exits(n);
  std::vector<std::vector<Output>> switches(n);
  for (size_t i = 0; i < n; ++i) {
    switches[i] = Switch(in.WithOpName("Switch"), merges[i], loop_cond);
    if (switches[i].size() != 2) return {};
    body_in[i] = Identity(in.WithOpName("Identity"), switches[i][1]);
    exits[i] = Exit(in.WithOpName("Exit"), switches[i][0]);
  }

  frames.push_back({frame, options.parallel_iterations});
  std::vector<Output> next =
      body(in.WithControlDependencies(body_in[0]), body_in);
  frames.pop_back();
  if (!scope.ok()) return {};
  if (next.size() != n || AnyEmpty(next)) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "WhileLoop: body returned ", next.size(), " values for ", n, " loop variables")));
    return {};
  }
  for (size_t i = 0; i < n; ++i) {
    Output back =
        NextIteration(in.WithOpName("NextIteration"), next[i]);
    if (back.empty()) return {};
    absl::Status s = scope.graph()->UpdateEdge(back.node(), back.index(), merges[i].node(), 1);
    if (!s.ok()) {
      scope.UpdateStatus(s);
      return {};
    }
  }
  return exits;
}

std::vector<Output> Cond(const Scope& scope, const Output& pred, const BranchFn& true_fn,
                         const BranchFn& false_fn) {
  if (!scope.ok()) return {};
  const Scope cs = scope.NewSubScope("cond");
  std::vector<Output> sw = Switch(cs.WithOpName("switch_pred"), pred, pred);
  if (sw.size() != 2) return {};
  // The pivots: live only on their branch's side.
  Output pivot_t = Identity(cs.WithOpName("switch_t"), sw[1]);
  Output pivot_f = Identity(cs.WithOpName("switch_f"), sw[0]);
  std::vector<Output> t = true_fn(cs.WithControlDependencies(pivot_t));
  std::vector<Output> f = false_fn(cs.WithControlDependencies(pivot_f));
  if (!scope.ok()) return {};
  if (t.size() != f.size() || AnyEmpty(t) || AnyEmpty(f)) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "Cond: the branches return ", t.size(), " and ", f.size(), " values")));
    return {};
  }
  std::vector<Output> out;
  for (size_t i = 0; i < t.size(); ++i) {
    std::vector<Output> m = Merge(cs.WithOpName("Merge"), {f[i], t[i]});
    if (m.empty()) return {};
    out.push_back(m[0]);
  }
  return out;
}

}  // namespace cc
}  // namespace graphrun
