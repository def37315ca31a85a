// Graph-side helpers of the scheduler (scheduler.h): adjacency lists,
// topological and priority orders (HEFT's upward rank, PEFT's optimistic
// cost table), mean link costs, colocation-group feasibility. Internal to
// placer/; pure functions.
#ifndef GRAPHRUN_PLACER_SCHEDULER_GRAPH_H_
#define GRAPHRUN_PLACER_SCHEDULER_GRAPH_H_

#include <vector>

#include "placer/scheduler.h"

namespace graphrun {
namespace placer {
namespace internal {

inline bool Finite(double x) { return x < kInfeasible; }

// Adjacency in compressed form: for each task, the indices of its in-edges
// and out-edges.
struct Adjacency {
  std::vector<int> in_begin, in_edges, out_begin, out_edges;

  explicit Adjacency(const SchedProblem& p) {
    const int n = static_cast<int>(p.tasks.size());
    in_begin.assign(n + 1, 0);
    out_begin.assign(n + 1, 0);
    for (const SchedEdge& e : p.edges) {
      ++in_begin[e.dst + 1];
      ++out_begin[e.src + 1];
    }
    for (int i = 0; i < n; ++i) {
      in_begin[i + 1] += in_begin[i];
      out_begin[i + 1] += out_begin[i];
    }
    in_edges.resize(p.edges.size());
    out_edges.resize(p.edges.size());
    std::vector<int> in_fill(in_begin.begin(), in_begin.end() - 1);
    std::vector<int> out_fill(out_begin.begin(), out_begin.end() - 1);
    for (int e = 0; e < static_cast<int>(p.edges.size()); ++e) {
      in_edges[in_fill[p.edges[e].dst]++] = e;
      out_edges[out_fill[p.edges[e].src]++] = e;
    }
  }
};

// Kahn's algorithm; returns fewer than n tasks when there is a cycle.
std::vector<int> TopologicalOrder(const SchedProblem& p, const Adjacency& adj);

// Mean transfer time of an edge over all ordered pairs of distinct devices.
struct MeanLinks {
  double latency = 0, inv_bw = 0, inv_bw_compressed = 0;

  explicit MeanLinks(const SchedProblem& p) {
    const int q = p.num_devices;
    if (q < 2) return;
    double pairs = 0;
    for (int a = 0; a < q; ++a) {
      for (int b = 0; b < q; ++b) {
        if (a == b) continue;
        const SchedLink& l = p.link(a, b);
        const double inv = l.bandwidth > 0 ? 1.0 / l.bandwidth : 0.0;
        latency += l.latency_s;
        inv_bw += inv;
        inv_bw_compressed += l.compresses ? 0.5 * inv : inv;
        pairs += 1;
      }
    }
    latency /= pairs;
    inv_bw /= pairs;
    inv_bw_compressed /= pairs;
  }
  double Time(const SchedEdge& e) const {
    return latency + static_cast<double>(e.bytes) *
                         (e.compressible ? inv_bw_compressed : inv_bw);
  }
};

struct Tables {
  Adjacency adj;
  std::vector<int> topo;
  std::vector<int> consumers;  // number of out data edges per task
  explicit Tables(const SchedProblem& p) : adj(p), topo(TopologicalOrder(p, adj)) {
    consumers.assign(p.tasks.size(), 0);
    for (const SchedEdge& e : p.edges) ++consumers[e.src];
  }
};

// Which devices can hold every task of each group.
std::vector<std::vector<char>> GroupFeasibility(const SchedProblem& p,
                                                int* num_groups);

// PEFT's optimistic cost table (Arabnejad & Barbosa, TPDS 2014):
// oct[t][d] = max over successors c of min over devices e of
// (oct[c][e] + cost(c, e) + (e == d ? 0 : mean transfer)). Fills `oct` and
// returns a topological order that always takes the ready task with the
// highest mean OCT (PEFT's priority).
std::vector<int> PeftOrder(const SchedProblem& p, const Tables& tb,
                           std::vector<double>* oct);

// HEFT's upward-rank order, ties in topological order.
std::vector<int> RankOrder(const SchedProblem& p, const Tables& tb);

}  // namespace internal
}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_SCHEDULER_GRAPH_H_
