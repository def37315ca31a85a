// Executor: runs one graph (a partition: every node on one device) once per
// step, as a dataflow: a node runs when all its inputs and control inputs
// have arrived.
//
// Built once (kernels created, edges flattened into arrays, nodes grouped
// by while-loop frame); RunAsync may be called concurrently for different
// steps, each with its own per-step state. Cheap nodes run inline on the
// thread that made them ready; of several expensive ready nodes, one runs
// inline and the rest go to the inter-op runner; nodes made ready by an
// async kernel that completes later (a Recv woken by its Send) go to the
// runner, so a chain of cross-device hops never nests on one stack. The
// first error aborts the step (no new nodes start, the step's
// CancellationManager is cancelled) and is reported with the node's name,
// op and device, and the frame and iteration when inside a loop.
//
// Control flow follows TensorFlow's executor: every value may be dead (the
// untaken side of a Switch); a node with a dead input does not run and its
// outputs are dead, except Merge, which runs on its first live input (or is
// dead when all are), and ControlTrigger. Enter opens a child frame per
// (parent frame, parent iteration, frame_name); each frame keeps at most
// `parallel_iterations` iterations in flight, each with its own input
// slots and pending counts, freed as soon as the iteration is done, so a
// loop's memory does not grow with its iteration count. Frame ids are a
// fixed 64-bit hash of the frame's full name, the same in every partition
// and process (they are part of rendezvous keys).
#ifndef GRAPHRUN_RUNTIME_EXECUTOR_H_
#define GRAPHRUN_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/mutex.h"
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
  // Fail a step at the first node whose floating-point output in host
  // memory holds a NaN or an infinity, naming the node and the output
  // (TensorFlow's CheckNumerics, for every node).
  bool check_numerics = false;
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
    // Where the step's _Send and _Recv kernels meet (borrowed; outlives
    // the step); null when the step has none.
    Rendezvous* rendezvous = nullptr;
    // Runs a closure on the inter-op pool. Required.
    Runner runner;
    // For callers whose threads must not be held by kernels (a worker's
    // RPC threads): the thread that starts the step, and a thread that
    // completes an async kernel (a Recv's reply arriving), run only cheap
    // nodes before returning and give every expensive one to the runner.
    // A completed Recv's cheap consumers then run where the value arrived
    // (a Send among them answers its peer at once) instead of one thread
    // hop later. Off: the starting thread also runs one expensive node,
    // and a completed async kernel hands all its consumers to the runner.
    bool inline_cheap_only = false;
    // The worker session the step belongs to, for kernels
    // (OpKernelContext::Params::session_handle); empty in process.
    std::string session_handle;
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
    int dst_slot;     // index into the dst frame's input slots, or -1
  };
  // The static shape of one frame (the root frame, or all frames opened
  // by Enters with one frame_name): its nodes' count slots and inputs.
  struct FrameInfo {
    std::string name;  // frame_name; "" for the root
    int num_nodes = 0;
    int total_inputs = 0;
    int num_enters = 0;  // Enter nodes that open it
    std::vector<int> exits;  // its Exit nodes
    // Per node: pending count in the low 32 bits, dead count above.
    std::vector<int64_t> initial_counts;
    // Root frame only: input slots bound to a constant when a step starts
    // (the outputs of Const nodes run once, when the executor was made).
    std::vector<std::pair<int, Tensor>> constant_inputs;
    // Root frame only, when it has constant inputs: which slots they are.
    std::vector<bool> constant_slot;
  };
  enum class Kind : uint8_t { kNormal, kEnter, kExit, kNextIteration };
  struct NodeItem {
    const Node* node = nullptr;
    std::unique_ptr<OpKernel> kernel;
    bool expensive = true;
    bool async = false;
    Kind kind = Kind::kNormal;
    bool is_merge = false;
    bool is_switch = false;
    bool is_control_trigger = false;
    bool is_constant_enter = false;
    bool has_constant_input = false;  // a root-frame slot of constant_inputs
    // Not a Merge, and exactly one edge to wait for (hoisted constants
    // aside): ready as soon as that edge delivers, dead if it is dead, with
    // no count to update.
    bool single_pending = false;
    int frame = 0;         // index into frames_ of the frame it runs in
    int pending_id = 0;    // its count slot in that frame
    int input_start = 0;   // first input slot in that frame
    int num_inputs = 0;
    int num_outputs = 0;
    int out_begin = 0, out_end = 0;  // range in out_edges_
    // Enter only: the frame it opens and how many iterations run at once.
    int child_frame = -1;
    int parallel_iterations = 1;
    // How many data edges leave each output (to move the last copy).
    absl::InlinedVector<int, 2> output_uses;
    // Inputs fed by a ref (a variable's Ref(T) output) that the kernel takes
    // by value: the variable is read as the node runs.
    absl::InlinedVector<int, 1> deref_inputs;
  };
  bool check_numerics_ = false;

  Executor(const Graph* graph, Device* device);
  absl::Status BuildFrames();
  std::vector<bool> HoistConstants();

  const Graph* graph_;
  Device* device_;
  std::vector<NodeItem> items_;
  std::vector<OutEdge> out_edges_;
  std::vector<FrameInfo> frames_;  // frames_[0] is the root
  std::vector<int> root_nodes_;  // in OrderRoots' order
  void OrderRoots();
  // Const nodes run once at creation (HoistConstants) and their values.
  std::vector<std::pair<int, Tensor>> hoisted_;
  // Per node: a running estimate of its kernel's time, in ns, for kernels
  // that say they are expensive; one measured under kCheapKernelNs runs
  // inline like a cheap kernel (a thread hop costs about a microsecond)
  // and is timed again only now and then.
  static constexpr int64_t kCheapKernelNs = 2000;
  // The same inside a loop, where each iteration's nodes wait on the one
  // before (a recurrent cell): a hop there lands on the critical path of
  // every step, and waking a sleeping pool thread took several
  // microseconds here. A Keras LSTM step (one LSTMBlockCell of about 3 us)
  // ran 0.65x as long with its cell kept inline; graphs without loops lost
  // parallelism under one threshold of 5 us for all (EfficientNetB0 1.17x).
  static constexpr int64_t kCheapLoopKernelNs = 5000;
  std::unique_ptr<std::atomic<int64_t>[]> cost_ns_;
  // The root frame's input slots and counts, kept from finished steps for
  // the next ones: a step of a 20,000-node graph would otherwise allocate,
  // zero and free a megabyte of slots. Slots come back empty.
  struct RootArrays {
    std::unique_ptr<Tensor[]> inputs;
    std::unique_ptr<std::atomic<int64_t>[]> counts;
  };
  mutable absl::Mutex spare_mu_;
  mutable std::vector<RootArrays> spare_roots_ ABSL_GUARDED_BY(spare_mu_);
  bool Expensive(int id) const {
    return items_[id].expensive &&
           cost_ns_[id].load(std::memory_order_relaxed) >= kCheapKernelNs;
  }
  // Whether node `id` is worth a thread hop where it runs: in the root
  // frame, or in a loop's frame (`in_loop`).
  bool WorthAHop(int id, bool in_loop) const {
    return items_[id].expensive && cost_ns_[id].load(std::memory_order_relaxed) >=
                                       (in_loop ? kCheapLoopKernelNs : kCheapKernelNs);
  }
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_EXECUTOR_H_
