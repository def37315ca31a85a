// Place(): one device per node, with a reason for each.
//
// Input: a validated Graph (graph/graph.h) whose NodeDefs carry requested
// device specs, a DeviceSet, a CostModel. Constraints are solved first:
//   * colocation groups: `_class` = ["loc:@x"] and reference / resource
//     edges (union-find); the group's requested specs merge (TensorFlow's
//     MergeDevNames rules);
//   * explicit device requests (hard; with allow_soft_placement a request
//     that cannot be met falls back to any device of the same task, logged);
//   * kernel availability per device type (KernelAvailability);
//   * device memory capacity (outputs live until their last consumer).
// An impossible constraint is InvalidArgument naming the blocking node, its
// group and every device tried with why it was rejected.
// Then costs: list scheduling with earliest finish time over the remaining
// choices (placer/scheduler.h), never worse than the best single device in
// the model. Deterministic.
//
// Nothing here runs a kernel. Thread-compatible.
#ifndef GRAPHRUN_PLACER_PLACER_H_
#define GRAPHRUN_PLACER_PLACER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {

// "Can this node run on devices of this type?"
class KernelAvailability {
 public:
  virtual ~KernelAvailability() = default;
  virtual bool Supports(const Node& node, absl::string_view device_type) const = 0;
  // A short description of why not ("no GPU kernel for 'Op'"), for errors.
  virtual std::string WhyNot(const Node& node, absl::string_view device_type) const;
  // Whether the node's kernel on `device_type` keeps input `input` in host
  // memory (KernelDefBuilder::HostMemory). Default: no.
  virtual bool InputInHostMemory(const Node& node, int input,
                                 absl::string_view device_type) const {
    return false;
  }
  // The same for output `output` (the partitioner then sends it with a
  // _HostSend). Default: no.
  virtual bool OutputInHostMemory(const Node& node, int output,
                                  absl::string_view device_type) const {
    return false;
  }
};

// Functions decide (host_memory may be null): tests, and planning without
// a kernel registry. The runtime's answer, from the kernels it was built
// with, is runtime/kernel_availability.h.
std::unique_ptr<KernelAvailability> FunctionAvailability(
    std::function<bool(const Node&, absl::string_view)> fn,
    std::function<bool(const Node&, int, absl::string_view)> host_memory = nullptr);

struct PlacerOptions {
  // TensorFlow's allow_soft_placement: a request no device can satisfy
  // falls back to any device of the requested task (job/replica/task
  // kept), and conflicting colocated requests drop their device type/id.
  bool allow_soft_placement = false;
  // Respect each device's memory_bytes.
  bool respect_memory = true;
  // Keep the best single-device plan as a candidate (off only for
  // comparisons).
  bool single_device_candidates = true;
  // Keep the best single-device plan unless spreading is predicted faster
  // by more than this fraction (see SchedOptions::min_spread_gain).
  double min_spread_gain = 0;
  // Kernel availability; null: every node can run on every device.
  const KernelAvailability* availability = nullptr;
};

struct Placement {
  // Indexed by node id: index into the DeviceSet.
  std::vector<int> device;
  // Indexed by node id: why the node is there.
  std::vector<std::string> reason;
  // The model's step time and its parts (schedule.start/finish by node id).
  Schedule schedule;
  double predicted_step_time = 0;
  LowerBounds lower_bound;
  // The fastest device that can run and hold the whole graph (-1 and
  // kInfeasible when none can), and a faster one that runs everything but
  // cannot hold it (-1 if none), with the bytes it would need.
  double best_single_device_time = 0;
  int best_single_device = -1;
  int fastest_device_too_small = -1;
  double fastest_device_too_small_time = 0;
  int64_t fastest_device_too_small_needs = 0;
  // Soft-placement fallbacks and other notes, one line each.
  std::vector<std::string> warnings;
};

absl::StatusOr<Placement> Place(const Graph& graph, const DeviceSet& devices,
                                const CostModel& costs,
                                const PlacerOptions& options = {});

// The scheduling problem Place() solves for these inputs (constraints
// solved into per-device costs, bytes, groups, capacities and links), for
// baselines and benchmarks; Place() is ScheduleTasks() on it plus reasons.
// Same errors as Place() for impossible constraints.
absl::StatusOr<SchedProblem> PlacementProblem(const Graph& graph,
                                              const DeviceSet& devices,
                                              const CostModel& costs,
                                              const PlacerOptions& options = {});

// How a node that a session added to the user's graph appears in the
// log: a feed's stand-in is printed as the node it replaces (the user's
// own name and op); other added nodes follow the graph's nodes, marked.
struct LogName {
  std::string name, op;  // the user's node; empty: print as added
  std::string note;      // for added nodes: what they are for
};

// TensorFlow's log_device_placement lines, one per node in node order:
//   "name: (Op): /job:localhost/replica:0/task:0/device:CPU:0 # reason"
// With `rename` (keyed by node name): feed stand-ins print as the user's
// node; the other nodes in `rename` come last, each with its note. Each of
// `removed` gets a line after the graph's nodes: the device of its carrier
// and "# optimizer: ...", or "(not run)" when it was folded away.
// A node of the user's graph that the optimizer removed before placement:
// its work now happens in `carrier` (fused, merged, bypassed), or, with no
// carrier, it was folded into constants or unused.
struct RemovedNode {
  std::string name, op, carrier;
};

std::string FormatPlacementLog(
    const Graph& graph, const DeviceSet& devices, const Placement& placement,
    const absl::flat_hash_map<std::string, LogName>* rename = nullptr,
    const std::vector<RemovedNode>* removed = nullptr);

// Per device: nodes, busy time, peak memory; cross-device edges and bytes
// per step; predicted step time, lower bound and their ratio; the best
// single device.
std::string FormatPlacementSummary(const Graph& graph, const DeviceSet& devices,
                                   const Placement& placement);

// Graphviz DOT: nodes filled with one colour per device, cross-device edges
// drawn bold red and labelled with their bytes, a legend.
std::string PlacementToDot(const Graph& graph, const DeviceSet& devices,
                           const Placement& placement, const CostModel& costs);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_PLACER_H_
