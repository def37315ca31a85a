#include "placer/scheduler_graph.h"

#include <algorithm>
#include <queue>
#include <vector>

namespace graphrun {
namespace placer {
namespace internal {

std::vector<int> TopologicalOrder(const SchedProblem& p, const Adjacency& adj) {
  const int n = static_cast<int>(p.tasks.size());
  std::vector<int> pending(n, 0);
  for (const SchedEdge& e : p.edges) ++pending[e.dst];
  std::vector<int> order;
  order.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const int t = order[k];
    for (int j = adj.out_begin[t]; j < adj.out_begin[t + 1]; ++j) {
      const int dst = p.edges[adj.out_edges[j]].dst;
      if (--pending[dst] == 0) order.push_back(dst);
    }
  }
  return order;
}

std::vector<std::vector<char>> GroupFeasibility(const SchedProblem& p,
                                                int* num_groups) {
  int g = 0;
  for (const SchedTask& t : p.tasks) g = std::max(g, t.group + 1);
  *num_groups = g;
  std::vector<std::vector<char>> ok(g, std::vector<char>(p.num_devices, 1));
  for (const SchedTask& t : p.tasks) {
    if (t.group < 0) continue;
    for (int d = 0; d < p.num_devices; ++d) {
      if (!Finite(t.cost[d])) ok[t.group][d] = 0;
    }
  }
  return ok;
}

// PEFT's optimistic cost table (Arabnejad & Barbosa, TPDS 2014):
// oct[t][d] = max over successors c of min over devices e of
// (oct[c][e] + cost(c, e) + (e == d ? 0 : mean transfer)). Fills `oct` and
// returns a topological order that always takes the ready task with the
// highest mean OCT (PEFT's priority).
std::vector<int> PeftOrder(const SchedProblem& p, const Tables& tb,
                           std::vector<double>* oct) {
  const int n = static_cast<int>(p.tasks.size());
  const int q = p.num_devices;
  const MeanLinks links(p);
  oct->assign(static_cast<size_t>(n) * q, 0);
  std::vector<double> rank(n, 0);
  for (auto it = tb.topo.rbegin(); it != tb.topo.rend(); ++it) {
    const int t = *it;
    double* row = oct->data() + static_cast<size_t>(t) * q;
    for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
      const SchedEdge& e = p.edges[tb.adj.out_edges[k]];
      const double* child = oct->data() + static_cast<size_t>(e.dst) * q;
      const double comm = links.Time(e);
      // min over e of child[e] + cost: the same-device term differs per d.
      double best_any = kInfeasible;
      for (int x = 0; x < q; ++x) {
        const double c = p.tasks[e.dst].cost[x];
        if (Finite(c)) best_any = std::min(best_any, child[x] + c + comm);
      }
      for (int d = 0; d < q; ++d) {
        double v = best_any;
        const double c = p.tasks[e.dst].cost[d];
        if (Finite(c)) v = std::min(v, child[d] + c);
        if (v < kInfeasible) row[d] = std::max(row[d], v);
      }
    }
    double sum = 0;
    int count = 0;
    for (int d = 0; d < q; ++d) {
      if (Finite(p.tasks[t].cost[d])) {
        sum += row[d];
        ++count;
      }
    }
    rank[t] = count > 0 ? sum / count : 0;
  }
  // Ready-list order by rank (ties: topological position).
  std::vector<int> pos(n), pending(n, 0), order;
  for (int i = 0; i < n; ++i) pos[tb.topo[i]] = i;
  for (const SchedEdge& e : p.edges) ++pending[e.dst];
  auto lower = [&](int a, int b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];
    return pos[a] > pos[b];
  };
  std::priority_queue<int, std::vector<int>, decltype(lower)> ready(lower);
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  order.reserve(n);
  while (!ready.empty()) {
    const int t = ready.top();
    ready.pop();
    order.push_back(t);
    for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
      const int c = p.edges[tb.adj.out_edges[k]].dst;
      if (--pending[c] == 0) ready.push(c);
    }
  }
  return order;
}

