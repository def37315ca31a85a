// Reference plans to judge the placer by, written apart from its scheduler
// (scheduler.h) so that a comparison does not share its mistakes:
//   * plain HEFT (Topcuoglu et al. 2002): upward rank on mean costs and
//     mean transfer times, earliest finish time with insertion; memory
//     ignored, every edge its own transfer; a colocation group goes where
//     its first member went;
//   * the naive topological fill: accelerators filled one after another
//     in topological order up to their memory, groups kept together, the
//     rest on an overflow device (the CPU).
// Each returns a device per task; EvaluateAssignment() simulates it in the
// placer's model, so every plan is timed the same way.
// Thread-compatible: pure functions.
#ifndef GRAPHRUN_PLACER_BASELINES_H_
#define GRAPHRUN_PLACER_BASELINES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {

// Plain HEFT's assignment and its own estimate of the makespan (which
// ignores memory and counts each edge as a transfer).
struct HeftPlan {
  std::vector<int> device;
  double makespan = 0;
};
HeftPlan PlainHeft(const SchedProblem& problem);

// The naive fill. Order: Kahn's topological order (first come, first
// served), each free source (no inputs, zero cost: a weight) moved to just
// before its first consumer; a colocation group goes with its first
// member. Each task or group goes to the current accelerator if it fits
// there (the plan so far, the rest on `overflow`, simulated within
// memory), else the fill moves on to the next accelerator for good; once
// all are full, and for what an accelerator cannot run, `overflow`.
// InvalidArgument for bad device indices or a task no device runs;
// ResourceExhausted if even the overflow device runs out of memory.
absl::StatusOr<std::vector<int>> TopologicalFill(const SchedProblem& problem,
                                                 const std::vector<int>& accelerators,
                                                 int overflow);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_BASELINES_H_
