#include "runtime/executor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <climits>
#include <cstring>
#include <new>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "graph/control_flow.h"
#include "graph/hash.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "kernels/variable.h"
#include "runtime/float_env.h"

namespace graphrun {
namespace {

// Pending and dead counts share one 64-bit word per node and iteration, so
// one atomic read-modify-write sees both consistently.
constexpr int64_t kDeadOne = int64_t{1} << 32;
inline int32_t PendingOf(int64_t count) { return static_cast<int32_t>(count & 0xffffffff); }
inline int32_t DeadOf(int64_t count) { return static_cast<int32_t>(count >> 32); }

// A frame's id: a fixed hash of its name, the same in every partition,
// process and run.
uint64_t FrameId(absl::string_view name) { return Hash64(name); }

// absl::Mutex's deadlock detection (on in Debian's Abseil build) builds a
// lock graph on every Lock: a measurable part of a loop iteration. The
// executor's lock order is fixed (frames_mu_ before a frame's mu; never two
// frames' mu at once), so it is turned off once, for the process.
const bool kNoMutexDeadlockDetection = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

// Set while this thread processes nodes under Args::inline_cheap_only: it
// keeps only cheap nodes, and a Send it runs that completes another step's
// Recv hands that Recv's consumers to the runner instead of nesting
// another step's processing in this one (a loop alternating between two
// partitions would otherwise nest without end).
thread_local bool t_cheap_only = false;

}  // namespace

void StepStatsCollector::Save(NodeExecStats stats) {
  absl::MutexLock lock(&mu_);
  *out_->add_node_stats() = std::move(stats);
}

Executor::Executor(const Graph* graph, Device* device)
    : graph_(graph), device_(device) {}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(
    const Graph* graph, Device* device, const ExecutorOptions& options) {
  std::unique_ptr<Executor> ex(new Executor(graph, device));
  ex->check_numerics_ = options.check_numerics;
  const int n = graph->num_nodes();
  ex->items_.resize(n);
  for (int i = 0; i < n; ++i) {
    const Node* node = graph->node(i);
    NodeItem& item = ex->items_[i];
    item.node = node;
    if (node->op_def() == nullptr) {
      return absl::NotFoundError(absl::StrCat(NodeLabel(*node),
                                              ": the op is not registered"));
    }
    GR_ASSIGN_OR_RETURN(item.kernel,
                        options.kernels->CreateKernel(device, node->def(), node->op_def(),
                                                      node->input_types(),
                                                      node->output_types()));
    item.expensive = item.kernel->IsExpensive();
    item.async = item.kernel->AsAsync() != nullptr;
    item.num_inputs = node->num_inputs();
    item.num_outputs = node->num_outputs();
    item.output_uses.assign(item.num_outputs, 0);
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControl() && IsRefType(e->src->output_type(e->src_output)) &&
          !IsRefType(node->input_type(e->dst_input))) {
        item.deref_inputs.push_back(e->dst_input);
      }
    }
    item.is_merge = IsMerge(*node);
    item.is_switch = IsSwitch(*node);
    item.is_control_trigger = IsControlTrigger(*node);
    if (IsEnter(*node)) {
      item.kind = Kind::kEnter;
      GR_RETURN_IF_ERROR(node->attrs().Get("is_constant", &item.is_constant_enter));
      int64_t parallel = 10;
      GR_RETURN_IF_ERROR(node->attrs().Get("parallel_iterations", &parallel));
      if (parallel < 1 || parallel > (int64_t{1} << 20)) {
        return absl::InvalidArgumentError(absl::StrCat(
            NodeLabel(*node), ": parallel_iterations must be in [1, 2^20], got ", parallel));
      }
      item.parallel_iterations = static_cast<int>(parallel);
    } else if (IsExit(*node)) {
      item.kind = Kind::kExit;
    } else if (IsNextIteration(*node)) {
      item.kind = Kind::kNextIteration;
    }
  }
  // Unknown until measured: as expensive as the kernel says.
  ex->cost_ns_.reset(new std::atomic<int64_t>[n]);
  for (int i = 0; i < n; ++i) ex->cost_ns_[i].store(INT64_MAX, std::memory_order_relaxed);
  GR_RETURN_IF_ERROR(ex->BuildFrames());
  const std::vector<bool> hoisted = ex->HoistConstants();
  for (int i = 0; i < n; ++i) {
    const Node* node = graph->node(i);
    NodeItem& item = ex->items_[i];
    item.out_begin = static_cast<int>(ex->out_edges_.size());
    for (const Edge* e : node->out_edges()) {
      OutEdge out;
      out.dst = e->dst->id();
      out.src_output = e->src_output;
      out.dst_slot = e->IsControl() ? -1 : ex->items_[out.dst].input_start + e->dst_input;
      if (!e->IsControl()) ++item.output_uses[e->src_output];
      ex->out_edges_.push_back(out);
    }
    item.out_end = static_cast<int>(ex->out_edges_.size());
    // Roots: nodes of the root frame with nothing to wait for (all their
    // inputs, if any, are hoisted constants).
    if (item.frame == 0 && !hoisted[i] &&
        PendingOf(ex->frames_[0].initial_counts[item.pending_id]) == 0 && !item.is_merge) {
      ex->root_nodes_.push_back(i);
    }
    item.single_pending =
        !item.is_merge && ex->frames_[item.frame].initial_counts[item.pending_id] == 1;
  }
  ex->OrderRoots();
  return ex;
}

// Each node's height, the most nodes on a path from it to a sink (back
// edges out of NextIteration left out), by an iterative depth-first walk;
// the roots sorted by it, the highest last. `here` is taken from the back,
// so a step starts on its deepest chain (a model's forward pass) before the
// roots that only feed its end (an optimizer's hyperparameters and slots,
// a gradient's shape constants): in a v1 training graph those come last in
// the graph and would otherwise run first, ahead of the first layer.
void Executor::OrderRoots() {
  const int n = static_cast<int>(items_.size());
  std::vector<int> height(n, -1);  // -1: not seen; -2: on the walk's stack
  std::vector<std::pair<int, int>> stack;  // (node, next out edge)
  for (int root : root_nodes_) {
    if (height[root] >= 0) continue;
    stack.push_back({root, items_[root].out_begin});
    height[root] = -2;
    while (!stack.empty()) {
      auto& [i, e] = stack.back();
      const NodeItem& item = items_[i];
      if (item.kind != Kind::kNextIteration && e < item.out_end) {
        const int dst = out_edges_[e++].dst;
        if (height[dst] == -1) {
          height[dst] = -2;
          stack.push_back({dst, items_[dst].out_begin});
        }
        continue;
      }
      int h = 0;
      if (item.kind != Kind::kNextIteration) {
        for (int k = item.out_begin; k < item.out_end; ++k) {
          h = std::max(h, height[out_edges_[k].dst] + 1);
        }
      }
      height[i] = std::max(h, 1);
      stack.pop_back();
    }
  }
  std::stable_sort(root_nodes_.begin(), root_nodes_.end(),
                   [&](int a, int b) { return height[a] < height[b]; });
}

