#include "placer/scheduler.h"

#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

// q devices joined by links of the given latency and bandwidth.
SchedProblem Problem(int q, double latency = 0, double bandwidth = 0,
                     bool compresses = false) {
  SchedProblem p;
  p.num_devices = q;
  p.memory_capacity.assign(q, 0);
  p.links.assign(q * q, SchedLink{latency, bandwidth, compresses});
  return p;
}

int AddTask(SchedProblem* p, std::vector<double> cost, int64_t out_bytes = 0,
            int group = -1) {
  SchedTask t;
  t.cost = std::move(cost);
  t.output_bytes = out_bytes;
  t.group = group;
  p->tasks.push_back(t);
  return static_cast<int>(p->tasks.size()) - 1;
}

void AddEdge(SchedProblem* p, int src, int dst, int64_t bytes,
             int64_t tensor = -1) {
  SchedEdge e;
  e.src = src;
  e.dst = dst;
  e.bytes = bytes;
  e.tensor = tensor;
  p->edges.push_back(e);
}

TEST(SchedulerTest, ChainGoesToTheFasterDevice) {
  SchedProblem p = Problem(2, 1e-3, 1e9);
  int a = AddTask(&p, {2.0, 1.0});
  int b = AddTask(&p, {2.0, 1.0});
  int c = AddTask(&p, {2.0, 1.0});
  AddEdge(&p, a, b, 1000);
  AddEdge(&p, b, c, 1000);
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->device, (std::vector<int>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
  EXPECT_EQ(s->num_transfers, 0);
}

TEST(SchedulerTest, IndependentTasksRunInParallel) {
  SchedProblem p = Problem(2);  // free links
  int root = AddTask(&p, {0, 0});
  for (int i = 0; i < 4; ++i) AddEdge(&p, root, AddTask(&p, {1.0, 1.0}), 8);
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->makespan, 2.0);
  EXPECT_DOUBLE_EQ(s->busy[0], 2.0);
  EXPECT_DOUBLE_EQ(s->busy[1], 2.0);
  EXPECT_EQ(s->plan, "heft");
}

// The greedy choice splits two entry tasks, and their join then pays a big
// transfer: plain HEFT is worse than one device.
SchedProblem HeftFailure() {
  SchedProblem p = Problem(2, 0, 1.0);  // 1 byte/s
  int x = AddTask(&p, {1.0, 1.0});
  int y = AddTask(&p, {1.0, 1.0});
  int z = AddTask(&p, {1.0, 1.0});
  AddEdge(&p, x, z, 10);
  AddEdge(&p, y, z, 10);
  return p;
}

TEST(SchedulerTest, PlainHeftCanLoseToOneDevice) {
  SchedOptions plain;
  plain.single_device_candidates = false;
  plain.lookahead_max_tasks = 0;
  auto heft = ScheduleTasks(HeftFailure(), plain);
  ASSERT_TRUE(heft.ok());
  EXPECT_DOUBLE_EQ(heft->makespan, 12.0);
  EXPECT_EQ(heft->transfer_bytes, 10);
}

TEST(SchedulerTest, LookaheadSeesTheJoin) {
  // Judging each choice by its consumer's earliest finish keeps y with x.
  SchedOptions ahead;
  ahead.single_device_candidates = false;
  auto s = ScheduleTasks(HeftFailure(), ahead);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
  EXPECT_EQ(s->transfer_bytes, 0);
  EXPECT_EQ(s->plan, "heft");
}

TEST(SchedulerTest, NeverWorseThanTheBestSingleDevice) {
  SchedProblem p = HeftFailure();
  SchedOptions no_lookahead;
  no_lookahead.lookahead_max_tasks = 0;
  auto s = ScheduleTasks(p, no_lookahead);
  ASSERT_TRUE(s.ok());
  int best = -1;
  EXPECT_DOUBLE_EQ(s->makespan, BestSingleDeviceTime(p, &best));
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
  EXPECT_EQ(s->plan, "single-device");
  EXPECT_EQ(s->transfer_bytes, 0);
}

