#include "placer/baselines.h"

#include <vector>

#include "gtest/gtest.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {
namespace {

// Devices 0 and 1: accelerators holding `capacity` bytes; device 2: a CPU
// without a limit. Free links.
SchedProblem Chain(int tasks, int64_t persistent, int64_t capacity) {
  SchedProblem p;
  p.num_devices = 3;
  p.memory_capacity = {capacity, capacity, 0};
  p.links.assign(9, SchedLink{});
  for (int i = 0; i < tasks; ++i) {
    SchedTask t;
    t.cost = {1, 1, 10};
    t.persistent_bytes = persistent;
    p.tasks.push_back(t);
    if (i > 0) {
      SchedEdge e;
      e.src = i - 1;
      e.dst = i;
      e.bytes = 4;
      p.edges.push_back(e);
    }
  }
  return p;
}

TEST(BaselinesTest, FillTakesAcceleratorsInTurnThenTheOverflowDevice) {
  // Two tasks of 40 bytes fit in 100 (with the 4-byte tensors), a third
  // does not.
  const SchedProblem p = Chain(6, 40, 100);
  auto fill = TopologicalFill(p, {0, 1}, 2);
  ASSERT_TRUE(fill.ok()) << fill.status();
  EXPECT_EQ(*fill, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  auto s = EvaluateAssignment(p, *fill);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->makespan, 1 + 1 + 1 + 1 + 10 + 10);
}

TEST(BaselinesTest, FillKeepsGroupsTogether) {
  SchedProblem p = Chain(4, 40, 100);
  p.tasks[1].group = p.tasks[3].group = 0;  // 80 bytes together
  auto fill = TopologicalFill(p, {0, 1}, 2);
  ASSERT_TRUE(fill.ok()) << fill.status();
  EXPECT_EQ((*fill)[1], (*fill)[3]);
  EXPECT_TRUE(EvaluateAssignment(p, *fill).ok());
  EXPECT_EQ(TopologicalFill(p, {0, 7}, 2).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BaselinesTest, PlainHeftOnTwoBranches) {
  // A fork of two 2-second tasks on two equal devices with free links:
  // HEFT runs them side by side.
  SchedProblem p;
  p.num_devices = 2;
  p.memory_capacity = {0, 0};
  p.links.assign(4, SchedLink{});
  for (double c : {1.0, 2.0, 2.0}) {
    SchedTask t;
    t.cost = {c, c};
    p.tasks.push_back(t);
  }
  for (int dst : {1, 2}) {
    SchedEdge e;
    e.src = 0;
    e.dst = dst;
    p.edges.push_back(e);
  }
  const HeftPlan plan = PlainHeft(p);
  EXPECT_DOUBLE_EQ(plan.makespan, 3.0);
  EXPECT_NE(plan.device[1], plan.device[2]);
  auto s = EvaluateAssignment(p, plan.device);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
