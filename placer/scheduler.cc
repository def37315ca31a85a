#include "placer/scheduler.h"

#include "placer/list_scheduler.h"
#include "placer/plan_search.h"
#include "placer/scheduler_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace placer {

int SchedProblem::Destination(const SchedEdge& edge, int dst) const {
  if (edge.dst_host_memory && !host_device.empty() && host_device[dst] >= 0) {
    return host_device[dst];
  }
  return dst;
}

double SchedProblem::TransferTime(const SchedEdge& edge, int src,
                                  int dst) const {
  dst = Destination(edge, dst);
  if (src == dst) return 0;
  const SchedLink& l = link(src, dst);
  double bytes = static_cast<double>(edge.bytes);
  if (edge.compressible && l.compresses) bytes *= 0.5;
  return l.latency_s + (l.bandwidth > 0 ? bytes / l.bandwidth : 0.0);
}

namespace {

using internal::Adjacency;
using internal::Finite;
using internal::GroupFeasibility;
using internal::ListSchedule;
using internal::ListScheduleOptions;
using internal::PeftOrder;
using internal::RankOrder;
using internal::Tables;
using internal::TopologicalOrder;

}  // namespace

absl::Status ValidateProblem(const SchedProblem& p) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  if (q <= 0) return absl::InvalidArgumentError("no devices to place on");
  if (p.links.size() != static_cast<size_t>(q) * q) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link matrix has ", p.links.size(), " entries, expected ", q * q));
  }
  if (!p.memory_capacity.empty() && p.memory_capacity.size() != static_cast<size_t>(q)) {
    return absl::InvalidArgumentError("memory_capacity must have one entry per device");
  }
  for (int i = 0; i < n; ++i) {
    const SchedTask& t = p.tasks[i];
    if (t.cost.size() != static_cast<size_t>(q)) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", i, " has ", t.cost.size(), " costs for ", q, " devices"));
    }
    bool any = false;
    for (double c : t.cost) {
      if (std::isnan(c) || c < 0) {
        return absl::InvalidArgumentError(absl::StrCat("task ", i, " has a negative or NaN cost"));
      }
      any |= Finite(c);
    }
    if (!any) {
      return absl::InvalidArgumentError(absl::StrCat("task ", i, " can run on no device"));
    }
  }
  for (size_t k = 0; k < p.edges.size(); ++k) {
    const SchedEdge& e = p.edges[k];
    if (e.src < 0 || e.src >= n || e.dst < 0 || e.dst >= n || e.bytes < 0) {
      return absl::InvalidArgumentError(absl::StrCat("edge ", k, " is out of range"));
    }
  }
  Adjacency adj(p);
  if (static_cast<int>(TopologicalOrder(p, adj).size()) != n) {
    return absl::InvalidArgumentError("the task graph has a cycle");
  }
  int num_groups = 0;
  const auto ok = GroupFeasibility(p, &num_groups);
  for (int g = 0; g < num_groups; ++g) {
    if (std::none_of(ok[g].begin(), ok[g].end(), [](char c) { return c != 0; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("colocation group ", g, " has no device every member can run on"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Schedule> EvaluateAssignment(const SchedProblem& problem,
                                            const std::vector<int>& device) {
  GR_RETURN_IF_ERROR(ValidateProblem(problem));
  if (device.size() != problem.tasks.size()) {
    return absl::InvalidArgumentError("assignment must name one device per task");
  }
  for (size_t i = 0; i < device.size(); ++i) {
    if (device[i] < 0 || device[i] >= problem.num_devices) {
      return absl::InvalidArgumentError(absl::StrCat("task ", i, " assigned to no device"));
    }
  }
  Tables tb(problem);
  ListScheduleOptions list;
  list.fixed = &device;
  GR_ASSIGN_OR_RETURN(Schedule s, ListSchedule(problem, tb, RankOrder(problem, tb), list));
  s.plan = "fixed";
  return s;
}

SingleDevicePlan BestSingleDevice(const SchedProblem& problem, bool respect_memory) {
  SingleDevicePlan out;
  if (!ValidateProblem(problem).ok()) return out;
  const int q = problem.num_devices;
  const int n = static_cast<int>(problem.tasks.size());
  std::vector<std::pair<double, int>> by_time;
  int64_t persistent = 0;
  for (const SchedTask& t : problem.tasks) persistent += t.persistent_bytes;
  for (int d = 0; d < q; ++d) {
    double sum = 0;
    for (const SchedTask& t : problem.tasks) sum += t.cost[d];
    if (Finite(sum)) by_time.emplace_back(sum, d);
  }
  std::sort(by_time.begin(), by_time.end());
  std::optional<Tables> tb;
  std::vector<int> order;
  for (const auto& [time, d] : by_time) {
    const int64_t cap = problem.memory_capacity.empty() ? 0 : problem.memory_capacity[d];
    bool fits = !respect_memory || cap <= 0;
    if (!fits && persistent <= cap) {
      if (!tb.has_value()) {
        tb.emplace(problem);
        order = RankOrder(problem, *tb);
      }
      const std::vector<int> all_here(n, d);
      ListScheduleOptions list;
      list.fixed = &all_here;
      fits = ListSchedule(problem, *tb, order, list).ok();
    }
    if (fits) {
      out.device = d;
      out.time = time;
      return out;
    }
    if (out.too_small < 0) {
      out.too_small = d;
      out.too_small_time = time;
      out.too_small_needs = persistent;
      if (!tb.has_value()) {
        tb.emplace(problem);
        order = RankOrder(problem, *tb);
      }
      const std::vector<int> all_here(n, d);
      ListScheduleOptions list;
      list.fixed = &all_here;
      list.respect_memory = false;
      absl::StatusOr<Schedule> s = ListSchedule(problem, *tb, order, list);
      if (s.ok()) out.too_small_needs = s->peak_memory[d];
    }
  }
  return out;
}

namespace {

// The candidates ScheduleTasks tried, and the best so far.
class Candidates {
 public:
  // Records `cand` under `name`; keeps it when it is faster than the best.
  void Offer(const std::string& name, absl::StatusOr<Schedule> cand,
             const std::string& plan) {
    PlanOutcome outcome;
    outcome.name = name;
    if (!cand.ok()) {
      outcome.failure = std::string(cand.status().message());
      if (failure_.ok() || (cand.status().code() == absl::StatusCode::kResourceExhausted &&
                            failure_.code() != absl::StatusCode::kResourceExhausted)) {
        failure_ = cand.status();
      }
      outcomes_.push_back(std::move(outcome));
      return;
    }
    outcome.makespan = cand->makespan;
    outcomes_.push_back(std::move(outcome));
    if (!best_.has_value() || cand->makespan < best_->makespan) {
      cand->plan = plan;
      best_ = *std::move(cand);
    }
  }
  const Schedule* best() const { return best_.has_value() ? &*best_ : nullptr; }
  Schedule* mutable_best() { return best_.has_value() ? &*best_ : nullptr; }
  void Replace(Schedule s) { best_ = std::move(s); }
  std::vector<PlanOutcome>& outcomes() { return outcomes_; }

  // The best plan with every outcome attached, or an error that lists why
  // each candidate failed.
  absl::StatusOr<Schedule> Finish() {
    if (best_.has_value()) {
      best_->plans = std::move(outcomes_);
      return *std::move(best_);
    }
    std::vector<std::string> why;
    for (const PlanOutcome& o : outcomes_) {
      why.push_back(absl::StrCat(o.name, ": ", o.failure));
    }
    return absl::Status(failure_.code(),
                        absl::StrCat("no plan fits: ", absl::StrJoin(why, "; ")));
  }

 private:
  std::optional<Schedule> best_;
  std::vector<PlanOutcome> outcomes_;
  absl::Status failure_;
};

// Under memory pressure: a contiguous split as one more candidate (it must
// beat a one-device plan by min_spread_gain, like any spread plan), then
// local search from the best plan.
void ImproveUnderMemoryPressure(const SchedProblem& problem, const Tables& tb,
                                const std::vector<int>& order, const SchedOptions& options,
                                Candidates* cands) {
  const int n = static_cast<int>(problem.tasks.size());
  if (!options.respect_memory || n == 0 || n > options.split_max_tasks ||
      problem.num_devices < 2 || !internal::MemoryCanBind(problem)) {
    return;
  }
  const internal::Units units = internal::MakeUnits(problem, tb);
  const double gain = 1 + std::max(0.0, options.min_spread_gain);
  // A spread plan must beat a one-device plan by min_spread_gain.
  auto bar = [&](const Schedule& current) {
    return current.plan == "heft" || current.plan == "split" ? current.makespan
                                                             : current.makespan / gain;
  };
  absl::StatusOr<internal::SplitPlan> split =
      internal::ContiguousSplit(problem, tb, units, order, options.respect_memory);
  if (!split.ok()) {
    cands->Offer("split", split.status(), "split");
  } else if (cands->best() != nullptr && split->schedule.makespan >= bar(*cands->best())) {
    cands->outcomes().push_back(PlanOutcome{"split", split->schedule.makespan, ""});
  } else {
    cands->Offer("split", std::move(split->schedule), "split");
  }
  const Schedule* current = cands->best();
  if (options.search_work > 0 && current != nullptr) {
    const int budget = static_cast<int>(
        std::clamp<int64_t>(options.search_work / std::max(n, 1), 16, 4000));
    // Moves are simulated in HEFT's order, so every plan kept fits as
    // EvaluateAssignment simulates it.
    Schedule searched = internal::LocalSearch(problem, tb, units, order, *current, budget,
                                              options.respect_memory);
    if (searched.makespan < bar(*current)) {
      cands->outcomes().push_back(PlanOutcome{
          absl::StrCat(current->plan, " + local search"), searched.makespan, ""});
      searched.plan = current->plan;
      if (searched.plan == "single-device") searched.plan = "mostly-one-device";
      cands->Replace(std::move(searched));
    }
  }
}

}  // namespace

absl::StatusOr<Schedule> ScheduleTasks(const SchedProblem& problem,
                                       const SchedOptions& options) {
  GR_RETURN_IF_ERROR(ValidateProblem(problem));
  Tables tb(problem);
  const int q = problem.num_devices;
  const int n = static_cast<int>(problem.tasks.size());
  const std::vector<int> order = RankOrder(problem, tb);
  Candidates cands;

  ListScheduleOptions spread;
  spread.respect_memory = options.respect_memory;
  spread.record_candidate_finish = options.record_candidate_finish;
  spread.defer_sources = options.defer_free_sources;
  cands.Offer("heft", ListSchedule(problem, tb, order, spread), "heft");
  // PEFT (optimistic cost table) as another spread plan: it looks ahead
  // to the whole remaining graph at HEFT's cost order.
  if (options.peft && q > 1) {
    std::vector<double> oct;
    const std::vector<int> peft_order = PeftOrder(problem, tb, &oct);
    ListScheduleOptions peft = spread;
    peft.oct = &oct;
    cands.Offer("peft", ListSchedule(problem, tb, peft_order, peft), "heft");
  }
  // HEFT with one level of lookahead as a third spread plan, on graphs
  // small enough for its O(e * q^2 * indegree) cost.
  if (options.lookahead_max_tasks > 0 && n <= options.lookahead_max_tasks && q > 1) {
    ListScheduleOptions ahead = spread;
    ahead.lookahead = true;
    cands.Offer("lookahead", ListSchedule(problem, tb, order, ahead), "heft");
  }
  if (!options.single_device_candidates) {
    ImproveUnderMemoryPressure(problem, tb, order, options, &cands);
    return cands.Finish();
  }

  // Single-device candidates: everything on device d where it can run
  // there; tasks (and their groups) that cannot go to their cheapest
  // feasible device.
  int num_groups = 0;
  const auto group_ok = GroupFeasibility(problem, &num_groups);
  std::vector<int> group_fallback(num_groups, -1);
  for (int g = 0; g < num_groups; ++g) {
    for (int d = 0; d < q; ++d) {
      if (group_ok[g][d]) {
        group_fallback[g] = d;
        break;
      }
    }
  }
  ListScheduleOptions eval;
  eval.respect_memory = options.respect_memory;
  // A candidate wins against the spread plan unless the spread plan is
  // faster by more than min_spread_gain; among candidates, the fastest.
  const Schedule* spread_best = cands.best();
  const double heft_time = spread_best != nullptr ? spread_best->makespan : kInfeasible;
  const std::vector<int> heft_device =
      spread_best != nullptr ? spread_best->device : std::vector<int>();
  std::vector<std::vector<double>> candidate_finish;
  if (spread_best != nullptr) {
    candidate_finish = std::move(cands.mutable_best()->candidate_finish);
  }
  const double bar = heft_time * (1 + std::max(0.0, options.min_spread_gain));
  bool have_candidate = false;
  auto beats = [&](double makespan) {
    if (cands.best() == nullptr) return true;
    if (have_candidate) return makespan < cands.best()->makespan;
    return options.min_spread_gain > 0 ? makespan <= bar : makespan < heft_time;
  };
  for (int d = 0; d < q; ++d) {
    std::vector<int> assign(n);
    bool all_here = true;
    for (int i = 0; i < n; ++i) {
      const SchedTask& t = problem.tasks[i];
      const bool here = t.group >= 0 ? group_ok[t.group][d] != 0 : Finite(t.cost[d]);
      if (here) {
        assign[i] = d;
        continue;
      }
      all_here = false;
      if (t.group >= 0) {
        assign[i] = group_fallback[t.group];
      } else {
        assign[i] = static_cast<int>(
            std::min_element(t.cost.begin(), t.cost.end()) - t.cost.begin());
      }
    }
    // Everything assigned to d runs there one at a time, so that sum
    // bounds the candidate's makespan from below: skip it when it cannot
    // beat the plan in hand.
    double serial = 0;
    for (int i = 0; i < n; ++i) {
      if (assign[i] == d) serial += problem.tasks[i].cost[d];
    }
    if (!beats(serial)) continue;
    eval.fixed = &assign;
    absl::StatusOr<Schedule> cand = ListSchedule(problem, tb, order, eval);
    const std::string name =
        absl::StrCat(all_here ? "all on device " : "mostly on device ", d);
    if (!cand.ok()) {
      cands.Offer(name, std::move(cand), "");
      continue;
    }
    if (beats(cand->makespan)) {
      have_candidate = true;
      // The same assignment as the spread plan is still the spread plan.
      cand->plan = cand->device == heft_device ? "heft"
                   : all_here                  ? "single-device"
                                               : "mostly-one-device";
      cand->candidate_finish = std::move(candidate_finish);
      candidate_finish.clear();
      cands.outcomes().push_back(PlanOutcome{name, cand->makespan, ""});
      cands.Replace(*std::move(cand));
    } else {
      cands.outcomes().push_back(PlanOutcome{name, cand->makespan, ""});
    }
  }
  ImproveUnderMemoryPressure(problem, tb, order, options, &cands);
  if (Schedule* b = cands.mutable_best(); b != nullptr && b->candidate_finish.empty()) {
    b->candidate_finish = std::move(candidate_finish);
  }
  return cands.Finish();
}

}  // namespace placer
}  // namespace graphrun
