// The placement algorithm on an abstract scheduling problem.
//
// The placer (placer.h) turns a Graph, a DeviceSet and a CostModel into a
// SchedProblem: one task per node with a run time on every device (infinite
// where the node cannot run there), data edges with bytes, colocation
// groups, device memory capacities and a link cost matrix. This file knows
// nothing about graphs, so the algorithm is tested and benchmarked on
// generated DAGs directly.
//
// ScheduleTasks() is list scheduling with earliest finish time (HEFT with
// insertion, Topcuoglu et al. 2002; PEFT and one-level lookahead as
// variants) extended with colocation groups placed as units and device
// memory (persistent bytes for the whole step, outputs live until their
// last consumer, list_scheduler.h), free sources (weights) placed with
// their first consumer, and it keeps the best single-device plan as a
// candidate so the result is never worse than one device in the model.
// Under memory pressure it also tries a contiguous split of the graph over
// the devices and improves the best plan by local search (plan_search.h).
// Deterministic: when two devices give the same finish time, the one where
// the task's consumers are cheaper wins, then the lower device index.
//
// Thread-compatible: the functions are pure.
#ifndef GRAPHRUN_PLACER_SCHEDULER_H_
#define GRAPHRUN_PLACER_SCHEDULER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphrun {
namespace placer {

constexpr double kInfeasible = std::numeric_limits<double>::infinity();

struct SchedTask {
  // Run time in seconds on each device; kInfeasible where it cannot run
  // (no kernel, pinned elsewhere).
  std::vector<double> cost;
  // Bytes of outputs, live from the task's start until its last consumer
  // has run (the memory model frees them then).
  int64_t output_bytes = 0;
  // Bytes held for the whole step (constants, variables).
  int64_t persistent_bytes = 0;
  // Tasks with the same group id >= 0 must share a device.
  int group = -1;
};

// A dependency. `bytes` > 0 is a data transfer when the two tasks land on
// different devices; 0 is a pure ordering (control) edge.
struct SchedEdge {
  int src = 0;
  int dst = 0;
  int64_t bytes = 0;
  // float32 data that travels as fp16 over links that compress.
  bool compressible = false;
  // Edges with the same tensor id >= 0 carry one tensor: it moves to a
  // device once and every consumer there shares it (one Send per tensor
  // and destination device, as the partitioner inserts them). -1: the edge
  // is its own tensor.
  int64_t tensor = -1;
  // The consumer's kernel keeps this input in host memory when it runs on
  // a non-CPU device (a shape argument of a GPU kernel): the tensor goes to
  // that device's host CPU (SchedProblem::host_device), not to the device.
  bool dst_host_memory = false;
};

struct SchedLink {
  double latency_s = 0;
  double bandwidth = 0;  // bytes/s; 0 = free (same device, shared memory)
  bool compresses = false;  // compressible edges move half their bytes
};

struct SchedProblem {
  int num_devices = 0;
  std::vector<SchedTask> tasks;
  std::vector<SchedEdge> edges;
  // Per device; 0 = unlimited.
  std::vector<int64_t> memory_capacity;
  // num_devices x num_devices, row = source device. The diagonal is ignored
  // (same device costs nothing).
  std::vector<SchedLink> links;

  // Per device: the CPU device whose memory is this device's host memory
  // (itself for a CPU), or -1. Empty = no host-memory modelling.
  std::vector<int> host_device;

