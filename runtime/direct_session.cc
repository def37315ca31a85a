#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "kernels/eigen.h"
#include "kernels/rendezvous.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/placer.h"
#include "runtime/executor.h"
#include "runtime/kernel_availability.h"
#include "runtime/frozen_reads.h"
#include "runtime/plan_builder.h"
#include "runtime/plan_cache.h"
#include "runtime/rendezvous_mgr.h"
#include "runtime/session.h"
#include "runtime/step_graph.h"

namespace graphrun {
namespace {

// Everything one (feeds, fetches, targets) signature needs, built once.
struct Plan {
  // One per device the placement uses (one in the common case: then no
  // Send/Recv and no rendezvous).
  std::vector<PartitionPlan> partitions;
  // The step's graph before placement and what feeding and fetching need.
  StepGraph step;
  PlacementSummary placement;
  // Some node of the step may change state (runtime/frozen_reads.h).
  bool writes_state = false;
  // Not frozen yet, but could be: its runs, counted toward kFreezeAtRun.
  bool freezable = false;
  mutable std::atomic<int> runs{0};
  // The step's variable reads are constants of the plan, taken when the
  // session's state version was `frozen_version`.
  bool frozen = false;
  uint64_t frozen_version = 0;
};

// Set while a plan's frozen reads are fetched: the plan of that fetch is
// never frozen itself.
thread_local bool fetching_frozen_reads = false;

// A read-only step's plan is first built as written, so the first output
// comes as soon as it can; the step's second run rebuilds it frozen (a
// step run once gains nothing from it).
constexpr int kFreezeAtRun = 2;

// The most threads one session may start: the inter-op pool plus every CPU
// device's intra-op pool. Past it, thread creation would fail (and abort)
// long before any use could be made of them.
constexpr int64_t kMaxSessionThreads = 4096;

// A device's allocators: its own memory, and host memory when that is
// another allocator (a GPU's pinned memory).
std::vector<Allocator*> DeviceAllocators(const Device& device) {
  std::vector<Allocator*> out = {device.allocator()};
  AllocatorAttributes host;
  host.on_host = true;
  Allocator* h = device.GetAllocator(host);
  if (h != nullptr && h != out[0]) out.push_back(h);
  return out;
}

void AddAllocatorStats(const Device& device, DeviceStepStats* stats) {
  for (Allocator* a : DeviceAllocators(device)) {
    std::optional<AllocatorStats> s = a->GetStats();
    if (!s.has_value()) continue;
    AllocatorStepStats* out = stats->add_allocators();
    out->set_allocator_name(a->Name());
    out->set_bytes_in_use(s->bytes_in_use);
    out->set_peak_bytes_in_use(s->peak_bytes_in_use);
    out->set_bytes_reserved(s->bytes_reserved);
    out->set_largest_free_chunk(s->largest_free_block);
    out->set_bytes_limit(s->bytes_limit);
    out->set_num_allocs(s->num_allocs);
  }
}

// InvalidArgument for negative thread counts or more than
// kMaxSessionThreads threads in all, naming the options.
absl::Status CheckThreadCounts(const SessionOptions& options) {
  if (options.inter_op_threads < 0 || options.intra_op_threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inter_op_threads (", options.inter_op_threads, ") and intra_op_threads (",
        options.intra_op_threads, ") must be >= 0 (0 = from the core count)"));
  }
  const int64_t cores = NumSchedulableCpus();
  const int64_t n = options.cpu_devices;
  const int64_t inter = options.inter_op_threads > 0 ? options.inter_op_threads : cores;
  const int64_t intra = options.intra_op_threads > 0 ? options.intra_op_threads
                                                     : std::max<int64_t>(1, cores / n);
  const int64_t total = inter + n * intra;  // each term < 2^31: no overflow
  if (total > kMaxSessionThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the session would start ", total, " threads (inter_op_threads ", inter,
        " + cpu_devices ", n, " x intra_op_threads ", intra, "); at most ",
        kMaxSessionThreads));
  }
  return absl::OkStatus();
}

