// LowerCollectiveOps: TensorFlow's collective ops, held whole in one graph,
// -> plain dataflow between the members' devices.
//
// TensorFlow runs a collective (CollectiveReduceV2, CollectiveGatherV2,
// CollectiveBcastSendV2/RecvV2 and their v1 forms CollectiveReduce,
// CollectiveGather, CollectiveBcastSend/Recv) by meeting at run time: each
// member, on its own device, waits for the others of its instance (group
// key, instance key) and they exchange through a collective executor. When
// every member of an instance sits in the graph being run (the members on
// the CPU devices or GPUs of one process, or on worker tasks driven by one
// client), this pass turns the meeting into edges, and the partitioner's
// Send/Recv pairs carry them:
//
//  - members are ranked by their device names (CollectiveRankBefore,
//    TensorFlow's default ranking for a group on CPUs);
//  - reduce: rank 0's device merges the members' inputs in rank order (AddN
//    for Add, a chain of Mul / Minimum / Maximum), then divides by the group
//    size for final_op Div (TensorFlow's Div: integers truncate);
//  - gather: rank 0's device concatenates the inputs along axis 0 in rank
//    order;
//  - broadcast: each receiver reshapes the sender's tensor to its `shape`
//    (an element count that differs fails at run time naming the receiver);
//  - every member keeps its name and device as an Identity (a receiver as
//    the Reshape) of the result, so fetches, `name:0` and `^name` resolve;
//    a member's control inputs gate its contribution; the keys and ordering
//    tokens are dropped (the edges order the exchange).
//
// A member carrying the attr kRunTimeCollectiveAttr (graphrun's own
// replicas over worker tasks, whose gradients go round a ring) is left as
// it is too.
//
// An instance whose members the graph does not all hold (between-graph
// collectives, one client per worker, as MultiWorkerMirroredStrategy runs
// them), and a member whose keys are not constants, are left as they are:
// their kernels meet at run time (kernels/collective.h).
//
// Errors are InvalidArgument naming the node, its group and instance: more
// members than the group's size, members on the same device or with
// different types, merge or final ops, an unknown merge_op/final_op, a
// broadcast with no sender or two senders.
// Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_LOWER_COLLECTIVES_H_
#define GRAPHRUN_GRAPH_LOWER_COLLECTIVES_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

inline constexpr char kRunTimeCollectiveAttr[] = "_run_time_collective";
// A float type attr on a collective reduce that goes round a ring: floats
// travel in this type (DT_HALF, DT_BFLOAT16), summed in float32.
inline constexpr char kCollectiveWireFloatAttr[] = "_wire_float";

// The order in which TensorFlow ranks the members of a group of CPUs: by
// device name, job as text and replica, task, device type and id as
// numbers ("/job:worker/replica:0/task:2" before ".../task:10"); names
// that do not parse compare as text.
bool CollectiveRankBefore(absl::string_view a, absl::string_view b);

// The eight collective ops above.
bool IsCollectiveOp(absl::string_view op);

// True if some node of the graph is a collective op.
bool HasCollectiveOps(const GraphDef& graph_def);

// The graph with each collective instance lowered as described above; other
// nodes, versions and library are kept.
absl::StatusOr<GraphDef> LowerCollectiveOps(const GraphDef& graph_def);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_LOWER_COLLECTIVES_H_