  const SchedLink& link(int src, int dst) const {
    return links[static_cast<size_t>(src) * num_devices + dst];
  }
  // Where `edge`'s tensor lands when its consumer runs on `dst`.
  int Destination(const SchedEdge& edge, int dst) const;
  // Seconds to move `edge` from device `src` to `dst` (0 on one device).
  double TransferTime(const SchedEdge& edge, int src, int dst) const;
};

struct SchedOptions {
  // Respect memory_capacity (Baechi-style memory checks).
  bool respect_memory = true;
  // Also evaluate every feasible single-device plan and keep the best.
  bool single_device_candidates = true;
  // Also run PEFT (HEFT's list scheduling guided by an optimistic cost
  // table of the remaining graph, Arabnejad & Barbosa 2014) and keep the
  // better plan.
  bool peft = true;
  // Also run HEFT with one level of lookahead (each choice judged by how
  // early its consumers could finish) on problems with at most this many
  // tasks, and keep the better plan. 0 = never.
  int lookahead_max_tasks = 5000;
  // Keep the best single-device plan unless the spread plan is predicted
  // faster by more than this fraction (0.1 = 10%). Splitting has costs the
  // model may not see (devices that share cores, cache traffic), so a
  // small predicted gain is not worth it. 0 = take any gain.
  double min_spread_gain = 0;
  // Place free sources (no inputs, zero cost: weights, constants) with
  // their first consumer instead of scheduling them first, where ties at
  // time 0 would send them all to one device.
  bool defer_free_sources = true;
  // Under memory pressure (some device smaller than the whole graph's
  // bytes), on problems with at most this many tasks, also try contiguous
  // splits of the graph over the devices (dynamic programming over a
  // topological order), then improve the best plan by local search. 0 =
  // neither.
  int split_max_tasks = 3000;
  // The local search's budget: at most search_work / num_tasks simulations
  // (at least 16, at most 4000), each moving a task or colocation group to
  // a neighbour's device, kept while the makespan drops. 0 = no local
  // search.
  int64_t search_work = 400000;
  // Record each task's estimated finish time on every device (for the
  // placement log's reasons). Costs num_tasks x num_devices doubles.
  bool record_candidate_finish = false;
};

// One candidate plan the scheduler tried: what it predicted, or why it
// failed (a task that fit nowhere in memory).
struct PlanOutcome {
  std::string name;               // "heft", "peft", "all on device 2", ...
  double makespan = kInfeasible;  // kInfeasible when it failed
  std::string failure;            // empty when it succeeded
};

struct Schedule {
  std::vector<int> device;   // per task
  std::vector<double> start;  // per task, seconds from step start
  std::vector<double> finish;
  double makespan = 0;
  // Per device: peak bytes (persistent bytes plus outputs live until their
  // last consumer). With memory limits (respect_memory and a capacity
  // somewhere) the schedule replayed in time; else counted in list order.
  std::vector<int64_t> peak_memory;
  // Per device: sum of task run times.
  std::vector<double> busy;
  // Bytes moved between devices per step (after compression).
  int64_t transfer_bytes = 0;
  int num_transfers = 0;
  // Which kind of candidate won: "heft" (a list-scheduled spread plan:
  // HEFT, PEFT or lookahead), "split" (a contiguous split),
  // "single-device" or "mostly-one-device".
  std::string plan;
  // Every candidate tried, in the order tried (ScheduleTasks only).
  std::vector<PlanOutcome> plans;
  // Per task: the consumer a free source was placed with (-1: placed on
  // its own). Empty when no source followed a consumer.
  std::vector<int> follows;
  // Per task: moved by local search from the plan it started from. Empty
  // when local search moved nothing.
  std::vector<char> searched;
  // When record_candidate_finish: candidate_finish[task][device] is the
  // estimated finish time considered when the task was placed (kInfeasible
  // where it could not go). Empty otherwise.
  std::vector<std::vector<double>> candidate_finish;
};

// Validates the problem (indices, sizes, acyclicity, every task feasible
// somewhere, groups feasible somewhere). InvalidArgument names the task.
absl::Status ValidateProblem(const SchedProblem& problem);

// Tasks in non-increasing upward rank (a topological order).
// rank_u(i) = mean cost(i) + max over successors (mean transfer + rank_u).
std::vector<int> UpwardRankOrder(const SchedProblem& problem);

// The full algorithm. ResourceExhausted when no plan fits in memory (the
// message lists every plan tried and why it failed); InvalidArgument when a
// task or group has no feasible device.
absl::StatusOr<Schedule> ScheduleTasks(const SchedProblem& problem,
                                       const SchedOptions& options = {});

// Simulates a fixed assignment (device per task): list scheduling in upward
// rank order with insertion, same cost and memory model. Used for the
// single-device candidates and for baselines.
absl::StatusOr<Schedule> EvaluateAssignment(const SchedProblem& problem,
                                            const std::vector<int>& device);

// Lower bounds (section 5 of the placement references):
//   critical path with every task at its cheapest feasible device and free
//   communication, and total cheapest work / number of devices. A device
//   counts for a task only if the task fits there alone (its persistent
//   bytes, output and inputs within the memory capacity).
struct LowerBounds {
  double critical_path = 0;
  double area = 0;
  double best() const { return critical_path > area ? critical_path : area; }
};
LowerBounds ComputeLowerBounds(const SchedProblem& problem);

// min over devices d (where every task is feasible) of the sum of run times;
// kInfeasible when no single device can run everything. Ignores memory.
double BestSingleDeviceTime(const SchedProblem& problem, int* best_device);

// The fastest device that can run every task and, with `respect_memory`,
// hold them all (the memory model of ScheduleTasks), and the fastest one
// that could run them but cannot hold them, if it is faster.
struct SingleDevicePlan {
  int device = -1;  // -1: no device can run and hold everything
  double time = kInfeasible;
  int too_small = -1;  // a faster device that cannot hold the graph, or -1
  double too_small_time = kInfeasible;
  int64_t too_small_needs = 0;  // its peak memory if it ran everything
};
SingleDevicePlan BestSingleDevice(const SchedProblem& problem, bool respect_memory);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_SCHEDULER_H_
