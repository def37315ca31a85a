#include "placer/random_dag.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {
namespace {

SchedProblem Generate(const RandomDagParams& p) {
  absl::StatusOr<SchedProblem> problem = GenerateRandomDag(p);
  EXPECT_TRUE(problem.ok()) << problem.status();
  return problem.ok() ? *std::move(problem) : SchedProblem();
}

double MeanCost(const SchedProblem& p) {
  double sum = 0;
  int64_t n = 0;
  for (const SchedTask& t : p.tasks) {
    for (double c : t.cost) {
      sum += c;
      ++n;
    }
  }
  return sum / n;
}

// Mean over edges of the transfer time between two distinct devices.
double MeanTransfer(const SchedProblem& p) {
  double sum = 0;
  for (const SchedEdge& e : p.edges) {
    sum += p.link(0, 1).latency_s + e.bytes / p.link(0, 1).bandwidth;
  }
  return sum / p.edges.size();
}

// Longest path, counted in tasks.
int Depth(const SchedProblem& p) {
  std::vector<int> depth(p.tasks.size(), 1);
  std::vector<SchedEdge> edges = p.edges;
  std::sort(edges.begin(), edges.end(),
            [](const SchedEdge& a, const SchedEdge& b) { return a.src < b.src; });
  for (const SchedEdge& e : edges) {
    depth[e.dst] = std::max(depth[e.dst], depth[e.src] + 1);
  }
  return *std::max_element(depth.begin(), depth.end());
}

// Structural invariants every instance must satisfy.
void ExpectWellFormed(const SchedProblem& p, const RandomDagParams& params) {
  const int v = params.num_tasks;
  const int q = params.num_devices;
  ASSERT_TRUE(ValidateProblem(p).ok()) << ValidateProblem(p);
  ASSERT_EQ(p.num_devices, q);
  ASSERT_EQ(static_cast<int>(p.tasks.size()), v);
  ASSERT_EQ(p.memory_capacity, std::vector<int64_t>(q, 0));
  ASSERT_EQ(p.links.size(), static_cast<size_t>(q) * q);
  for (int a = 0; a < q; ++a) {
    for (int b = 0; b < q; ++b) {
      if (a == b) continue;
      EXPECT_EQ(p.link(a, b).bandwidth, params.bandwidth);
      EXPECT_EQ(p.link(a, b).latency_s, 0);
    }
  }
  std::vector<int> out(v, 0);
  std::vector<int64_t> out_bytes(v, 0);
  std::set<std::pair<int, int>> seen;
  for (const SchedEdge& e : p.edges) {
    ASSERT_GE(e.src, 0);
    ASSERT_LT(e.dst, v);
    // Forward edges only: the graph is acyclic and 0..v-1 is a topological
    // order.
    ASSERT_LT(e.src, e.dst);
    EXPECT_TRUE(seen.insert({e.src, e.dst}).second)
        << "duplicate edge " << e.src << " -> " << e.dst;
    if (params.ccr > 0) {
      EXPECT_GT(e.bytes, 0);
    }
    ++out[e.src];
    out_bytes[e.src] += e.bytes;
  }
  for (int t = 0; t < v; ++t) {
    const SchedTask& task = p.tasks[t];
    ASSERT_EQ(static_cast<int>(task.cost.size()), q);
    EXPECT_LE(out[t], params.out_degree) << "task " << t;
    if (out[t] > 0) {
      EXPECT_EQ(task.output_bytes, out_bytes[t]) << "task " << t;
    }
    EXPECT_EQ(task.group, -1);
    EXPECT_EQ(task.persistent_bytes, 0);
    for (double c : task.cost) {
      EXPECT_TRUE(std::isfinite(c));
      EXPECT_GE(c, 0);
    }
  }
}

TEST(RandomDagTest, SameSeedSameProblem) {
  RandomDagParams params;
  params.num_tasks = 500;
  params.seed = 42;
  SchedProblem a = Generate(params);
  SchedProblem b = Generate(params);
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (size_t i = 0; i < a.edges.size(); ++i) {
    EXPECT_EQ(a.edges[i].src, b.edges[i].src);
    EXPECT_EQ(a.edges[i].dst, b.edges[i].dst);
    EXPECT_EQ(a.edges[i].bytes, b.edges[i].bytes);
  }
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks[i].cost, b.tasks[i].cost);
    EXPECT_EQ(a.tasks[i].output_bytes, b.tasks[i].output_bytes);
  }

  params.seed = 43;
  SchedProblem c = Generate(params);
  EXPECT_NE(a.tasks[0].cost, c.tasks[0].cost);
}

TEST(RandomDagTest, CountsAndStructure) {
  for (int v : {1, 2, 20, 100, 1000}) {
    for (int out_degree : {1, 3, 5}) {
      RandomDagParams params;
      params.num_tasks = v;
      params.out_degree = out_degree;
      params.num_devices = 3;
      SchedProblem p = Generate(params);
      ExpectWellFormed(p, params);
      // Every task outside the last level has a successor; there are at
      // most out_degree edges per task.
      EXPECT_LE(p.edges.size(), static_cast<size_t>(v) * out_degree);
      if (v >= 100) {
        EXPECT_GE(p.edges.size(), static_cast<size_t>(v / 2));
      }
    }
  }
}