// A Const in the root frame with no inputs and only data consumers (none
// a Merge, whose count works differently) produces the same tensor every
// step: its kernel runs once, here, and each step starts with the value
// bound into its consumers' input slots instead of scheduling the node. On
// a chain of scalar adds (each `y + 1` has its own Const) this halves the
// nodes a step runs. Traced steps list them, with no time.
std::vector<bool> Executor::HoistConstants() {
  const int n = static_cast<int>(items_.size());
  std::vector<bool> hoisted(n, false);
  FrameInfo& root = frames_[0];
  for (int i = 0; i < n; ++i) {
    NodeItem& item = items_[i];
    const Node& node = *item.node;
    if (node.op() != "Const" || item.frame != 0 || item.async ||
        !node.in_edges().empty() || node.out_edges().empty() || item.num_outputs != 1) {
      continue;
    }
    bool data_only = true;
    for (const Edge* e : node.out_edges()) {
      if (e->IsControl() || items_[e->dst->id()].is_merge) data_only = false;
    }
    if (!data_only) continue;
    OpKernelContext::Params params;
    params.device = device_;
    params.op_kernel = item.kernel.get();
    OpKernelContext ctx(&params);
    item.kernel->Compute(&ctx);
    // A kernel that fails runs every step instead and reports it there.
    if (!ctx.status().ok() || ctx.mutable_outputs()->empty()) continue;
    const Tensor& value = (*ctx.mutable_outputs())[0];
    if (!value.IsInitialized() || value.dtype() != BaseType(node.output_type(0))) continue;
    for (const Edge* e : node.out_edges()) {
      NodeItem& dst = items_[e->dst->id()];
      const int slot = dst.input_start + e->dst_input;
      root.constant_inputs.emplace_back(slot, value);
      if (root.constant_slot.empty()) root.constant_slot.resize(root.total_inputs, false);
      root.constant_slot[slot] = true;
      dst.has_constant_input = true;
      --root.initial_counts[dst.pending_id];
    }
    hoisted[i] = true;
    hoisted_.emplace_back(i, value);
  }
  return hoisted;
}

// Groups nodes by frame and lays out each frame's count and input slots.
absl::Status Executor::BuildFrames() {
  frames_.emplace_back();  // the root
  std::vector<ControlFlowInfo> cf;
  if (HasLoops(*graph_)) {
    GR_ASSIGN_OR_RETURN(cf, BuildControlFlowInfo(*graph_));
  }
  absl::flat_hash_map<std::string, int> frame_index;
  auto frame_of = [&](const std::string& name) {
    if (name.empty()) return 0;
    auto [it, inserted] = frame_index.emplace(name, static_cast<int>(frames_.size()));
    if (inserted) {
      frames_.emplace_back();
      frames_.back().name = name;
    }
    return it->second;
  };
  for (NodeItem& item : items_) {
    const Node& node = *item.node;
    item.frame = cf.empty() ? 0 : frame_of(cf[node.id()].frame_name);
    FrameInfo& f = frames_[item.frame];
    item.pending_id = f.num_nodes++;
    item.input_start = f.total_inputs;
    f.total_inputs += item.num_inputs;
    int64_t controls = 0;
    for (const Edge* e : node.in_edges()) controls += e->IsControl() ? 1 : 0;
    // A Merge waits for its control inputs and one live data input: bit 0
    // says "no live input yet", each control input counts 2.
    f.initial_counts.push_back(item.is_merge
                                   ? 1 + 2 * controls
                                   : static_cast<int64_t>(node.in_edges().size()));
    if (item.kind == Kind::kEnter) {
      std::string name;
      GR_RETURN_IF_ERROR(node.attrs().Get("frame_name", &name));
      item.child_frame = frame_of(name);
    }
  }
  for (int i = 0; i < static_cast<int>(items_.size()); ++i) {
    const NodeItem& item = items_[i];
    if (item.kind == Kind::kEnter) ++frames_[item.child_frame].num_enters;
    if (item.kind == Kind::kExit) frames_[item.frame].exits.push_back(i);
  }
  return absl::OkStatus();
}

// The state of one step. Deletes itself when the step is done.
class ExecutorState {
 public:
  using NodeItem = Executor::NodeItem;
  using Kind = Executor::Kind;
  using Outputs = absl::InlinedVector<Tensor, 4>;

  // One iteration of one frame: the input slots and counts of the frame's
  // nodes. Non-root iterations are guarded by their frame's mutex; the root
  // frame's counts are updated lock-free (Merges aside).
  struct IterationState {
    // Makes the state ready for iteration `next` of the same frame: counts
    // back to their initial values, no input left behind.
    void Reuse(const Executor::FrameInfo& info, int64_t next) {
      iter = next;
      for (int i = 0; i < info.num_nodes; ++i) {
        counts[i].store(info.initial_counts[i], std::memory_order_relaxed);
      }
      for (int i = 0; i < info.total_inputs; ++i) {
        if (inputs[i].IsInitialized()) inputs[i] = Tensor();
      }
      outstanding_ops = 0;
      outstanding_frame_count = 0;
    }
    // With arrays of an earlier step's root frame (slots empty).
    IterationState(const Executor::FrameInfo& info, Executor::RootArrays arrays)
        : iter(0), inputs(std::move(arrays.inputs)), counts(std::move(arrays.counts)) {
      for (int i = 0; i < info.num_nodes; ++i) {
        counts[i].store(info.initial_counts[i], std::memory_order_relaxed);
      }
    }
    IterationState(const Executor::FrameInfo& info, int64_t iter)
        : iter(iter),
          inputs(new Tensor[info.total_inputs]),
          counts(new std::atomic<int64_t>[info.num_nodes]) {
      for (int i = 0; i < info.num_nodes; ++i) {
        counts[i].store(info.initial_counts[i], std::memory_order_relaxed);
      }
    }
    int64_t iter;
    std::unique_ptr<Tensor[]> inputs;
    std::unique_ptr<std::atomic<int64_t>[]> counts;
    int outstanding_ops = 0;          // nodes ready or running in it
    int outstanding_frame_count = 0;  // child frames it opened, not done
  };

