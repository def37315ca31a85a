#include "placer/plan_search.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "placer/list_scheduler.h"

namespace graphrun {
namespace placer {
namespace internal {
namespace {

// Per-unit figures for the split.
struct UnitTable {
  int m = 0;
  std::vector<std::vector<double>> cost;  // [unit][device], kInfeasible if any member cannot
  std::vector<int64_t> persistent, output;
};

UnitTable MakeUnitTable(const SchedProblem& p, const Units& units) {
  UnitTable ut;
  ut.m = static_cast<int>(units.members.size());
  const int q = p.num_devices;
  ut.cost.assign(ut.m, std::vector<double>(q, 0));
  ut.persistent.assign(ut.m, 0);
  ut.output.assign(ut.m, 0);
  for (int u = 0; u < ut.m; ++u) {
    for (int t : units.members[u]) {
      const SchedTask& task = p.tasks[t];
      for (int d = 0; d < q; ++d) ut.cost[u][d] += task.cost[d];
      ut.persistent[u] += task.persistent_bytes;
      ut.output[u] += task.output_bytes;
    }
  }
  return ut;
}

// Units in the order their first (non-free-source) member appears in
// `task_order`; a unit of free sources only goes just before the unit of
// its first consumer.
std::vector<int> UnitOrder(const SchedProblem& p, const Tables& tb, const Units& units,
                           const std::vector<int>& task_order) {
  const int m = static_cast<int>(units.members.size());
  std::vector<char> only_sources(m, 1), seen(m, 0);
  for (int u = 0; u < m; ++u) {
    for (int t : units.members[u]) {
      if (!IsFreeSource(p, tb, t)) only_sources[u] = 0;
    }
  }
  std::vector<int> order;
  order.reserve(m);
  for (int t : task_order) {
    const int u = units.of[t];
    if (seen[u] || IsFreeSource(p, tb, t)) continue;
    // Free-source units feeding this one come first.
    for (int mt : units.members[u]) {
      for (int k = tb.adj.in_begin[mt]; k < tb.adj.in_begin[mt + 1]; ++k) {
        const int su = units.of[p.edges[tb.adj.in_edges[k]].src];
        if (only_sources[su] && !seen[su]) {
          seen[su] = 1;
          order.push_back(su);
        }
      }
    }
    seen[u] = 1;
    order.push_back(u);
  }
  for (int u = 0; u < m; ++u) {
    if (!seen[u]) order.push_back(u);  // sources with no consumer
  }
  return order;
}

// Kahn's algorithm taking the most recently readied task first: a
// depth-first topological order that finishes a branch before the next.
std::vector<int> DepthFirstOrder(const SchedProblem& p, const Tables& tb) {
  const int n = static_cast<int>(p.tasks.size());
  std::vector<int> pending(n, 0), stack, order;
  for (const SchedEdge& e : p.edges) ++pending[e.dst];
  for (int t = n - 1; t >= 0; --t) {
    if (pending[t] == 0) stack.push_back(t);
  }
  while (!stack.empty()) {
    const int t = stack.back();
    stack.pop_back();
    order.push_back(t);
    for (int k = tb.adj.out_begin[t + 1] - 1; k >= tb.adj.out_begin[t]; --k) {
      const int c = p.edges[tb.adj.out_edges[k]].dst;
      if (--pending[c] == 0) stack.push_back(c);
    }
  }
  return order;
}

// The devices a split uses: those with a memory capacity, fastest first
// (each takes at most one segment), and the fastest device without one
// (it can take any number of segments between them), or -1.
struct SplitDevices {
  std::vector<int> limited;
  int unlimited = -1;
};

// The split DP on one unit order: a device per task, or empty when no
// split fits. `margin[d]` scales device d's capacity.
//
// State (j, k, u): the first j units placed, the first k limited devices
// considered, u = the last segment went to the unlimited device. A
// segment (i, j] costs its work on the device plus what it receives (each
// tensor made before i and read in the segment, once) over the link from
// the previous segment's device.
std::vector<int> SplitAssignment(const SchedProblem& p, const Tables& tb, const Units& units,
                                 const UnitTable& ut, const std::vector<int>& unit_order,
                                 const SplitDevices& devs, const std::vector<double>& margin,
                                 const std::vector<int>& tensor_id, int num_tensors,
                                 bool respect_memory) {
  const int m = ut.m;
  const int q = p.num_devices;
  const int nl = static_cast<int>(devs.limited.size());
  const int U = devs.unlimited;
  std::vector<int> pos(m);
  for (int i = 0; i < m; ++i) pos[unit_order[i]] = i;
  // Last position at which each task's output is consumed (-1: never).
  std::vector<int> last(p.tasks.size(), -1);
  for (const SchedEdge& e : p.edges) {
    last[e.src] = std::max(last[e.src], pos[units.of[e.dst]]);
  }
  std::vector<std::vector<int>> freed_at(m);
  for (int t = 0; t < static_cast<int>(p.tasks.size()); ++t) {
    if (last[t] >= 0) freed_at[last[t]].push_back(t);
  }
  // Prefix sums of cost per device (infeasible units counted apart).
  std::vector<std::vector<double>> prefix(q, std::vector<double>(m + 1, 0));
  std::vector<std::vector<int>> blocked(q, std::vector<int>(m + 1, 0));
  for (int d = 0; d < q; ++d) {
    for (int i = 0; i < m; ++i) {
      const double c = ut.cost[unit_order[i]][d];
      prefix[d][i + 1] = prefix[d][i] + (Finite(c) ? c : 0);
      blocked[d][i + 1] = blocked[d][i] + (Finite(c) ? 0 : 1);
    }
  }
  auto per_byte = [](const SchedLink& l) { return l.bandwidth > 0 ? 1.0 / l.bandwidth : 0.0; };
  struct In {
    double latency = 0, per_byte = 0;
  };
  auto link_in = [&](int from, int d) {
    In in;
    if (from >= 0) {
      in.latency = p.link(from, d).latency_s;
      in.per_byte = per_byte(p.link(from, d));
    } else if (q > 1) {
      for (int x = 0; x < q; ++x) {
        if (x == d) continue;
        in.latency += p.link(x, d).latency_s / (q - 1);
        in.per_byte += per_byte(p.link(x, d)) / (q - 1);
      }
    }
    return in;
  };
  // into_limited[k][u]: into limited device k after a limited device (u=0)
  // or the unlimited one (u=1); into_unlimited[k]: into U after limited k-1.
  std::vector<std::array<In, 2>> into_limited(nl);
  std::vector<In> into_unlimited(nl + 1);
  for (int k = 0; k < nl; ++k) {
    into_limited[k][0] = link_in(k > 0 ? devs.limited[k - 1] : -1, devs.limited[k]);
    if (U >= 0) into_limited[k][1] = link_in(U, devs.limited[k]);
  }
  if (U >= 0) {
    for (int k = 0; k <= nl; ++k) {
      into_unlimited[k] = link_in(k > 0 ? devs.limited[k - 1] : -1, U);
    }
  }
  auto capacity = [&](int d) -> double {
    if (!respect_memory || p.memory_capacity.empty() || p.memory_capacity[d] <= 0) {
      return kInfeasible;
    }
    return margin[d] * static_cast<double>(p.memory_capacity[d]);
  };
  double largest_capacity = U >= 0 ? kInfeasible : 0;
  for (int d : devs.limited) largest_capacity = std::max(largest_capacity, capacity(d));

  const int width = 2 * (nl + 1);
  auto at = [&](int j, int k, int u) { return static_cast<size_t>(j) * width + 2 * k + u; };
  std::vector<double> best(static_cast<size_t>(m + 1) * width, kInfeasible);
  // How each state was reached: the state before and whether a segment
  // ended here (-1: start).
  struct From {
    int j = -1, k = -1, u = -1;
    bool segment = false;
  };
  std::vector<From> from(best.size());
  best[at(0, 0, 0)] = 0;
  auto relax = [&](int j, int k, int u, double value, From f) {
    if (value < best[at(j, k, u)]) {
      best[at(j, k, u)] = value;
      from[at(j, k, u)] = f;
    }
  };
  std::vector<int> stamp(num_tensors, -1);
  for (int i = 0; i <= m; ++i) {
    for (int k = 0; k < nl; ++k) {
      for (int u = 0; u < 2; ++u) {
        if (Finite(best[at(i, k, u)])) relax(i, k + 1, u, best[at(i, k, u)], From{i, k, u, false});
      }
    }
    if (i == m) break;
    bool any = false;
    for (int x = 0; x < width; ++x) any |= Finite(best[static_cast<size_t>(i) * width + x]);
    if (!any) continue;
    int64_t live = 0, peak = 0, persistent = 0, in_bytes = 0, in_count = 0;
    for (int j = i; j < m; ++j) {
      const int unit = unit_order[j];
      int64_t received = 0;
      for (int t : units.members[unit]) {
        for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
          const int e = tb.adj.in_edges[k];
          const int sp = pos[units.of[p.edges[e].src]];
          if (sp >= i && sp <= j) continue;
          received += p.edges[e].bytes;
          if (stamp[tensor_id[e]] != i) {
            stamp[tensor_id[e]] = i;
            in_bytes += p.edges[e].bytes;
            ++in_count;
          }
        }
      }
      peak = std::max(peak, live + received + ut.output[unit]);
      live += ut.output[unit];
      for (int s : freed_at[j]) {
        const int sp = pos[units.of[s]];
        if (sp >= i && sp <= j) live -= p.tasks[s].output_bytes;
      }
      persistent += ut.persistent[unit];
      const double memory = static_cast<double>(persistent + peak);
      if (memory > largest_capacity) break;  // only grows with j
      const double bytes = static_cast<double>(in_bytes), count = static_cast<double>(in_count);
      for (int k = 0; k <= nl; ++k) {
        for (int u = 0; u < 2; ++u) {
          const double base = best[at(i, k, u)];
          if (!Finite(base)) continue;
          const From f{i, k, u, true};
          if (k < nl) {
            const int d = devs.limited[k];
            if (blocked[d][j + 1] == blocked[d][i] && memory <= capacity(d)) {
              const In& in = into_limited[k][u];
              relax(j + 1, k + 1, 0,
                    base + prefix[d][j + 1] - prefix[d][i] + bytes * in.per_byte +
                        count * in.latency,
                    f);
            }
          }
          if (U >= 0 && u == 0 && blocked[U][j + 1] == blocked[U][i]) {
            const In& in = into_unlimited[k];
            relax(j + 1, k, 1,
                  base + prefix[U][j + 1] - prefix[U][i] + bytes * in.per_byte +
                      count * in.latency,
                  f);
          }
        }
      }
    }
  }
  int j = m, k = nl, u = best[at(m, nl, 1)] < best[at(m, nl, 0)] ? 1 : 0;
  if (!Finite(best[at(j, k, u)])) return {};
  std::vector<int> device(p.tasks.size(), -1);
  while (j > 0 || k > 0) {
    const From f = from[at(j, k, u)];
    if (f.segment) {
      const int d = u == 1 ? U : devs.limited[k - 1];
      for (int x = f.j; x < j; ++x) {
        for (int t : units.members[unit_order[x]]) device[t] = d;
      }
    }
    j = f.j;
    k = f.k;
    u = f.u;
  }
  return device;
}

}  // namespace

Units MakeUnits(const SchedProblem& p, const Tables& tb) {
  const int n = static_cast<int>(p.tasks.size());
  Units units;
  units.of.assign(n, -1);
  absl::flat_hash_map<int, int> group_unit;
  for (int t = 0; t < n; ++t) {
    const int g = p.tasks[t].group;
    if (g >= 0) {
      auto [it, inserted] = group_unit.emplace(g, static_cast<int>(units.members.size()));
      if (inserted) units.members.emplace_back();
      units.of[t] = it->second;
      units.members[it->second].push_back(t);
    } else if (!IsFreeSource(p, tb, t)) {
      units.of[t] = static_cast<int>(units.members.size());
      units.members.push_back({t});
    }
  }
  // A free source joins its consumers' unit when they share one.
  for (int t = 0; t < n; ++t) {
    if (units.of[t] >= 0) continue;
    int shared = -1;
    for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
      const int u = units.of[p.edges[tb.adj.out_edges[k]].dst];
      if (shared == -1) {
        shared = u;
      } else if (u != shared) {
        shared = -2;
      }
    }
    if (shared >= 0) {
      units.of[t] = shared;
      units.members[shared].push_back(t);
    } else {
      units.of[t] = static_cast<int>(units.members.size());
      units.members.push_back({t});
    }
  }
  return units;
}

bool MemoryCanBind(const SchedProblem& p) {
  double total = 0;
  for (const SchedTask& t : p.tasks) {
    total += static_cast<double>(t.persistent_bytes + t.output_bytes);
  }
  for (int64_t c : p.memory_capacity) {
    if (c > 0 && static_cast<double>(c) < total) return true;
  }
  return false;
}

absl::StatusOr<SplitPlan> ContiguousSplit(const SchedProblem& p, const Tables& tb,
                                          const Units& units, const std::vector<int>& order,
                                          bool respect_memory) {
  const int q = p.num_devices;
  const UnitTable ut = MakeUnitTable(p, units);
  // Devices fastest first (total work on each; what a device cannot run
  // counts as ten times the largest work).
  std::vector<std::pair<double, int>> speed;
  double largest = 0;
  std::vector<double> work(q, 0);
  std::vector<int> cannot(q, 0);
  for (int d = 0; d < q; ++d) {
    for (const SchedTask& t : p.tasks) {
      if (Finite(t.cost[d])) {
        work[d] += t.cost[d];
      } else {
        ++cannot[d];
      }
    }
    largest = std::max(largest, work[d]);
  }
  for (int d = 0; d < q; ++d) speed.emplace_back(cannot[d] > 0 ? 10 * largest + work[d] : work[d], d);
  std::stable_sort(speed.begin(), speed.end());
  SplitDevices devs;
  for (const auto& sp : speed) {
    const int d = sp.second;
    if (respect_memory && !p.memory_capacity.empty() && p.memory_capacity[d] > 0) {
      devs.limited.push_back(d);
    } else if (devs.unlimited < 0) {
      devs.unlimited = d;
    }
  }
  // Dense tensor ids: edges of one tensor share one.
  std::vector<int> tensor_id(p.edges.size());
  absl::flat_hash_map<int64_t, int> dense;
  int num_tensors = 0;
  for (size_t e = 0; e < p.edges.size(); ++e) {
    if (p.edges[e].tensor >= 0) {
      auto [it, inserted] = dense.emplace(p.edges[e].tensor, num_tensors);
      if (inserted) ++num_tensors;
      tensor_id[e] = it->second;
    } else {
      tensor_id[e] = num_tensors++;
    }
  }

  const std::vector<std::vector<int>> task_orders = {tb.topo, DepthFirstOrder(p, tb), order};
  absl::StatusOr<SplitPlan> best =
      absl::ResourceExhaustedError("no contiguous split fits in memory");
  ListScheduleOptions eval;
  eval.respect_memory = respect_memory;
  int failed = -1;
  eval.failed_device = &failed;
  for (const std::vector<int>& task_order : task_orders) {
    const std::vector<int> unit_order = UnitOrder(p, tb, units, task_order);
    // The split's memory estimate follows the unit order; the simulation
    // may find a device short. Then that device's capacity is cut by 10%
    // for the split and it is made again.
    std::vector<double> margin(q, 1.0);
    for (int attempt = 0; attempt < 8; ++attempt) {
      const std::vector<int> device =
          SplitAssignment(p, tb, units, ut, unit_order, devs, margin, tensor_id,
                          num_tensors, respect_memory);
      if (device.empty()) break;  // smaller capacities fit even less
      // The plan must fit as EvaluateAssignment simulates it (HEFT's
      // order); simulated in the order the split was made in too, the
      // faster schedule that fits is kept.
      eval.fixed = &device;
      failed = -1;
      absl::StatusOr<Schedule> in_order = ListSchedule(p, tb, order, eval);
      if (!in_order.ok()) {
        if (failed < 0) break;
        margin[failed] *= 0.9;
        continue;
      }
      absl::StatusOr<Schedule> own = ListSchedule(p, tb, task_order, eval);
      SplitPlan plan{*std::move(in_order), order};
      if (own.ok() && own->makespan < plan.schedule.makespan) {
        plan = SplitPlan{*std::move(own), task_order};
      }
      if (!best.ok() || plan.schedule.makespan < best->schedule.makespan) {
        best = std::move(plan);
      }
      break;
    }
  }
  return best;
}

Schedule LocalSearch(const SchedProblem& p, const Tables& tb, const Units& units,
                     const std::vector<int>& order, Schedule start, int max_evaluations,
                     bool respect_memory) {
  const int m = static_cast<int>(units.members.size());
  const int q = p.num_devices;
  // Neighbouring units.
  std::vector<std::vector<int>> next(m);
  for (const SchedEdge& e : p.edges) {
    const int a = units.of[e.src], b = units.of[e.dst];
    if (a == b) continue;
    next[a].push_back(b);
    next[b].push_back(a);
  }
  for (auto& v : next) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  std::vector<std::vector<char>> can(m, std::vector<char>(q, 1));
  for (int u = 0; u < m; ++u) {
    for (int t : units.members[u]) {
      for (int d = 0; d < q; ++d) {
        if (!Finite(p.tasks[t].cost[d])) can[u][d] = 0;
      }
    }
  }
  const std::vector<int> initial = start.device;
  std::vector<int> device = start.device;
  Schedule best = std::move(start);
  ListScheduleOptions eval;
  eval.respect_memory = respect_memory;
  eval.fixed = &device;
  int evaluations = 0;
  bool improved = true;
  std::vector<int> targets;
  while (improved && evaluations < max_evaluations) {
    improved = false;
    for (int u = 0; u < m && evaluations < max_evaluations; ++u) {
      const int here = device[units.members[u][0]];
      targets.clear();
      for (int v : next[u]) {
        const int d = device[units.members[v][0]];
        if (d != here && can[u][d]) targets.push_back(d);
      }
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      for (int d : targets) {
        if (evaluations >= max_evaluations) break;
        for (int t : units.members[u]) device[t] = d;
        ++evaluations;
        absl::StatusOr<Schedule> s = ListSchedule(p, tb, order, eval);
        if (s.ok() && s->makespan < best.makespan * (1 - 1e-9)) {
          best = *std::move(s);
          improved = true;
          break;
        }
        for (int t : units.members[u]) device[t] = here;
      }
    }
  }
  best.searched.assign(p.tasks.size(), 0);
  bool any = false;
  for (size_t t = 0; t < initial.size(); ++t) {
    best.searched[t] = best.device[t] != initial[t];
    any |= best.searched[t] != 0;
  }
  if (!any) best.searched.clear();
  return best;
}

}  // namespace internal
}  // namespace placer
}  // namespace graphrun
