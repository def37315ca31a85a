#include "runtime/executor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "graph/import.h"
#include "graph/status_macros.h"

namespace graphrun {

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
  const int n = graph->num_nodes();
  ex->items_.resize(n);
  int slot = 0;
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
    item.input_start = slot;
    item.num_inputs = node->num_inputs();
    item.num_outputs = node->num_outputs();
    item.output_uses.assign(item.num_outputs, 0);
    slot += item.num_inputs;
  }
  ex->total_inputs_ = slot;
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
    item.initial_pending = static_cast<int>(node->in_edges().size());
    if (item.initial_pending == 0) ex->root_nodes_.push_back(i);
  }
  return ex;
}

// The state of one step. Deletes itself when the step is done.
class ExecutorState {
 public:
  // A node to run, in a frame and iteration (root frame, iteration 0 until
  // control flow arrives).
  struct TaggedNode {
    int id;
    int64_t frame_id;
    int64_t iter;
  };
  using ReadyList = absl::InlinedVector<TaggedNode, 8>;

  ExecutorState(const Executor* ex, const Executor::Args& args,
                Executor::DoneCallback done)
      : ex_(ex),
        args_(args),
        done_(std::move(done)),
        inputs_(new Tensor[ex->total_inputs_]),
        input_dead_(new std::atomic<bool>[ex->items_.size()]),
        pending_(new std::atomic<int>[ex->items_.size()]) {
    for (size_t i = 0; i < ex->items_.size(); ++i) {
      pending_[i].store(ex->items_[i].initial_pending, std::memory_order_relaxed);
      input_dead_[i].store(false, std::memory_order_relaxed);
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
    ReadyList ready;
    for (int id : ex_->root_nodes_) ready.push_back({id, 0, 0});
    outstanding_.store(static_cast<int>(ready.size()), std::memory_order_relaxed);
    // Roots: cheap ones and one expensive one run here; others go to the pool.
    ScheduleReady(ready, nullptr);
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

  void Abort(const absl::Status& s) { abort_->Abort(s); }

  // A node failed: record the error and cancel the step, so kernels that
  // wait (async ones) are released instead of holding the step open. Safe
  // to call while this node is still counted as outstanding.
  void Fail(const absl::Status& s) {
    Abort(s);
    args_.cancellation->StartCancel();
  }

  // Runs `first` and then, inline, whatever becomes ready that should run
  // on this thread.
  void Process(TaggedNode first) {
    ReadyList inline_ready;
    inline_ready.push_back(first);
    ReadyList ready;
    while (!inline_ready.empty()) {
      TaggedNode t = inline_ready.back();
      inline_ready.pop_back();
      const Executor::NodeItem& item = ex_->items_[t.id];
      ready.clear();
      if (abort_->aborted.load(std::memory_order_acquire)) {
        ClearInputs(item);
        if (NodeDone(ready, &inline_ready)) return;
        continue;
      }
      const bool dead = input_dead_[t.id].load(std::memory_order_relaxed);
      if (dead && item.kernel->RunsOnDeadInput()) {
        // A _Send tells its Recv that the tensor is dead.
        OpKernelContext::Params params;
        FillParams(t, item, &params);
        params.is_input_dead = true;
        OpKernelContext ctx(&params);
        item.kernel->Compute(&ctx);
        if (!ctx.status().ok()) Fail(NodeError(item, ctx.status()));
      }
      if (dead) {
        // A dead node does not run; its outputs are dead too.
        ClearInputs(item);
        PropagateDead(item, &ready);
        if (NodeDone(ready, &inline_ready)) return;
        continue;
      }
      if (item.async) {
        RunAsyncNode(t, item);
        continue;
      }
      OpKernelContext::Params params;
      FillParams(t, item, &params);
      OpKernelContext ctx(&params);
      NodeExecStats* stats = nullptr;
      NodeExecStats stats_storage;
      if (args_.stats != nullptr) {
        stats = &stats_storage;
        StartStats(item, stats);
      }
      item.kernel->Compute(&ctx);
      if (stats != nullptr) stats->set_op_end_rel_nanos(absl::GetCurrentTimeNanos() - stats->all_start_nanos());
      HandleResult(item, &ctx, &ready);
      ClearInputs(item);
      if (stats != nullptr) FinishStats(item, ctx.mutable_outputs(), stats);
      if (NodeDone(ready, &inline_ready)) return;
    }
  }

  void RunAsyncNode(TaggedNode t, const Executor::NodeItem& item) {
    struct AsyncState {
      OpKernelContext::Params params;
      std::unique_ptr<OpKernelContext> ctx;
      NodeExecStats stats;
    };
    auto* state = new AsyncState;
    FillParams(t, item, &state->params);
    state->ctx = std::make_unique<OpKernelContext>(&state->params);
    if (args_.stats != nullptr) StartStats(item, &state->stats);
    item.kernel->AsAsync()->ComputeAsync(state->ctx.get(), [this, state, &item] {
      if (args_.stats != nullptr) {
        state->stats.set_op_end_rel_nanos(absl::GetCurrentTimeNanos() -
                                          state->stats.all_start_nanos());
      }
      ReadyList ready;
      HandleResult(item, state->ctx.get(), &ready);
      ClearInputs(item);
      if (args_.stats != nullptr) {
        FinishStats(item, state->ctx->mutable_outputs(), &state->stats);
      }
      delete state;
      ReadyList inline_ready;
      if (NodeDone(ready, &inline_ready)) return;
      // Continue on this thread with what should run inline.
      for (const TaggedNode& r : inline_ready) Process(r);
    });
  }

  // After a kernel ran: fail the step on an error, else hand its outputs
  // (or their deadness) to the consumers, collecting those now ready.
  void HandleResult(const Executor::NodeItem& item, OpKernelContext* ctx,
                    ReadyList* ready) {
    absl::Status s = ctx->status();
    if (s.ok() && ctx->outputs_dead()) {
      PropagateDead(item, ready);
      return;
    }
    if (s.ok()) s = CheckOutputs(item, ctx->mutable_outputs());
    if (!s.ok()) {
      Fail(NodeError(item, s));
    } else {
      PropagateOutputs(item, ctx->mutable_outputs(), ready);
    }
  }

  void FillParams(TaggedNode t, const Executor::NodeItem& item,
                  OpKernelContext::Params* params) {
    params->step_id = args_.step_id;
    params->device = ex_->device_;
    params->op_kernel = item.kernel.get();
    params->inputs = inputs_.get() + item.input_start;
    params->num_inputs = item.num_inputs;
    params->cancellation = args_.cancellation;
    params->frame_id = t.frame_id;
    params->iter_id = t.iter;
    params->rendezvous = args_.rendezvous;
    params->call_frame = args_.call_frame;
  }

  absl::Status CheckOutputs(const Executor::NodeItem& item,
                            absl::InlinedVector<Tensor, 4>* outputs) {
    for (int k = 0; k < item.num_outputs; ++k) {
      const Tensor& t = (*outputs)[k];
      if (!t.IsInitialized()) {
        if (item.output_uses[k] == 0) continue;  // nobody reads it
        return absl::InternalError(absl::StrCat("kernel did not set output ", k));
      }
      if (t.dtype() != BaseType(item.node->output_type(k))) {
        return absl::InternalError(absl::StrCat(
            "kernel produced ", DataTypeString(t.dtype()), " for output ", k,
            ", declared ", DataTypeString(item.node->output_type(k))));
      }
    }
    return absl::OkStatus();
  }

  absl::Status NodeError(const Executor::NodeItem& item, const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(NodeLabel(*item.node), " on ",
                                               ex_->device_->name(), ": ",
                                               s.message()));
  }

  void PropagateOutputs(const Executor::NodeItem& item,
                        absl::InlinedVector<Tensor, 4>* outputs,
                        ReadyList* ready) {
    // Remaining data uses of each output: the last one takes the tensor by
    // move, so a single consumer may later reuse its buffer in place.
    absl::InlinedVector<int, 4> remaining(item.output_uses.begin(),
                                          item.output_uses.end());
    for (int i = item.out_begin; i < item.out_end; ++i) {
      const Executor::OutEdge& e = ex_->out_edges_[i];
      if (e.dst_slot >= 0) {
        Tensor& out = (*outputs)[e.src_output];
        if (--remaining[e.src_output] == 0) {
          inputs_[e.dst_slot] = std::move(out);
        } else {
          inputs_[e.dst_slot] = out;
        }
      }
      // acq_rel: the writes above happen-before the consumer runs.
      if (pending_[e.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready->push_back({e.dst, 0, 0});
      }
    }
  }

  void PropagateDead(const Executor::NodeItem& item, ReadyList* ready) {
    for (int i = item.out_begin; i < item.out_end; ++i) {
      const Executor::OutEdge& e = ex_->out_edges_[i];
      input_dead_[e.dst].store(true, std::memory_order_relaxed);
      if (pending_[e.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready->push_back({e.dst, 0, 0});
      }
    }
  }

  void ClearInputs(const Executor::NodeItem& item) {
    Tensor* in = inputs_.get() + item.input_start;
    for (int i = 0; i < item.num_inputs; ++i) in[i] = Tensor();
  }

  void StartStats(const Executor::NodeItem& item, NodeExecStats* stats) {
    stats->set_node_name(item.node->name());
    const int64_t now = absl::GetCurrentTimeNanos();
    stats->set_all_start_nanos(now);
    stats->set_all_start_micros(now / 1000);
    stats->set_op_start_rel_nanos(0);
    stats->set_thread_id(static_cast<uint32_t>(syscall(SYS_gettid)));
  }

  void FinishStats(const Executor::NodeItem& item,
                   absl::InlinedVector<Tensor, 4>* outputs, NodeExecStats* stats) {
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
    for (int k = 0; k < static_cast<int>(outputs->size()); ++k) {
      const Tensor& t = (*outputs)[k];
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

  // Accounts for a finished node and schedules `ready`. Returns true if the
  // step is over (and `this` deleted).
  bool NodeDone(const ReadyList& ready, ReadyList* inline_ready) {
    const int n = static_cast<int>(ready.size());
    if (n == 0) {
      if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        Finish();
        return true;
      }
      return false;
    }
    // One finished, n started. Count the new ones before any can finish.
    if (n > 1) outstanding_.fetch_add(n - 1, std::memory_order_relaxed);
    ScheduleReady(ready, inline_ready);
    return false;
  }

  void ScheduleReady(const ReadyList& ready, ReadyList* inline_ready) {
    if (inline_ready == nullptr) {
      // Called from Start: process everything that should run here now.
      ReadyList here;
      Dispatch(ready, &here);
      for (const TaggedNode& t : here) Process(t);
      return;
    }
    Dispatch(ready, inline_ready);
  }

  // Cheap nodes run inline; one expensive node runs inline unless something
  // is already queued here; other expensive nodes go to the runner.
  void Dispatch(const ReadyList& ready, ReadyList* here) {
    bool kept_expensive = !here->empty();
    for (const TaggedNode& t : ready) {
      const Executor::NodeItem& item = ex_->items_[t.id];
      if (!item.expensive) {
        here->push_back(t);
      } else if (!kept_expensive) {
        kept_expensive = true;
        here->push_back(t);
      } else {
        args_.runner([this, t] { Process(t); });
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
  std::unique_ptr<Tensor[]> inputs_;
  // Set when any input of the node is dead (control flow's untaken branch).
  std::unique_ptr<std::atomic<bool>[]> input_dead_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  // Nodes started and not yet finished.
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