// The whole HEFT parameter grid generates well-formed instances.
TEST(RandomDagTest, HeftGridIsWellFormed) {
  uint64_t seed = 1;
  for (int v : {20, 40, 60, 80, 100}) {
    for (double alpha : {0.5, 1.0, 2.0}) {
      for (int out_degree : {1, 2, 3, 4, 5, v}) {
        for (double ccr : {0.1, 0.5, 1.0, 5.0, 10.0}) {
          for (double beta : {0.1, 0.25, 0.5, 0.75, 1.0}) {
            RandomDagParams params;
            params.num_tasks = v;
            params.alpha = alpha;
            params.out_degree = out_degree;
            params.ccr = ccr;
            params.beta = beta;
            params.num_devices = 4;
            params.seed = seed++;
            SchedProblem p = Generate(params);
            ExpectWellFormed(p, params);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(RandomDagTest, AlphaShapesTheGraph) {
  // Averaged over seeds: small alpha is deep, large alpha shallow.
  double deep = 0, shallow = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomDagParams params;
    params.num_tasks = 400;
    params.seed = seed;
    params.alpha = 0.5;
    deep += Depth(Generate(params));
    params.alpha = 2.0;
    shallow += Depth(Generate(params));
  }
  // Mean heights: floor(20/0.5) = 40 and floor(20/2) = 10 levels.
  EXPECT_GT(deep / 20, 30);
  EXPECT_LT(shallow / 20, 15);
}

TEST(RandomDagTest, MeanCostIsWDag) {
  for (double beta : {0.1, 1.0}) {
    RandomDagParams params;
    params.num_tasks = 20000;
    params.beta = beta;
    params.mean_cost_s = 2e-3;
    params.seed = 7;
    SchedProblem p = Generate(params);
    EXPECT_NEAR(MeanCost(p), 2e-3, 2e-3 * 0.02) << "beta " << beta;
  }
}

TEST(RandomDagTest, MeasuredCcrMatchesRequested) {
  for (double ccr : {0.1, 1.0, 10.0}) {
    RandomDagParams params;
    params.num_tasks = 20000;
    params.ccr = ccr;
    params.seed = 11;
    SchedProblem p = Generate(params);
    const double measured = MeanTransfer(p) / MeanCost(p);
    EXPECT_NEAR(measured, ccr, ccr * 0.03) << "ccr " << ccr;
  }
}

TEST(RandomDagTest, ZeroCcrGivesOrderingEdges) {
  RandomDagParams params;
  params.ccr = 0;
  SchedProblem p = Generate(params);
  ASSERT_FALSE(p.edges.empty());
  for (const SchedEdge& e : p.edges) EXPECT_EQ(e.bytes, 0);
}

TEST(RandomDagTest, HeterogeneityWithinBeta) {
  for (double beta : {0.0, 0.25, 1.0, 1.5}) {
    RandomDagParams params;
    params.num_tasks = 2000;
    params.num_devices = 8;
    params.beta = beta;
    params.seed = 3;
    SchedProblem p = Generate(params);
    // w_ij in [w_i(1 - beta/2), w_i(1 + beta/2)], so max/min per task is at
    // most (1 + beta/2) / (1 - beta/2), and with 8 devices and 2000 tasks
    // some task comes close to it.
    const double bound = (1 + beta / 2) / (1 - beta / 2);
    double widest = 1;
    for (const SchedTask& t : p.tasks) {
      const auto [lo, hi] = std::minmax_element(t.cost.begin(), t.cost.end());
      if (*lo <= 0) continue;
      const double ratio = *hi / *lo;
      EXPECT_LE(ratio, bound * (1 + 1e-12));
      widest = std::max(widest, ratio);
    }
    EXPECT_GE(widest, 1 + 0.9 * (bound - 1)) << "beta " << beta;
  }
}

TEST(RandomDagTest, LargeMlLikeGraph) {
  RandomDagParams params = LargeDagParams(100000, 8, 5);
  SchedProblem p = Generate(params);
  ExpectWellFormed(p, params);
  const double edges_per_task =
      static_cast<double>(p.edges.size()) / p.tasks.size();
  EXPECT_GE(edges_per_task, 2.0);
  EXPECT_LE(edges_per_task, 4.0);
  EXPECT_NEAR(MeanCost(p), params.mean_cost_s, params.mean_cost_s * 0.05);
  // Mostly cheap tasks, a few heavy ones holding most of the work.
  std::vector<double> mean_costs;
  for (const SchedTask& t : p.tasks) {
    double sum = 0;
    for (double c : t.cost) sum += c;
    mean_costs.push_back(sum / t.cost.size());
  }
  std::sort(mean_costs.begin(), mean_costs.end());
  double total = 0, top = 0;
  for (size_t i = 0; i < mean_costs.size(); ++i) {
    total += mean_costs[i];
    if (i >= mean_costs.size() * 95 / 100) top += mean_costs[i];
  }
  EXPECT_NEAR(top / total, 0.8, 0.05);
  EXPECT_LT(mean_costs[mean_costs.size() / 2], params.mean_cost_s / 2);
}

TEST(RandomDagTest, RejectsBadParameters) {
  auto code = [](RandomDagParams p) { return GenerateRandomDag(p).status().code(); };
  RandomDagParams p;
  p.num_tasks = 0;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.alpha = 0;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.out_degree = 0;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.beta = 2.5;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.ccr = -1;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.num_devices = 0;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
  p = {};
  p.heavy_fraction = 1;
  EXPECT_EQ(code(p), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
