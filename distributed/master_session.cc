#include "distributed/master_session.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <cstdio>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distributed/cluster_spec.h"
#include "distributed/data_plane.h"
#include "distributed/direct_feeds.h"
#include "distributed/task_probe.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/placer.h"
#include "runtime/kernel_availability.h"
#include "runtime/plan_builder.h"
#include "runtime/plan_cache.h"
#include "runtime/step_graph.h"

namespace graphrun {
namespace {

// How long closing a session waits for its tasks to forget its graphs.
constexpr absl::Duration kCloseTimeout = absl::Seconds(5);
// What a RunGraph call's feeds may add up to: protobuf serializes messages
// of under 2 GB.
constexpr int64_t kMaxFeedBytes = (int64_t{1} << 31) - (int64_t{16} << 20);
// How long a task may take to answer when a failed step asks which of its
// tasks are gone.
constexpr absl::Duration kProbeTimeout = absl::Seconds(2);
// How long a fetch pulled over the data plane may stall.
constexpr absl::Duration kFetchStallTimeout = absl::Seconds(5);

// `s` with the task named, unless its message already names it.
absl::Status WithTask(const std::string& task, const absl::Status& s) {
  if (s.ok() || absl::StrContains(s.message(), task)) return s;
  return absl::Status(s.code(), absl::StrCat(task, ": ", s.message()));
}

// Waits for a number of asynchronous calls.
class Pending {
 public:
  explicit Pending(int n = 0) : remaining_(n) {}
  void Add() {
    absl::MutexLock lock(&mu_);
    ++remaining_;
  }
  void Done() {
    absl::MutexLock lock(&mu_);
    --remaining_;
  }
  // False when `timeout` passed first.
  bool Wait(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto zero = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return remaining_ == 0; };
    return mu_.AwaitWithTimeout(absl::Condition(&zero), timeout);
  }

 private:
  absl::Mutex mu_;
  int remaining_ ABSL_GUARDED_BY(mu_);
};

struct Task {
  std::string name;
  std::string address;
  std::shared_ptr<WorkerInterface> worker;
};

// What one signature needs: the step graph, and per task the handle of
// the partitions registered with it.
struct MasterPlan {
  StepGraph step;
  PlacementSummary placement;
  struct Part {
    int task = 0;  // index into the session's tasks
    std::string graph_handle;
  };
  std::vector<Part> parts;
  // parts index of the client device's task; -1 when the step touches no
  // partition there (no feeds or fetches).
  int client_part = -1;
  // Per feed (in step.feed_keys' order): the parts index whose RunGraph
  // call carries it and its key there (distributed/direct_feeds.h).
  std::vector<int> feed_part;
  std::vector<std::string> feed_key;
  std::vector<GraphDef> partition_graphs;
};

class MasterSession : public Session {
 public:
  explicit MasterSession(const MasterSessionOptions& options) : options_(options) {
    std::random_device rd;
    // Random start: steps of several masters sharing workers never collide.
    next_step_id_ = static_cast<int64_t>(((uint64_t{rd()} << 32) ^ rd()) >> 2) + 1;
  }

  ~MasterSession() override {
    stop_keepalive_.Notify();
    if (keepalive_ != nullptr) keepalive_->join();
    // The steps that ended well since each task's last call.
    CleanupStep(0, "");
    // Every task forgets every graph this session registered with it.
    std::vector<std::pair<int, std::string>> handles;
    {
      absl::MutexLock lock(&mu_);
      handles = std::move(registered_);
    }
    auto pending = std::make_shared<Pending>(static_cast<int>(handles.size()));
    for (const auto& [task, handle] : handles) {
      auto req = std::make_shared<CleanupGraphRequest>();
      auto resp = std::make_shared<CleanupGraphResponse>();
      auto opts = std::make_shared<CallOptions>();
      opts->SetTimeout(kCloseTimeout);
      req->set_session_handle(handle_);
      req->set_graph_handle(handle);
      tasks_[task].worker->CleanupGraphAsync(
          req.get(), resp.get(), opts.get(),
          [pending, req, resp, opts](const absl::Status&) { pending->Done(); });
    }
    pending->Wait(kCloseTimeout + absl::Seconds(1));
    // Step clean-ups still in flight hold their own state.
    cleanups_->Wait(kCloseTimeout);
  }