  // One dynamic instance of a frame: the root, or a loop opened in one
  // iteration of its parent frame.
  struct FrameState {
    const Executor::FrameInfo* info = nullptr;
    std::string name;       // "_root", or parent;parent_iter;frame_name
    uint64_t id = 0;
    FrameState* parent = nullptr;
    int64_t parent_iter = 0;
    bool is_root = false;
    int max_parallel_iterations = 1;

    absl::Mutex mu;
    int num_pending_inputs = 0;       // Enters that have not arrived
    bool any_live_var = false;        // a non-constant Enter arrived live
    int64_t iteration_count = 0;      // the newest iteration
    int num_outstanding_iterations = 1;
    // Circular buffer of max_parallel_iterations + 1 iterations.
    std::vector<std::unique_ptr<IterationState>> iterations;
    // NextIteration values held back while too many iterations run.
    std::vector<std::pair<int, Tensor>> next_iter_roots;
    // Loop invariants (constant Enters), given to every new iteration.
    std::vector<std::pair<int, Tensor>> inv_values;
    // Exits that ran dead in the newest iteration.
    std::vector<int> dead_exits;
    // A finished iteration's state, kept for the next one (saves three
    // allocations per iteration).
    std::unique_ptr<IterationState> spare;

    IterationState* Iteration(int64_t iter) const {
      return iterations[iter % iterations.size()].get();
    }
  };

  // Root arrays kept for later steps (one per step running at once).
  static constexpr size_t kMaxSpareRoots = 4;

  // A node to run, in a frame and iteration, and whether it is dead.
  struct TaggedNode {
    int id;
    FrameState* frame;
    IterationState* iter_state;
    bool is_dead;
  };
  using ReadyList = absl::InlinedVector<TaggedNode, 8>;

  ExecutorState(const Executor* ex, const Executor::Args& args,
                Executor::DoneCallback done)
      : ex_(ex), args_(args), done_(std::move(done)) {
    root_.info = &ex->frames_[0];
    root_.name = "_root";
    root_.is_root = true;
    root_.iterations.resize(2);
    Executor::RootArrays arrays;
    {
      absl::MutexLock lock(&ex->spare_mu_);
      if (!ex->spare_roots_.empty()) {
        arrays = std::move(ex->spare_roots_.back());
        ex->spare_roots_.pop_back();
      }
    }
    const bool fresh = arrays.inputs == nullptr;
    root_.iterations[0] =
        arrays.inputs != nullptr
            ? std::make_unique<IterationState>(ex->frames_[0], std::move(arrays))
            : std::make_unique<IterationState>(ex->frames_[0], 0);
    // Constant slots are filled once per set of root arrays and stay
    // filled: nodes leave them (ClearInputs), and so do finished steps.
    if (fresh) {
      Tensor* slots = root_.iterations[0]->inputs.get();
      for (const auto& [slot, value] : ex->frames_[0].constant_inputs) slots[slot] = value;
    }
  }

  ~ExecutorState() {
    // The root frame's arrays go back to the executor with only their
    // constant slots filled. A step that ran to its end left nothing else
    // behind (each node empties its slots as it runs); one that failed
    // may have.
    std::unique_ptr<IterationState>& root =
        root_.iterations[0] != nullptr ? root_.iterations[0] : root_.spare;
    if (root == nullptr) return;
    bool clean = !aborted();
    if (clean) {
      // A loop left waiting on a dead input leaves its frame, and maybe
      // root nodes after it with some inputs, behind.
      absl::MutexLock lock(&frames_mu_);
      clean = frames_.empty();
    }
    if (!clean) {
      const std::vector<bool>& constant = ex_->frames_[0].constant_slot;
      Tensor* slots = root->inputs.get();
      for (int i = 0; i < ex_->frames_[0].total_inputs; ++i) {
        if (slots[i].IsInitialized() && (constant.empty() || !constant[i])) {
          slots[i].~Tensor();
          new (&slots[i]) Tensor();
        }
      }
    }
    absl::MutexLock lock(&ex_->spare_mu_);
    if (ex_->spare_roots_.size() < kMaxSpareRoots) {
      ex_->spare_roots_.push_back({std::move(root->inputs), std::move(root->counts)});
    }
  }

  void Start() {
    if (ex_->root_nodes_.empty()) {
      done_(absl::OkStatus());
      delete this;
      return;
    }
    cancel_token_ = args_.cancellation->NewToken();
    // The callback co-owns the abort state, so it may run after this step
    // finished and was deleted.
    std::shared_ptr<AbortState> abort = abort_;
    if (!args_.cancellation->Register(cancel_token_, [abort] {
          abort->Abort(absl::CancelledError("the step was cancelled"));
        })) {
      cancel_token_ = -1;
      done_(absl::CancelledError("the step was cancelled before it started"));
      delete this;
      return;
    }
    if (args_.stats != nullptr) {
      for (const auto& [id, value] : ex_->hoisted_) {
        NodeExecStats stats;
        StartStats(ex_->items_[id], &stats);
        FinishStats(ex_->items_[id], Outputs{value}, &stats);
      }
    }
    ReadyList ready;
    IterationState* it0 = root_.Iteration(0);
    for (int id : ex_->root_nodes_) ready.push_back({id, &root_, it0, false});
    outstanding_.store(static_cast<int>(ready.size()), std::memory_order_relaxed);
    // Cheap roots and one expensive root run here (only the cheap ones
    // under inline_cheap_only); others go to the pool.
    if (args_.inline_cheap_only && !t_cheap_only) {
      ProcessCheapHere(ready);
      return;
    }
    ReadyList here;
    Dispatch(ready, &here);
    Process(std::move(here));
  }

 private:
  // The first error of the step; shared with the cancellation callback.
  struct AbortState {
    void Abort(const absl::Status& s) {
      {
        absl::MutexLock lock(&mu);
        if (status.ok()) status = s;
      }
      aborted.store(true, std::memory_order_release);
    }
    std::atomic<bool> aborted{false};
    absl::Mutex mu;
    absl::Status status ABSL_GUARDED_BY(mu);
  };