class DirectSession : public Session {
 public:
  DirectSession(const SessionOptions& options) : options_(options) {
    const int cores = NumSchedulableCpus();
    const int n = std::max(1, options.cpu_devices);
    CpuDeviceOptions cpu;
    cpu.intra_op_threads = options.intra_op_threads > 0
                               ? options.intra_op_threads
                               : std::max(1, cores / n);
    for (int i = 0; i < n; ++i) {
      devices_.push_back(NewCpuDevice(options.device_prefix, i, cpu));
    }
    cost_model_ = std::make_unique<placer::CostModel>();
    availability_ = RegistryAvailability();
    const int inter = options.inter_op_threads > 0 ? options.inter_op_threads : cores;
    inter_op_pool_ = std::make_unique<Eigen::ThreadPool>(inter, options.allow_thread_spinning);
  }

  // InvalidArgument when SessionOptions::device_prefix does not make
  // canonical device names.
  absl::Status Init(const GraphDef& graph) {
    if (options_.make_gpu_devices) {
      GR_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> gpus,
                          options_.make_gpu_devices(options_.device_prefix));
      for (auto& d : gpus) devices_.push_back(std::move(d));
    }
    rendezvous_mgr_ = std::make_unique<RendezvousMgr>(devices());
    GR_ASSIGN_OR_RETURN(device_set_, DescribeDevices(devices(), options_.device_prefix));
    if (!options_.cost_profile.empty()) {
      GR_RETURN_IF_ERROR(cost_model_->LoadProfile(options_.cost_profile));
    }
    if (options_.log_device_placement) {
      // TensorFlow's banner: devices with a physical description (GPUs).
      std::string mapping;
      for (const auto& d : devices_) {
        const std::string desc = d->physical_description();
        if (!desc.empty()) absl::StrAppend(&mapping, d->name(), " -> ", desc, "\n");
      }
      const std::string banner = mapping.empty()
                                     ? std::string("Device mapping: no known devices.\n")
                                     : absl::StrCat("Device mapping:\n", mapping);
      std::fwrite(banner.data(), 1, banner.size(), stdout);
      std::fflush(stdout);
    }
    return Extend(graph);
  }

  absl::Status Extend(const GraphDef& graph) override { return plans_.Extend(graph); }

  absl::Status CancelRunningSteps(const std::string& reason) override {
    const absl::Status cancelled = absl::CancelledError(reason);
    absl::MutexLock lock(&running_mu_);
    for (auto& [id, step] : running_) {
      step.cancellation->StartCancel();
      if (step.rendezvous != nullptr) step.rendezvous->StartAbort(cancelled);
    }
    return absl::OkStatus();
  }

  std::vector<Device*> devices() const override {
    std::vector<Device*> out;
    for (const auto& d : devices_) out.push_back(d.get());
    return out;
  }

  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs, RunMetadata* metadata) override {
    std::vector<std::string> feed_names;
    feed_names.reserve(feeds.size());
    for (const auto& f : feeds) feed_names.push_back(f.first);
    const StepSignature sig = MakeStepSignature(feed_names, fetches, targets);
    auto build = [&](const Graph& graph) { return BuildPlan(graph, sig, feeds, fetches); };
    GR_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan, plans_.Get(sig.key, build));
    if (plan->frozen && plan->frozen_version != state_version_.load(std::memory_order_acquire)) {
      // State changed since the plan took its variables' values: this step
      // is rebuilt, and no longer frozen (state it reads does change).
      {
        absl::MutexLock lock(&variables_mu_);
        unfrozen_.insert(sig.key);
      }
      plans_.Erase(sig.key, plan);
      GR_ASSIGN_OR_RETURN(plan, plans_.Get(sig.key, build));
    } else if (plan->freezable && plan->runs.fetch_add(1, std::memory_order_relaxed) + 1 ==
                                      kFreezeAtRun) {
      {
        absl::MutexLock lock(&variables_mu_);
        freeze_wanted_.insert(sig.key);
      }
      plans_.Erase(sig.key, plan);
      GR_ASSIGN_OR_RETURN(plan, plans_.Get(sig.key, build));
    }
    // Before the step and after it: a plan frozen while it runs is stale.
    if (plan->writes_state) state_version_.fetch_add(1, std::memory_order_acq_rel);
    absl::Cleanup wrote_state = [this, &plan] {
      if (plan->writes_state) state_version_.fetch_add(1, std::memory_order_acq_rel);
    };
    const int num_fetches = static_cast<int>(plan->step.fetch_nodes.size());
    // The plan's feeds and fetches are in `sig`'s order.
    CallFrame frame;
    frame.args.reserve(feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      const auto& [name, t] = feeds[sig.feed_order[i]];
      GR_RETURN_IF_ERROR(CheckFeed(plan->step, i, name, t));
      frame.args.push_back(t);
    }
    frame.retvals.resize(num_fetches);

    CancellationManager cancellation;
    Executor::Args args;
    args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
    args.call_frame = &frame;
    args.cancellation = &cancellation;
    Eigen::ThreadPool* pool = inter_op_pool_.get();
    args.runner = [pool](std::function<void()> fn) { pool->Schedule(std::move(fn)); };
    const size_t num_parts = plan->partitions.size();
    // A step over several devices meets at its rendezvous, found by step
    // id; the first real error aborts it, so partitions waiting in a Recv
    // fail instead of hanging. It is cleaned up when Run returns.
    std::shared_ptr<Rendezvous> rendezvous;
    const bool client_rendezvous = options_.feeds_through_rendezvous;
    if (num_parts > 1 || client_rendezvous) rendezvous = rendezvous_mgr_->Find(args.step_id);
    args.rendezvous = rendezvous.get();
    absl::Cleanup cleanup_rendezvous = [this, step_id = args.step_id, &rendezvous] {
      if (rendezvous != nullptr) rendezvous_mgr_->Cleanup(step_id);
    };
    {
      // Known to CancelRunningSteps until it returns.
      absl::MutexLock lock(&running_mu_);
      running_[args.step_id] = RunningStep{&cancellation, rendezvous.get()};
    }
    absl::Cleanup forget_running = [this, step_id = args.step_id] {
      absl::MutexLock lock(&running_mu_);
      running_.erase(step_id);
    };
    if (client_rendezvous) {
      // The client side: feeds are sent before the step starts.
      for (size_t i = 0; i < feeds.size(); ++i) {
        GR_RETURN_IF_ERROR(rendezvous->Send(plan->step.feed_keys[i], Rendezvous::Args(),
                                            feeds[sig.feed_order[i]].second, false));
      }
    }
    std::vector<DeviceStepStats> dev_stats(num_parts);
    std::vector<std::unique_ptr<StepStatsCollector>> collectors(num_parts);
    const bool trace = metadata != nullptr && run_options.trace_level() > RunOptions::NO_TRACE;

    // The devices' allocators learn where the step starts and ends (a GPU's
    // plans its memory from the step before: bfc_allocator.h).
    std::vector<Allocator*> step_allocators;
    for (const PartitionPlan& part : plan->partitions) {
      for (Allocator* a : DeviceAllocators(*part.executor->device())) {
        if (std::find(step_allocators.begin(), step_allocators.end(), a) ==
            step_allocators.end()) {
          step_allocators.push_back(a);
        }
      }
    }
    for (Allocator* a : step_allocators) a->BeginStep();
    absl::Cleanup end_step = [&step_allocators] {
      for (Allocator* a : step_allocators) a->EndStep();
    };

    StepStatus step_status;
    std::atomic<int> remaining{static_cast<int>(num_parts)};
    absl::Notification all_done;
    if (trace) {
      // Each allocator's peak is then this step's (steps running at the
      // same time share it).
      for (const PartitionPlan& part : plan->partitions) {
        for (Allocator* a : DeviceAllocators(*part.executor->device())) a->ResetPeak();
      }
    }
    for (size_t i = 0; i < num_parts; ++i) {
      const PartitionPlan& part = plan->partitions[i];
      Executor::Args part_args = args;
      if (trace) {
        dev_stats[i].set_device(part.executor->device()->name());
        collectors[i] = std::make_unique<StepStatsCollector>(&dev_stats[i]);
        part_args.stats = collectors[i].get();
      }
      auto part_done = [&, rendezvous](const absl::Status& s) {
        if (!s.ok() && step_status.Update(s) && rendezvous != nullptr) {
          rendezvous->StartAbort(s);
        }
        // The last partition to finish wakes the caller; nothing here is
        // touched after that.
        if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.Notify();
      };
      if (i + 1 < num_parts || run_options.timeout_in_ms() > 0) {
        // Every partition but the last starts on the inter-op pool, so the
        // devices start together instead of one after another; with a
        // timeout, the last too, so this thread is free to keep the time.
        const Executor* executor = part.executor.get();
        pool->Schedule([executor, part_args, part_done] {
          executor->RunAsync(part_args, part_done);
        });
      } else {
        part.executor->RunAsync(part_args, part_done);
      }
    }
    absl::Status status;
    if (run_options.timeout_in_ms() > 0) {
      if (!all_done.WaitForNotificationWithTimeout(
              absl::Milliseconds(run_options.timeout_in_ms()))) {
        cancellation.StartCancel();
        if (rendezvous != nullptr) {
          rendezvous->StartAbort(absl::DeadlineExceededError("the step timed out"));
        }
        all_done.WaitForNotification();
        status = absl::DeadlineExceededError(absl::StrCat(
            "the step timed out after ", run_options.timeout_in_ms(), " ms"));
      }
    } else {
      all_done.WaitForNotification();
    }
    if (status.ok()) status = step_status.Get();
    if (!status.ok()) return status;

    if (client_rendezvous) {
      // The client side: each fetch was sent by the step's _Send; the
      // values are already there, so these callbacks run at once.
      for (int i = 0; i < num_fetches; ++i) {
        absl::Status fetch_status;
        rendezvous->RecvAsync(plan->step.fetch_keys[i], Rendezvous::Args(),
                              [&](const absl::Status& s, const Rendezvous::Args&,
                                  const Rendezvous::Args&, const Tensor& v, bool is_dead) {
                                fetch_status = s;
                                if (s.ok() && !is_dead) frame.retvals[i] = v;
                              });
        if (!fetch_status.ok()) return fetch_status;
      }
    }
    outputs->clear();
    outputs->resize(num_fetches);
    for (int i = 0; i < num_fetches; ++i) {
      const int caller = sig.fetch_order[i];
      if (!frame.retvals[i].IsInitialized()) {
        return absl::InternalError(
            absl::StrCat("fetch '", fetches[caller], "' was not produced"));
      }
      (*outputs)[caller] = std::move(frame.retvals[i]);
    }
    if (trace) {
      for (size_t i = 0; i < num_parts; ++i) {
        AddAllocatorStats(*plan->partitions[i].executor->device(), &dev_stats[i]);
      }
      for (auto& d : dev_stats) *metadata->mutable_step_stats()->add_dev_stats() = std::move(d);
    }
    if (metadata != nullptr) *metadata->mutable_placement() = plan->placement;
    if (metadata != nullptr && run_options.output_partition_graphs()) {
      for (const PartitionPlan& part : plan->partitions) {
        *metadata->add_partition_graphs() = part.graph->ToGraphDef();
      }
    }
    return absl::OkStatus();
  }

 private:
  // Builds the plan of `sig` over `graph`. Reads only what Init set up:
  // safe from any thread.
  absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(
      const Graph& graph, const StepSignature& sig,
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches) {
    auto plan = std::make_shared<Plan>();
    StepGraphOptions step_options;
    step_options.feeds_through_rendezvous = options_.feeds_through_rendezvous;
    step_options.client_device = devices_[0]->name();
    step_options.client_device_incarnation = devices_[0]->incarnation();
    step_options.optimize = options_.optimize != SessionOptions::Optimize::kNone;
    step_options.evaluate = KernelEvaluator(devices_[0].get());
    std::vector<std::string> feed_names, fetch_names;
    for (int i : sig.feed_order) {
      feed_names.push_back(feeds[i].first);
      step_options.feed_value_shapes.push_back(feeds[i].second.shape());
    }
    for (int i : sig.fetch_order) fetch_names.push_back(fetches[i]);
    step_options.pinned_devices = VariableDevices(graph);
    GR_ASSIGN_OR_RETURN(std::unique_ptr<Graph> frozen,
                        FreezeReads(graph, sig, feed_names, fetch_names, &plan->frozen_version,
                                    &plan->freezable));
    plan->frozen = frozen != nullptr;
    GR_ASSIGN_OR_RETURN(plan->step,
                        BuildStepGraph(frozen != nullptr ? *frozen : graph, feed_names,
                                       fetch_names, sig.targets, step_options));
    plan->writes_state = StepWritesState(*plan->step.graph);
    if (options_.log_optimizations && step_options.optimize) {
      const std::string log = plan->step.optimization.ToString();
      std::fwrite(log.data(), 1, log.size(), stdout);
      std::fflush(stdout);
    }
    PlanOptions plan_options;
    plan_options.placer.allow_soft_placement = options_.allow_soft_placement;
    plan_options.placer.availability = availability_.get();
    // Virtual CPU devices share the host's cores, and times measured on one
    // device with all the intra-op threads overstate what each of several
    // gets: spread a step over them only for a large predicted gain.
    plan_options.placer.min_spread_gain = 0.25;
    plan_options.incarnation = [this](const std::string& device) {
      for (const auto& d : devices_) {
        if (d->name() == device) return d->incarnation();
      }
      return uint64_t{0};  // not a device of this session: no key names it
    };
    if (options_.log_device_placement) {
      plan_options.placement_log = [](const std::string& log) {
        std::fwrite(log.data(), 1, log.size(), stdout);
        std::fflush(stdout);
      };
      plan_options.log_names = &plan->step.log_names;
      plan_options.log_removed = &plan->step.log_removed;
    }
    GR_ASSIGN_OR_RETURN(
        PartitionedStep placed,
        PlaceAndPartition(*plan->step.graph, device_set_, *cost_model_, plan_options));
    KeepVariableDevices(placed.partitions);
    plan->placement = std::move(placed.summary);
    ExecutorOptions executor_options;
    executor_options.check_numerics = options_.check_numerics;
    GR_ASSIGN_OR_RETURN(plan->partitions,
                        CreatePartitionExecutors(placed.partitions, devices(), executor_options));
    return plan;
  }

  // `graph` with the variable reads of a step that writes no state
  // replaced by their current values (runtime/frozen_reads.h), and the
  // state version they were read at; null when the step is not frozen
  // (off, it writes state, it reads no variable, it was frozen before and
  // went stale, a read fails: the step then runs as written and reports the
  // failure itself; or it has not yet run kFreezeAtRun - 1 times, when
  // `*freezable` says whether it could be).
  absl::StatusOr<std::unique_ptr<Graph>> FreezeReads(const Graph& graph,
                                                     const StepSignature& sig,
                                                     const std::vector<std::string>& feeds,
                                                     const std::vector<std::string>& fetches,
                                                     uint64_t* version, bool* freezable) {
    *freezable = false;
    if (!options_.freeze_read_only_variables ||
        options_.optimize == SessionOptions::Optimize::kNone || fetching_frozen_reads) {
      return nullptr;
    }
    bool wanted = false;
    {
      absl::MutexLock lock(&variables_mu_);
      if (unfrozen_.contains(sig.key)) return nullptr;
      wanted = freeze_wanted_.contains(sig.key);
    }
    const ReadOnlyStep step = FindReadOnlyStep(graph, feeds, fetches, sig.targets);
    if (step.writes_state || step.reads.empty()) return nullptr;
    // A step that fetches just the reads gains nothing, and its reads'
    // fetch would wait for its own plan.
    if (MakeStepSignature({}, step.reads, {}).key == sig.key) return nullptr;
    if (!wanted) {
      *freezable = true;
      return nullptr;
    }
    *version = state_version_.load(std::memory_order_acquire);
    std::vector<Tensor> values;
    fetching_frozen_reads = true;
    const absl::Status read = Run(RunOptions(), {}, step.reads, {}, &values, nullptr);
    fetching_frozen_reads = false;
    if (!read.ok()) return nullptr;
    return WithReadsAsConstants(graph, step.reads, values);
  }

  // Where each variable of `graph` lives, placed once: a variable's value is
  // in its device's ResourceMgr, so every step that uses it runs it there.
  // The whole graph is placed the first time a variable is met (as
  // TensorFlow places its graph once), so a variable goes where all of its
  // uses can reach it; where that placement fails, the first step that uses
  // a variable places it.
  std::map<std::string, std::string> VariableDevices(const Graph& graph) {
    absl::MutexLock lock(&variables_mu_);
    bool unplaced = false;
    for (const auto& node : graph.nodes()) {
      if (IsVariableOp(*node) && variable_devices_.count(node->name()) == 0) unplaced = true;
    }
    // A whole-graph placement that failed is not tried again for the same
    // graph: steps place those variables as they meet them.
    if (!unplaced || placed_graph_nodes_ == graph.num_nodes()) return variable_devices_;
    placed_graph_nodes_ = graph.num_nodes();
    placer::PlacerOptions o;
    o.allow_soft_placement = options_.allow_soft_placement;
    o.availability = availability_.get();
    o.min_spread_gain = 0.25;
    absl::StatusOr<placer::Placement> placed = placer::Place(graph, device_set_, *cost_model_, o);
    if (placed.ok()) {
      for (const auto& node : graph.nodes()) {
        if (!IsVariableOp(*node) || variable_devices_.count(node->name()) > 0) continue;
        variable_devices_[node->name()] =
            device_set_.devices()[placed->device[node->id()]].name;
      }
    }
    return variable_devices_;
  }
  // Variables, and stateful random ops (their generator lives in the
  // device's ResourceMgr, so each step carries on one stream).
  static bool IsVariableOp(const Node& node) { return IsPinnedOp(node.op()); }
  static bool IsPinnedOp(const std::string& op) {
    return op == "VariableV2" || op == "VarHandleOp" || op == "RandomUniform" ||
           op == "RandomStandardNormal" || op == "TruncatedNormal" || op == "RandomUniformInt";
  }
  // Variables a step placed (the whole graph could not be): they stay.
  template <typename Partitions>
  void KeepVariableDevices(const Partitions& partitions) {
    absl::MutexLock lock(&variables_mu_);
    for (const auto& [device, def] : partitions) {
      for (const NodeDef& n : def.node()) {
        if (IsPinnedOp(n.op())) {
          variable_devices_.emplace(n.name(), device);
        }
      }
    }
  }

  const SessionOptions options_;
  absl::Mutex variables_mu_;
  std::map<std::string, std::string> variable_devices_ ABSL_GUARDED_BY(variables_mu_);
  int placed_graph_nodes_ ABSL_GUARDED_BY(variables_mu_) = -1;  // graph size last placed whole
  std::vector<std::unique_ptr<Device>> devices_;
  // The same devices as the placer sees them.
  placer::DeviceSet device_set_;
  std::unique_ptr<placer::CostModel> cost_model_;
  std::unique_ptr<placer::KernelAvailability> availability_;
  std::unique_ptr<Eigen::ThreadPool> inter_op_pool_;
  std::atomic<int64_t> next_step_id_{1};
  // The steps running now, by step id: what cancels each.
  struct RunningStep {
    CancellationManager* cancellation;
    Rendezvous* rendezvous;  // null for a step of one partition
  };
  absl::Mutex running_mu_;
  // A hash map: no allocation per step once it has held as many steps.
  absl::flat_hash_map<int64_t, RunningStep> running_ ABSL_GUARDED_BY(running_mu_);
  // The rendezvous of each running step that needs one.
  std::unique_ptr<RendezvousMgr> rendezvous_mgr_;
  // By StepSignature::key, over the graph Extend set last.
  PlanCache<Plan> plans_;
  // Bumped before and after each step that may write state.
  std::atomic<uint64_t> state_version_{0};
  // Steps whose frozen plan went stale: built unfrozen from then on.
  absl::flat_hash_set<std::string> unfrozen_ ABSL_GUARDED_BY(variables_mu_);
  // Read-only steps run kFreezeAtRun times: built frozen from then on.
  absl::flat_hash_set<std::string> freeze_wanted_ ABSL_GUARDED_BY(variables_mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Create(const GraphDef& graph,
                                                         const SessionOptions& options) {
  if (options.cpu_devices < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpu_devices must be at least 1, not ", options.cpu_devices));
  }
  GR_RETURN_IF_ERROR(CheckThreadCounts(options));
  auto session = std::make_unique<DirectSession>(options);
  GR_RETURN_IF_ERROR(session->Init(graph));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace graphrun