TEST(SchedulerTest, SmallPredictedGainKeepsOneDevice) {
  // Two independent tasks: spreading gives 1.0 instead of 1.9 (-47%) on
  // free links, but with a slow second device the gain is only 5%.
  SchedProblem p = Problem(2);
  AddTask(&p, {1.0, 1.0});
  AddTask(&p, {0.9, 0.9});
  SchedOptions o;
  o.min_spread_gain = 0.1;
  auto wide = ScheduleTasks(p, o);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->plan, "heft");
  EXPECT_DOUBLE_EQ(wide->makespan, 1.0);

  SchedProblem q = Problem(2);
  AddTask(&q, {1.0, 20.0});
  AddTask(&q, {0.1, 0.1});
  auto any_gain = ScheduleTasks(q);
  ASSERT_TRUE(any_gain.ok());
  EXPECT_DOUBLE_EQ(any_gain->makespan, 1.0);  // the small task goes to device 1
  EXPECT_EQ(any_gain->plan, "heft");
  auto with_margin = ScheduleTasks(q, o);
  ASSERT_TRUE(with_margin.ok());
  EXPECT_EQ(with_margin->plan, "single-device");  // 1.1 is within 10% of 1.0
  EXPECT_DOUBLE_EQ(with_margin->makespan, 1.1);
}

TEST(SchedulerTest, GroupsShareADevice) {
  SchedProblem p = Problem(2);
  int a = AddTask(&p, {1.0, 1.0}, 0, /*group=*/0);
  int b = AddTask(&p, {1.0, 1.0}, 0, /*group=*/0);
  int c = AddTask(&p, {1.0, 1.0}, 0, /*group=*/0);
  (void)a;
  (void)b;
  (void)c;
  SchedOptions o;
  o.single_device_candidates = false;
  auto s = ScheduleTasks(p, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->device[0], s->device[1]);
  EXPECT_EQ(s->device[1], s->device[2]);
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
}

TEST(SchedulerTest, GroupFollowsItsPinnedMember) {
  SchedProblem p = Problem(2);
  AddTask(&p, {1.0, 1.0}, 0, 0);
  AddTask(&p, {kInfeasible, 5.0}, 0, 0);  // only device 1
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->device, (std::vector<int>{1, 1}));
}

TEST(SchedulerTest, MemoryCapacityPushesWorkElsewhere) {
  SchedProblem p = Problem(2);
  p.memory_capacity = {100, 0};
  int root = AddTask(&p, {0, 0});
  // Device 0 is faster but holds only one 60-byte output at a time, and
  // each output stays live until the sink runs.
  int sink = AddTask(&p, {0.1, 0.1});
  for (int i = 0; i < 3; ++i) {
    int t = AddTask(&p, {1.0, 3.0}, 60);
    AddEdge(&p, root, t, 0);
    AddEdge(&p, t, sink, 60);
  }
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_LE(s->peak_memory[0], 100);
  int on0 = 0;
  for (int i = 2; i < 5; ++i) on0 += s->device[i] == 0;
  EXPECT_EQ(on0, 1);

  SchedOptions ignore;
  ignore.respect_memory = false;
  auto unlimited = ScheduleTasks(p, ignore);
  ASSERT_TRUE(unlimited.ok());
  EXPECT_GT(unlimited->peak_memory[0], 100);
}

TEST(SchedulerTest, OutOfMemoryEverywhereIsResourceExhausted) {
  SchedProblem p = Problem(2);
  p.memory_capacity = {10, 10};
  AddTask(&p, {1.0, 1.0}, 64);
  auto s = ScheduleTasks(p);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("task 0"), std::string::npos);
}

TEST(SchedulerTest, PersistentBytesCountAgainstMemory) {
  SchedProblem p = Problem(2);
  p.memory_capacity = {100, 0};
  SchedTask t;
  t.cost = {1.0, 2.0};
  t.persistent_bytes = 1000;
  p.tasks.push_back(t);
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->device[0], 1);
  EXPECT_EQ(s->peak_memory[0], 0);
}

// The four-node case: a weight `c` (60 bytes held) colocated with its
// consumer `m` (20-byte output), an input `x` (30-byte output) that runs
// much faster on the GPU, and `o` joining `m` and `x`. The GPU (device 1,
// 100 bytes) holds the group or `x`, not both. Checking only the node being
// placed, `x` and then `c` land on the GPU, `m` then overflows it, every
// spread plan fails and only the CPU-only plan (6 s) is left. Placing the
// group as a unit sends it to the CPU while `x` runs on the GPU: 3 s.
SchedProblem ColocatedWeightRepro() {
  SchedProblem p = Problem(2, 0, 1e9);
  p.memory_capacity = {0, 100};
  SchedTask c;
  c.cost = {0, 0};
  c.persistent_bytes = 60;
  c.group = 0;
  p.tasks.push_back(c);
  AddTask(&p, {2.0, 1.0}, /*out_bytes=*/20, /*group=*/0);  // m
  AddTask(&p, {3.0, 1.0}, /*out_bytes=*/30);               // x
  AddTask(&p, {1.0, 1.0});                                   // o
  AddEdge(&p, 0, 1, 60);
  AddEdge(&p, 1, 3, 20);
  AddEdge(&p, 2, 3, 30);
  return p;
}

