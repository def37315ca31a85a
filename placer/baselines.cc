#include "placer/baselines.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphrun {
namespace placer {
namespace {

bool CanRun(double cost) { return cost < kInfeasible; }

struct Lists {
  std::vector<std::vector<int>> in, out;  // edge indices per task
  explicit Lists(const SchedProblem& p) : in(p.tasks.size()), out(p.tasks.size()) {
    for (int e = 0; e < static_cast<int>(p.edges.size()); ++e) {
      out[p.edges[e].src].push_back(e);
      in[p.edges[e].dst].push_back(e);
    }
  }
};

// Kahn's algorithm, first in first out, ties by index.
std::vector<int> KahnOrder(const SchedProblem& p, const Lists& g) {
  const int n = static_cast<int>(p.tasks.size());
  std::vector<int> missing(n), order;
  for (int t = 0; t < n; ++t) {
    missing[t] = static_cast<int>(g.in[t].size());
    if (missing[t] == 0) order.push_back(t);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (int e : g.out[order[k]]) {
      if (--missing[p.edges[e].dst] == 0) order.push_back(p.edges[e].dst);
    }
  }
  return order;
}

double LinkTime(const SchedProblem& p, const SchedEdge& e, int from, int to) {
  if (from == to) return 0;
  const SchedLink& l = p.link(from, to);
  double bytes = static_cast<double>(e.bytes);
  if (e.compressible && l.compresses) bytes /= 2;
  return l.latency_s + (l.bandwidth > 0 ? bytes / l.bandwidth : 0);
}

}  // namespace

HeftPlan PlainHeft(const SchedProblem& p) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  const Lists g(p);
  const std::vector<int> topo = KahnOrder(p, g);
  // Upward rank: mean cost over feasible devices plus the largest mean
  // transfer + rank over successors.
  std::vector<double> rank(n, 0);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int t = *it;
    double sum = 0;
    int feasible = 0;
    for (double c : p.tasks[t].cost) {
      if (CanRun(c)) {
        sum += c;
        ++feasible;
      }
    }
    double tail = 0;
    for (int e : g.out[t]) {
      double comm = 0;
      if (q > 1) {
        for (int a = 0; a < q; ++a) {
          for (int b = 0; b < q; ++b) {
            if (a != b) comm += LinkTime(p, p.edges[e], a, b);
          }
        }
        comm /= q * (q - 1);
      }
      tail = std::max(tail, comm + rank[p.edges[e].dst]);
    }
    rank[t] = (feasible ? sum / feasible : 0) + tail;
  }
  std::vector<int> pos(n);
  for (int i = 0; i < n; ++i) pos[topo[i]] = i;
  std::vector<int> order = topo;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return rank[a] != rank[b] ? rank[a] > rank[b] : pos[a] < pos[b];
  });

  int num_groups = 0;
  for (const SchedTask& t : p.tasks) num_groups = std::max(num_groups, t.group + 1);
  std::vector<int> group_device(num_groups, -1);
  // busy[d]: sorted, disjoint (start, finish).
  std::vector<std::vector<std::pair<double, double>>> busy(q);
  std::vector<double> finish(n, 0);
  HeftPlan plan;
  plan.device.assign(n, -1);
  for (int t : order) {
    const SchedTask& task = p.tasks[t];
    int best = -1;
    double best_start = 0, best_finish = kInfeasible;
    for (int d = 0; d < q; ++d) {
      const double w = task.cost[d];
      if (!CanRun(w)) continue;
      if (task.group >= 0 && group_device[task.group] >= 0 &&
          group_device[task.group] != d) {
        continue;
      }
      if (task.group >= 0 && group_device[task.group] < 0) {
        // The first member decides: every member must be able to run on d.
        bool all = true;
        for (const SchedTask& m : p.tasks) {
          if (m.group == task.group && !CanRun(m.cost[d])) all = false;
        }
        if (!all) continue;
      }
      double ready = 0;
      for (int e : g.in[t]) {
        const int src = p.edges[e].src;
        ready = std::max(ready, finish[src] + LinkTime(p, p.edges[e], plan.device[src], d));
      }
      double start = ready;
      for (const auto& [b, f] : busy[d]) {
        if (f <= start) continue;
        if (b - start >= w) break;
        start = std::max(start, f);
      }
      if (start + w < best_finish) {
        best = d;
        best_start = start;
        best_finish = start + w;
      }
    }
    plan.device[t] = best;
    finish[t] = best_finish;
    plan.makespan = std::max(plan.makespan, best_finish);
    if (task.group >= 0) group_device[task.group] = best;
    if (best_finish > best_start) {
      auto& list = busy[best];
      list.insert(std::upper_bound(list.begin(), list.end(),
                                   std::make_pair(best_start, best_finish)),
                  {best_start, best_finish});
    }
  }
  return plan;
}

