// Moving a graph's nodes from one task of a job to another: what training
// with the remaining workers does once a worker task is gone (`graphrun
// train --recover_with=remaining`), the gone task's nodes taken over by the
// tasks left.
//
// Thread-compatible: pure functions.
#ifndef GRAPHRUN_PLACER_TASK_MOVES_H_
#define GRAPHRUN_PLACER_TASK_MOVES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace placer {

// Task index -> the index its nodes get, per job name.
using TaskMoves = std::map<std::string, std::map<int, int>>;

// Gives every node (the function library's too) whose device names job J
// and a task T with moves[J][T] = U the task U, its other fields kept
// ("/job:worker/task:1/device:CPU:0" -> "/job:worker/task:0/device:CPU:0").
// Nodes that name no task, or a task not in `moves`, keep their device.
// Returns how many nodes moved; InvalidArgument naming the node when a
// device does not parse (the graph is then unchanged).
absl::StatusOr<int> MoveTasks(GraphDef* graph, const TaskMoves& moves);

// The moves of one job that leave out `lost` of its `tasks` (task indices):
// the i-th lost task (in index order) goes to the (i mod n)-th remaining
// one; with `renumber` the remaining tasks also become 0..n-1 in order
// (tasks started anew, which take any index), else they keep theirs.
// FailedPrecondition when no task remains; InvalidArgument when a lost
// task is not among `tasks`.
absl::StatusOr<std::map<int, int>> MovesWithout(const std::vector<int>& tasks,
                                                const std::vector<int>& lost, bool renumber);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_TASK_MOVES_H_