  // A node failed: record the error and cancel the step, so kernels that
  // wait (async ones) are released instead of holding the step open. Safe
  // to call while this node is still counted as outstanding.
  void Fail(const absl::Status& s) {
    abort_->Abort(s);
    args_.cancellation->StartCancel();
  }

  bool aborted() const { return abort_->aborted.load(std::memory_order_acquire); }

  // Runs `nodes` and then, inline, whatever becomes ready that should run
  // on this thread.
  void Process(ReadyList inline_ready) {
    const ScopedKernelFloatEnv float_env;  // TensorFlow's: subnormals flushed
    ReadyList ready;
    while (!inline_ready.empty()) {
      TaggedNode t = inline_ready.back();
      inline_ready.pop_back();
      const NodeItem& item = ex_->items_[t.id];
      ready.clear();
      if (aborted()) {
        // Nothing more starts; frames left unfinished are freed with the step.
        ClearInputs(t, item);
        if (NodeDone(ready, &inline_ready)) return;
        continue;
      }
      if (t.is_dead) {
        if (item.kernel->RunsOnDeadInput()) {
          // A _Send tells its Recv that the tensor is dead.
          OpKernelContext::Params params;
          FillParams(t, item, &params);
          params.is_input_dead = true;
          OpKernelContext ctx(&params);
          item.kernel->Compute(&ctx);
          if (!ctx.status().ok()) Fail(NodeError(t, item, ctx.status()));
        }
        // A dead node does not run; its outputs are dead too.
        ClearInputs(t, item);
        Outputs none;
        PropagateOutputs(t, item, /*is_dead=*/true, &none, &ready);
        if (NodeDone(ready, &inline_ready)) return;
        continue;
      }
      if (item.async && !item.deref_inputs.empty()) {
        const absl::Status s = DerefInputs(item, t.iter_state->inputs.get() + item.input_start);
        if (!s.ok()) {
          ClearInputs(t, item);
          Fail(NodeError(t, item, s));
          if (NodeDone(ready, &inline_ready)) return;
          continue;
        }
      }
      if (item.async) {
        if (RunAsyncNode(t, item, &inline_ready)) return;
        continue;
      }
      OpKernelContext::Params params;
      FillParams(t, item, &params);
      if (!item.deref_inputs.empty()) {
        const absl::Status s = DerefInputs(item, params.inputs);
        if (!s.ok()) {
          ClearInputs(t, item);
          Fail(NodeError(t, item, s));
          if (NodeDone(ready, &inline_ready)) return;
          continue;
        }
      }
      OpKernelContext ctx(&params);
      NodeExecStats* stats = nullptr;
      std::optional<NodeExecStats> stats_storage;  // only when tracing
      if (args_.stats != nullptr) {
        stats = &stats_storage.emplace();
        StartStats(item, stats);
      }
      // Kernels found cheap are timed again one run in 64 (on this thread),
      // so one whose inputs grew (dynamic shapes) goes back to the pool.
      thread_local uint32_t sample = 0;
      if (ex_->Expensive(t.id) || (item.expensive && (++sample & 63) == 0)) {
        const auto start = std::chrono::steady_clock::now();
        item.kernel->Compute(&ctx);
        const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
        std::atomic<int64_t>& cost = ex_->cost_ns_[t.id];
        const int64_t old = cost.load(std::memory_order_relaxed);
        cost.store(old == INT64_MAX ? ns : (old + ns) / 2, std::memory_order_relaxed);
      } else {
        item.kernel->Compute(&ctx);
      }
      if (stats != nullptr) {
        stats->set_op_end_rel_nanos(absl::GetCurrentTimeNanos() - stats->all_start_nanos());
        // Before the outputs move to their consumers.
        FinishStats(item, *ctx.mutable_outputs(), stats);
      }
      // Inputs are cleared first: propagation may finish (and free) the
      // iteration they live in.
      ClearInputs(t, item);
      HandleResult(t, item, &ctx, &ready);
      if (NodeDone(ready, &inline_ready)) return;
    }
  }

  // Starts an async kernel. If it completes before ComputeAsync returns,
  // what it made ready joins `inline_ready` (returns true if that ended the
  // step); if it completes later, on another thread, that thread hands
  // the ready nodes to the runner.
  bool RunAsyncNode(TaggedNode t, const NodeItem& item, ReadyList* inline_ready) {
    struct AsyncState {
      OpKernelContext::Params params;
      std::unique_ptr<OpKernelContext> ctx;
      NodeExecStats stats;
      ReadyList ready;
      // 0 while ComputeAsync runs; the callback sets 1, the caller 2;
      // whichever comes second continues the step.
      std::atomic<int> phase{0};
    };
    auto* state = new AsyncState;
    FillParams(t, item, &state->params);
    state->ctx = std::make_unique<OpKernelContext>(&state->params);
    if (args_.stats != nullptr) StartStats(item, &state->stats);
    item.kernel->AsAsync()->ComputeAsync(state->ctx.get(), [this, state, t, &item] {
      if (args_.stats != nullptr) {
        state->stats.set_op_end_rel_nanos(absl::GetCurrentTimeNanos() -
                                          state->stats.all_start_nanos());
        FinishStats(item, *state->ctx->mutable_outputs(), &state->stats);
      }
      ClearInputs(t, item);
      HandleResult(t, item, state->ctx.get(), &state->ready);
      if (state->phase.exchange(1, std::memory_order_acq_rel) == 0) return;
      ReadyList ready = std::move(state->ready);
      delete state;
      NodeDoneLater(ready);
    });
    if (state->phase.exchange(2, std::memory_order_acq_rel) == 0) return false;
    ReadyList ready = std::move(state->ready);
    delete state;
    return NodeDone(ready, inline_ready);
  }

