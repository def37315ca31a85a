#include "placer/list_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphrun {
namespace placer {
namespace internal {
namespace {

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

 private:
  static constexpr int kMaxScan = 256;
  std::map<double, double> busy_;  // start -> finish
  double end_ = 0;
};

// Per-group totals for the group-as-a-unit memory check.
struct GroupTotals {
  std::vector<int64_t> persistent;  // sum over members
  std::vector<int64_t> reserve;     // largest member output
  std::vector<int> size;
};

// `reserve`: whether a group reserves room for its largest output (only
// when devices are being chosen; a fixed assignment needs no protection).
GroupTotals ComputeGroupTotals(const SchedProblem& p, int num_groups, bool reserve) {
  GroupTotals g;
  g.persistent.assign(num_groups, 0);
  g.reserve.assign(num_groups, 0);
  g.size.assign(num_groups, 0);
  for (const SchedTask& t : p.tasks) {
    if (t.group < 0) continue;
    g.persistent[t.group] += t.persistent_bytes;
    if (reserve) g.reserve[t.group] = std::max(g.reserve[t.group], t.output_bytes);
    ++g.size[t.group];
  }
  return g;
}

}  // namespace

bool IsFreeSource(const SchedProblem& p, const Tables& tb, int t) {
  if (tb.adj.in_begin[t] != tb.adj.in_begin[t + 1]) return false;
  if (tb.adj.out_begin[t] == tb.adj.out_begin[t + 1]) return false;
  for (double c : p.tasks[t].cost) {
    if (Finite(c) && c != 0) return false;
  }
  return true;
}

absl::StatusOr<Schedule> ListSchedule(const SchedProblem& p, const Tables& tb,
                                      const std::vector<int>& order,
                                      const ListScheduleOptions& options) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  const std::vector<int>* fixed = options.fixed;
  const bool choosing = fixed == nullptr;
  int num_groups = 0;
  const std::vector<std::vector<char>> group_ok = GroupFeasibility(p, &num_groups);
  const GroupTotals totals = ComputeGroupTotals(p, num_groups, /*reserve=*/choosing);
  std::vector<int> group_device(num_groups, -1);
  std::vector<int> group_left(totals.size);
  std::vector<double> group_rest_work;  // unscheduled work per group x device
  if (choosing && num_groups > 0) {
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
  if (options.record_candidate_finish) {
    s.candidate_finish.assign(n, std::vector<double>(q, kInfeasible));
  }
  std::vector<Timeline> timelines(q);
  // Memory per device: persistent bytes held for the step (including whole
  // groups placed there), reserve for the outputs of groups still being
  // placed, live outputs now, and the peak of live outputs so far.
  std::vector<int64_t> persistent(q, 0), reserve(q, 0), live(q, 0), peak_live(q, 0);
  std::vector<int> consumers_left = tb.consumers;
  // (tensor, device) -> arrival time of a tensor already sent there.
  absl::flat_hash_map<std::pair<int64_t, int>, double> arrivals;
  const bool check_memory =
      options.respect_memory &&
      std::any_of(p.memory_capacity.begin(), p.memory_capacity.end(),
                  [](int64_t c) { return c > 0; });

  std::vector<char> deferred(n, 0);
  if (choosing && options.defer_sources) {
    for (int t = 0; t < n; ++t) deferred[t] = IsFreeSource(p, tb, t);
  }
  const MeanLinks mean_links(p);

  // Free memory of device x (for choosing where a source that does not
  // follow its consumer goes).
  auto free_bytes = [&](int x) -> double {
    if (!check_memory || p.memory_capacity[x] <= 0) return kInfeasible;
    return static_cast<double>(p.memory_capacity[x] - persistent[x] - reserve[x] -
                               std::max(peak_live[x], live[x]));
  };
  // Where a deferred source goes when its consumer `t` runs on `d`: its
  // group's device when the group is placed; with the consumer when it
  // shares the consumer's group, or when `follow` and it can run on d;
  // else the other device with the most free memory that holds it.
  auto source_device = [&](int src, int t, int d, bool follow) {
    const SchedTask& st = p.tasks[src];
    if (st.group >= 0 && group_device[st.group] >= 0) return group_device[st.group];
    if (st.group >= 0 && st.group == p.tasks[t].group) return d;
    const bool ok_here =
        Finite(st.cost[d]) && (st.group < 0 || group_ok[st.group][d] != 0);
    if (follow && ok_here) return d;
    const double need = static_cast<double>(
        st.output_bytes + (st.group >= 0 ? totals.persistent[st.group] : st.persistent_bytes));
    int best_x = -1;
    double best_free = -1;
    for (int x = 0; x < q; ++x) {
      if (x == d || !Finite(st.cost[x]) || (st.group >= 0 && !group_ok[st.group][x])) {
        continue;
      }
      const double f = free_bytes(x);
      if (f >= need && f > best_free) {
        best_free = f;
        best_x = x;
      }
    }
    if (best_x >= 0) return best_x;
    if (ok_here) return d;
    for (int x = 0; x < q; ++x) {
      if (Finite(st.cost[x]) && (st.group < 0 || group_ok[st.group][x])) return x;
    }
    return d;  // unreachable for validated problems
  };

  // Bytes placing `task` commits: its persistent bytes, or the whole
  // group's when it opens its group, plus the group's reserve for its
  // later members.
  auto opening_bytes = [&](int task, int64_t* add_persistent, int64_t* add_reserve) {
    const SchedTask& st = p.tasks[task];
    if (st.group < 0) {
      *add_persistent += st.persistent_bytes;
    } else if (group_device[st.group] < 0) {
      *add_persistent += totals.persistent[st.group];
      if (totals.size[st.group] > 1) *add_reserve += totals.reserve[st.group];
    }
  };

  std::vector<double> ready(q), input_bytes(q);
  std::vector<int> pending;  // deferred sources of the current task
  std::vector<int> opened;   // groups a candidate placement opens
  std::vector<int> pending_device;
  for (const int t : order) {
    if (deferred[t]) continue;  // placed with its first consumer
    const SchedTask& task = p.tasks[t];
    int forced = -1;
    if (!choosing) {
      forced = (*fixed)[t];
    } else if (task.group >= 0 && group_device[task.group] >= 0) {
      forced = group_device[task.group];
    }
    pending.clear();
    for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
      const int src = p.edges[tb.adj.in_edges[k]].src;
      if (deferred[src] && s.device[src] < 0 &&
          std::find(pending.begin(), pending.end(), src) == pending.end()) {
        pending.push_back(src);
      }
    }
    // Ready time and bytes received on device d (with the pending sources
    // following t or not).
    const int d_begin = forced >= 0 ? forced : 0;
    const int d_end = forced >= 0 ? forced + 1 : q;
    auto prepare = [&](int d, bool follow) {
      double r = 0, in = 0;
      for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
        const SchedEdge& e = p.edges[tb.adj.in_edges[k]];
        const bool src_pending = deferred[e.src] && s.device[e.src] < 0;
        const int src_dev =
            src_pending ? source_device(e.src, t, d, follow) : s.device[e.src];
        const int to = p.Destination(e, d);
        if (src_dev != to) {
          double arrive;
          auto it = e.tensor >= 0 && !src_pending ? arrivals.find({e.tensor, to})
                                                  : arrivals.end();
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
    };

    int best = -1;
    double best_metric = kInfeasible, best_start = 0, best_affinity = 0;
    bool best_follow = true;
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
    // Memory the placement of t (and its pending sources) needs on d: the
    // device's persistent bytes plus any group that opens here, the other
    // groups' reserves, and the peak of live outputs. A group that opens
    // needs room for its largest output too.
    auto fits = [&](int d, bool follow) {
      if (!check_memory || p.memory_capacity[d] <= 0) return true;
      const int g = task.group;
      int64_t add_persistent = 0, add_reserve = 0, own_reserve = 0;
      double transient = input_bytes[d] + static_cast<double>(task.output_bytes);
      if (g < 0) {
        add_persistent += task.persistent_bytes;
      } else if (group_device[g] < 0) {
        add_persistent += totals.persistent[g];
        transient = std::max(transient, static_cast<double>(totals.reserve[g]));
      } else if (totals.size[g] > 1) {
        own_reserve = totals.reserve[g];  // the reserve was for this task
      }
      opened.clear();
      for (const int src : pending) {
        if (source_device(src, t, d, follow) != d) continue;
        const SchedTask& st = p.tasks[src];
        transient += static_cast<double>(st.output_bytes);
        if (st.group < 0) {
          add_persistent += st.persistent_bytes;
        } else if (st.group != g && group_device[st.group] < 0 &&
                   std::find(opened.begin(), opened.end(), st.group) == opened.end()) {
          opened.push_back(st.group);
          add_persistent += totals.persistent[st.group];
          if (totals.size[st.group] > 1) add_reserve += totals.reserve[st.group];
        }
      }
      const double need =
          static_cast<double>(persistent[d] + add_persistent + reserve[d] -
                              own_reserve + add_reserve) +
          std::max(static_cast<double>(peak_live[d]),
                   static_cast<double>(live[d]) + transient);
      return need <= static_cast<double>(p.memory_capacity[d]);
    };
    auto consider = [&](int d) {
      const double w = task.cost[d];
      if (!Finite(w)) return;
      if (task.group >= 0 && !group_ok[task.group][d]) return;
      // Sources follow t unless that overflows d's memory.
      bool follow = true;
      prepare(d, true);
      if (!fits(d, true)) {
        if (pending.empty()) return;
        follow = false;
        prepare(d, false);
        if (!fits(d, false)) return;
      }
      const double start = timelines[d].EarliestStart(ready[d], w);
      const double eft = start + w;
      if (options.record_candidate_finish) s.candidate_finish[t][d] = eft;
      double metric = eft;
      if (options.oct != nullptr && choosing && forced < 0) {
        // PEFT: add the optimistic cost of the rest of the graph from here.
        metric += (*options.oct)[static_cast<size_t>(t) * q + d];
      }
      if (options.lookahead && choosing && forced < 0) {
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
        best_follow = follow;
      } else if (metric <= best_metric + tolerance && best >= 0) {
        if (best_affinity < 0) best_affinity = affinity(best);
        const double a = affinity(d);
        if (a < best_affinity) {
          best_metric = std::min(best_metric, metric);
          best = d;
          best_start = start;
          best_affinity = a;
          best_follow = follow;
        }
      }
    };
    for (int d = d_begin; d < d_end; ++d) consider(d);
    if (best < 0) {
      if (forced >= 0 && Finite(task.cost[forced]) &&
          (task.group < 0 || group_ok[task.group][forced])) {
        if (options.failed_device != nullptr) *options.failed_device = forced;
        return absl::ResourceExhaustedError(absl::StrCat(
            "task ", t, " does not fit in the memory of device ", forced, " (",
            persistent[forced] + reserve[forced], " bytes held for the step, ",
            live[forced], " live, needs ", task.output_bytes + task.persistent_bytes,
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

    // Commits `task` to `d`: memory, group state, timeline.
    auto commit = [&](int x, int d, double start, double in_bytes) {
      const SchedTask& xt = p.tasks[x];
      const double w = xt.cost[d];
      s.device[x] = d;
      s.start[x] = start;
      s.finish[x] = start + w;
      s.busy[d] += w;
      s.makespan = std::max(s.makespan, s.finish[x]);
      timelines[d].Add(start, start + w);
      int64_t add_persistent = 0, add_reserve = 0;
      opening_bytes(x, &add_persistent, &add_reserve);
      persistent[d] += add_persistent;
      reserve[d] += add_reserve;
      if (xt.group >= 0) {
        group_device[xt.group] = d;
        if (--group_left[xt.group] == 0 && totals.size[xt.group] > 1) {
          reserve[d] -= totals.reserve[xt.group];
        }
        if (!group_rest_work.empty()) {
          for (int e = 0; e < q; ++e) {
            if (Finite(xt.cost[e])) group_rest_work[xt.group * q + e] -= xt.cost[e];
          }
        }
      }
      live[d] += xt.output_bytes;
      peak_live[d] = std::max<int64_t>(peak_live[d],
                                       live[d] + static_cast<int64_t>(in_bytes));
    };
    if (!pending.empty()) prepare(best, best_follow);  // input_bytes[best]
    pending_device.clear();
    for (const int src : pending) {
      pending_device.push_back(source_device(src, t, best, best_follow));
    }
    for (size_t k = 0; k < pending.size(); ++k) {
      const int src = pending[k];
      commit(src, pending_device[k], 0, 0);
      s.follows.resize(n, -1);
      s.follows[src] = t;
    }
    commit(t, best, best_start, input_bytes[best]);
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
    // Inputs whose last consumer this was are freed.
    for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
      const int src = p.edges[tb.adj.in_edges[k]].src;
      if (--consumers_left[src] == 0) {
        live[s.device[src]] -= p.tasks[src].output_bytes;
      }
    }
  }
  // Under a memory limit the peaks in time decide: a device fits when its
  // replay does. (Without one, the list-order peaks are reported; the
  // replay costs a sort per device.)
  for (int d = 0; d < q; ++d) s.peak_memory[d] = persistent[d] + peak_live[d];
  if (check_memory) {
    s.peak_memory = ReplayPeakMemory(p, s);
    for (int d = 0; d < q; ++d) {
      if (p.memory_capacity[d] > 0 && s.peak_memory[d] > p.memory_capacity[d]) {
        if (options.failed_device != nullptr) *options.failed_device = d;
        return absl::ResourceExhaustedError(absl::StrCat(
            "device ", d, " needs ", s.peak_memory[d], " bytes at its peak (capacity ",
            p.memory_capacity[d], ")"));
      }
    }
  }
  return s;
}

std::vector<int64_t> ReplayPeakMemory(const SchedProblem& p, const Schedule& s) {
  const int q = p.num_devices;
  const int n = static_cast<int>(p.tasks.size());
  std::vector<int64_t> persistent(q, 0);
  std::vector<double> last_use(n, -1);
  for (const SchedEdge& e : p.edges) {
    last_use[e.src] = std::max(last_use[e.src], s.finish[e.dst]);
  }
  // (time, bytes): frees (negative) sort before allocations at one time.
  std::vector<std::vector<std::pair<double, int64_t>>> events(q);
  for (int t = 0; t < n; ++t) {
    const int d = s.device[t];
    persistent[d] += p.tasks[t].persistent_bytes;
    const int64_t out = p.tasks[t].output_bytes;
    if (out == 0) continue;
    events[d].emplace_back(s.start[t], out);
    if (last_use[t] >= 0) events[d].emplace_back(std::max(last_use[t], s.start[t]), -out);
  }
  // A received copy lives from the first to the last of its readers there.
  struct Copy {
    double from, to;
    int64_t bytes;
  };
  absl::flat_hash_map<std::pair<int64_t, int>, Copy> copies;
  for (size_t k = 0; k < p.edges.size(); ++k) {
    const SchedEdge& e = p.edges[k];
    const int to = p.Destination(e, s.device[e.dst]);
    if (s.device[e.src] == to || e.bytes == 0) continue;
    const int64_t tensor = e.tensor >= 0 ? e.tensor : -1 - static_cast<int64_t>(k);
    auto [it, inserted] =
        copies.try_emplace({tensor, to}, Copy{s.start[e.dst], s.finish[e.dst], e.bytes});
    if (!inserted) {
      it->second.from = std::min(it->second.from, s.start[e.dst]);
      it->second.to = std::max(it->second.to, s.finish[e.dst]);
    }
  }
  for (const auto& [key, copy] : copies) {
    events[key.second].emplace_back(copy.from, copy.bytes);
    events[key.second].emplace_back(copy.to, -copy.bytes);
  }
  std::vector<int64_t> peak(q, 0);
  for (int d = 0; d < q; ++d) {
    std::sort(events[d].begin(), events[d].end());
    int64_t live = 0, high = 0;
    for (const auto& event : events[d]) {
      live += event.second;
      high = std::max(high, live);
    }
    peak[d] = persistent[d] + high;
  }
  return peak;
}

}  // namespace internal
}  // namespace placer
}  // namespace graphrun
