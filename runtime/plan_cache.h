// What sessions share between steps: a step's signature (its feeds, fetches
// and targets in a canonical order) and a cache of the plans built for each
// signature over the session's current graph.
//
//   StepSignature sig = MakeStepSignature(feed_names, fetches, targets);
//   absl::StatusOr<std::shared_ptr<const Plan>> plan = cache.Get(sig.key,
//       [&](const Graph& graph) { return BuildPlan(graph, sig); });
//
// Plans are built outside the cache's lock: other steps go on meanwhile,
// and steps that want a plan being built wait for that build and share its
// result. Extend changes the graph and forgets every plan; a plan still
// being built over the old graph serves only the steps that asked for it.
// Thread-safe.
#ifndef GRAPHRUN_RUNTIME_PLAN_CACHE_H_
#define GRAPHRUN_RUNTIME_PLAN_CACHE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "graph/graph.h"
#include "graph/import.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

// A step's feeds, fetches and targets in its plan's order: each list sorted
// by name, so that the same names in any order share one plan.
struct StepSignature {
  // The plan's feed j is the caller's feeds[feed_order[j]]; likewise for
  // fetches (a fetch named twice is two fetches).
  std::vector<int> feed_order;
  std::vector<int> fetch_order;
  // Sorted, without repeats.
  std::vector<std::string> targets;
  // The plan cache's key: the sorted names.
  std::string key;
};

StepSignature MakeStepSignature(const std::vector<std::string>& feeds,
                                const std::vector<std::string>& fetches,
                                const std::vector<std::string>& targets);

// The status of a step over several partitions (or workers). An error
// caused by another part's failure (the cancellation or the rendezvous
// abort it sets off) must not hide the error that caused it, so a real
// error replaces a Cancelled/Aborted one. Thread-safe.
class StepStatus {
 public:
  // Returns true if `s` (not OK) became the step's status.
  bool Update(const absl::Status& s);
  absl::Status Get() const;

 private:
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool status_derived_ ABSL_GUARDED_BY(mu_) = false;
};

template <typename PlanT>
class PlanCache {
 public:
  using PlanPtr = std::shared_ptr<const PlanT>;
  using Builder = std::function<absl::StatusOr<PlanPtr>(const Graph& graph)>;

  // Adds `more`'s nodes (their names must be new), versions and function
  // library to the session's graph, imports the result and forgets every
  // plan (Session::Extend; the first call sets the graph). The import's
  // error leaves the graph as it was.
  absl::Status Extend(const GraphDef& more) {
    absl::MutexLock extend_lock(&extend_mu_);
    GraphDef merged = graph_def_;
    for (const NodeDef& n : more.node()) *merged.add_node() = n;
    if (more.has_versions()) *merged.mutable_versions() = more.versions();
    if (more.has_library()) merged.mutable_library()->MergeFrom(more.library());
    absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(merged);
    if (!graph.ok()) return graph.status();
    graph_def_ = std::move(merged);
    absl::MutexLock lock(&mu_);
    graph_ = std::move(*graph);
    plans_.clear();
    building_.clear();
    return absl::OkStatus();
  }

  // The plan of `key`: cached, or built by `build` over the current graph.
  // FailedPrecondition before the first Extend. A failed build is not
  // cached: the next step tries again.
  absl::StatusOr<PlanPtr> Get(const std::string& key, const Builder& build) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    std::shared_ptr<const Graph> graph;
    std::shared_ptr<Pending> pending;
    bool builder = false;
    {
      absl::MutexLock lock(&mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
      if (graph_ == nullptr) return absl::FailedPreconditionError("the session has no graph");
      auto [p, inserted] = building_.try_emplace(key);
      if (inserted) p->second = std::make_shared<Pending>();
      pending = p->second;
      builder = inserted;
      graph = graph_;
    }
    if (!builder) {
      pending->done.WaitForNotification();
      return pending->result;
    }
    pending->result = build(*graph);
    {
      absl::MutexLock lock(&mu_);
      auto it = building_.find(key);
      if (it != building_.end() && it->second == pending) building_.erase(it);
      if (pending->result.ok() && graph_ == graph) plans_.emplace(key, *pending->result);
    }
    pending->done.Notify();
    return pending->result;
  }

  // Forgets `key`'s plan if it is still `plan` (a stale plan; the next Get
  // builds anew).
  void Erase(const std::string& key, const PlanPtr& plan) {
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(key);
    if (it != plans_.end() && it->second == plan) plans_.erase(it);
  }

  // Every cached plan (for a session's clean-up).
  std::vector<PlanPtr> Plans() const {
    absl::ReaderMutexLock lock(&mu_);
    std::vector<PlanPtr> out;
    for (const auto& [key, plan] : plans_) out.push_back(plan);
    return out;
  }

 private:
  struct Pending {
    absl::Notification done;
    // Set before `done` is notified.
    absl::StatusOr<PlanPtr> result;
  };
  // Serializes Extend.
  absl::Mutex extend_mu_;
  GraphDef graph_def_ ABSL_GUARDED_BY(extend_mu_);
  mutable absl::Mutex mu_;
  // Replaced, never changed: plans being built keep theirs.
  std::shared_ptr<const Graph> graph_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PlanPtr> plans_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<Pending>> building_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_PLAN_CACHE_H_