  // After a kernel ran: fail the step on an error, else hand its outputs
  // (or their deadness) to the consumers, collecting those now ready.
  void HandleResult(TaggedNode t, const NodeItem& item, OpKernelContext* ctx,
                    ReadyList* ready) {
    absl::Status s = ctx->status();
    if (s.ok() && ctx->outputs_dead()) {
      Outputs none;
      PropagateOutputs(t, item, /*is_dead=*/true, &none, ready);
      return;
    }
    if (s.ok()) s = CheckOutputs(item, ctx->mutable_outputs());
    if (s.ok() && ex_->check_numerics_) s = CheckNumerics(*ctx->mutable_outputs());
    if (!s.ok()) {
      Fail(NodeError(t, item, s));
    } else {
      PropagateOutputs(t, item, /*is_dead=*/false, ctx->mutable_outputs(), ready);
    }
  }

  // Replaces each ref the kernel takes by value with the variable's value
  // now; FailedPrecondition naming the variable when it was never assigned.
  static absl::Status DerefInputs(const NodeItem& item, Tensor* inputs) {
    for (int i : item.deref_inputs) {
      GR_ASSIGN_OR_RETURN(Var * var, VarOf(inputs[i], "a ref input"));
      GR_ASSIGN_OR_RETURN(inputs[i], var->Read(UninitializedRefMessage(*var)));
    }
    return absl::OkStatus();
  }

  void FillParams(TaggedNode t, const NodeItem& item, OpKernelContext::Params* params) {
    params->step_id = args_.step_id;
    params->device = ex_->device_;
    params->op_kernel = item.kernel.get();
    params->inputs = t.iter_state->inputs.get() + item.input_start;
    params->num_inputs = item.num_inputs;
    params->cancellation = args_.cancellation;
    params->frame_id = t.frame->id;
    params->iter_id = t.iter_state->iter;
    params->rendezvous = args_.rendezvous;
    params->call_frame = args_.call_frame;
    params->session_handle = args_.session_handle;
  }

  absl::Status CheckOutputs(const NodeItem& item, Outputs* outputs) {
    outputs->resize(item.num_outputs);
    for (int k = 0; k < item.num_outputs; ++k) {
      const Tensor& t = (*outputs)[k];
      if (!t.IsInitialized()) {
        // A Switch leaves its untaken output unset: that output is dead.
        if (item.output_uses[k] == 0 || item.is_switch) continue;
        return absl::InternalError(absl::StrCat("kernel did not set output ", k));
      }
      // (The kernel's copy of the dtypes: the node's is further away.)
      // A ref output is a DT_RESOURCE scalar pointing to the variable.
      const DataType declared = item.kernel->output_type(k);
      if (t.dtype() != (IsRefType(declared) ? DT_RESOURCE : declared)) {
        return absl::InternalError(absl::StrCat(
            "kernel produced ", DataTypeString(t.dtype()), " for output ", k,
            ", declared ", DataTypeString(item.node->output_type(k))));
      }
    }
    return absl::OkStatus();
  }

  // InvalidArgument naming the first float output in host memory that
  // holds a NaN or an infinity.
  static absl::Status CheckNumerics(const Outputs& outputs) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Tensor& t = outputs[k];
      if (!t.IsInitialized() || t.NumElements() == 0) continue;
      Allocator* a = t.buffer_allocator();
      if (a != nullptr && !a->IsHostMemory()) continue;
      auto scan = [&](auto tag) -> absl::Status {
        using T = decltype(tag);
        for (const T v : t.flat<T>()) {
          const double d = static_cast<double>(v);
          if (!std::isfinite(d)) {
            return absl::InvalidArgumentError(absl::StrCat(
                "check_numerics: output ", k, " (", DataTypeString(t.dtype()), " ",
                t.shape().DebugString(), ") holds ", std::isnan(d) ? "NaN" : "an infinity"));
          }
        }
        return absl::OkStatus();
      };
      absl::Status s;
      if (t.dtype() == DT_FLOAT) s = scan(float());
      if (t.dtype() == DT_DOUBLE) s = scan(double());
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // "node 'x' (Op) on DEVICE [in frame 'f' iteration i [of frame ...]]: msg"
  absl::Status NodeError(TaggedNode t, const NodeItem& item, const absl::Status& s) {
    std::string where;
    if (!t.frame->is_root) {
      absl::StrAppend(&where, " in frame '", t.frame->info->name, "' iteration ",
                      t.iter_state->iter);
      for (const FrameState* f = t.frame; !f->parent->is_root; f = f->parent) {
        absl::StrAppend(&where, " of frame '", f->parent->info->name, "' iteration ",
                        f->parent_iter);
      }
    }
    return absl::Status(s.code(), absl::StrCat(NodeLabel(*item.node), " on ",
                                               ex_->device_->name(), where, ": ",
                                               s.message()));
  }

  // ---- Propagation: TensorFlow's frame and iteration rules. ----

