// Plans for memory pressure, beyond list scheduling (scheduler.h):
//   * contiguous splits: the graph in a topological order of units (a
//     colocation group, or a task, with the free sources only it consumes)
//     cut into consecutive segments, one device each, chosen by dynamic
//     programming over (units covered, devices considered) to minimize the
//     serial estimate "work on the segment's device + what it receives",
//     subject to each segment's memory (its persistent bytes plus the peak
//     of live outputs along the order) fitting its device; the devices are
//     taken fastest first, each at most once. A few unit orders are tried
//     and every plan is simulated by the list scheduler;
//   * local search: moves of one unit to a device one of its neighbours is
//     on, kept while the simulated makespan drops and memory fits, within a
//     budget of simulations.
// Internal to placer/; pure functions.
#ifndef GRAPHRUN_PLACER_PLAN_SEARCH_H_
#define GRAPHRUN_PLACER_PLAN_SEARCH_H_

#include <vector>

#include "absl/status/statusor.h"
#include "placer/scheduler.h"
#include "placer/scheduler_graph.h"

namespace graphrun {
namespace placer {
namespace internal {

// The units of a problem: each task in exactly one unit; a colocation
// group with its members, a free source consumed by one unit only with
// that unit.
struct Units {
  std::vector<std::vector<int>> members;  // tasks per unit
  std::vector<int> of;                    // task -> unit
};
Units MakeUnits(const SchedProblem& p, const Tables& tb);

// The best contiguous split found, with the (topological) task order its
// schedule was simulated in, or ResourceExhausted when none fits. `order`
// is HEFT's, one of the orders tried.
struct SplitPlan {
  Schedule schedule;
  std::vector<int> order;
};
absl::StatusOr<SplitPlan> ContiguousSplit(const SchedProblem& p, const Tables& tb,
                                          const Units& units, const std::vector<int>& order,
                                          bool respect_memory);

// Improves `start` (a simulated plan) by moving units between devices,
// each candidate simulated in `order`; returns the best plan seen, with
// `searched` marking the tasks that moved. At most `max_evaluations`
// simulations.
Schedule LocalSearch(const SchedProblem& p, const Tables& tb, const Units& units,
                     const std::vector<int>& order, Schedule start, int max_evaluations,
                     bool respect_memory);

// Whether memory can bind: some device with a capacity smaller than the
// sum of every task's persistent and output bytes.
bool MemoryCanBind(const SchedProblem& p);

}  // namespace internal
}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_PLAN_SEARCH_H_
