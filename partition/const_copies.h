// Const nodes copied to the tasks that read them. A Const without inputs
// whose value a node on another task reads would travel there on every step
// (a _Send/_Recv pair: a message, and a wake-up on each side): the
// hyperparameters of a parameter-server graph, which TensorFlow's
// replica_device_setter pins to the worker while the optimizer updates
// that read them run on the ps tasks. A copy on the reader's device makes
// the read local. Copies go only to CPU devices (where a Const's value is
// host memory), one per device, named "<const>/_copy_<k>"; every reader on
// that device (data and control) reads the copy.
//
// Thread-compatible: a pure function.
#ifndef GRAPHRUN_PARTITION_CONST_COPIES_H_
#define GRAPHRUN_PARTITION_CONST_COPIES_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/protos/graph.pb.h"
#include "partition/partition.h"

namespace graphrun {

struct ConstCopies {
  int copies = 0;  // 0: nothing to copy (and `graph` is left empty)
  GraphDef graph;  // the graph with the copies, readers rewired
  std::map<std::string, std::string> device;  // node name -> device, copies too
};

// Each node's device is options.node_to_loc's (by default its device
// field), a device's task options.task_of's (by default DefaultTaskOf); a
// device is a CPU when its full name says so.
absl::StatusOr<ConstCopies> CopyConstsToReaders(const Graph& graph,
                                                const PartitionOptions& options);

// Partition(graph, options) (partition.h) after CopyConstsToReaders and
// GatherControlEdges (partition/control_edges.h): what a step's partitions
// and `graphrun partition` are made with.
absl::StatusOr<std::map<std::string, GraphDef>> PartitionCopyingConsts(
    const Graph& graph, PartitionOptions options, PartitionStats* stats = nullptr);

}  // namespace graphrun

#endif  // GRAPHRUN_PARTITION_CONST_COPIES_H_
