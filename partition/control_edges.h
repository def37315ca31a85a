// Fewer control messages between tasks. A control edge from one task to
// another costs a message every step (a _Send/_Recv pair of an empty
// tensor, a wake-up on each side), and a chain of them a hop each: the
// optimizer updates on the ps tasks signal a NoOp on the worker
// ("train/update", pinned there by TensorFlow's replica_device_setter),
// which signals the global step's increment back on a ps task. Two
// rewrites of a placed graph, before it is cut into partitions:
//   - a NoOp whose readers all live on one other task moves to a reader's
//     device when fewer messages cross tasks that way (a NoOp computes
//     nothing: where it runs changes only who waits for whom by message);
//   - the control inputs a node takes from several nodes of another task
//     are gathered by one NoOp on that task ("<first source>/_gather_<k>"),
//     shared by every node of the reader's task that waits for the same
//     sources: one message instead of one per source. Kept only when the
//     graph then sends fewer messages in all.
// Graphs with loops or conditionals are left as they are: there a control
// input also carries deadness and frames tie nodes to their loops.
//
// Thread-compatible: a pure function of its arguments.
#ifndef GRAPHRUN_PARTITION_CONTROL_EDGES_H_
#define GRAPHRUN_PARTITION_CONTROL_EDGES_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

struct ControlEdgeChanges {
  int moved = 0;     // NoOps moved to their readers' task
  int gathered = 0;  // gathering NoOps added
};

// `device` maps every node of `graph` to its full device name; moved and
// added nodes are updated there. `task_of` gives a device's task.
// InvalidArgument for a node without a device.
absl::StatusOr<ControlEdgeChanges> GatherControlEdges(
    GraphDef* graph, std::map<std::string, std::string>* device,
    const std::function<std::string(const std::string&)>& task_of);

}  // namespace graphrun

#endif  // GRAPHRUN_PARTITION_CONTROL_EDGES_H_