  absl::Status Init(const GraphDef& graph) {
    if (options_.cluster.empty()) {
      return absl::InvalidArgumentError("the cluster has no tasks");
    }
    if (!options_.connect) return absl::InvalidArgumentError("no connect function");
    {
      std::random_device rd;
      handle_ = absl::StrCat("session-", absl::Hex((uint64_t{rd()} << 32) ^ rd()));
    }
    for (const auto& [name, address] : options_.cluster) {
      Task t;
      t.name = name;
      t.address = address;
      GR_ASSIGN_OR_RETURN(t.worker, options_.connect(name, address));
      tasks_.push_back(std::move(t));
    }
    GR_RETURN_IF_ERROR(DiscoverDevices());
    // Tells every task each second that this master lives, so that a
    // master that dies leaves no graphs behind (WorkerOptions::
    // session_timeout).
    keepalive_ = std::make_unique<std::thread>([this] {
      while (!stop_keepalive_.WaitForNotificationWithTimeout(absl::Seconds(1))) {
        for (const Task& t : tasks_) {
          auto req = std::make_shared<HealthRequest>();
          auto resp = std::make_shared<HealthResponse>();
          auto opts = std::make_shared<CallOptions>();
          opts->SetTimeout(absl::Seconds(1));
          req->set_session_handle(handle_);
          t.worker->HealthAsync(req.get(), resp.get(), opts.get(),
                                [req, resp, opts](const absl::Status&) {});
        }
      }
    });
    cost_model_ = std::make_unique<placer::CostModel>();
    if (!options_.session.cost_profile.empty()) {
      GR_RETURN_IF_ERROR(cost_model_->LoadProfile(options_.session.cost_profile));
    }
    availability_ = RegistryAvailability();
    if (options_.session.log_device_placement) {
      std::string banner = "Device mapping:\n";
      for (const DeviceAttributes& d : devices_) {
        absl::StrAppend(&banner, d.name(), " -> ", tasks_[device_task_.at(d.name())].address,
                        d.physical_device_desc().empty() ? "" : ", ",
                        d.physical_device_desc(), "\n");
      }
      std::fwrite(banner.data(), 1, banner.size(), stdout);
      std::fflush(stdout);
    }
    return Extend(graph);
  }

  absl::Status Extend(const GraphDef& graph) override { return plans_.Extend(graph); }

  std::vector<Device*> devices() const override { return {}; }