  // Hands `outputs` (or deadness) of `item`, which ran in frame `t.frame`,
  // to its consumers, and does the frame bookkeeping of Enter, Exit and
  // NextIteration.
  void PropagateOutputs(TaggedNode t, const NodeItem& item, bool is_dead,
                        Outputs* outputs, ReadyList* ready) {
    FrameState* in_frame = t.frame;
    IterationState* in_iter = t.iter_state;
    bool frame_done = false;
    switch (item.kind) {
      case Kind::kNormal:
        if (in_frame->is_root) {
          ActivateNodes(item, is_dead, in_frame, in_iter, outputs, /*can_move=*/true, ready);
        } else {
          absl::MutexLock lock(&in_frame->mu);
          ActivateNodes(item, is_dead, in_frame, in_iter, outputs, true, ready);
          frame_done = DecrementOutstandingOpsLocked(in_frame, in_iter->iter, ready);
        }
        break;
      case Kind::kEnter: {
        FrameState* child = FindOrCreateChildFrame(in_frame, in_iter->iter, item);
        bool child_done = false;
        {
          absl::MutexLock lock(&child->mu);
          if (item.is_constant_enter) {
            AddLoopInvariantLocked(child, item, is_dead, outputs, ready);
          } else {
            ActivateNodes(item, is_dead, child, child->Iteration(0), outputs, true, ready);
            child->any_live_var |= !is_dead;
          }
          if (--child->num_pending_inputs == 0 && !child->any_live_var) {
            // Every loop variable is dead (the loop sits in an untaken
            // branch): the loop never runs, and its Exits are dead, so
            // whatever waits on them (another device's recv) is released.
            child->dead_exits = child->info->exits;
            const IterationState* it0 = child->Iteration(0);
            child_done = it0->outstanding_ops == 0 && it0->outstanding_frame_count == 0 &&
                         CleanupIterationsLocked(child, 0, ready);
          }
        }
        if (child_done) {
          DeleteFrame(child, ready);
          CleanupFramesIterations(in_frame, in_iter->iter, ready);
        }
        frame_done = DecrementOutstandingOps(in_frame, in_iter->iter, ready);
        break;
      }
      case Kind::kExit:
        if (is_dead) {
          absl::MutexLock lock(&in_frame->mu);
          // Only the last iteration's dead Exits leave the frame (when the
          // frame is done); earlier ones are the loop going round.
          if (in_iter->iter == in_frame->iteration_count && in_frame->any_live_var) {
            in_frame->dead_exits.push_back(t.id);
          }
          frame_done = DecrementOutstandingOpsLocked(in_frame, in_iter->iter, ready);
        } else {
          FrameState* parent = in_frame->parent;
          ActivateInFrame(item, false, parent, in_frame->parent_iter, outputs, ready);
          frame_done = DecrementOutstandingOps(in_frame, in_iter->iter, ready);
        }
        break;
      case Kind::kNextIteration: {
        absl::MutexLock lock(&in_frame->mu);
        if (is_dead) {
          // Deadness does not start an iteration.
        } else if (in_iter->iter == in_frame->iteration_count &&
                   in_frame->num_outstanding_iterations ==
                       in_frame->max_parallel_iterations) {
          // Too many iterations in flight: start this one later.
          in_frame->next_iter_roots.emplace_back(t.id, std::move((*outputs)[0]));
        } else {
          const int64_t next = in_iter->iter == in_frame->iteration_count
                                   ? IncrementIterationLocked(in_frame, ready)
                                   : in_iter->iter + 1;
          ActivateNodes(item, false, in_frame, in_frame->Iteration(next), outputs, true,
                        ready);
        }
        frame_done = DecrementOutstandingOpsLocked(in_frame, in_iter->iter, ready);
        break;
      }
    }
    if (frame_done) {
      FrameState* parent = in_frame->parent;
      const int64_t parent_iter = in_frame->parent_iter;
      DeleteFrame(in_frame, ready);
      CleanupFramesIterations(parent, parent_iter, ready);
    }
  }

  // ActivateNodes into `frame`'s iteration `iter`, taking its lock unless
  // it is the root.
  void ActivateInFrame(const NodeItem& item, bool is_dead, FrameState* frame, int64_t iter,
                       Outputs* outputs, ReadyList* ready) {
    if (frame->is_root) {
      ActivateNodes(item, is_dead, frame, frame->Iteration(iter), outputs, true, ready);
    } else {
      absl::MutexLock lock(&frame->mu);
      ActivateNodes(item, is_dead, frame, frame->Iteration(iter), outputs, true, ready);
    }
  }

  // Delivers item's outputs along its out edges into iteration `it` of
  // `frame` (whose lock the caller holds, unless it is the root) and
  // collects the consumers that became ready. An unset output is dead.
  void ActivateNodes(const NodeItem& item, bool is_dead, FrameState* frame,
                     IterationState* it, Outputs* outputs, bool can_move, ReadyList* ready) {
    absl::InlinedVector<int, 4> remaining(item.output_uses.begin(), item.output_uses.end());
    for (int i = item.out_begin; i < item.out_end; ++i) {
      const Executor::OutEdge& e = ex_->out_edges_[i];
      const NodeItem& dst = ex_->items_[e.dst];
      std::atomic<int64_t>& count = it->counts[dst.pending_id];
      const bool is_control = e.dst_slot < 0;
      Tensor* value = nullptr;
      bool last_use = false;
      if (!is_control && !is_dead) {
        value = &(*outputs)[e.src_output];
        last_use = can_move && --remaining[e.src_output] == 0;
        if (!value->IsInitialized()) value = nullptr;  // a dead output
      }
      const bool input_dead = is_dead || (!is_control && value == nullptr);
      bool dst_dead = false;
      bool dst_ready = false;
      if (dst.is_merge) {
        // A Merge is ready when its control inputs have arrived and either
        // one data input is live or all are dead. Updates to a Merge's
        // count and its input slot are serialised (the frame's lock; in
        // the root frame, merge_mu_), so the first live input alone is kept.
        std::optional<absl::MutexLock> lock;
        if (frame->is_root) lock.emplace(&merge_mu_);
        if (is_control) {
          const int64_t c = count.fetch_sub(2, std::memory_order_acq_rel) - 2;
          dst_dead = DeadOf(c) == dst.num_inputs;
          dst_ready = PendingOf(c) == 0 || (PendingOf(c) == 1 && dst_dead);
        } else if (!input_dead) {
          const int64_t old = count.fetch_and(~int64_t{1}, std::memory_order_acq_rel);
          dst_ready = PendingOf(old) == 1;
          if (PendingOf(old) & 1) {
            Tensor& slot = it->inputs[e.dst_slot];
            // (Not `?:`, which would build a temporary Tensor.)
            if (last_use) {
              slot = std::move(*value);
            } else {
              slot = *value;
            }
          }
        } else {
          const int64_t c = count.fetch_add(kDeadOne, std::memory_order_acq_rel) + kDeadOne;
          dst_dead = DeadOf(c) == dst.num_inputs;
          dst_ready = PendingOf(c) == 1 && dst_dead;
        }
      } else {
        if (value != nullptr) {
          // Written before the count drops, so whoever sees it reach zero
          // sees the input (acq_rel below).
          Tensor& slot = it->inputs[e.dst_slot];
          if (last_use) {
            slot = std::move(*value);
          } else {
            slot = *value;
          }
        }
        if (dst.single_pending) {
          // This edge is the one it waits for (a chain's next link).
          dst_dead = input_dead;
          dst_ready = true;
        } else {
          const int64_t delta = input_dead ? kDeadOne - 1 : -1;
          const int64_t c = count.fetch_add(delta, std::memory_order_acq_rel) + delta;
          dst_dead = DeadOf(c) > 0;
          dst_ready = PendingOf(c) == 0;
        }
      }
      if (dst_ready) {
        if (dst.is_control_trigger) dst_dead = false;
        TaggedNode& t = ready->emplace_back();  // built in place
        t.id = e.dst;
        t.frame = frame;
        t.iter_state = it;
        t.is_dead = dst_dead;
        if (!frame->is_root) ++it->outstanding_ops;
      }
    }
  }