absl::StatusOr<std::vector<int>> TopologicalFill(const SchedProblem& p,
                                                 const std::vector<int>& accelerators,
                                                 int overflow) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  if (overflow < 0 || overflow >= q) {
    return absl::InvalidArgumentError(absl::StrCat("overflow device ", overflow, " out of range"));
  }
  for (int d : accelerators) {
    if (d < 0 || d >= q) {
      return absl::InvalidArgumentError(absl::StrCat("accelerator ", d, " out of range"));
    }
  }
  const Lists g(p);
  // Weights just before their first consumer.
  std::vector<char> free_source(n, 0);
  for (int t = 0; t < n; ++t) {
    bool zero = true;
    for (double c : p.tasks[t].cost) zero &= !CanRun(c) || c == 0;
    free_source[t] = g.in[t].empty() && !g.out[t].empty() && zero;
  }
  std::vector<int> order;
  std::vector<char> queued(n, 0);
  for (int t : KahnOrder(p, g)) {
    if (free_source[t]) continue;
    for (int e : g.in[t]) {
      const int src = p.edges[e].src;
      if (free_source[src] && !queued[src]) {
        queued[src] = 1;
        order.push_back(src);
      }
    }
    order.push_back(t);
  }
  // Groups as units: members, bytes, where each can run.
  int num_groups = 0;
  for (const SchedTask& t : p.tasks) num_groups = std::max(num_groups, t.group + 1);
  std::vector<std::vector<int>> members(num_groups);
  for (int t = 0; t < n; ++t) {
    if (p.tasks[t].group >= 0) members[p.tasks[t].group].push_back(t);
  }

  // Fill. A unit is accepted on the current accelerator when a simple
  // bound (everything it holds, makes and receives counted as held at once)
  // fits what is left, else when the whole plan so far (the rest on the
  // overflow device) simulates within memory; otherwise the fill moves on.
  std::vector<int> device(n, overflow);
  std::vector<char> placed(n, 0);
  size_t current = 0;
  double bound_used = 0;
  for (int t : order) {
    if (placed[t]) continue;
    std::vector<int> unit =
        p.tasks[t].group >= 0 ? members[p.tasks[t].group] : std::vector<int>{t};
    double bound = 0;
    for (int m : unit) {
      bound += static_cast<double>(p.tasks[m].persistent_bytes + p.tasks[m].output_bytes);
      for (int e : g.in[m]) bound += static_cast<double>(p.edges[e].bytes);
    }
    auto runs_on = [&](int d) {
      for (int m : unit) {
        if (!CanRun(p.tasks[m].cost[d])) return false;
      }
      return true;
    };
    int target = -1;
    while (current < accelerators.size()) {
      const int d = accelerators[current];
      if (!runs_on(d)) break;  // this unit alone goes elsewhere
      const int64_t cap = p.memory_capacity.empty() ? 0 : p.memory_capacity[d];
      if (cap <= 0 || bound_used + bound <= static_cast<double>(cap)) {
        target = d;
        bound_used += bound;
        break;
      }
      for (int m : unit) device[m] = d;
      if (EvaluateAssignment(p, device).ok()) {
        target = d;
        bound_used += bound;
        break;
      }
      for (int m : unit) device[m] = overflow;
      ++current;
      bound_used = 0;
    }
    if (target < 0) target = runs_on(overflow) ? overflow : -1;
    for (int d = 0; d < q && target < 0; ++d) {
      if (runs_on(d)) target = d;
    }
    if (target < 0) {
      return absl::InvalidArgumentError(absl::StrCat("task ", t, " runs on no device"));
    }
    for (int m : unit) {
      device[m] = target;
      placed[m] = 1;
    }
  }
  absl::StatusOr<Schedule> s = EvaluateAssignment(p, device);
  if (!s.ok()) {
    return absl::Status(s.status().code(),
                        absl::StrCat("topological fill: ", s.status().message()));
  }
  return device;
}

}  // namespace placer
}  // namespace graphrun