TEST(SchedulerTest, ColocationGroupIsPlacedAsAUnit) {
  const SchedProblem p = ColocatedWeightRepro();
  for (const bool defer : {true, false}) {
    SchedOptions o;
    o.defer_free_sources = defer;
    auto s = ScheduleTasks(p, o);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->device[0], 0) << "defer " << defer;
    EXPECT_EQ(s->device[1], 0) << "defer " << defer;
    EXPECT_EQ(s->device[2], 1) << "defer " << defer;
    EXPECT_NEAR(s->makespan, 3.0, 1e-6);
    EXPECT_LE(s->peak_memory[1], 100);
    EXPECT_EQ(s->plan, "heft");
    for (const PlanOutcome& outcome : s->plans) {
      if (outcome.name == "heft" || outcome.name == "peft" ||
          outcome.name == "lookahead") {
        EXPECT_TRUE(outcome.failure.empty()) << outcome.name << ": " << outcome.failure;
      }
    }
  }
}

TEST(SchedulerTest, GroupMemoryIsCheckedBeforeTheGroupGoesThere) {
  // Two members of 60 persistent bytes each: device 1 (100 bytes) could
  // hold either alone, never the group.
  SchedProblem p = Problem(2);
  p.memory_capacity = {0, 100};
  for (int i = 0; i < 2; ++i) {
    SchedTask t;
    t.cost = {2.0, 1.0};
    t.persistent_bytes = 60;
    t.group = 0;
    p.tasks.push_back(t);
  }
  AddEdge(&p, 0, 1, 0);
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->device, (std::vector<int>{0, 0}));
  EXPECT_EQ(s->peak_memory[1], 0);
  // A fixed assignment that puts the group there is out of memory at its
  // first member, naming it.
  auto fixed = EvaluateAssignment(p, {1, 1});
  EXPECT_EQ(fixed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(fixed.status().message().find("task 0"), std::string::npos) << fixed.status();
}

TEST(SchedulerTest, PersistentBytesAreHeldForTheWholeStep) {
  // `a` makes a 50-byte output that dies at `b`; `c` then holds 60 bytes
  // for the step. The peak is 110 (the 60 are held while `a`'s output was
  // live too), so a 100-byte device cannot run all three.
  SchedProblem p = Problem(2);
  p.memory_capacity = {0, 100};
  int a = AddTask(&p, {2.0, 1.0}, 50);
  int b = AddTask(&p, {2.0, 1.0});
  SchedTask c;
  c.cost = {2.0, 1.0};
  c.persistent_bytes = 60;
  p.tasks.push_back(c);
  AddEdge(&p, a, b, 50);
  AddEdge(&p, b, 2, 0);
  auto all_there = EvaluateAssignment(p, {1, 1, 1});
  EXPECT_EQ(all_there.status().code(), absl::StatusCode::kResourceExhausted);
  SchedProblem roomy = p;
  roomy.memory_capacity = {0, 110};
  auto fits = EvaluateAssignment(roomy, {1, 1, 1});
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->peak_memory[1], 110);
}

TEST(SchedulerTest, WeightsFollowTheirConsumersInsteadOfPullingThemToOneDevice) {
  // Two branches, each a weight (free, 1 MB) feeding an op of 1 s on either
  // of two equal devices joined by a slow link. Scheduled first, both
  // weights tie at time 0 and go to device 0, which then pulls both ops
  // there (2 s). Placed with their consumers, the branches spread (1 s).
  SchedProblem p = Problem(2, 0, 1e5);
  std::vector<int> weights, ops;
  for (int i = 0; i < 2; ++i) {
    SchedTask w;
    w.cost = {0, 0};
    w.persistent_bytes = 1 << 20;
    p.tasks.push_back(w);
    weights.push_back(static_cast<int>(p.tasks.size()) - 1);
    ops.push_back(AddTask(&p, {1.0, 1.0}, 8));
    AddEdge(&p, weights.back(), ops.back(), 1 << 20);
  }
  SchedOptions first;
  first.defer_free_sources = false;
  first.single_device_candidates = false;
  auto eager = ScheduleTasks(p, first);
  ASSERT_TRUE(eager.ok()) << eager.status();
  EXPECT_DOUBLE_EQ(eager->makespan, 2.0);
  EXPECT_TRUE(eager->follows.empty());

  SchedOptions follow;
  follow.single_device_candidates = false;
  auto s = ScheduleTasks(p, follow);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->makespan, 1.0);
  EXPECT_EQ(s->transfer_bytes, 0);
  EXPECT_NE(s->device[ops[0]], s->device[ops[1]]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(s->device[weights[i]], s->device[ops[i]]);
    EXPECT_EQ(s->follows[weights[i]], ops[i]);
  }
  EXPECT_EQ(s->follows[ops[0]], -1);
}