  absl::Status CancelRunningSteps(const std::string& reason) override {
    const absl::Status cancelled = absl::CancelledError(reason);
    absl::MutexLock lock(&running_mu_);
    for (auto& [id, cancel] : running_) cancel(cancelled);
    return absl::OkStatus();
  }

  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                   RunMetadata* metadata) override {
    std::vector<std::string> feed_names;
    for (const auto& f : feeds) feed_names.push_back(f.first);
    const StepSignature sig = MakeStepSignature(feed_names, fetches, targets);
    GR_ASSIGN_OR_RETURN(std::shared_ptr<const MasterPlan> plan,
                        plans_.Get(sig.key, [&](const Graph& graph) {
                          return BuildPlan(graph, sig, feeds, fetches);
                        }));
    const int num_parts = static_cast<int>(plan->parts.size());
    const int64_t step_id = next_step_id_.fetch_add(1);

    struct PartCall {
      RunGraphRequest request;
      RunGraphResponse response;
      CallOptions opts;
    };
    std::vector<std::unique_ptr<PartCall>> calls(num_parts);
    const bool trace = metadata != nullptr && run_options.trace_level() > RunOptions::NO_TRACE;
    for (int p = 0; p < num_parts; ++p) {
      calls[p] = std::make_unique<PartCall>();
      RunGraphRequest& r = calls[p]->request;
      r.set_session_handle(handle_);
      r.set_graph_handle(plan->parts[p].graph_handle);
      r.set_step_id(step_id);
      r.set_wire_encoding(options_.wire_encoding);
      r.set_wire_gradients_only(options_.wire_gradients_only);
      r.set_is_last(true);
      r.set_collect_step_stats(trace);
      for (int64_t id : TakeEndedSteps(plan->parts[p].task)) r.add_ended_steps(id);
    }
    if (!feeds.empty() || !plan->step.fetch_keys.empty()) {
      if (plan->client_part < 0) return absl::InternalError("no partition takes the feeds");
      std::vector<int64_t> feed_bytes(num_parts, 0);
      for (size_t i = 0; i < feeds.size(); ++i) {
        const auto& [name, t] = feeds[sig.feed_order[i]];
        GR_RETURN_IF_ERROR(CheckFeed(plan->step, i, name, t));
        const int p = plan->feed_part[i];
        feed_bytes[p] += static_cast<int64_t>(t.TotalBytes());
        if (feed_bytes[p] > kMaxFeedBytes) {
          return absl::InvalidArgumentError(absl::StrCat(
              "feed '", name, "' (", DataTypeString(t.dtype()), " ", t.shape().DebugString(),
              ") brings the step's feeds to ", feed_bytes[p],
              " bytes; feeds travel inside the RunGraph call to ",
              tasks_[plan->parts[p].task].name, ", which carries at most ", kMaxFeedBytes,
              " bytes in all"));
        }
        NamedTensor* nt = calls[p]->request.add_feeds();
        nt->set_name(plan->feed_key[i]);
        t.AsProtoTensorContent(nt->mutable_tensor());
      }
      RunGraphRequest& r = calls[plan->client_part]->request;
      for (const std::string& key : plan->step.fetch_keys) r.add_fetches(key);
      r.set_accept_data_plane(!tasks_[plan->parts[plan->client_part].task].worker->in_process());
    }

    StepStatus status;
    absl::Mutex abort_mu;
    bool aborted = false;
    auto abort_others = [&](const absl::Status& reason) {
      {
        absl::MutexLock lock(&abort_mu);
        if (aborted) return;
        aborted = true;
      }
      CleanupStep(step_id, std::string(reason.message()));
      for (auto& c : calls) c->opts.StartCancel();
    };
    std::atomic<bool> cancelled_by_client{false};
    {
      // Known to CancelRunningSteps until it returns.
      absl::MutexLock lock(&running_mu_);
      running_[step_id] = [&](const absl::Status& reason) {
        cancelled_by_client.store(true);
        status.Update(reason);
        abort_others(reason);
      };
    }
    absl::Cleanup forget_running = [this, step_id] {
      absl::MutexLock lock(&running_mu_);
      running_.erase(step_id);
    };
    auto pending = std::make_shared<Pending>(num_parts);
    for (int p = 0; p < num_parts; ++p) {
      const Task& task = tasks_[plan->parts[p].task];
      PartCall* call = calls[p].get();
      task.worker->RunGraphAsync(
          &call->request, &call->response, &call->opts,
          [&, pending, call, task_index = plan->parts[p].task,
           name = task.name](const absl::Status& s) {
            if (!s.ok()) {
              // The task may not have seen the ended steps: told again
              // with the clean-up.
              for (int64_t id : call->request.ended_steps()) EndedWell(task_index, id);
              if (status.Update(WithTask(name, s))) abort_others(status.Get());
            }
            pending->Done();
          });
    }
    if (run_options.timeout_in_ms() > 0) {
      if (!pending->Wait(absl::Milliseconds(run_options.timeout_in_ms()))) {
        const absl::Status timeout = absl::DeadlineExceededError(absl::StrCat(
            "the step timed out after ", run_options.timeout_in_ms(), " ms"));
        status.Update(timeout);
        abort_others(timeout);
        pending->Wait(absl::InfiniteDuration());
        // The timeout is the step's error, whatever the aborted calls said.
        StepStatus only;
        only.Update(timeout);
        CleanupStep(step_id, "");
        return only.Get();
      }
    } else {
      pending->Wait(absl::InfiniteDuration());
    }
    if (!status.Get().ok()) {
      CleanupStep(step_id, "");
      // A step cancelled on purpose needs no search for a lost task.
      return cancelled_by_client.load() ? status.Get() : RootCause(status.Get(), *plan);
    }
    // The step's state goes with each task's next call (one call less per
    // task and step: 0.6 -> 0.33 ms for a small two-task step here).
    for (const MasterPlan::Part& part : plan->parts) EndedWell(part.task, step_id);

    const int num_fetches = static_cast<int>(fetches.size());
    std::vector<Tensor> values(num_fetches);
    if (num_fetches > 0) {
      const RunGraphResponse& r = calls[plan->client_part]->response;
      if (r.fetches_size() != num_fetches) {
        return absl::InternalError(absl::StrCat("the client task returned ", r.fetches_size(),
                                                " fetches, not ", num_fetches));
      }
      for (int i = 0; i < num_fetches; ++i) {
        const int caller = sig.fetch_order[i];
        if (!r.fetches(i).has_tensor()) {
          return absl::InternalError(
              absl::StrCat("fetch '", fetches[caller], "' was not produced"));
        }
        absl::StatusOr<Tensor> t =
            r.fetches(i).has_data_plane()
                ? PullFetch(r.fetches(i), tasks_[plan->parts[plan->client_part].task].name)
                : Tensor::FromProto(r.fetches(i).tensor());
        if (!t.ok()) {
          return absl::Status(t.status().code() == absl::StatusCode::kUnavailable
                                  ? absl::StatusCode::kUnavailable
                                  : absl::StatusCode::kInternal,
                              absl::StrCat("fetch '", fetches[caller], "': ",
                                           t.status().message()));
        }
        values[caller] = std::move(*t);
      }
    }
    *outputs = std::move(values);
    if (metadata != nullptr) {
      *metadata->mutable_placement() = plan->placement;
      int64_t saturated = 0;
      for (const auto& c : calls) saturated += c->response.fp16_saturated();
      metadata->set_wire_fp16_saturated(saturated);
      if (trace) {
        // Each worker's partitions, timed by its own clock.
        for (const auto& c : calls) {
          for (const DeviceStepStats& d : c->response.step_stats().dev_stats()) {
            *metadata->mutable_step_stats()->add_dev_stats() = d;
          }
        }
      }
      if (run_options.output_partition_graphs()) {
        for (const GraphDef& g : plan->partition_graphs) *metadata->add_partition_graphs() = g;
      }
    }
    return absl::OkStatus();
  }

