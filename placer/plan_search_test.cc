// Plans under memory pressure: the contiguous split as a candidate of
// ScheduleTasks, local search, memory replayed in time, and the
// memory-aware lower bound.
#include "placer/plan_search.h"

#include <vector>

#include "gtest/gtest.h"
#include "placer/list_scheduler.h"
#include "placer/scheduler.h"
#include "placer/scheduler_graph.h"

namespace graphrun {
namespace placer {
namespace {

SchedTask Task(std::vector<double> cost, int64_t persistent = 0, int64_t output = 0) {
  SchedTask t;
  t.cost = std::move(cost);
  t.persistent_bytes = persistent;
  t.output_bytes = output;
  return t;
}

void Edge(SchedProblem* p, int src, int dst, int64_t bytes) {
  SchedEdge e;
  e.src = src;
  e.dst = dst;
  e.bytes = bytes;
  p->edges.push_back(e);
}

// Three GPUs (devices 0-2) of 200 kB that hold three tasks of 60 kB each,
// and a CPU (device 3) 100 times slower without a limit; links of 1000 B/s.
// A chain t0..t5 of 1 s tasks whose links t1->t2 and t4->t5 are cheap (1
// byte) and the others dear (1000 bytes, 1 s). Filling the first GPU
// greedily (HEFT) cuts after t2 and takes 7 s; the split 2 | 3 | 1 cuts only
// cheap links: 6.002 s.
SchedProblem CheapCutsElsewhere() {
  SchedProblem p;
  p.num_devices = 4;
  p.memory_capacity = {200000, 200000, 200000, 0};
  p.links.assign(16, SchedLink{0, 1000, false});
  for (int i = 0; i < 6; ++i) p.tasks.push_back(Task({1, 1, 1, 100}, 60000));
  const int64_t bytes[] = {1000, 1, 1000, 1000, 1};
  for (int i = 0; i < 5; ++i) Edge(&p, i, i + 1, bytes[i]);
  return p;
}

TEST(PlanSearchTest, ContiguousSplitCutsWhereTensorsAreSmall) {
  const SchedProblem p = CheapCutsElsewhere();
  SchedOptions heft_only;
  heft_only.split_max_tasks = 0;
  auto heft = ScheduleTasks(p, heft_only);
  ASSERT_TRUE(heft.ok()) << heft.status();
  EXPECT_NEAR(heft->makespan, 7.0, 1e-9);

  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->plan, "split");
  EXPECT_NEAR(s->makespan, 6.002, 1e-9);
  EXPECT_EQ(s->device[0], s->device[1]);
  EXPECT_EQ(s->device[2], s->device[3]);
  EXPECT_EQ(s->device[3], s->device[4]);
  EXPECT_NE(s->device[1], s->device[2]);
  EXPECT_NE(s->device[4], s->device[5]);
  for (int d : s->device) EXPECT_LT(d, 3);  // no CPU
  for (int d = 0; d < 3; ++d) EXPECT_LE(s->peak_memory[d], 200000);
  bool recorded = false;
  for (const PlanOutcome& o : s->plans) recorded |= o.name == "split" && o.failure.empty();
  EXPECT_TRUE(recorded);
  // The plan is what EvaluateAssignment makes of its assignment.
  auto again = EvaluateAssignment(p, s->device);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NEAR(again->makespan, s->makespan, 1e-9);
}

TEST(PlanSearchTest, NoSplitOrSearchWithoutMemoryPressure) {
  SchedProblem p = CheapCutsElsewhere();
  p.memory_capacity = {0, 0, 0, 0};
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_NE(s->plan, "split");
  for (const PlanOutcome& o : s->plans) EXPECT_NE(o.name, "split");
  EXPECT_NEAR(s->makespan, 6.0, 1e-9);  // all on one GPU
}

TEST(PlanSearchTest, LocalSearchMovesAStrandedTask) {
  // t1 sits alone on device 1 between t0 and t2 on device 0: two dear
  // transfers. Moves to a neighbour's device bring all three together.
  SchedProblem p;
  p.num_devices = 2;
  p.memory_capacity = {0, 0};
  p.links.assign(4, SchedLink{0, 10, false});
  for (int i = 0; i < 3; ++i) p.tasks.push_back(Task({1, 1}));
  Edge(&p, 0, 1, 100);
  Edge(&p, 1, 2, 100);
  internal::Tables tb(p);
  const std::vector<int> order = UpwardRankOrder(p);
  auto start = EvaluateAssignment(p, {0, 1, 0});
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_NEAR(start->makespan, 23.0, 1e-9);
  const internal::Units units = internal::MakeUnits(p, tb);
  const Schedule s = internal::LocalSearch(p, tb, units, order, *start, 100,
                                           /*respect_memory=*/true);
  EXPECT_NEAR(s.makespan, 3.0, 1e-9);
  EXPECT_EQ(s.device[0], s.device[1]);
  EXPECT_EQ(s.device[1], s.device[2]);
  ASSERT_EQ(s.searched.size(), 3u);
  const std::vector<int> before = {0, 1, 0};
  for (int t = 0; t < 3; ++t) EXPECT_EQ(s.searched[t] != 0, s.device[t] != before[t]);
}

TEST(PlanSearchTest, UnitsKeepGroupsAndTheirWeightsTogether) {
  // w (a free source) feeds only a; a and b form a group; v feeds a and c.
  SchedProblem p;
  p.num_devices = 1;
  p.links.assign(1, SchedLink{});
  p.tasks.push_back(Task({0}, 10));  // 0: w
  p.tasks.push_back(Task({1}));      // 1: a
  p.tasks.push_back(Task({1}));      // 2: b
  p.tasks.push_back(Task({0}, 10));  // 3: v
  p.tasks.push_back(Task({1}));      // 4: c
  p.tasks[1].group = p.tasks[2].group = 0;
  Edge(&p, 0, 1, 8);
  Edge(&p, 1, 2, 8);
  Edge(&p, 3, 1, 8);
  Edge(&p, 3, 4, 8);
  internal::Tables tb(p);
  const internal::Units units = internal::MakeUnits(p, tb);
  EXPECT_EQ(units.of[0], units.of[1]);
  EXPECT_EQ(units.of[1], units.of[2]);
  EXPECT_NE(units.of[3], units.of[1]);  // feeds two units: its own
  EXPECT_NE(units.of[3], units.of[4]);
  EXPECT_EQ(units.members.size(), 3u);
}

TEST(PlanSearchTest, MemoryIsReplayedInTime) {
  // On one device: a (output 50) runs 0-1, b reads it 1-2 while making 30;
  // c, independent, runs 2-3 making 40 and is read by nothing. The peak is
  // 80 (a's and b's outputs while b runs; b's and c's later).
  SchedProblem p;
  p.num_devices = 1;
  p.links.assign(1, SchedLink{});
  p.tasks.push_back(Task({1}, 0, 50));
  p.tasks.push_back(Task({1}, 0, 30));
  p.tasks.push_back(Task({1}, 5, 40));
  Edge(&p, 0, 1, 50);
  Schedule s;
  s.device = {0, 0, 0};
  s.start = {0, 1, 2};
  s.finish = {1, 2, 3};
  EXPECT_EQ(internal::ReplayPeakMemory(p, s), (std::vector<int64_t>{5 + 80}));
  // EvaluateAssignment runs c (ranked level with b, earlier in topological
  // order) before b, so a's output lives through both: 5 + 50 + 40 + 30.
  p.memory_capacity = {124};
  EXPECT_EQ(EvaluateAssignment(p, {0, 0, 0}).status().code(),
            absl::StatusCode::kResourceExhausted);
  p.memory_capacity = {125};
  auto fits = EvaluateAssignment(p, {0, 0, 0});
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->peak_memory[0], 125);
}

TEST(PlanSearchTest, LowerBoundCountsOnlyDevicesATaskFitsOn) {
  // The task is fast on device 0 but needs 150 bytes there, which has 100:
  // the bound takes device 1's time.
  SchedProblem p;
  p.num_devices = 2;
  p.memory_capacity = {100, 0};
  p.links.assign(4, SchedLink{});
  p.tasks.push_back(Task({1, 10}, 150));
  EXPECT_DOUBLE_EQ(ComputeLowerBounds(p).critical_path, 10);
  p.memory_capacity = {200, 0};
  EXPECT_DOUBLE_EQ(ComputeLowerBounds(p).critical_path, 1);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
