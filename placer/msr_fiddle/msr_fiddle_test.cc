// The seven msr-fiddle/dnn-partitioning inputs placed with and without the
// accelerator memory limit. Checked against figures the converter took from
// the original inputs (manifest.json) and against baselines written apart
// from the scheduler (placer/baselines.h): every plan fits in memory (the
// inputs' own rule, each accelerator's sizes within the limit, and a replay
// of the schedule in time with outputs live from their producer's start to
// their last consumer's finish), the memory-limited plan is no slower than
// the naive topological fill, the unlimited plan no slower than plain HEFT.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "placer/baselines.h"
#include "placer/msr_fiddle/models.h"
#include "placer/placer.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {
namespace {

constexpr char kDir[] = "placer/msr_fiddle";

class MsrFiddleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<MsrModel> m = LoadMsrModel(kDir, GetParam());
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::make_unique<MsrModel>(*std::move(m));
    limited_.availability = &MsrAvailability();
    unlimited_ = limited_;
    unlimited_.respect_memory = false;
  }

  // Peak bytes per device replaying `s` in time: persistent bytes for the
  // whole step, each output from its producer's start to the finish of its
  // last consumer (to the end of the step if none), each tensor received
  // from another device from its first reader's start to its last reader's
  // finish there.
  std::vector<double> ReplayPeaks(const SchedProblem& p, const Schedule& s) {
    const int q = p.num_devices;
    std::vector<double> persistent(q, 0);
    // (time, +/- bytes) per device; frees sort before allocations at a tie.
    std::vector<std::vector<std::pair<double, double>>> events(q);
    std::vector<double> last_use(p.tasks.size(), -1);
    for (const SchedEdge& e : p.edges) {
      last_use[e.src] = std::max(last_use[e.src], s.finish[e.dst]);
    }
    for (size_t t = 0; t < p.tasks.size(); ++t) {
      const int d = s.device[t];
      persistent[d] += static_cast<double>(p.tasks[t].persistent_bytes);
      const double out = static_cast<double>(p.tasks[t].output_bytes);
      if (out == 0) continue;
      events[d].emplace_back(s.start[t], out);
      if (last_use[t] >= 0) events[d].emplace_back(std::max(last_use[t], s.start[t]), -out);
    }
    // (tensor, device) -> first reader's start, last reader's finish.
    std::map<std::pair<int64_t, int>, std::pair<double, double>> copies;
    std::map<std::pair<int64_t, int>, double> copy_bytes;
    for (size_t k = 0; k < p.edges.size(); ++k) {
      const SchedEdge& e = p.edges[k];
      const int to = s.device[e.dst];
      if (s.device[e.src] == to || e.bytes == 0) continue;
      const std::pair<int64_t, int> key(e.tensor >= 0 ? e.tensor : -1 - int64_t(k), to);
      auto it = copies.find(key);
      if (it == copies.end()) {
        copies[key] = {s.start[e.dst], s.finish[e.dst]};
        copy_bytes[key] = static_cast<double>(e.bytes);
      } else {
        it->second.first = std::min(it->second.first, s.start[e.dst]);
        it->second.second = std::max(it->second.second, s.finish[e.dst]);
      }
    }
    for (const auto& [key, span] : copies) {
      events[key.second].emplace_back(span.first, copy_bytes[key]);
      events[key.second].emplace_back(span.second, -copy_bytes[key]);
    }
    std::vector<double> peak(q, 0);
    for (int d = 0; d < q; ++d) {
      std::sort(events[d].begin(), events[d].end());
      double live = 0, high = 0;
      for (const auto& [time, bytes] : events[d]) {
        live += bytes;
        high = std::max(high, live);
      }
      peak[d] = persistent[d] + high;
    }
    return peak;
  }

  std::unique_ptr<MsrModel> model_;
  PlacerOptions limited_, unlimited_;
};

