// Collectives that meet at run time: the members of one instance of a
// TensorFlow collective op (CollectiveReduceV2, CollectiveGatherV2,
// CollectiveBcastSendV2/RecvV2 and their v1 forms) held by the graphs of
// several clients, one per worker task, as MultiWorkerMirroredStrategy
// runs them. (An instance the graph holds whole never gets here: it is
// lowered to edges at import, graph/lower_collectives.h.)
//
// Each member's kernel hands its call to the CollectiveExecutor its device
// keeps (ResourceMgr container kCollectiveContainer, name
// kCollectiveExecutor); a worker task installs one on each of its devices
// (distributed/worker_collectives.h). The executor sends the call to the
// group's meeting place, which waits until the group's `group_size`
// members of the instance have come, ranks them by device name (as
// TensorFlow ranks a group of CPUs), combines their inputs
// (CombineCollective) and answers each member with the result.
//
// An instance runs once per step: the k-th execution of (group key,
// instance key) on one device meets the k-th execution on the others, so
// the clients step in lockstep, as synchronous training does.
#ifndef GRAPHRUN_KERNELS_COLLECTIVE_H_
#define GRAPHRUN_KERNELS_COLLECTIVE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "graph/variant.h"
#include "kernels/op_kernel.h"

namespace graphrun {

inline constexpr char kCollectiveContainer[] = "_collective";
inline constexpr char kCollectiveExecutor[] = "executor";

enum class CollectiveKind { kReduce = 0, kGather = 1, kBcastSend = 2, kBcastRecv = 3 };

// "reduce", "gather", "broadcast send", "broadcast receive".
const char* CollectiveKindName(CollectiveKind kind);

// One member's part in one execution of an instance.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kReduce;
  std::string node;    // the member's node name
  std::string device;  // its device's full name
  // Where the executions are counted and met: "" for TensorFlow's graphs
  // (the clients of one group count alike as long as they step in
  // lockstep); graphrun's own replicas, whose graphs all belong to one
  // session, the session's handle, so a recovered run's new session counts
  // afresh on every task.
  std::string scope;
  int64_t group_size = 0;
  int64_t group_key = 0;
  int64_t instance_key = 0;
  // Which execution of the instance on this device (0, 1, ...): set by the
  // executor.
  int64_t execution = 0;
  DataType dtype = DT_FLOAT;
  std::string merge_op;  // reduce: Add, Mul, Min, Max
  std::string final_op;  // reduce: Id, Div
  TensorShape shape;     // broadcast receive: the shape it expects
  // The op's communication_hint: "ring" sends a float, double, int32 or
  // int64 Add reduce over a ring between the members' tasks
  // (distributed/ring_allreduce.h) instead of through the group's leader.
  std::string communication_hint;
  // DT_HALF or DT_BFLOAT16: a float reduce over a ring travels in this
  // type, summed in float32 (the node's _wire_float attr, which graphrun's
  // own replicas set); DT_FLOAT: exact.
  DataType wire_float = DT_FLOAT;
  // 0: wait for the others as long as it takes.
  absl::Duration timeout = absl::ZeroDuration();

  // "node 'x' (CollectiveReduceV2 reduce of group 1, instance 2, execution
  // 0, on /job:...)" for messages.
  std::string Describe() const;
};

class CollectiveExecutor : public ResourceBase {
 public:
  using Done = std::function<void(absl::StatusOr<Tensor>)>;
  // Runs `call` with this member's `input` (empty for a broadcast
  // receive); `done` gets the member's output, once, on any thread. A
  // cancelled `cancellation` (the step ended) fails the call, and with it
  // the instance for its other members.
  virtual void Run(CollectiveCall call, Tensor input, CancellationManager* cancellation,
                   Done done) = 0;
};

// Checks that `members` (one per member) are one instance's calls that fit
// together: the same kind, dtype, group size, merge and final ops, one
// sender for a broadcast; InvalidArgument naming the two members that
// disagree.
absl::Status CheckCollectiveMembers(const std::vector<const CollectiveCall*>& members);

// The result every member of a reduce or gather gets, from the inputs in
// rank order: reduce merges them elementwise in rank order (Add, Mul, Min,
// Max) and divides by their number for final_op Div (integers truncate, as
// TensorFlow's Div); gather concatenates them along dimension 0 (every
// input of rank >= 1, the same dimensions after the first). InvalidArgument
// naming `call`'s instance for shapes that do not agree or a dtype the op
// does not take.
absl::StatusOr<Tensor> CombineCollective(const CollectiveCall& call,
                                         const std::vector<Tensor>& by_rank);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_COLLECTIVE_H_