  // Finds the frame `item` (an Enter) opens from iteration `iter` of
  // `parent`, creating it on first use.
  FrameState* FindOrCreateChildFrame(FrameState* parent, int64_t iter, const NodeItem& item) {
    const Executor::FrameInfo& info = ex_->frames_[item.child_frame];
    std::string name = absl::StrCat(parent->name, ";", iter, ";", info.name);
    absl::MutexLock lock(&frames_mu_);
    auto it = frames_.find(name);
    if (it != frames_.end()) return it->second.get();
    auto frame = std::make_unique<FrameState>();
    frame->info = &info;
    frame->id = FrameId(name);
    frame->name = std::move(name);
    frame->parent = parent;
    frame->parent_iter = iter;
    frame->max_parallel_iterations = item.parallel_iterations;
    frame->num_pending_inputs = info.num_enters;
    frame->iterations.resize(item.parallel_iterations + 1);
    frame->iterations[0] = std::make_unique<IterationState>(info, 0);
    if (!parent->is_root) {
      absl::MutexLock parent_lock(&parent->mu);
      ++parent->Iteration(iter)->outstanding_frame_count;
    }
    FrameState* raw = frame.get();
    frames_.emplace(raw->name, std::move(frame));
    return raw;
  }

  // A constant Enter's value reaches every iteration, present and future.
  void AddLoopInvariantLocked(FrameState* frame, const NodeItem& item, bool is_dead,
                              Outputs* outputs, ReadyList* ready) {
    Tensor value = is_dead ? Tensor() : (*outputs)[0];
    frame->inv_values.emplace_back(item.node->id(), value);
    Outputs one{value};
    const int64_t oldest = frame->iteration_count - frame->num_outstanding_iterations + 1;
    for (int64_t i = oldest; i <= frame->iteration_count; ++i) {
      ActivateNodes(item, is_dead, frame, frame->Iteration(i), &one, false, ready);
    }
  }

  // Starts the next iteration of `frame` (locked); returns its number.
  int64_t IncrementIterationLocked(FrameState* frame, ReadyList* ready) {
    const int64_t next = ++frame->iteration_count;
    auto& slot = frame->iterations[next % frame->iterations.size()];
    if (frame->spare != nullptr) {
      slot = std::move(frame->spare);
      slot->Reuse(*frame->info, next);
    } else {
      slot = std::make_unique<IterationState>(*frame->info, next);
    }
    IterationState* it = slot.get();
    ++frame->num_outstanding_iterations;
    frame->dead_exits.clear();
    std::vector<std::pair<int, Tensor>> roots;
    roots.swap(frame->next_iter_roots);
    for (auto& [id, value] : roots) {
      Outputs one{std::move(value)};
      const bool dead = !one[0].IsInitialized();
      ActivateNodes(ex_->items_[id], dead, frame, it, &one, true, ready);
    }
    for (const auto& [id, value] : frame->inv_values) {
      Outputs one{value};
      ActivateNodes(ex_->items_[id], !value.IsInitialized(), frame, it, &one, false, ready);
    }
    return next;
  }

  bool IsIterationDoneLocked(FrameState* frame, int64_t iter) {
    const IterationState* it = frame->Iteration(iter);
    if (it->outstanding_ops != 0 || it->outstanding_frame_count != 0) return false;
    // Iteration 0 may still get inputs from Enters; a later one from the
    // iteration before it.
    if (iter == 0) return frame->num_pending_inputs == 0;
    return frame->Iteration(iter - 1) == nullptr;
  }

  // Frees the finished iterations from `iter` on, starting held-back ones;
  // returns true if the whole frame is done.
  bool CleanupIterationsLocked(FrameState* frame, int64_t iter, ReadyList* ready) {
    int64_t cur = iter;
    while (cur <= frame->iteration_count && IsIterationDoneLocked(frame, cur)) {
      frame->spare = std::move(frame->iterations[cur % frame->iterations.size()]);
      --frame->num_outstanding_iterations;
      ++cur;
      if (!frame->next_iter_roots.empty()) IncrementIterationLocked(frame, ready);
    }
    return frame->num_pending_inputs == 0 && frame->num_outstanding_iterations == 0;
  }

  bool DecrementOutstandingOpsLocked(FrameState* frame, int64_t iter, ReadyList* ready) {
    IterationState* it = frame->Iteration(iter);
    if (--it->outstanding_ops != 0) return false;
    return CleanupIterationsLocked(frame, iter, ready);
  }

  bool DecrementOutstandingOps(FrameState* frame, int64_t iter, ReadyList* ready) {
    if (frame->is_root) return false;  // the step's counter ends the root
    absl::MutexLock lock(&frame->mu);
    return DecrementOutstandingOpsLocked(frame, iter, ready);
  }

  // A child frame of `frame`'s iteration `iter` finished.
  void CleanupFramesIterations(FrameState* frame, int64_t iter, ReadyList* ready) {
    if (frame->is_root) return;
    bool done;
    {
      absl::MutexLock lock(&frame->mu);
      --frame->Iteration(iter)->outstanding_frame_count;
      done = CleanupIterationsLocked(frame, iter, ready);
    }
    if (done) {
      FrameState* parent = frame->parent;
      const int64_t parent_iter = frame->parent_iter;
      DeleteFrame(frame, ready);
      CleanupFramesIterations(parent, parent_iter, ready);
    }
  }

  // The frame is done: its dead Exits make their consumers dead, and it is
  // freed.
  void DeleteFrame(FrameState* frame, ReadyList* ready) {
    Outputs none;
    for (int id : frame->dead_exits) {
      ActivateInFrame(ex_->items_[id], /*is_dead=*/true, frame->parent, frame->parent_iter,
                      &none, ready);
    }
    std::unique_ptr<FrameState> owned;
    {
      absl::MutexLock lock(&frames_mu_);
      auto it = frames_.find(frame->name);
      owned = std::move(it->second);
      frames_.erase(it);
    }
  }

  void ClearInputs(TaggedNode t, const NodeItem& item) {
    Tensor* in = t.iter_state->inputs.get() + item.input_start;
    if (item.has_constant_input && t.frame->is_root) {
      // Constant slots stay filled for the next step.
      const std::vector<bool>& constant = ex_->frames_[0].constant_slot;
      for (int i = 0; i < item.num_inputs; ++i) {
        if (constant[item.input_start + i]) continue;
        in[i].~Tensor();
        new (&in[i]) Tensor();
      }
      return;
    }
    for (int i = 0; i < item.num_inputs; ++i) {
      // Reset in place: assigning a temporary Tensor() costs a stack
      // round trip per slot, a measurable share of a tiny node.
      in[i].~Tensor();
      new (&in[i]) Tensor();
    }
  }

