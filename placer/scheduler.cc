#include "placer/scheduler.h"

#include "placer/scheduler_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
using internal::MeanLinks;
using internal::PeftOrder;
using internal::RankOrder;
using internal::Tables;
using internal::TopologicalOrder;

// Busy intervals of one device, for insertion-based scheduling.
class Timeline {
 public:
  // Earliest start >= ready of a gap of length `duration`. Looks at most
  // kMaxScan gaps back from the end; past that it appends, which keeps the
  // search O(1) per (task, device) on long schedules.
  double EarliestStart(double ready, double duration) const {
    if (busy_.empty() || ready >= end_) return std::max(ready, end_);
    // First interval that ends after `ready`.
    auto it = busy_.upper_bound(ready);
    if (it != busy_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > ready) it = prev;
    }
    double t = ready;
    int scanned = 0;
    for (; it != busy_.end() && scanned < kMaxScan; ++it, ++scanned) {
      if (it->first - t >= duration) return t;
      t = std::max(t, it->second);
    }
    return std::max(t, end_);
  }
  void Add(double start, double finish) {
    if (finish <= start) {
      // Zero-length tasks take no room.
      end_ = std::max(end_, finish);
      return;
    }
    busy_.emplace(start, finish);
    end_ = std::max(end_, finish);
  }
  double end() const { return end_; }

 private:
  static constexpr int kMaxScan = 256;
  std::map<double, double> busy_;  // start -> finish
  double end_ = 0;
};