TEST(SchedulerTest, AWeightAndItsConsumerGoWhereBothFit) {
  // Device 1 is faster but holds 100 bytes: the 80-byte weight and the
  // consumer's 30-byte output do not fit there together, whether the
  // weight lives there or is sent over for the consumer, so both stay on
  // device 0. With 150 bytes, both go to device 1.
  SchedProblem p = Problem(2, 0, 1e9);
  p.memory_capacity = {0, 100};
  SchedTask w;
  w.cost = {0, 0};
  w.persistent_bytes = 80;
  p.tasks.push_back(w);
  AddTask(&p, {2.0, 1.0}, 30);
  AddEdge(&p, 0, 1, 80);
  auto tight = ScheduleTasks(p);
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_EQ(tight->device, (std::vector<int>{0, 0}));
  p.memory_capacity = {0, 150};
  auto roomy = ScheduleTasks(p);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_EQ(roomy->device, (std::vector<int>{1, 1}));
  EXPECT_EQ(roomy->peak_memory[1], 110);
}

TEST(SchedulerTest, ConstantFollowsItsConsumer) {
  // A free source feeding a task that only device 1 can run: the tie at
  // time 0 goes to device 1, so nothing moves.
  SchedProblem p = Problem(2, 0, 1e6);
  int c = AddTask(&p, {0, 0}, 1 << 20);
  int use = AddTask(&p, {kInfeasible, 1.0});
  AddEdge(&p, c, use, 1 << 20);
  SchedOptions o;
  o.single_device_candidates = false;
  auto s = ScheduleTasks(p, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->device[c], 1);
  EXPECT_EQ(s->transfer_bytes, 0);
}

TEST(SchedulerTest, HostMemoryInputsGoToTheHostCpu) {
  // Device 0 is the CPU, device 1 a GPU on the same host. The consumer on
  // the GPU keeps its input in host memory: the CPU producer's tensor
  // does not move.
  SchedProblem p = Problem(2, 1e-3, 1e3);
  p.host_device = {0, 0};
  int src = AddTask(&p, {1.0, kInfeasible}, 1000);
  int dst = AddTask(&p, {kInfeasible, 1.0});
  AddEdge(&p, src, dst, 1000);
  p.edges[0].dst_host_memory = true;
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->num_transfers, 0);
  EXPECT_DOUBLE_EQ(s->makespan, 2.0);
  p.edges[0].dst_host_memory = false;
  auto moved = ScheduleTasks(p);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->num_transfers, 1);
  EXPECT_DOUBLE_EQ(moved->makespan, 2.0 + 1e-3 + 1.0);
}

TEST(SchedulerTest, OneTransferPerTensorAndDevice) {
  SchedProblem p = Problem(2, 0, 1e9);
  int src = AddTask(&p, {1.0, kInfeasible}, 400);
  int a = AddTask(&p, {kInfeasible, 1.0});
  int b = AddTask(&p, {kInfeasible, 1.0});
  AddEdge(&p, src, a, 400, /*tensor=*/7);
  AddEdge(&p, src, b, 400, /*tensor=*/7);
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->num_transfers, 1);
  EXPECT_EQ(s->transfer_bytes, 400);
}

TEST(SchedulerTest, CompressedLinksMoveHalfTheBytes) {
  SchedProblem p = Problem(2, 0, 100.0, /*compresses=*/true);
  int src = AddTask(&p, {1.0, kInfeasible});
  int dst = AddTask(&p, {kInfeasible, 1.0});
  AddEdge(&p, src, dst, 400);
  p.edges[0].compressible = true;
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->transfer_bytes, 200);
  EXPECT_DOUBLE_EQ(s->makespan, 1.0 + 2.0 + 1.0);
}

TEST(SchedulerTest, InsertionFillsGaps) {
  // Device 0 only. a(1) -> b waits for c's slow transfer... simpler: a long
  // task scheduled first leaves a gap that a later short task fills.
  SchedProblem p = Problem(1);
  int a = AddTask(&p, {1.0});
  int b = AddTask(&p, {1.0});
  AddEdge(&p, a, b, 0);
  auto order = UpwardRankOrder(p);
  EXPECT_EQ(order, (std::vector<int>{a, b}));
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->start[b], 1.0);
}