 private:
  // A step whose every failure was Cancelled or Aborted may have lost a
  // task whose own call was cancelled before its loss showed (another
  // task noticed first): the step's tasks that no longer answer are then
  // the cause, Unavailable naming them.
  absl::Status RootCause(const absl::Status& s, const MasterPlan& plan) {
    if (s.code() != absl::StatusCode::kCancelled && s.code() != absl::StatusCode::kAborted) {
      return s;
    }
    std::map<std::string, std::string> step_tasks;
    for (const MasterPlan::Part& part : plan.parts) {
      step_tasks[tasks_[part.task].name] = tasks_[part.task].address;
    }
    const std::map<std::string, std::string> gone = UnreachableTasks(
        step_tasks,
        [this](const std::string& task,
               const std::string&) -> absl::StatusOr<std::shared_ptr<WorkerInterface>> {
          for (const Task& t : tasks_) {
            if (t.name == task) return t.worker;
          }
          return absl::NotFoundError(task);
        },
        kProbeTimeout);
    if (gone.empty()) return s;
    std::vector<std::string> why;
    for (const auto& [task, reason] : gone) why.push_back(reason);
    return absl::UnavailableError(
        absl::StrCat(absl::StrJoin(why, "; "), " (the step ended: ", s.message(), ")"));
  }