  void StartStats(const NodeItem& item, NodeExecStats* stats) {
    stats->set_node_name(item.node->name());
    const int64_t now = absl::GetCurrentTimeNanos();
    stats->set_all_start_nanos(now);
    stats->set_all_start_micros(now / 1000);
    stats->set_op_start_rel_nanos(0);
    stats->set_thread_id(static_cast<uint32_t>(syscall(SYS_gettid)));
  }

  void FinishStats(const NodeItem& item, const Outputs& outputs, NodeExecStats* stats) {
    const int64_t end = absl::GetCurrentTimeNanos() - stats->all_start_nanos();
    stats->set_all_end_rel_nanos(end);
    stats->set_all_end_rel_micros(end / 1000);
    stats->set_op_start_rel_micros(stats->op_start_rel_nanos() / 1000);
    stats->set_op_end_rel_micros(stats->op_end_rel_nanos() / 1000);
    std::string label = absl::StrCat(item.node->name(), " = ", item.node->op(), "(");
    for (int i = 0; i < item.node->def().input_size(); ++i) {
      absl::StrAppend(&label, i ? ", " : "", item.node->def().input(i));
    }
    absl::StrAppend(&label, ")");
    stats->set_timeline_label(std::move(label));
    for (int k = 0; k < static_cast<int>(outputs.size()); ++k) {
      const Tensor& t = outputs[k];
      if (!t.IsInitialized()) continue;  // unset or dead
      NodeOutput* out = stats->add_output();
      out->set_slot(k);
      TensorDescription* d = out->mutable_tensor_description();
      d->set_dtype(t.dtype());
      t.shape().AsProto(d->mutable_shape());
      d->mutable_allocation_description()->set_requested_bytes(
          static_cast<int64_t>(t.TotalBytes()));
      d->mutable_allocation_description()->set_allocator_name(
          t.buffer_allocator() ? t.buffer_allocator()->Name() : "");
    }
    args_.stats->Save(std::move(*stats));
  }

  // Accounts for a finished node and queues `ready`. Returns true if the
  // step is over (and `this` deleted).
  bool NodeDone(const ReadyList& ready, ReadyList* inline_ready) {
    const int n = static_cast<int>(ready.size());
    if (n == 0) return FinishOne();
    // One finished, n started. Count the new ones before any can finish.
    if (n > 1) outstanding_.fetch_add(n - 1, std::memory_order_relaxed);
    Dispatch(ready, inline_ready);
    return false;
  }

  // NodeDone for a node that completed on a thread of its own (an async
  // kernel woken later): everything ready goes to the runner, so this
  // thread (the sender's, for a Recv) returns at once.
  void NodeDoneLater(const ReadyList& ready) {
    const int n = static_cast<int>(ready.size());
    if (n == 0) {
      FinishOne();
      return;
    }
    if (n > 1) outstanding_.fetch_add(n - 1, std::memory_order_relaxed);
    if (args_.inline_cheap_only && !t_cheap_only) {
      ProcessCheapHere(ready);
      return;
    }
    ReadyList batch;
    Dispatch(ready, &batch);
    args_.runner([this, batch = std::move(batch)]() mutable { Process(std::move(batch)); });
  }

  bool FinishOne() {
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Finish();
      return true;
    }
    return false;
  }

  // `ready` (counted as outstanding) under inline_cheap_only: the cheap
  // nodes, and what they make ready that is cheap, run on this thread;
  // every expensive node goes to the runner.
  void ProcessCheapHere(const ReadyList& ready) {
    t_cheap_only = true;
    ReadyList here;
    Dispatch(ready, &here);
    if (!here.empty()) Process(std::move(here));
    t_cheap_only = false;
  }

  // Cheap nodes (cheaper still than a thread hop in loops: WorthAHop) run
  // inline; one expensive node runs inline unless something is already
  // queued here (or this thread keeps only cheap ones: t_cheap_only);
  // other expensive nodes go to the runner. The kept expensive node runs
  // after the cheap ones (`here` is taken from the back): what they make
  // ready meanwhile, an expensive node on another path (a layer's gradient
  // next to another layer's optimizer update), goes to the runner and runs
  // beside it instead of after it.
  void Dispatch(const ReadyList& ready, ReadyList* here) {
    bool kept_expensive = !here->empty() || t_cheap_only;
    for (const TaggedNode& t : ready) {
      if (!ex_->WorthAHop(t.id, !t.frame->is_root)) {
        here->push_back(t);
      } else if (!kept_expensive) {
        kept_expensive = true;
        here->insert(here->begin(), t);
      } else {
        args_.runner([this, t] { Process(ReadyList{t}); });
      }
    }
  }

  void Finish() {
    if (cancel_token_ >= 0) args_.cancellation->TryDeregister(cancel_token_);
    absl::Status s;
    {
      absl::MutexLock lock(&abort_->mu);
      s = abort_->status;
    }
    Executor::DoneCallback done = std::move(done_);
    delete this;
    done(s);
  }

  const Executor* ex_;
  const Executor::Args args_;
  Executor::DoneCallback done_;
  FrameState root_;
  // Serialises updates of root-frame Merges (see ActivateNodes).
  absl::Mutex merge_mu_;
  // Loop frames alive in this step, by full name. A step that ends early
  // (an error, or a loop left waiting on a dead input) frees the rest here.
  absl::Mutex frames_mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<FrameState>> frames_
      ABSL_GUARDED_BY(frames_mu_);
  // Nodes started and not yet finished, over all frames.
  std::atomic<int> outstanding_{0};
  std::shared_ptr<AbortState> abort_ = std::make_shared<AbortState>();
  int64_t cancel_token_ = -1;
};

void Executor::RunAsync(const Args& args, DoneCallback done) const {
  (new ExecutorState(this, args, std::move(done)))->Start();
}

absl::Status Executor::Run(const Args& args) const {
  absl::Notification n;
  absl::Status result;
  RunAsync(args, [&](const absl::Status& s) {
    result = s;
    n.Notify();
  });
  n.WaitForNotification();
  return result;
}

}  // namespace graphrun