TEST(SchedulerTest, RankOrderIsTopologicalWithZeroCosts) {
  SchedProblem p = Problem(2);
  std::vector<int> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(AddTask(&p, {0, 0}));
  for (int i = 19; i > 0; --i) AddEdge(&p, ids[i], ids[i - 1], 0);  // reverse chain
  auto order = UpwardRankOrder(p);
  std::vector<int> pos(20);
  for (int i = 0; i < 20; ++i) pos[order[i]] = i;
  for (const SchedEdge& e : p.edges) EXPECT_LT(pos[e.src], pos[e.dst]);
}

TEST(SchedulerTest, EvaluateAssignmentSerializesOneDevice) {
  SchedProblem p = HeftFailure();
  auto s = EvaluateAssignment(p, {0, 0, 0});
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->makespan, 3.0);
  auto split = EvaluateAssignment(p, {0, 1, 0});
  ASSERT_TRUE(split.ok());
  EXPECT_DOUBLE_EQ(split->makespan, 12.0);
  EXPECT_FALSE(EvaluateAssignment(p, {0, 1}).ok());
  EXPECT_FALSE(EvaluateAssignment(p, {0, 1, 2}).ok());
}

TEST(SchedulerTest, LowerBounds) {
  SchedProblem p = Problem(2);
  int a = AddTask(&p, {2.0, 1.0});
  int b = AddTask(&p, {3.0, 4.0});
  int c = AddTask(&p, {1.0, 1.0});
  AddEdge(&p, a, b, 0);
  LowerBounds lb = ComputeLowerBounds(p);
  EXPECT_DOUBLE_EQ(lb.critical_path, 4.0);  // 1 + 3
  EXPECT_DOUBLE_EQ(lb.area, (1.0 + 3.0 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(lb.best(), 4.0);
  (void)c;
  auto s = ScheduleTasks(p);
  ASSERT_TRUE(s.ok());
  EXPECT_GE(s->makespan, lb.best());
}

TEST(SchedulerTest, Deterministic) {
  SchedProblem p = Problem(3, 1e-4, 1e8);
  for (int i = 0; i < 200; ++i) {
    AddTask(&p, {1e-3 * (1 + i % 3), 1e-3 * (1 + i % 5), 1e-3 * (1 + i % 7)}, 1000);
    if (i > 0) AddEdge(&p, (i * 7919) % i, i, 1000 + i);
    if (i > 2) AddEdge(&p, i - 2, i, 10);
  }
  auto s1 = ScheduleTasks(p);
  auto s2 = ScheduleTasks(p);
  ASSERT_TRUE(s1.ok());
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(s1->device, s2->device);
  EXPECT_EQ(s1->makespan, s2->makespan);
  // A plan obeys its precedence constraints.
  for (const SchedEdge& e : p.edges) {
    EXPECT_LE(s1->finish[e.src], s1->start[e.dst] + 1e-12);
  }
}

TEST(SchedulerTest, RecordsCandidateFinishTimes) {
  SchedProblem p = Problem(2);
  AddTask(&p, {2.0, 1.0});
  AddTask(&p, {kInfeasible, 1.0});
  SchedOptions o;
  o.record_candidate_finish = true;
  auto s = ScheduleTasks(p, o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->candidate_finish.size(), 2u);
  EXPECT_DOUBLE_EQ(s->candidate_finish[0][0], 2.0);
  EXPECT_DOUBLE_EQ(s->candidate_finish[0][1], 1.0);
  EXPECT_EQ(s->candidate_finish[1][0], kInfeasible);
}

TEST(SchedulerTest, InvalidProblems) {
  SchedProblem cyc = Problem(1);
  AddTask(&cyc, {1.0});
  AddTask(&cyc, {1.0});
  AddEdge(&cyc, 0, 1, 0);
  AddEdge(&cyc, 1, 0, 0);
  EXPECT_NE(ScheduleTasks(cyc).status().message().find("cycle"), std::string::npos);

  SchedProblem nowhere = Problem(2);
  AddTask(&nowhere, {kInfeasible, kInfeasible});
  EXPECT_EQ(ScheduleTasks(nowhere).status().code(), absl::StatusCode::kInvalidArgument);

  SchedProblem split_group = Problem(2);
  AddTask(&split_group, {1.0, kInfeasible}, 0, 0);
  AddTask(&split_group, {kInfeasible, 1.0}, 0, 0);
  EXPECT_NE(ScheduleTasks(split_group).status().message().find("group 0"),
            std::string::npos);

  SchedProblem bad_edge = Problem(1);
  AddTask(&bad_edge, {1.0});
  AddEdge(&bad_edge, 0, 3, 0);
  EXPECT_FALSE(ScheduleTasks(bad_edge).ok());
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