TEST_P(MsrFiddleTest, ConvertedFilesMatchTheOriginalFigures) {
  const MsrModel& m = *model_;
  EXPECT_EQ(m.graph->num_nodes(), m.nodes);
  int data_edges = 0;
  for (const auto& node : m.graph->nodes()) {
    for (const Edge* e : node->out_edges()) data_edges += !e->IsControl();
  }
  EXPECT_EQ(data_edges, m.edges);
  ASSERT_GE(m.cpu0, 0);
  double cpu = 0, gpu = 0;
  int64_t held = 0;
  for (const auto& node : m.graph->nodes()) {
    cpu += m.costs.ComputeTime(*node, m.devices.devices()[m.cpu0]);
    if (!m.costs.Unsupported(*node, m.devices.devices()[m.gpus[0]])) {
      gpu += m.costs.ComputeTime(*node, m.devices.devices()[m.gpus[0]]);
    }
    held += std::max<int64_t>(m.costs.PersistentBytes(*node), 0);
  }
  EXPECT_NEAR(cpu, m.sum_cpu_s, 1e-9 * m.sum_cpu_s + 1e-9);
  EXPECT_NEAR(gpu, m.sum_gpu_s, 1e-9 * m.sum_gpu_s + 1e-9);
  EXPECT_EQ(held, m.total_size);
  for (int d : m.gpus) EXPECT_EQ(m.devices.devices()[d].memory_bytes, m.memory_limit);
  absl::StatusOr<SchedProblem> p = PlacementProblem(*m.graph, m.devices, m.costs, limited_);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::flat_hash_set<int> groups;
  for (const SchedTask& t : p->tasks) {
    if (t.group >= 0) groups.insert(t.group);
  }
  EXPECT_EQ(static_cast<int>(groups.size()), m.colocation_groups);
}

TEST_P(MsrFiddleTest, MemoryLimitedPlanFitsAndBeatsTheFill) {
  const MsrModel& m = *model_;
  absl::StatusOr<SchedProblem> p = PlacementProblem(*m.graph, m.devices, m.costs, limited_);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Placement> placed = Place(*m.graph, m.devices, m.costs, limited_);
  ASSERT_TRUE(placed.ok()) << placed.status();
  const Schedule& s = placed->schedule;

  // The inputs' rule: an accelerator holds at most its limit of sizes.
  std::vector<double> sizes(m.devices.size(), 0);
  for (const auto& node : m.graph->nodes()) {
    sizes[placed->device[node->id()]] +=
        static_cast<double>(std::max<int64_t>(m.costs.PersistentBytes(*node), 0));
  }
  const std::vector<double> replay = ReplayPeaks(*p, s);
  for (int d : m.gpus) {
    EXPECT_LE(sizes[d], static_cast<double>(m.memory_limit)) << m.devices.devices()[d].name;
    EXPECT_LE(s.peak_memory[d], m.memory_limit) << m.devices.devices()[d].name;
    EXPECT_LE(replay[d], static_cast<double>(m.memory_limit)) << m.devices.devices()[d].name;
  }
  // Colocation classes share a device.
  for (const SchedTask& t : p->tasks) ASSERT_EQ(t.cost.size(), m.devices.size());
  std::vector<int> group_device(p->tasks.size(), -1);
  for (size_t t = 0; t < p->tasks.size(); ++t) {
    const int g = p->tasks[t].group;
    if (g < 0) continue;
    if (group_device[g] < 0) group_device[g] = s.device[t];
    EXPECT_EQ(s.device[t], group_device[g]) << "task " << t;
  }

  absl::StatusOr<std::vector<int>> fill = TopologicalFill(*p, m.gpus, m.cpu0);
  ASSERT_TRUE(fill.ok()) << fill.status();
  absl::StatusOr<Schedule> fill_s = EvaluateAssignment(*p, *fill);
  ASSERT_TRUE(fill_s.ok()) << fill_s.status();
  EXPECT_LE(placed->predicted_step_time, fill_s->makespan * (1 + 1e-9))
      << "fill " << fill_s->makespan;
  EXPECT_GE(placed->predicted_step_time, placed->lower_bound.best() * (1 - 1e-9));
  // The prediction is the simulation of the plan's own assignment.
  absl::StatusOr<Schedule> again = EvaluateAssignment(*p, s.device);
  ASSERT_TRUE(again.ok()) << again.status();
}

TEST_P(MsrFiddleTest, UnlimitedPlanIsNoSlowerThanHeft) {
  const MsrModel& m = *model_;
  absl::StatusOr<SchedProblem> p = PlacementProblem(*m.graph, m.devices, m.costs, unlimited_);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Placement> placed = Place(*m.graph, m.devices, m.costs, unlimited_);
  ASSERT_TRUE(placed.ok()) << placed.status();
  const HeftPlan heft = PlainHeft(*p);
  absl::StatusOr<Schedule> heft_s = EvaluateAssignment(*p, heft.device);
  ASSERT_TRUE(heft_s.ok()) << heft_s.status();
  EXPECT_LE(placed->predicted_step_time, heft_s->makespan * (1 + 1e-9));
  EXPECT_LE(placed->predicted_step_time, heft.makespan * (1 + 1e-9));
  // Never slower than one accelerator running everything.
  EXPECT_LE(placed->predicted_step_time, m.sum_gpu_s * (1 + 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Models, MsrFiddleTest, ::testing::ValuesIn(MsrModelNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace placer
}  // namespace graphrun
