// StepCostRecorder: turns the step stats of traced runs into measured costs
// for the placer (placer/cost_model.h), per node and device: the kernel's
// time and its outputs' bytes. Only the graph's own nodes count; the
// runtime's _Arg/_Retval/_Send/_Recv and the partitioner's helper nodes are
// skipped. Constants and variables also get their persistent bytes. What
// `graphrun run --save_costs` writes.
// Thread-compatible.
#ifndef GRAPHRUN_RUNTIME_STEP_COSTS_H_
#define GRAPHRUN_RUNTIME_STEP_COSTS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "graph/protos/graph.pb.h"
#include "placer/cost_model.h"
#include "runtime/protos/step_stats.pb.h"

namespace graphrun {

class StepCostRecorder {
 public:
  explicit StepCostRecorder(const GraphDef& graph);

  // Adds one measurement per graph node found in `stats`.
  void Add(const StepStats& stats);

  // Every measurement so far (medians per node and device).
  const placer::CostModel& costs() const { return costs_; }

 private:
  absl::flat_hash_map<std::string, std::string> op_of_;  // node -> op
  placer::CostModel costs_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_STEP_COSTS_H_
