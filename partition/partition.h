// Partition: cuts a placed Graph into one GraphDef per device, joined by
// _Send/_Recv pairs (TensorFlow's graph_partition).
//
// Sits between the placer and the runtime: every node already has its
// device; each partition is then run by one executor, and a Send and its Recv
// meet in the step's Rendezvous under the key that their attrs spell (see
// graph/rendezvous_key.h). A pure function of its inputs: the same graph and
// options give byte-identical partitions. Thread-safe (no shared state);
// the option callbacks are called from the calling thread only.
#ifndef GRAPHRUN_PARTITION_PARTITION_H_
#define GRAPHRUN_PARTITION_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/protos/graph.pb.h"
#include "graph/rendezvous_key.h"  // ParsedRendezvousKey, ParseRendezvousKey

namespace graphrun {

struct PartitionOptions {
  // Partition key of a node: its assigned full device name
  // ("/job:J/replica:R/task:T/device:TYPE:ID"). Default (null):
  // node.def().device(). Either way it must be a complete device name.
  std::function<std::string(const Node&)> node_to_loc;

  // Known device names; when non-empty, a node whose location is not among
  // them is an error.
  std::vector<std::string> devices;

  // Incarnation per device (TensorFlow's send_device_incarnation, written
  // to the int attr as its two's-complement int64). Default: 1 for all, as
  // TensorFlow's DirectSession.
  std::function<uint64_t(const std::string& device)> get_incarnation;

  // Task of a device ("/job:w/replica:0/task:1"); only edges between
  // different tasks are compressed. Default: the name up to "/device:".
  std::function<std::string(const std::string& device)> task_of;

  // Lossy wire format for DT_FLOAT data edges between devices of different
  // tasks: a Cast to half (kFp16) or to bfloat16 by truncation
  // (kBf16Truncate, TensorFlow's enable_bfloat16_sendrecv) before the Send,
  // and a Cast back to float after the Recv. Edges whose either end lives in
  // host memory are never compressed (TensorFlow would use _HostCast,
  // which graphrun does not have).
  enum class WireCompression { kNone, kFp16, kBf16Truncate };
  WireCompression compression = WireCompression::kNone;
  // With a lossy compression: only gradient edges (partition/wire_policy.h)
  // are compressed, the `gradients` policy. Either way, every transfer
  // between tasks that carries a gradient has the attr kGradientAttr on its
  // _Send and _Recv.
  bool gradients_only = false;

  // Memory types: whether input (is_output false) or output `index` of
  // `node` lives in host memory on `device`. Asked for non-CPU devices only
  // (CPU devices are all host memory). Null: everything in device memory.
  // A host-memory end uses _HostSend / _HostRecv; a producer and consumer
  // on the same non-CPU device that disagree get a same-device pair.
  std::function<bool(const Node& node, bool is_output, int index,
                     const std::string& device)>
      host_memory;
};

struct PartitionStats {
  int data_sends = 0;        // _Send/_HostSend nodes carrying a data edge
  int control_sends = 0;     // _Send nodes carrying a control edge
  int compressed_edges = 0;  // Send/Recv pairs with a Cast on each side
  int exact_edges = 0;  // float edges between tasks kept exact (gradients_only)
  // One line per float edge between tasks under a lossy compression:
  // "edge_3_mlp/w1/read /job:ps/.../CPU:0 -> /job:worker/.../CPU:0: exact (not a gradient)".
  std::vector<std::string> wire_log;
  int control_loops = 0;     // (frame, device) control-loop state machines
};

// Splits `graph` by location; the result maps each location that holds at
// least one node to its GraphDef. In each partition:
//  - every node of that location, as a copy of its NodeDef with `device`
//    set to the location, inputs rebuilt (data inputs in slot order, then
//    control inputs) and `_class` "loc:@x" entries naming nodes of other
//    partitions dropped;
//  - for a data edge between partitions, a _Send (attr T) in the source
//    partition and a _Recv (attr tensor_type) in the destination, with
//    tensor_name "edge_<n>_<src>" (n: the edge's index in the walk over
//    nodes in graph order and their in-edges in order), send_device,
//    send_device_incarnation, recv_device and client_terminated = false.
//    One pair per (source tensor, destination partition, host/device
//    memory of the recv), shared by every consumer there; ref-typed
//    outputs get one pair per edge, and the recv then waits (control
//    inputs) for the consumer's other inputs;
//  - for a control edge between partitions: Const(float, shape [0]) <- ^src
//    and a _Send in the source partition, a _Recv and an Identity in the
//    destination, and ^identity on the consumer; one per (src, partition).
//  - for a while-loop frame cut across locations, on every location that
//    receives a value inside the frame: a control loop (Enter, Merge,
//    Switch on the frame's LoopCond, received from its location, and
//    NextIteration; named "_cloop/<frame>/_<k>") whose Merge is a control
//    input of each of the frame's recvs there, so they run once per
//    iteration and the location stops when the loop does. Its Enter is fed
//    a token that is dead iff the loop's inputs are, so a loop that never
//    runs leaves nothing waiting. A NextIteration is moved to the location
//    of the Merge it feeds;
// New nodes are named "<src name>/_<k>", k counting up per call and skipping
// names the graph already has. Each GraphDef carries the graph's versions
// and function library, and re-imports with ImportGraphDef when
// allow_internal_names is set.
// InvalidArgument naming the node and op for a node without a location, an
// incomplete device name, a location outside `options.devices`, a missing
// input, a ref input fed from another partition, an edge of unknown type,
// or a loop frame cut across locations without a LoopCond.
// `stats`, if not null, receives the counts (only on success).
absl::StatusOr<std::map<std::string, GraphDef>> Partition(
    const Graph& graph, const PartitionOptions& options,
    PartitionStats* stats = nullptr);

// TYPE of a complete "/job:J/replica:R/task:T/device:TYPE:ID"; "" when
// `name` is not of that form (partial, legacy or malformed).
std::string DeviceTypeOfFullName(absl::string_view name);

// The task of a device, PartitionOptions::task_of's default: the name up to
// "/device:".
std::string DefaultTaskOf(const std::string& device);

// The rendezvous key exactly as TensorFlow builds it: send_device ";" 16
// lowercase zero-padded hex digits of incarnation ";" recv_device ";"
// tensor_name ";" frame_id ":" iter_id. The root frame is "0:0".
// ParseRendezvousKey (graph/rendezvous_key.h) reads it back.
std::string RendezvousKey(absl::string_view send_device, uint64_t incarnation,
                          absl::string_view recv_device,
                          absl::string_view tensor_name, uint64_t frame_id,
                          int64_t iter_id);

}  // namespace graphrun

#endif  // GRAPHRUN_PARTITION_PARTITION_H_