  // GetStatus on every task at once, each waiting up to connect_timeout
  // for a task that is not listening yet.
  absl::Status DiscoverDevices() {
    const int n = static_cast<int>(tasks_.size());
    struct StatusCall {
      GetStatusRequest request;
      GetStatusResponse response;
      CallOptions opts;
      absl::Status status;
    };
    // A task that refuses the client (a wrong token, a bad request) ends
    // the wait at once: the others' calls are cancelled instead of waiting
    // out connect_timeout for a task that is not up.
    const auto refused = [](const absl::Status& s) {
      return s.code() == absl::StatusCode::kUnauthenticated ||
             s.code() == absl::StatusCode::kPermissionDenied ||
             s.code() == absl::StatusCode::kInvalidArgument;
    };
    auto calls = std::make_shared<std::vector<std::shared_ptr<StatusCall>>>(n);
    for (int i = 0; i < n; ++i) {
      auto call = std::make_shared<StatusCall>();
      call->opts.SetTimeout(options_.connect_timeout);
      call->opts.SetWaitForReady(true);
      (*calls)[i] = call;
    }
    auto pending = std::make_shared<Pending>(n);
    for (int i = 0; i < n; ++i) {
      std::shared_ptr<StatusCall> call = (*calls)[i];
      tasks_[i].worker->GetStatusAsync(
          &call->request, &call->response, &call->opts,
          [call, calls, pending, refused](const absl::Status& s) {
            call->status = s;
            if (refused(s)) {
              for (const auto& other : *calls) {
                if (other != call) other->opts.StartCancel();
              }
            }
            pending->Done();
          });
    }
    pending->Wait(absl::InfiniteDuration());
    for (int i = 0; i < n; ++i) {
      if (refused((*calls)[i]->status)) return WithTask(tasks_[i].name, (*calls)[i]->status);
    }
    std::vector<std::string> missing;
    for (int i = 0; i < n; ++i) {
      const std::shared_ptr<StatusCall>& call = (*calls)[i];
      if (!call->status.ok()) {
        missing.push_back(absl::StrCat(tasks_[i].name, " at ", tasks_[i].address, " (",
                                       call->status.message(), ")"));
        continue;
      }
      const GetStatusResponse& r = call->response;
      if (r.task_name() != tasks_[i].name) {
        return absl::FailedPreconditionError(absl::StrCat(
            tasks_[i].address, " serves ", r.task_name(), ", but the cluster says it is ",
            tasks_[i].name));
      }
      for (const DeviceAttributes& d : r.devices()) {
        if (distributed::TaskOfDevice(d.name()) != tasks_[i].name) {
          return absl::FailedPreconditionError(absl::StrCat(
              tasks_[i].name, " offers device ", d.name(), " of another task"));
        }
        device_task_[d.name()] = i;
        incarnations_[d.name()] = d.incarnation();
        devices_.push_back(d);
      }
    }
    if (!missing.empty()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "creating the session: waited ", absl::FormatDuration(options_.connect_timeout),
          " for ", missing.size(), " of ", n, " tasks, still waiting for: ",
          absl::StrJoin(missing, "; ")));
    }
    if (devices_.empty()) return absl::FailedPreconditionError("the cluster offers no devices");
    std::vector<std::string> names;
    for (const DeviceAttributes& d : devices_) {
      if (d.device_type() != "CPU") continue;
      GR_ASSIGN_OR_RETURN(placer::DeviceInfo info,
                          DescribeCpuDevice(d.name(), std::max(1, d.cores())));
      GR_RETURN_IF_ERROR(device_set_.AddDevice(info));
      names.push_back(d.name());
    }
    // Devices of one task share its memory: a transfer between them costs
    // a hand-over. Between tasks the placer's network default applies.
    for (const Task& t : tasks_) {
      placer::LinkRule link;
      absl::StatusOr<placer::DeviceName> parsed =
          placer::ParseDeviceName(absl::StrCat(t.name, "/device:CPU:*"));
      if (!parsed.ok()) continue;
      link.src = *parsed;
      link.dst = *parsed;
      link.latency_s = 5e-6;
      link.bandwidth = 0;
      if (!device_set_.AddLink(link).ok()) continue;  // a task with no CPU
    }
    // The client's device: as TensorFlow's between-graph scripts have it,
    // the chief's, else worker 0's (never a ps task's, so feeds and fetches
    // meet the forward pass instead of a variable store); else the first.
    client_device_ = devices_.front().name();
    if (!options_.client_task.empty()) {
      auto it = std::find_if(devices_.begin(), devices_.end(), [&](const DeviceAttributes& d) {
        return distributed::TaskOfDevice(d.name()) == options_.client_task;
      });
      if (it == devices_.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the client's task ", options_.client_task, " is not a task of the cluster"));
      }
      client_device_ = it->name();
      return absl::OkStatus();
    }
    for (const char* job : {"/job:chief/", "/job:worker/"}) {
      auto it = std::find_if(devices_.begin(), devices_.end(), [&](const DeviceAttributes& d) {
        return absl::StartsWith(d.name(), job);
      });
      if (it != devices_.end()) {
        client_device_ = it->name();
        break;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<const MasterPlan>> BuildPlan(
      const Graph& graph, const StepSignature& sig,
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches) {
    auto plan = std::make_shared<MasterPlan>();
    StepGraphOptions step_options;
    step_options.feeds_through_rendezvous = true;
    step_options.client_device = client_device_;
    step_options.client_device_incarnation = incarnations_.at(client_device_);
    step_options.optimize = options_.session.optimize != SessionOptions::Optimize::kNone;
    std::vector<std::string> feed_names, fetch_names;
    for (int i : sig.feed_order) {
      feed_names.push_back(feeds[i].first);
      step_options.feed_value_shapes.push_back(feeds[i].second.shape());
    }
    for (int i : sig.fetch_order) fetch_names.push_back(fetches[i]);
    GR_ASSIGN_OR_RETURN(plan->step,
                        BuildStepGraph(graph, feed_names, fetch_names, sig.targets, step_options));
    if (options_.session.log_optimizations && step_options.optimize) {
      const std::string log = plan->step.optimization.ToString();
      std::fwrite(log.data(), 1, log.size(), stdout);
      std::fflush(stdout);
    }
    PlanOptions plan_options;
    plan_options.placer.allow_soft_placement = options_.session.allow_soft_placement;
    plan_options.placer.availability = availability_.get();
    plan_options.placer.min_spread_gain = 0.25;
    plan_options.incarnation = [this](const std::string& device) {
      auto it = incarnations_.find(device);
      return it == incarnations_.end() ? uint64_t{0} : it->second;
    };
    if (options_.session.log_device_placement) {
      plan_options.placement_log = [](const std::string& log) {
        std::fwrite(log.data(), 1, log.size(), stdout);
        std::fflush(stdout);
      };
      plan_options.log_names = &plan->step.log_names;
      plan_options.log_removed = &plan->step.log_removed;
    }
    GR_ASSIGN_OR_RETURN(PartitionedStep placed,
                        PlaceAndPartition(*plan->step.graph, device_set_, *cost_model_,
                                          plan_options));
    plan->placement = std::move(placed.summary);
    GR_ASSIGN_OR_RETURN(
        std::vector<FeedDelivery> deliveries,
        DeliverFeedsToReaders(
            plan->step.feed_nodes, client_device_,
            [](const std::string& device) {
              return std::string(distributed::TaskOfDevice(device));
            },
            [this](const std::string& device) {
              auto it = incarnations_.find(device);
              return it == incarnations_.end() ? uint64_t{0} : it->second;
            },
            &placed.partitions));

    // One RegisterGraph per task with its devices' partitions.
    std::map<int, RegisterGraphRequest> requests;
    for (auto& [device, graph_def] : placed.partitions) {
      auto it = device_task_.find(device);
      if (it == device_task_.end()) {
        return absl::InternalError(absl::StrCat("a partition for unknown device ", device));
      }
      plan->partition_graphs.push_back(graph_def);
      RegisterGraphRequest& r = requests[it->second];
      GraphPartition* part = r.add_partitions();
      part->set_device(device);
      *part->mutable_graph() = std::move(graph_def);
    }
    const int client_task = device_task_.at(client_device_);
    struct RegisterCall {
      RegisterGraphRequest request;
      RegisterGraphResponse response;
      absl::Status status;
    };
    std::vector<std::pair<int, std::shared_ptr<RegisterCall>>> calls;
    for (auto& [task, request] : requests) {
      auto call = std::make_shared<RegisterCall>();
      call->request = std::move(request);
      call->request.set_session_handle(handle_);
      for (const Task& t : tasks_) (*call->request.mutable_cluster())[t.name] = t.address;
      calls.emplace_back(task, call);
    }
    auto pending = std::make_shared<Pending>(static_cast<int>(calls.size()));
    for (auto& [task, call] : calls) {
      tasks_[task].worker->RegisterGraphAsync(&call->request, &call->response, nullptr,
                                              [call, pending](const absl::Status& s) {
                                                call->status = s;
                                                pending->Done();
                                              });
    }
    pending->Wait(absl::InfiniteDuration());
    absl::Status first_error;
    for (auto& [task, call] : calls) {
      if (!call->status.ok()) {
        if (first_error.ok()) first_error = WithTask(tasks_[task].name, call->status);
        continue;
      }
      MasterPlan::Part part;
      part.task = task;
      part.graph_handle = call->response.graph_handle();
      if (task == client_task) plan->client_part = static_cast<int>(plan->parts.size());
      plan->parts.push_back(std::move(part));
      absl::MutexLock lock(&mu_);
      registered_.emplace_back(task, call->response.graph_handle());
    }
    GR_RETURN_IF_ERROR(first_error);
    for (size_t i = 0; i < deliveries.size(); ++i) {
      int part = plan->client_part;
      std::string key = plan->step.feed_keys[i];
      if (!deliveries[i].device.empty()) {
        const int task = device_task_.at(deliveries[i].device);
        for (size_t p = 0; p < plan->parts.size(); ++p) {
          if (plan->parts[p].task == task) part = static_cast<int>(p);
        }
        key = deliveries[i].key;
      }
      plan->feed_part.push_back(part);
      plan->feed_key.push_back(std::move(key));
    }
    return plan;
  }

  // Notes that `step_id` ended well on `task`; sends the notes in a
  // CleanupStep of their own when many gather (a task no step uses now).
  void EndedWell(int task, int64_t step_id) {
    {
      absl::MutexLock lock(&ended_mu_);
      std::vector<int64_t>& ended = ended_[task];
      ended.push_back(step_id);
      if (ended.size() < kMaxEndedSteps) return;
    }
    CleanupStepOn(task, 0, "");
  }

  std::vector<int64_t> TakeEndedSteps(int task) {
    absl::MutexLock lock(&ended_mu_);
    std::vector<int64_t> out;
    auto it = ended_.find(task);
    if (it != ended_.end()) out.swap(it->second);
    return out;
  }

  // Tells every task that the step is over (aborting what still waits with
  // `abort_reason` when not empty), with the steps that ended well since its
  // last call; does not wait. Step 0: only those.
  // A large fetch: its bytes pulled from the task's data plane.
  absl::StatusOr<Tensor> PullFetch(const NamedTensor& fetch, const std::string& task) {
    absl::StatusOr<Tensor> t =
        data_plane_.FetchTensor(fetch.data_plane(), WIRE_ENCODING_NONE, fetch.tensor().dtype(),
                                fetch.tensor().tensor_shape(), kFetchStallTimeout);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat("from ", task, ": ", t.status().message()));
    }
    return t;
  }

  void CleanupStep(int64_t step_id, const std::string& abort_reason) {
    for (int t = 0; t < static_cast<int>(tasks_.size()); ++t) {
      CleanupStepOn(t, step_id, abort_reason);
    }
  }

  void CleanupStepOn(int task, int64_t step_id, const std::string& abort_reason) {
    auto req = std::make_shared<CleanupStepRequest>();
    for (int64_t id : TakeEndedSteps(task)) req->add_ended_steps(id);
    if (step_id == 0 && req->ended_steps_size() == 0) return;
    auto resp = std::make_shared<CleanupStepResponse>();
    auto opts = std::make_shared<CallOptions>();
    opts->SetTimeout(kCloseTimeout);
    req->set_step_id(step_id);
    req->set_abort_reason(abort_reason);
    cleanups_->Add();
    auto cleanups = cleanups_;
    tasks_[task].worker->CleanupStepAsync(req.get(), resp.get(), opts.get(),
                                          [req, resp, opts, cleanups](const absl::Status&) {
                                            cleanups->Done();
                                          });
  }

  const MasterSessionOptions options_;
  std::string handle_;
  std::vector<Task> tasks_;
  std::vector<DeviceAttributes> devices_;
  absl::flat_hash_map<std::string, int> device_task_;
  absl::flat_hash_map<std::string, uint64_t> incarnations_;
  std::string client_device_;
  placer::DeviceSet device_set_;
  std::unique_ptr<placer::CostModel> cost_model_;
  std::unique_ptr<placer::KernelAvailability> availability_;
  std::atomic<int64_t> next_step_id_{1};
  // The steps running now, by step id: what cancels each.
  absl::Mutex running_mu_;
  std::map<int64_t, std::function<void(const absl::Status&)>> running_
      ABSL_GUARDED_BY(running_mu_);
  // Clean-up calls in flight, which the destructor waits for.
  std::shared_ptr<Pending> cleanups_ = std::make_shared<Pending>();
  // Per task: steps that ended well, not yet told.
  static constexpr size_t kMaxEndedSteps = 256;
  absl::Mutex ended_mu_;
  absl::flat_hash_map<int, std::vector<int64_t>> ended_ ABSL_GUARDED_BY(ended_mu_);
  absl::Notification stop_keepalive_;
  std::unique_ptr<std::thread> keepalive_;
  absl::Mutex mu_;
  // (task, graph handle) of every registration, for the session's end.
  std::vector<std::pair<int, std::string>> registered_ ABSL_GUARDED_BY(mu_);
  PlanCache<MasterPlan> plans_;
  // Pulls large fetches; its connections are pooled across steps.
  DataPlaneClient data_plane_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewMasterSession(const GraphDef& graph,
                                                          const MasterSessionOptions& options) {
  auto session = std::make_unique<MasterSession>(options);
  GR_RETURN_IF_ERROR(session->Init(graph));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace graphrun
