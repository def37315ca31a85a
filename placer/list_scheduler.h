// The list scheduler behind every plan of scheduler.h: takes tasks in a
// given (topological) order and either picks each one's device by earliest
// finish time (HEFT and its variants) or follows a fixed assignment
// (EvaluateAssignment, the split and local-search candidates), simulating
// insertion-based timelines, one transfer per tensor and destination, and
// device memory:
//   * a task's persistent bytes are held for the whole step, so a device
//     needs the sum of its tasks' persistent bytes plus its peak of live
//     outputs (an output lives from its producer until its last consumer).
//     Choices are checked in list order as tasks are placed; the finished
//     schedule is then replayed in time (ReplayPeakMemory), which decides;
//   * a colocation group is placed as a unit: when its first member picks a
//     device, the whole group's persistent bytes and (when choosing) room
//     for its largest output are reserved there, so later tasks cannot take
//     the memory the rest of the group needs;
//   * with `defer_sources`, a free source (no inputs, zero cost everywhere:
//     weights, constants) is not scheduled on its own but with its first
//     consumer, on that consumer's device when it can run there.
// Internal to placer/; pure functions.
#ifndef GRAPHRUN_PLACER_LIST_SCHEDULER_H_
#define GRAPHRUN_PLACER_LIST_SCHEDULER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "placer/scheduler.h"
#include "placer/scheduler_graph.h"

namespace graphrun {
namespace placer {
namespace internal {

struct ListScheduleOptions {
  // Device per task to follow; null = choose by earliest finish time.
  const std::vector<int>* fixed = nullptr;
  // One level of lookahead: a choice is judged by how early its consumers
  // could finish.
  bool lookahead = false;
  // PEFT's optimistic cost table (num_tasks x num_devices), added to each
  // finish time when choosing; null = none.
  const std::vector<double>* oct = nullptr;
  // Place free sources with their first consumer (choosing mode only).
  bool defer_sources = false;
  bool respect_memory = true;
  bool record_candidate_finish = false;
  // When not null and a task does not fit on its fixed (or group's)
  // device, set to that device.
  int* failed_device = nullptr;
};

// ResourceExhausted naming the task when a task fits on no device (or not
// on its fixed or group device); InvalidArgument when a fixed device cannot
// run the task.
absl::StatusOr<Schedule> ListSchedule(const SchedProblem& p, const Tables& tb,
                                      const std::vector<int>& order,
                                      const ListScheduleOptions& options);

// Bytes each device needs at its peak when `s` is replayed in time: the
// persistent bytes of its tasks for the whole step, each output from its
// producer's start to its last consumer's finish (to the end of the step
// when nothing reads it), each tensor received for a consumer from that
// consumer's start to its finish (once per tensor and device).
std::vector<int64_t> ReplayPeakMemory(const SchedProblem& p, const Schedule& s);

// Whether `t` is a free source: no inputs, at least one consumer, zero cost
// on every device it can run on.
bool IsFreeSource(const SchedProblem& p, const Tables& tb, int t);

}  // namespace internal
}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_LIST_SCHEDULER_H_