std::vector<int> RankOrder(const SchedProblem& p, const Tables& tb) {
  const int n = static_cast<int>(p.tasks.size());
  const MeanLinks links(p);
  std::vector<double> mean_cost(n, 0), rank(n, 0);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    int count = 0;
    for (double c : p.tasks[i].cost) {
      if (Finite(c)) {
        sum += c;
        ++count;
      }
    }
    mean_cost[i] = count > 0 ? sum / count : 0;
  }
  for (auto it = tb.topo.rbegin(); it != tb.topo.rend(); ++it) {
    const int t = *it;
    double succ = 0;
    for (int k = tb.adj.out_begin[t]; k < tb.adj.out_begin[t + 1]; ++k) {
      const SchedEdge& e = p.edges[tb.adj.out_edges[k]];
      succ = std::max(succ, links.Time(e) + rank[e.dst]);
    }
    rank[t] = mean_cost[t] + succ;
  }
  std::vector<int> pos(n);
  for (int i = 0; i < n; ++i) pos[tb.topo[i]] = i;
  std::vector<int> order = tb.topo;
  // Ties keep topological order, so the result is itself topological.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (rank[a] != rank[b]) return rank[a] > rank[b];
    return pos[a] < pos[b];
  });
  return order;
}

}  // namespace internal

using internal::Finite;
using internal::RankOrder;
using internal::Tables;

std::vector<int> UpwardRankOrder(const SchedProblem& problem) {
  Tables tb(problem);
  return RankOrder(problem, tb);
}

LowerBounds ComputeLowerBounds(const SchedProblem& p) {
  LowerBounds lb;
  const int n = static_cast<int>(p.tasks.size());
  if (n == 0 || p.num_devices <= 0) return lb;
  Tables tb(p);
  std::vector<double> cheapest(n), path(n, 0);
  double total = 0;
  // A task runs where it fits alone: its persistent bytes, output and
  // inputs at once within the device's memory.
  std::vector<double> in_bytes(n, 0);
  for (const SchedEdge& e : p.edges) in_bytes[e.dst] += static_cast<double>(e.bytes);
  for (int i = 0; i < n; ++i) {
    const SchedTask& t = p.tasks[i];
    const double need =
        static_cast<double>(t.persistent_bytes + t.output_bytes) + in_bytes[i];
    double fits = kInfeasible;
    for (int d = 0; d < p.num_devices; ++d) {
      const int64_t cap = p.memory_capacity.empty() ? 0 : p.memory_capacity[d];
      if (cap <= 0 || need <= static_cast<double>(cap)) fits = std::min(fits, t.cost[d]);
    }
    cheapest[i] = Finite(fits) ? fits : *std::min_element(t.cost.begin(), t.cost.end());
    if (!Finite(cheapest[i])) cheapest[i] = 0;
    total += cheapest[i];
  }
  for (const int t : tb.topo) {
    double start = 0;
    for (int k = tb.adj.in_begin[t]; k < tb.adj.in_begin[t + 1]; ++k) {
      start = std::max(start, path[p.edges[tb.adj.in_edges[k]].src]);
    }
    path[t] = start + cheapest[t];
    lb.critical_path = std::max(lb.critical_path, path[t]);
  }
  lb.area = total / p.num_devices;
  return lb;
}

double BestSingleDeviceTime(const SchedProblem& p, int* best_device) {
  double best = kInfeasible;
  int arg = -1;
  for (int d = 0; d < p.num_devices; ++d) {
    double sum = 0;
    for (const SchedTask& t : p.tasks) sum += t.cost[d];
    if (sum < best) {
      best = sum;
      arg = d;
    }
  }
  if (best_device != nullptr) *best_device = arg;
  return best;
}
}  // namespace placer
}  // namespace graphrun