// The list scheduler shared by HEFT (fixed == nullptr: choose the device
// with the earliest finish) and EvaluateAssignment (fixed device per task).
absl::StatusOr<Schedule> ListSchedule(const SchedProblem& p, const Tables& tb,
                                      const std::vector<int>& order,
                                      const std::vector<int>* fixed,
                                      const SchedOptions& options,
                                      bool lookahead = false,
                                      const std::vector<double>* oct = nullptr) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  int num_groups = 0;
  const std::vector<std::vector<char>> group_ok = GroupFeasibility(p, &num_groups);
  std::vector<int> group_device(num_groups, -1);
  std::vector<double> group_rest_work;  // unscheduled work per group x device
  if (fixed == nullptr && num_groups > 0) {
    group_rest_work.assign(static_cast<size_t>(num_groups) * q, 0);
    for (const SchedTask& t : p.tasks) {
      if (t.group < 0) continue;
      for (int d = 0; d < q; ++d) {
        if (Finite(t.cost[d])) group_rest_work[t.group * q + d] += t.cost[d];
      }
    }
  }

  Schedule s;
  s.device.assign(n, -1);
  s.start.assign(n, 0);
  s.finish.assign(n, 0);
  s.peak_memory.assign(q, 0);
  s.busy.assign(q, 0);
  if (options.record_candidate_finish) s.candidate_finish.resize(n);
  std::vector<Timeline> timelines(q);
  std::vector<int64_t> live(q, 0);
  std::vector<int> consumers_left = tb.consumers;
  // (tensor, device) -> arrival time of a tensor already sent there.
  absl::flat_hash_map<std::pair<int64_t, int>, double> arrivals;
  const bool check_memory =
      options.respect_memory &&
      std::any_of(p.memory_capacity.begin(), p.memory_capacity.end(),
                  [](int64_t c) { return c > 0; });

  const MeanLinks mean_links(p);
  std::vector<double> ready(q), input_bytes(q);
  for (const int t : order) {
    const SchedTask& task = p.tasks[t];
    int forced = -1;
    if (fixed != nullptr) {
      forced = (*fixed)[t];
    } else if (task.group >= 0 && group_device[task.group] >= 0) {
      forced = group_device[task.group];
    }
    // Ready time and bytes received on each device (only the forced one
    // when the device is already decided).
    for (int d = forced >= 0 ? forced : 0; d < (forced >= 0 ? forced + 1 : q); ++d) {
      double r = 0, in = 0;
      for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
        const SchedEdge& e = p.edges[tb.adj.in_edges[k]];
        const int src_dev = s.device[e.src];
        const int to = p.Destination(e, d);
        if (src_dev != to) {
          double arrive;
          auto it = e.tensor >= 0 ? arrivals.find({e.tensor, to}) : arrivals.end();
          if (it != arrivals.end()) {
            arrive = it->second;
          } else {
            arrive = s.finish[e.src] + p.TransferTime(e, src_dev, d);
            in += static_cast<double>(e.bytes);
          }
          r = std::max(r, arrive);
        } else {
          r = std::max(r, s.finish[e.src]);
        }
      }
      ready[d] = r;
      input_bytes[d] = in;
    }

    int best = -1;
    double best_metric = kInfeasible, best_start = 0, best_affinity = 0;
    // Ties (a zero-cost Const or Placeholder fits anywhere at time 0) go
    // to the device where the task's consumers are cheapest, so a constant
    // follows its consumers instead of the lowest device index.
    auto affinity = [&](int d) {
      double a = 0;
      for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
        const SchedEdge& e = p.edges[tb.adj.out_edges[k]];
        const double c = p.tasks[e.dst].cost[d];
        a += Finite(c) ? c
                       : mean_links.Time(e) + *std::min_element(
                                                  p.tasks[e.dst].cost.begin(),
                                                  p.tasks[e.dst].cost.end());
      }
      return a;
    };
    auto consider = [&](int d) {
      const double w = task.cost[d];
      if (!Finite(w)) return;
      if (task.group >= 0 && !group_ok[task.group][d]) return;
      if (check_memory && p.memory_capacity[d] > 0) {
        const double need = static_cast<double>(live[d]) + input_bytes[d] +
                            static_cast<double>(task.output_bytes) +
                            static_cast<double>(task.persistent_bytes);
        if (need > static_cast<double>(p.memory_capacity[d])) return;
      }
      const double start = timelines[d].EarliestStart(ready[d], w);
      const double eft = start + w;
      if (options.record_candidate_finish) s.candidate_finish[t][d] = eft;
      double metric = eft;
      if (oct != nullptr && fixed == nullptr && forced < 0) {
        // PEFT: add the optimistic cost of the rest of the graph from here.
        metric += (*oct)[static_cast<size_t>(t) * q + d];
      }
      if (lookahead && fixed == nullptr && forced < 0) {
        // One level of lookahead (Bittencourt et al. 2010): how early could
        // each consumer finish if this task ran on d? The worst of those
        // decides, so a choice that would strand a consumer behind a big
        // transfer loses even when its own finish is early.
        for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
          const SchedEdge& e = p.edges[tb.adj.out_edges[k]];
          const SchedTask& child = p.tasks[e.dst];
          double child_best = kInfeasible;
          for (int c = 0; c < q; ++c) {
            const double wc = child.cost[c];
            if (!Finite(wc)) continue;
            double r = eft + p.TransferTime(e, d, c);
            for (int j = tb.adj.in_begin[e.dst]; j < tb.adj.in_begin[e.dst + 1]; ++j) {
              const SchedEdge& in = p.edges[tb.adj.in_edges[j]];
              if (in.src == t || s.device[in.src] < 0) continue;
              r = std::max(r, s.finish[in.src] + p.TransferTime(in, s.device[in.src], c));
            }
            child_best = std::min(child_best, timelines[c].EarliestStart(r, wc) + wc);
          }
          if (child_best < kInfeasible) metric = std::max(metric, child_best);
        }
      }
      // A group's first member decides for the whole group: count the
      // group's remaining work on this device too.
      if (task.group >= 0 && !group_rest_work.empty()) {
        metric += group_rest_work[task.group * q + d] - w;
      }
      // Only exact ties (up to rounding) count: real differences of a
      // nanosecond still decide.
      const double tolerance = 1e-12 * std::abs(metric) + 1e-18;
      if (metric < best_metric - tolerance) {
        best_metric = metric;
        best = d;
        best_start = start;
        best_affinity = -1;  // computed only if a tie needs it
      } else if (metric <= best_metric + tolerance && best >= 0) {
        if (best_affinity < 0) best_affinity = affinity(best);
        const double a = affinity(d);
        if (a < best_affinity) {
          best_metric = std::min(best_metric, metric);
          best = d;
          best_start = start;
          best_affinity = a;
        }
      }
    };
    if (options.record_candidate_finish) {
      s.candidate_finish[t].assign(q, kInfeasible);
    }
    if (forced >= 0) {
      consider(forced);
    } else {
      for (int d = 0; d < q; ++d) consider(d);
    }
    if (best < 0) {
      if (forced >= 0 && Finite(task.cost[forced])) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "task ", t, " does not fit in the memory of device ", forced,
            " (", live[forced], " bytes live, needs ", task.output_bytes,
            " more, capacity ", p.memory_capacity[forced], ")"));
      }
      if (forced >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("task ", t, " cannot run on device ", forced));
      }
      return absl::ResourceExhaustedError(absl::StrCat(
          "task ", t, " fits on no device: every feasible device is out of "
          "memory"));
    }

    const double w = task.cost[best];
    s.device[t] = best;
    s.start[t] = best_start;
    s.finish[t] = best_start + w;
    s.busy[best] += w;
    s.makespan = std::max(s.makespan, s.finish[t]);
    timelines[best].Add(best_start, best_start + w);
    if (task.group >= 0) {
      group_device[task.group] = best;
      if (!group_rest_work.empty()) {
        for (int d = 0; d < q; ++d) {
          if (Finite(task.cost[d])) group_rest_work[task.group * q + d] -= task.cost[d];
        }
      }
    }
    // Transfers into `best`, shared per tensor.
    for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
      const SchedEdge& e = p.edges[tb.adj.in_edges[k]];
      const int src_dev = s.device[e.src];
      const int to = p.Destination(e, best);
      if (src_dev == to) continue;
      if (e.tensor >= 0) {
        auto inserted = arrivals.emplace(
            std::make_pair(e.tensor, to),
            s.finish[e.src] + p.TransferTime(e, src_dev, best));
        if (!inserted.second) continue;
      }
      ++s.num_transfers;
      const SchedLink& l = p.link(src_dev, to);
      s.transfer_bytes += (e.compressible && l.compresses) ? e.bytes / 2 : e.bytes;
    }
    // Memory: this task's outputs and persistent bytes become live; inputs
    // whose last consumer this was are freed.
    live[best] += task.output_bytes + task.persistent_bytes;
    s.peak_memory[best] = std::max<int64_t>(
        s.peak_memory[best], live[best] + static_cast<int64_t>(input_bytes[best]));
    for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
      const int src = p.edges[tb.adj.in_edges[k]].src;
      if (--consumers_left[src] == 0) {
        live[s.device[src]] -= p.tasks[src].output_bytes;
      }
    }
  }
  return s;
}

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
  SchedOptions options;
  GR_ASSIGN_OR_RETURN(Schedule s, ListSchedule(problem, tb, RankOrder(problem, tb),
                                               &device, options));
  s.plan = "fixed";
  return s;
}

