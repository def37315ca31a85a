// Random scheduling problems for testing and benchmarking the placer.
//
// GenerateRandomDag() is the random-graph generator of the HEFT paper
// (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002): a layered DAG whose
// shape, out-degree, communication-to-computation ratio (CCR) and
// processor heterogeneity (beta) are parameters, turned into a SchedProblem
// (scheduler.h) with uniform links between distinct devices. With
// LargeDagParams() the same generator makes ML-like graphs of 1k-100k+
// nodes for scaling runs. Sits beside the scheduler; nothing in the runtime
// uses it.
//
// Thread-compatible: pure functions; the output depends only on the
// parameters (the random stream is std::mt19937_64 seeded with `seed`, and
// the distributions are computed here, not by the standard library, so the
// result is the same on every platform).
#ifndef GRAPHRUN_PLACER_RANDOM_DAG_H_
#define GRAPHRUN_PLACER_RANDOM_DAG_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {

// Parameters of the HEFT generator. Defaults give a 100-task, 4-device
// instance with CCR 1 and moderate heterogeneity.
//
// Shape. The number of levels is drawn uniformly from
// [ceil(h/2), floor(3h/2)] with h = max(1, floor(sqrt(v)/alpha)); the v
// tasks are then spread over the levels with widths drawn uniformly around
// v/levels (about alpha*sqrt(v)) and adjusted to add up to exactly v.
// Small alpha gives tall, thin graphs (little parallelism), large alpha
// short, wide ones.
//
// Edges go only from a level to a later one. Every task outside the last
// level gets between 1 and out_degree distinct successors (uniform): the
// first in the next level, the others in any of the next `max_level_jump`
// levels (0 = any later level, as in HEFT). A task left without a
// predecessor is then given one from the previous level when a few random
// picks there find a task with out-degree to spare. The graph therefore has
// several entry tasks (all of level 0, plus the tasks that found no
// predecessor, common when out_degree is 1) and several exit tasks (exactly
// the last level); there are no zero-cost dummy entry/exit nodes. Tasks are
// numbered level by level, so every edge goes from a lower to a higher
// index.
//
// Computation. Each task i gets a mean cost w_i ~ U[0, 2*mean_cost_s]
// (when heavy_fraction == 0), and its cost on device j is
// w_ij ~ U[w_i(1 - beta/2), w_i(1 + beta/2)], so the mean over all tasks
// and devices is mean_cost_s. With heavy_fraction > 0 (ML-like), that
// fraction of tasks is heavy, with w_i ~ U[0.5 H, 1.5 H], and the rest
// light, with w_i ~ U[0, 2 L]; H and L are chosen so heavy tasks hold
// heavy_work_share of the expected total work and the overall mean is still
// mean_cost_s. Every cost is feasible (finite) on every device.
//
// Communication. Every pair of distinct devices is linked with bandwidth
// `bandwidth` bytes/s and latency 0 (the diagonal is free). Edge bytes are
// drawn uniformly from [1, 2*ccr*mean_cost_s*bandwidth] (0, a pure
// ordering edge, when ccr is 0), so the mean
// transfer time between distinct devices is ccr * mean_cost_s; HEFT's CCR
// (mean communication / mean computation) is `ccr`. A task's output_bytes
// is the sum of its outgoing edge bytes (an exit task gets one edge-sized
// draw); every edge is its own tensor (tensor = -1); memory capacities are
// 0 (unlimited); no groups, no persistent bytes, nothing compressible.
struct RandomDagParams {
  int num_tasks = 100;      // v, >= 1
  double alpha = 1.0;       // shape, > 0
  int out_degree = 3;       // max successors per task, >= 1
  int max_level_jump = 0;   // successors within this many levels; 0 = any
  double ccr = 1.0;         // mean communication / mean computation, >= 0
  double beta = 0.5;        // heterogeneity, in [0, 2]
  int num_devices = 4;      // q, >= 1
  double mean_cost_s = 1e-3;  // w_DAG, seconds, > 0
  double bandwidth = 1e9;     // bytes/s between distinct devices, > 0
  double heavy_fraction = 0;  // in [0, 1); 0 = HEFT's uniform costs
  double heavy_work_share = 0.8;  // in (0, 1), used when heavy_fraction > 0
  uint64_t seed = 1;
};

// Builds one instance. InvalidArgument when a parameter is out of range.
// Linear in tasks x devices + edges (100k tasks on 8 devices: tens of ms).
absl::StatusOr<SchedProblem> GenerateRandomDag(const RandomDagParams& params);

// Parameters for a large ML-like graph with `num_tasks` tasks on
// `num_devices` devices: deep and fairly narrow (alpha 0.5), short-range
// edges (out_degree 4, max_level_jump 3: about 2.5 edges per task), 5 % of
// tasks heavy with 80 % of the work, beta 1.0 (devices differ by up to 2x
// per task), CCR 0.5, mean cost 100 us.
RandomDagParams LargeDagParams(int num_tasks, int num_devices, uint64_t seed);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_RANDOM_DAG_H_
