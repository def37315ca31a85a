// Variables a step only reads, as constants of its plan.
//
// A serving step (a SavedModel's signature, an inference graph whose
// weights are resource variables) reads its variables and writes none. Its
// plan can then hold their current values as Consts, so the graph
// optimizer folds what it folds for a frozen graph (Keras' batch-norm
// arithmetic into the convolution weights, constant subexpressions of the
// weights). The session that does this must forget such a plan as soon as
// any step that may write state has run (runtime/direct_session.cc keeps a
// state version for that).
//
//   ReadOnlyStep r = FindReadOnlyStep(full, feeds, fetches, targets);
//   if (!r.writes_state && !r.reads.empty()) {
//     ... fetch r.reads' current values ...
//     absl::StatusOr<std::unique_ptr<Graph>> g = WithReadsAsConstants(full, r.reads, values);
//   }
#ifndef GRAPHRUN_RUNTIME_FROZEN_READS_H_
#define GRAPHRUN_RUNTIME_FROZEN_READS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace graphrun {

struct ReadOnlyStep {
  // Some node the step runs may change state: it assigns, updates, restores
  // or destroys a variable, fills a table, or is an op not known to only
  // read (conservative).
  bool writes_state = false;
  // The step's ReadVariableOps whose handle comes straight (or through
  // Identity) from a VarHandleOp, outside any loop: names, in graph order.
  std::vector<std::string> reads;
};

// What the step of `fetches` (tensor names) and `targets` (node names) runs
// over `full`, given `feeds` (tensor names: their nodes' producers are not
// run).
ReadOnlyStep FindReadOnlyStep(const Graph& full, const std::vector<std::string>& feeds,
                              const std::vector<std::string>& fetches,
                              const std::vector<std::string>& targets);

// True if some node of `step` (a step's pruned graph) may change state, by
// the rule FindReadOnlyStep uses.
bool StepWritesState(const Graph& step);

// `full` with each node of `reads` (ReadVariableOps) replaced by a Const of
// the same name holding `values[i]`, keeping its control inputs.
absl::StatusOr<std::unique_ptr<Graph>> WithReadsAsConstants(const Graph& full,
                                                            const std::vector<std::string>& reads,
                                                            const std::vector<Tensor>& values);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_FROZEN_READS_H_
