#include <atomic>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "kernels/eigen.h"
#include "runtime/executor.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// Everything one (feeds, fetches, targets) signature needs, built once.
struct Plan {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Executor> executor;
  // Per feed, in the caller's order: what the fed tensor must look like.
  std::vector<DataType> feed_dtypes;
  std::vector<PartialShape> feed_shapes;
  std::vector<std::string> feed_labels;  // "node 'x' (Placeholder)"
  int num_fetches = 0;
};

std::string PlanKey(const std::vector<std::pair<std::string, Tensor>>& feeds,
                    const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets) {
  std::string key;
  for (const auto& f : feeds) absl::StrAppend(&key, f.first, ",");
  key.push_back('\x01');
  for (const auto& f : fetches) absl::StrAppend(&key, f, ",");
  key.push_back('\x01');
  for (const auto& t : targets) absl::StrAppend(&key, t, ",");
  return key;
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
    const int inter = options.inter_op_threads > 0 ? options.inter_op_threads : cores;
    inter_op_pool_ = std::make_unique<Eigen::ThreadPool>(inter);
  }

  absl::Status Init(const GraphDef& graph) { return Extend(graph); }

  absl::Status Extend(const GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    GraphDef merged = graph_def_;
    for (const NodeDef& n : graph.node()) *merged.add_node() = n;
    if (graph.has_versions()) *merged.mutable_versions() = graph.versions();
    if (graph.has_library()) merged.mutable_library()->MergeFrom(graph.library());
    GR_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, ImportGraphDef(merged));
    graph_def_ = std::move(merged);
    graph_ = std::move(g);
    plans_.clear();
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
    GR_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan,
                        GetPlan(feeds, fetches, targets));
    CallFrame frame;
    frame.args.reserve(feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) {
      const Tensor& t = feeds[i].second;
      if (t.dtype() != plan->feed_dtypes[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "feed '", feeds[i].first, "' is a ", DataTypeString(t.dtype()),
            " tensor, but ", plan->feed_labels[i], " produces ",
            DataTypeString(plan->feed_dtypes[i])));
      }
      if (!plan->feed_shapes[i].IsCompatibleWith(t.shape())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "feed '", feeds[i].first, "' has shape ", t.shape().DebugString(),
            ", but ", plan->feed_labels[i], " has shape ",
            plan->feed_shapes[i].DebugString()));
      }
      frame.args.push_back(t);
    }
    frame.retvals.resize(plan->num_fetches);

    CancellationManager cancellation;
    Executor::Args args;
    args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
    args.call_frame = &frame;
    args.cancellation = &cancellation;
    Eigen::ThreadPool* pool = inter_op_pool_.get();
    args.runner = [pool](std::function<void()> fn) { pool->Schedule(std::move(fn)); };
    DeviceStepStats dev_stats;
    std::unique_ptr<StepStatsCollector> collector;
    if (metadata != nullptr && run_options.trace_level() > RunOptions::NO_TRACE) {
      dev_stats.set_device(plan->executor->device()->name());
      collector = std::make_unique<StepStatsCollector>(&dev_stats);
      args.stats = collector.get();
    }

    absl::Notification done;
    absl::Status status;
    plan->executor->RunAsync(args, [&](const absl::Status& s) {
      status = s;
      done.Notify();
    });
    if (run_options.timeout_in_ms() > 0) {
      if (!done.WaitForNotificationWithTimeout(
              absl::Milliseconds(run_options.timeout_in_ms()))) {
        cancellation.StartCancel();
        done.WaitForNotification();
        status = absl::DeadlineExceededError(absl::StrCat(
            "the step timed out after ", run_options.timeout_in_ms(), " ms"));
      }
    } else {
      done.WaitForNotification();
    }
    if (!status.ok()) return status;

    outputs->clear();
    outputs->reserve(plan->num_fetches);
    for (int i = 0; i < plan->num_fetches; ++i) {
      if (!frame.retvals[i].IsInitialized()) {
        return absl::InternalError(absl::StrCat("fetch '", fetches[i], "' was not produced"));
      }
      outputs->push_back(std::move(frame.retvals[i]));
    }
    if (collector != nullptr) *metadata->mutable_step_stats()->add_dev_stats() = std::move(dev_stats);
    if (metadata != nullptr && run_options.output_partition_graphs()) {
      *metadata->add_partition_graphs() = plan->graph->ToGraphDef();
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::shared_ptr<const Plan>> GetPlan(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets) {
    const std::string key = PlanKey(feeds, fetches, targets);
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    GR_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan, BuildPlan(feeds, fetches, targets));
    plans_[key] = plan;
    return plan;
  }

  absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (graph_ == nullptr) return absl::FailedPreconditionError("the session has no graph");
    const Graph& g = *graph_;
    auto plan = std::make_shared<Plan>();
    auto resolve = [&](const std::string& name, absl::string_view what)
        -> absl::StatusOr<std::pair<const Node*, int>> {
      auto id = ParseTensorId(name);
      if (!id.ok() || id->IsControl()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " '", name, "' is not a tensor name (\"node\" or \"node:k\")"));
      }
      const Node* node = g.FindNode(id->node);
      if (node == nullptr) {
        return absl::NotFoundError(absl::StrCat(what, " '", name, "': there is no node '",
                                                id->node, "' in the graph"));
      }
      if (id->index >= node->num_outputs()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " '", name, "': ", NodeLabel(*node), " has ", node->num_outputs(),
            " outputs"));
      }
      return std::make_pair(node, id->index);
    };

    // Fed tensors -> their _Arg node names.
    std::map<std::pair<int, int>, std::string> fed;
    GraphDef out;
    *out.mutable_versions() = g.versions();
    for (size_t i = 0; i < feeds.size(); ++i) {
      GR_ASSIGN_OR_RETURN(auto t, resolve(feeds[i].first, "feed"));
      const std::string arg = absl::StrCat("_arg_", t.first->name(), "_", t.second, "_", i);
      if (!fed.emplace(std::make_pair(t.first->id(), t.second), arg).second) {
        return absl::InvalidArgumentError(absl::StrCat("'", feeds[i].first, "' is fed twice"));
      }
      plan->feed_dtypes.push_back(BaseType(t.first->output_type(t.second)));
      plan->feed_shapes.push_back(t.first->output_shape(t.second));
      plan->feed_labels.push_back(NodeLabel(*t.first));
      NodeDef* n = out.add_node();
      n->set_name(arg);
      n->set_op("_Arg");
      n->set_device(t.first->requested_device());
      (*n->mutable_attr())["T"].set_type(plan->feed_dtypes.back());
      (*n->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    }
    std::vector<const Node*> roots;
    std::vector<std::string> retval_inputs;
    std::vector<DataType> retval_dtypes;
    for (const std::string& f : fetches) {
      GR_ASSIGN_OR_RETURN(auto t, resolve(f, "fetch"));
      retval_dtypes.push_back(BaseType(t.first->output_type(t.second)));
      auto it = fed.find({t.first->id(), t.second});
      if (it != fed.end()) {
        retval_inputs.push_back(it->second);
      } else {
        retval_inputs.push_back(TensorId{t.first->name(), t.second}.ToString());
        roots.push_back(t.first);
      }
    }
    for (const std::string& target : targets) {
      const Node* node = g.FindNode(target);
      if (node == nullptr) {
        return absl::NotFoundError(absl::StrCat("target '", target,
                                                "': there is no node by that name"));
      }
      roots.push_back(node);
    }

    // Everything the roots need, stopping at fed tensors.
    std::vector<bool> keep(g.num_nodes(), false);
    std::vector<const Node*> stack = roots;
    for (const Node* r : roots) keep[r->id()] = true;
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const Edge* e : n->in_edges()) {
        if (!e->IsControl() && fed.count({e->src->id(), e->src_output})) continue;
        if (!keep[e->src->id()]) {
          keep[e->src->id()] = true;
          stack.push_back(e->src);
        }
      }
    }
    for (const auto& node : g.nodes()) {
      if (!keep[node->id()]) continue;
      NodeDef* n = out.add_node();
      *n = node->def();
      n->clear_input();
      for (const std::string& in : node->def().input()) {
        auto id = ParseTensorId(in, /*allow_internal_names=*/true);
        if (id.ok() && !id->IsControl()) {
          const Node* src = g.FindNode(id->node);
          auto it = fed.find({src->id(), id->index});
          if (it != fed.end()) {
            n->add_input(it->second);
            continue;
          }
        }
        n->add_input(in);
      }
    }
    for (size_t i = 0; i < retval_inputs.size(); ++i) {
      NodeDef* n = out.add_node();
      n->set_name(absl::StrCat("_retval_", i));
      n->set_op("_Retval");
      n->add_input(retval_inputs[i]);
      (*n->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
      (*n->mutable_attr())["T"].set_type(retval_dtypes[i]);
    }
    ImportOptions options;
    options.infer_shapes = false;  // done on the full graph already
    options.allow_internal_names = true;
    GR_ASSIGN_OR_RETURN(plan->graph, ImportGraphDef(out, options));
    GR_ASSIGN_OR_RETURN(plan->executor, Executor::Create(plan->graph.get(), devices_[0].get()));
    plan->num_fetches = static_cast<int>(fetches.size());
    return plan;
  }

  const SessionOptions options_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<Eigen::ThreadPool> inter_op_pool_;
  std::atomic<int64_t> next_step_id_{1};
  absl::Mutex mu_;
  GraphDef graph_def_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const Plan>> plans_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Create(const GraphDef& graph,
                                                         const SessionOptions& options) {
  auto session = std::make_unique<DirectSession>(options);
  GR_RETURN_IF_ERROR(session->Init(graph));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace graphrun
