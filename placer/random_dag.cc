#include "placer/random_dag.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphrun {
namespace placer {
namespace {

// Uniform draws computed from the raw 64-bit stream, so a seed gives the same
// problem with every standard library (std::uniform_*_distribution is
// implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }
  // Uniform integer in [lo, hi]; requires lo <= hi. The modulo bias is below
  // 2^-40 for the ranges used here.
  int64_t Int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(engine_() % span);
  }

 private:
  std::mt19937_64 engine_;
};

absl::Status CheckParams(const RandomDagParams& p) {
  auto bad = [](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat("random DAG parameters: ", what));
  };
  if (p.num_tasks < 1) return bad("num_tasks must be >= 1");
  if (!(p.alpha > 0) || !std::isfinite(p.alpha)) return bad("alpha must be > 0");
  if (p.out_degree < 1) return bad("out_degree must be >= 1");
  if (p.max_level_jump < 0) return bad("max_level_jump must be >= 0");
  if (!(p.ccr >= 0) || !std::isfinite(p.ccr)) return bad("ccr must be >= 0");
  if (!(p.beta >= 0 && p.beta <= 2)) return bad("beta must be in [0, 2]");
  if (p.num_devices < 1) return bad("num_devices must be >= 1");
  if (!(p.mean_cost_s > 0) || !std::isfinite(p.mean_cost_s)) {
    return bad("mean_cost_s must be > 0");
  }
  if (!(p.bandwidth > 0) || !std::isfinite(p.bandwidth)) {
    return bad("bandwidth must be > 0");
  }
  if (!(p.heavy_fraction >= 0 && p.heavy_fraction < 1)) {
    return bad("heavy_fraction must be in [0, 1)");
  }
  if (!(p.heavy_work_share > 0 && p.heavy_work_share < 1)) {
    return bad("heavy_work_share must be in (0, 1)");
  }
  if (2 * p.ccr * p.mean_cost_s * p.bandwidth > 1e18) {
    return bad("ccr * mean_cost_s * bandwidth is too large for int64 bytes");
  }
  return absl::OkStatus();
}

// Level widths adding up to exactly p.num_tasks.
std::vector<int> DrawLevelWidths(const RandomDagParams& p, Rng& rng) {
  const int v = p.num_tasks;
  const double height_mean =
      std::max(1.0, std::floor(std::sqrt(static_cast<double>(v)) / p.alpha));
  const int64_t h_lo = std::max<int64_t>(1, std::ceil(height_mean / 2));
  const int64_t h_hi =
      std::max<int64_t>(h_lo, std::floor(1.5 * height_mean));
  const int levels = static_cast<int>(std::min<int64_t>(v, rng.Int(h_lo, h_hi)));

  const double width_mean = static_cast<double>(v) / levels;
  const int64_t w_lo = std::max<int64_t>(1, std::ceil(width_mean / 2));
  const int64_t w_hi = std::max<int64_t>(w_lo, std::floor(1.5 * width_mean));
  std::vector<int> widths(levels);
  int64_t total = 0;
  for (int& w : widths) {
    w = static_cast<int>(rng.Int(w_lo, w_hi));
    total += w;
  }
  // Nudge random levels by one task until the widths add up to v. Since
  // levels <= v, some level is wider than 1 whenever total > v.
  while (total < v) {
    ++widths[rng.Int(0, levels - 1)];
    ++total;
  }
  while (total > v) {
    int& w = widths[rng.Int(0, levels - 1)];
    if (w > 1) {
      --w;
      --total;
    }
  }
  return widths;
}

// Appends `count` distinct task ids from [lo, hi) to `out`, none equal to
// `exclude`; requires count <= (hi - lo) - (exclude in range ? 1 : 0).
void DrawDistinct(int lo, int hi, int exclude, int count, Rng& rng,
                  std::vector<int>& out) {
  const size_t base = out.size();
  const int available = hi - lo - (exclude >= lo && exclude < hi ? 1 : 0);
  if (2 * count > available) {
    // Dense: partial Fisher-Yates over the candidates.
    std::vector<int> pool;
    pool.reserve(available);
    for (int t = lo; t < hi; ++t) {
      if (t != exclude) pool.push_back(t);
    }
    for (int i = 0; i < count; ++i) {
      std::swap(pool[i], pool[rng.Int(i, available - 1)]);
      out.push_back(pool[i]);
    }
    return;
  }
  // Sparse: rejection; fewer than 2 draws per pick on average.
  while (static_cast<int>(out.size() - base) < count) {
    const int t = static_cast<int>(rng.Int(lo, hi - 1));
    if (t == exclude) continue;
    if (std::find(out.begin() + base, out.end(), t) != out.end()) continue;
    out.push_back(t);
  }
}

}  // namespace