absl::StatusOr<Schedule> ScheduleTasks(const SchedProblem& problem,
                                       const SchedOptions& options) {
  GR_RETURN_IF_ERROR(ValidateProblem(problem));
  Tables tb(problem);
  const std::vector<int> order = RankOrder(problem, tb);
  absl::StatusOr<Schedule> best = ListSchedule(problem, tb, order, nullptr, options);
  if (best.ok()) best->plan = "heft";
  // PEFT (optimistic cost table) as another spread plan: it looks ahead
  // to the whole remaining graph at HEFT's cost order.
  if (options.peft && problem.num_devices > 1) {
    std::vector<double> oct;
    const std::vector<int> peft_order = PeftOrder(problem, tb, &oct);
    absl::StatusOr<Schedule> peft =
        ListSchedule(problem, tb, peft_order, nullptr, options, false, &oct);
    if (peft.ok() && (!best.ok() || peft->makespan < best->makespan)) {
      peft->plan = "heft";
      best = std::move(peft);
    }
  }
  // HEFT with one level of lookahead as a second spread plan, on graphs
  // small enough for its O(e * q^2 * indegree) cost.
  if (options.lookahead_max_tasks > 0 &&
      static_cast<int>(problem.tasks.size()) <= options.lookahead_max_tasks &&
      problem.num_devices > 1) {
    absl::StatusOr<Schedule> ahead =
        ListSchedule(problem, tb, order, nullptr, options, /*lookahead=*/true);
    if (ahead.ok() && (!best.ok() || ahead->makespan < best->makespan)) {
      ahead->plan = "heft";
      best = std::move(ahead);
    }
  }
  if (!options.single_device_candidates) return best;

  // Single-device candidates: everything on device d where it can run
  // there; tasks (and their groups) that cannot go to their cheapest
  // feasible device.
  const int q = problem.num_devices;
  const int n = static_cast<int>(problem.tasks.size());
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
  SchedOptions eval = options;
  eval.record_candidate_finish = false;
  // A candidate wins against the spread plan unless the spread plan is
  // faster by more than min_spread_gain; among candidates, the fastest.
  const double heft_time = best.ok() ? best->makespan : kInfeasible;
  const std::vector<int> heft_device = best.ok() ? best->device : std::vector<int>();
  const double bar = heft_time * (1 + std::max(0.0, options.min_spread_gain));
  bool have_candidate = false;
  auto beats = [&](double makespan) {
    if (!best.ok()) return true;
    if (have_candidate) return makespan < best->makespan;
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
    absl::StatusOr<Schedule> cand = ListSchedule(problem, tb, order, &assign, eval);
    if (!cand.ok()) continue;  // does not fit in memory
    if (beats(cand->makespan)) {
      have_candidate = true;
      // The same assignment as the spread plan is still the spread plan.
      cand->plan = cand->device == heft_device ? "heft"
                   : all_here                  ? "single-device"
                                               : "mostly-one-device";
      if (best.ok()) cand->candidate_finish = std::move(best->candidate_finish);
      best = std::move(cand);
    }
  }
  return best;
}

}  // namespace placer
}  // namespace graphrun
