// Executor: runs one graph (a partition: every node on one device) once per
// step, as a dataflow: a node runs when all its inputs and control inputs
// have arrived.
//
// Built once (kernels created, edges flattened into arrays); RunAsync may be
// called concurrently for different steps, each with its own per-step state.
// Cheap nodes run inline on the thread that made them ready; of several
// expensive ready nodes, one runs inline and the rest go to the inter-op
// runner. The first error aborts the step (no new nodes start, the step's
// CancellationManager is cancelled) and is reported with the node's name,
// op and device.
//
// Per-step state is organised as frames and iterations (today only the root
// frame's iteration 0 exists) and every value carries a dead flag, so
// while-loop control flow slots in without changing the scheduling core.
#ifndef GRAPHRUN_RUNTIME_EXECUTOR_H_
#define GRAPHRUN_RUNTIME_EXECUTOR_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "runtime/device.h"
#include "runtime/protos/step_stats.pb.h"

namespace graphrun {

// Collects NodeExecStats for one device during a step. Thread-safe.
class StepStatsCollector {
 public:
  explicit StepStatsCollector(DeviceStepStats* out) : out_(out) {}
  void Save(NodeExecStats stats);

 private:
  absl::Mutex mu_;
  DeviceStepStats* out_ ABSL_GUARDED_BY(mu_);
};

struct ExecutorOptions {
  const KernelRegistry* kernels = KernelRegistry::Global();
};

class Executor {
 public:
  using Runner = std::function<void(std::function<void()>)>;
  using DoneCallback = std::function<void(const absl::Status&)>;

  struct Args {
    int64_t step_id = 0;
    CallFrame* call_frame = nullptr;
    CancellationManager* cancellation = nullptr;  // required
    StepStatsCollector* stats = nullptr;          // optional
    void* rendezvous = nullptr;
    // Runs a closure on the inter-op pool. Required.
    Runner runner;
  };

  // `graph` must outlive the executor; every node runs on `device`.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(
      const Graph* graph, Device* device, const ExecutorOptions& options = {});
  ~Executor();

  // Starts a step. Nodes that are ready at once start on the calling thread.
  // `done` runs exactly once, on some thread, after every started node has
  // finished.
  void RunAsync(const Args& args, DoneCallback done) const;
  // RunAsync and wait.
  absl::Status Run(const Args& args) const;

  Device* device() const { return device_; }
  int num_nodes() const { return static_cast<int>(items_.size()); }

 private:
  friend class ExecutorState;
  struct OutEdge {
    int dst;          // item index
    int src_output;   // kControlSlot for control edges
    int dst_slot;     // absolute index into the step's input array, or -1
  };
  struct NodeItem {
    const Node* node = nullptr;
    std::unique_ptr<OpKernel> kernel;
    bool expensive = true;
    bool async = false;
    int input_start = 0;   // first slot in the flat input array
    int num_inputs = 0;
    int num_outputs = 0;
    int initial_pending = 0;
    int out_begin = 0, out_end = 0;  // range in out_edges_
    // How many data edges leave each output (to move the last copy).
    std::vector<int> output_uses;
  };

  Executor(const Graph* graph, Device* device);

  const Graph* graph_;
  Device* device_;
  std::vector<NodeItem> items_;
  std::vector<OutEdge> out_edges_;
  std::vector<int> root_nodes_;
  int total_inputs_ = 0;
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_EXECUTOR_H_