absl::StatusOr<SchedProblem> GenerateRandomDag(const RandomDagParams& p) {
  if (absl::Status s = CheckParams(p); !s.ok()) return s;
  Rng rng(p.seed);
  const int v = p.num_tasks;
  const int q = p.num_devices;

  // Shape: tasks are numbered level by level.
  const std::vector<int> widths = DrawLevelWidths(p, rng);
  const int levels = static_cast<int>(widths.size());
  std::vector<int> level_start(levels + 1, 0);
  for (int l = 0; l < levels; ++l) level_start[l + 1] = level_start[l] + widths[l];

  // Edges: 1..out_degree successors per task outside the last level, the
  // first in the next level.
  SchedProblem problem;
  problem.num_devices = q;
  std::vector<int> out_degree(v, 0);
  std::vector<int> in_degree(v, 0);
  std::vector<int> succ;
  auto add_edge = [&](int src, int dst) {
    SchedEdge e;
    e.src = src;
    e.dst = dst;
    problem.edges.push_back(e);
    ++out_degree[src];
    ++in_degree[dst];
  };
  problem.edges.reserve(static_cast<size_t>(v) * (p.out_degree + 1) / 2 + v / 4);
  for (int l = 0; l + 1 < levels; ++l) {
    const int next_lo = level_start[l + 1];
    const int next_hi = level_start[l + 2];
    const int last_level =
        p.max_level_jump == 0 ? levels - 1
                              : std::min(levels - 1, l + p.max_level_jump);
    const int reach_hi = level_start[last_level + 1];
    for (int t = level_start[l]; t < level_start[l + 1]; ++t) {
      const int k = static_cast<int>(
          std::min<int64_t>(rng.Int(1, p.out_degree), reach_hi - next_lo));
      succ.clear();
      const int first = static_cast<int>(rng.Int(next_lo, next_hi - 1));
      succ.push_back(first);
      DrawDistinct(next_lo, reach_hi, first, k - 1, rng, succ);
      for (int s : succ) add_edge(t, s);
    }
  }
  // Give orphans (no predecessor, outside level 0) one from the previous
  // level when a few random picks find spare out-degree.
  constexpr int kOrphanTries = 16;
  for (int l = 1; l < levels; ++l) {
    for (int t = level_start[l]; t < level_start[l + 1]; ++t) {
      if (in_degree[t] > 0) continue;
      for (int attempt = 0; attempt < kOrphanTries; ++attempt) {
        const int pred =
            static_cast<int>(rng.Int(level_start[l - 1], level_start[l] - 1));
        if (out_degree[pred] < p.out_degree) {
          add_edge(pred, t);
          break;
        }
      }
    }
  }

  // Computation costs.
  const double w = p.mean_cost_s;
  const double f = p.heavy_fraction;
  const double light_mean =
      f > 0 ? w * (1 - p.heavy_work_share) / (1 - f) : w;
  const double heavy_mean = f > 0 ? w * p.heavy_work_share / f : 0;
  problem.tasks.resize(v);
  for (SchedTask& task : problem.tasks) {
    double mean;
    if (f > 0 && rng.Unit() < f) {
      mean = rng.Uniform(0.5 * heavy_mean, 1.5 * heavy_mean);
    } else {
      mean = rng.Uniform(0, 2 * light_mean);
    }
    task.cost.resize(q);
    for (double& c : task.cost) {
      c = rng.Uniform(mean * (1 - p.beta / 2), mean * (1 + p.beta / 2));
    }
  }

  // Communication: mean edge bytes / bandwidth = ccr * mean cost.
  const double mean_bytes = p.ccr * w * p.bandwidth;
  auto draw_bytes = [&]() -> int64_t {
    if (mean_bytes <= 0) return 0;
    return std::max<int64_t>(1, std::llround(rng.Uniform(0, 2 * mean_bytes)));
  };
  for (SchedEdge& e : problem.edges) {
    e.bytes = draw_bytes();
    problem.tasks[e.src].output_bytes += e.bytes;
  }
  for (int t = 0; t < v; ++t) {
    if (out_degree[t] == 0) problem.tasks[t].output_bytes = draw_bytes();
  }

  problem.memory_capacity.assign(q, 0);
  problem.links.resize(static_cast<size_t>(q) * q);
  for (int a = 0; a < q; ++a) {
    for (int b = 0; b < q; ++b) {
      if (a == b) continue;
      SchedLink& link = problem.links[static_cast<size_t>(a) * q + b];
      link.latency_s = 0;
      link.bandwidth = p.bandwidth;
    }
  }
  return problem;
}

RandomDagParams LargeDagParams(int num_tasks, int num_devices, uint64_t seed) {
  RandomDagParams p;
  p.num_tasks = num_tasks;
  p.alpha = 0.5;
  p.out_degree = 4;
  p.max_level_jump = 3;
  p.ccr = 0.5;
  p.beta = 1.0;
  p.num_devices = num_devices;
  p.mean_cost_s = 1e-4;
  p.bandwidth = 1e9;
  p.heavy_fraction = 0.05;
  p.heavy_work_share = 0.8;
  p.seed = seed;
  return p;
}

}  // namespace placer
}  // namespace graphrun
