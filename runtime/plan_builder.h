// Plan building: what runs a step graph (runtime/step_graph.h) on a set of
// devices. PlaceAndPartition places the graph with the cost model
// (placer/) and cuts it into one partition per device used, joined by
// _Send/_Recv pairs (partition/); it needs only the placer's view of the
// devices, so a master can place over remote ones. CreatePartitionExecutors
// makes an Executor per partition on this process's devices.
//
//   GR_ASSIGN_OR_RETURN(placer::DeviceSet set, DescribeDevices(devices, prefix));
//   GR_ASSIGN_OR_RETURN(PartitionedStep step,
//                       PlaceAndPartition(*step_graph.graph, set, cost_model, {}));
//   GR_ASSIGN_OR_RETURN(auto parts, CreatePartitionExecutors(step.partitions, devices));
//
// Each function only reads its inputs: concurrent calls may share them.
#ifndef GRAPHRUN_RUNTIME_PLAN_BUILDER_H_
#define GRAPHRUN_RUNTIME_PLAN_BUILDER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/optimize/optimizer.h"
#include "graph/protos/graph.pb.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/placer.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/protos/config.pb.h"

namespace graphrun {

// The placer's model of this process's devices (borrowed, named
// `device_prefix` + "/device:CPU:i" or "/device:GPU:i"): each virtual CPU
// gets its share of the host's cores and memory bandwidth, and tensors
// between them cost a few microseconds; a GPU gets the device set's GPU
// model with its own memory limit. InvalidArgument when `device_prefix` is
// not a canonical "/job:J/replica:R/task:T", so that the placer's names are
// the devices'.
absl::StatusOr<placer::DeviceSet> DescribeDevices(const std::vector<Device*>& devices,
                                                  const std::string& device_prefix);

// The placer's model of one CPU device named `name` (canonical) whose
// kernels use `cores` cores; as DescribeDevices, for devices of another
// process (a master describing its workers'). InvalidArgument for a name
// that is not canonical.
absl::StatusOr<placer::DeviceInfo> DescribeCpuDevice(const std::string& name, double cores);

// Constant folding's evaluator (graph/optimize/optimizer.h): runs a node's
// kernel once on `device` (borrowed; outlives the evaluator). Unimplemented
// for async kernels; kernel errors as the kernel returns them.
NodeEvaluator KernelEvaluator(Device* device);

struct PlanOptions {
  // Soft placement, kernel availability, how eagerly to spread.
  placer::PlacerOptions placer;
  // Receives the log_device_placement lines (and the placer's warnings)
  // once the graph is placed, before it is partitioned; null: no log.
  std::function<void(const std::string&)> placement_log;
  // How the log names the step's own nodes and the removed user nodes
  // (StepGraph::log_names and log_removed); borrowed, may be null.
  const absl::flat_hash_map<std::string, placer::LogName>* log_names = nullptr;
  const std::vector<placer::RemovedNode>* log_removed = nullptr;
  // Each device's incarnation by full name (Device::incarnation()), which
  // the partitioner writes into the _Send/_Recv pairs' keys
  // (send_device_incarnation); null: 1 for every device.
  std::function<uint64_t(const std::string& device)> incarnation;
};

struct PartitionedStep {
  // One graph per device the placement uses, by full device name; every
  // node's device set. Of one device: the whole graph, no _Send/_Recv.
  std::map<std::string, GraphDef> partitions;
  // Predicted time, its lower bound, cross-device traffic, devices used.
  PlacementSummary summary;
};

// Places `graph` on `devices` and partitions it. Errors: the placer's
// (InvalidArgument for a request no device meets) and the partitioner's.
absl::StatusOr<PartitionedStep> PlaceAndPartition(const Graph& graph,
                                                  const placer::DeviceSet& devices,
                                                  const placer::CostModel& cost_model,
                                                  const PlanOptions& options);

// One device's share of a plan: its graph and the executor over it.
struct PartitionPlan {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Executor> executor;
};

// Imports each partition and makes its executor on the device of that name
// (`devices` borrowed; they outlive the executors), in the partitions'
// order. InvalidArgument for a partition on a device not in `devices`;
// import and kernel creation errors (NotFound for a missing kernel).
absl::StatusOr<std::vector<PartitionPlan>> CreatePartitionExecutors(
    const std::map<std::string, GraphDef>& partitions, const std::vector<Device*>& devices,
    const ExecutorOptions& executor_options = {});

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_PLAN_BUILDER_H_
