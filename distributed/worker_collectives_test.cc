// WorkerCollectives between two tasks in one process: task 1 reaches the
// leader (task 0) through a WorkerInterface that calls the leader's Serve,
// as the gRPC service does.
#include "distributed/worker_collectives.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using ::testing::HasSubstr;

constexpr char kTask0[] = "/job:worker/replica:0/task:0";
constexpr char kTask1[] = "/job:worker/replica:0/task:1";

// The leader as another task sees it; Health answers `health`.
class LeaderPeer : public WorkerInterface {
 public:
  explicit LeaderPeer(WorkerCollectives* leader) : leader_(leader) {}
  absl::Status health = absl::OkStatus();
  std::atomic<int> health_calls{0};
  std::atomic<int> collective_calls{0};

  void CollectiveAsync(const CollectiveRequest* q, CollectiveResponse* r, CallOptions* o,
                       StatusCallback d) override {
    ++collective_calls;
    leader_->Serve(q, r, o, std::move(d));
  }
  void HealthAsync(const HealthRequest*, HealthResponse*, CallOptions*,
                   StatusCallback d) override {
    ++health_calls;
    d(health);
  }
  void GetStatusAsync(const GetStatusRequest*, GetStatusResponse*, CallOptions*,
                      StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }
  void RegisterGraphAsync(const RegisterGraphRequest*, RegisterGraphResponse*, CallOptions*,
                          StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }
  void RunGraphAsync(const RunGraphRequest*, RunGraphResponse*, CallOptions*,
                     StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }
  void CleanupGraphAsync(const CleanupGraphRequest*, CleanupGraphResponse*, CallOptions*,
                         StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }
  void CleanupStepAsync(const CleanupStepRequest*, CleanupStepResponse*, CallOptions*,
                        StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }
  void RecvTensorAsync(const RecvTensorRequest*, RecvTensorReply*, CallOptions*,
                       StatusCallback d) override {
    d(absl::UnimplementedError("test"));
  }

 private:
  WorkerCollectives* leader_;
};

struct Pair {
  absl::Time now = absl::FromUnixSeconds(100);
  std::shared_ptr<WorkerCollectives> leader, member;
  std::shared_ptr<LeaderPeer> peer;
  Pair() {
    WorkerCollectivesOptions o0;
    o0.task_name = kTask0;
    o0.clock = [this] { return now; };
    o0.peer = [this](const std::string&) -> absl::StatusOr<std::shared_ptr<WorkerInterface>> {
      return std::static_pointer_cast<WorkerInterface>(peer);
    };
    leader = std::make_shared<WorkerCollectives>(o0);
    peer = std::make_shared<LeaderPeer>(leader.get());
    WorkerCollectivesOptions o1 = o0;
    o1.task_name = kTask1;
    o1.cluster_tasks = [] { return std::set<std::string>{kTask0}; };
    member = std::make_shared<WorkerCollectives>(o1);
  }
};

CollectiveCall Reduce(const char* task) {
  CollectiveCall c;
  c.kind = CollectiveKind::kReduce;
  c.node = "g";
  c.device = absl::StrCat(task, "/device:CPU:0");
  c.group_size = 2;
  c.group_key = 3;
  c.instance_key = 4;
  c.merge_op = "Add";
  c.final_op = "Div";
  return c;
}

using Result = std::optional<absl::StatusOr<Tensor>>;
CollectiveExecutor::Done Into(Result* r) {
  return [r](absl::StatusOr<Tensor> t) { *r = std::move(t); };
}

TEST(WorkerCollectivesTest, TheLeaderIsWorkerZeroOrTheChief) {
  Pair p;
  EXPECT_EQ(p.member->Leader(), kTask0);
  WorkerCollectivesOptions o;
  o.task_name = kTask1;
  o.cluster_tasks = [] { return std::set<std::string>{"/job:chief/replica:0/task:0"}; };
  EXPECT_EQ(WorkerCollectives(o).Leader(), "/job:chief/replica:0/task:0");
}

TEST(WorkerCollectivesTest, MembersOfTwoTasksMeetAtTheLeaderStepAfterStep) {
  Pair p;
  for (int step = 0; step < 3; ++step) {
    Result r0, r1;
    p.member->Run(Reduce(kTask1), Tensor::FromVector<float>({1.0f * step, 4}), nullptr,
                  Into(&r1));
    EXPECT_FALSE(r1.has_value());
    p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({3, 2}), nullptr, Into(&r0));
    ASSERT_TRUE(r0.has_value() && r0->ok()) << (r0 ? r0->status() : absl::OkStatus());
    ASSERT_TRUE(r1.has_value() && r1->ok()) << (r1 ? r1->status() : absl::OkStatus());
    EXPECT_EQ((*r0)->flat<float>()[0], (3 + step) / 2.0f);
    EXPECT_EQ((*r1)->flat<float>()[1], 3.0f);
  }
  // The member waited for the leader's task to answer once, not each time.
  EXPECT_EQ(p.peer->health_calls.load(), 1);
}

TEST(WorkerCollectivesTest, ACancelledMemberFailsTheExecutionAndTheNextOneMeets) {
  Pair p;
  CancellationManager cm;
  Result r0, r1;
  p.member->Run(Reduce(kTask1), Tensor::FromVector<float>({1}), &cm, Into(&r1));
  cm.StartCancel();
  ASSERT_TRUE(r1.has_value());
  EXPECT_FALSE(r1->ok());
  // The leader's member comes to the failed execution later: it fails too,
  // at once, with the same error...
  p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({1}), nullptr, Into(&r0));
  ASSERT_TRUE(r0.has_value());
  EXPECT_THAT(std::string(r0->status().message()),
              HasSubstr("left the collective: its call to the leader was cancelled"));
  // ...so both devices' next executions meet.
  Result n0, n1;
  p.member->Run(Reduce(kTask1), Tensor::FromVector<float>({3}), nullptr, Into(&n1));
  p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({5}), nullptr, Into(&n0));
  ASSERT_TRUE(n0.has_value() && n0->ok());
  ASSERT_TRUE(n1.has_value() && n1->ok());
  EXPECT_EQ((*n1)->flat<float>()[0], 4.0f);
}

TEST(WorkerCollectivesTest, AWaitingMemberFailsWhenTheOtherLeavesMidCall) {
  Pair p;
  CancellationManager cm;
  Result r1, a0;
  // A three-member instance: task 1 joins, then its step is cancelled.
  CollectiveCall big = Reduce(kTask1);
  big.instance_key = 9;
  big.group_size = 3;
  CollectiveCall big0 = Reduce(kTask0);
  big0.instance_key = 9;
  big0.group_size = 3;
  p.leader->Run(big0, Tensor::FromVector<float>({1}), nullptr, Into(&a0));
  p.member->Run(big, Tensor::FromVector<float>({1}), &cm, Into(&r1));
  EXPECT_FALSE(a0.has_value());
  cm.StartCancel();
  ASSERT_TRUE(a0.has_value());
  EXPECT_THAT(std::string(a0->status().message()),
              HasSubstr(absl::StrCat("node 'g' (reduce of group 3, instance 9, execution 0, on ",
                                     kTask1, "/device:CPU:0) left the collective")));
}

TEST(WorkerCollectivesTest, TimeoutAndALostTaskFailTheWait) {
  Pair p;
  {  // The group meets once, so the leader knows task 1's device.
    Result a, b;
    p.member->Run(Reduce(kTask1), Tensor::FromVector<float>({1}), nullptr, Into(&b));
    p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({1}), nullptr, Into(&a));
    ASSERT_TRUE(a.has_value() && a->ok());
  }
  CollectiveCall timed = Reduce(kTask0);
  timed.timeout = absl::Seconds(1);
  Result r;
  p.leader->Run(timed, Tensor::FromVector<float>({1}), nullptr, Into(&r));
  p.now += absl::Seconds(1);
  p.leader->Sweep();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(r->status().message()),
              HasSubstr(absl::StrCat("still missing: ", kTask1, "/device:CPU:0")));

  // No timeout: the leader asks after task 1 once the wait is long.
  Result w;
  p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({1}), nullptr, Into(&w));
  p.peer->health = absl::UnavailableError("connection refused");
  p.leader->Sweep();
  EXPECT_FALSE(w.has_value());  // not waited long yet
  p.now += absl::Seconds(3);
  p.leader->Sweep();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(w->status().message()),
              HasSubstr(absl::StrCat("member ", kTask1,
                                     "/device:CPU:0 has not come and its task does not answer: "
                                     "connection refused")));
}

// A member's answer that may come on another thread.
struct Awaited {
  absl::Notification done;
  absl::StatusOr<Tensor> result = absl::UnknownError("no answer");
  CollectiveExecutor::Done Into() {
    return [this](absl::StatusOr<Tensor> t) {
      result = std::move(t);
      done.Notify();
    };
  }
  absl::StatusOr<Tensor> Get() {
    if (!done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("the test waited 60s for an answer");
    }
    return result;
  }
};

CollectiveCall RingReduce(const char* task, DataType wire = DT_FLOAT) {
  CollectiveCall c = Reduce(task);
  c.communication_hint = "ring";
  c.wire_float = wire;
  return c;
}

TEST(WorkerCollectivesTest, RingReducesStepAfterStepAndFp16Rounds) {
  Pair p;
  for (int step = 0; step < 3; ++step) {
    Awaited a, b;
    p.member->Run(RingReduce(kTask1), Tensor::FromVector<float>({1, 2.0f * step, 3, 4, 5}),
                  nullptr, b.Into());
    p.leader->Run(RingReduce(kTask0), Tensor::FromVector<float>({3, 0, 5, 6, 7}), nullptr,
                  a.Into());
    absl::StatusOr<Tensor> ra = a.Get(), rb = b.Get();
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    const std::vector<float> want = {2, 1.0f * step, 4, 5, 6};
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(ra->flat<float>()[i], want[i]) << "step " << step << " value " << i;
      EXPECT_EQ(rb->flat<float>()[i], want[i]);
    }
  }
  // The address trade went through the leader once; the steps did not.
  CollectiveCall one_third = RingReduce(kTask0, DT_HALF);
  one_third.instance_key = 5;
  CollectiveCall zero = RingReduce(kTask1, DT_HALF);
  zero.instance_key = 5;
  Awaited a, b;
  p.leader->Run(one_third, Tensor::FromVector<float>({2.0f / 3}), nullptr, a.Into());
  p.member->Run(zero, Tensor::FromVector<float>({0}), nullptr, b.Into());
  absl::StatusOr<Tensor> ra = a.Get(), rb = b.Get();
  ASSERT_TRUE(ra.ok() && rb.ok());
  // (2/3) / 2 in fp16 is 0.33325195..., not float32's 0.33333334.
  EXPECT_EQ(ra->flat<float>()[0], rb->flat<float>()[0]);
  EXPECT_NE(ra->flat<float>()[0], 1.0f / 3);
  EXPECT_NEAR(ra->flat<float>()[0], 1.0f / 3, 2e-4);
}

TEST(WorkerCollectivesTest, ALargeAutoReduceGoesRoundTheRingAsTensorFlowsDoes) {
  Pair p;
  const int64_t n = CollectiveRings::kAutoRingBytes / 4 + 3;
  for (int step = 0; step < 3; ++step) {
    CollectiveCall c0 = Reduce(kTask0), c1 = Reduce(kTask1);  // hint "" (auto), Div
    std::vector<float> x0(n, 1.0f), x1(n, 2.0f * step);
    x1[n - 1] = 7;
    Awaited a, b;
    p.member->Run(c1, Tensor::FromVector<float>(x1), nullptr, b.Into());
    p.leader->Run(c0, Tensor::FromVector<float>(x0), nullptr, a.Into());
    absl::StatusOr<Tensor> ra = a.Get(), rb = b.Get();
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    EXPECT_EQ(ra->flat<float>()[0], (1 + 2.0f * step) / 2);
    EXPECT_EQ(rb->flat<float>()[n - 1], 4.0f);
  }
  // Task 1 met the leader once, to trade ring addresses; the steps went
  // round the ring.
  EXPECT_EQ(p.peer->collective_calls.load(), 1);
  // A small one still meets at the leader, each time.
  Result r0, r1;
  p.member->Run(Reduce(kTask1), Tensor::FromVector<float>({1}), nullptr, Into(&r1));
  p.leader->Run(Reduce(kTask0), Tensor::FromVector<float>({3}), nullptr, Into(&r0));
  ASSERT_TRUE(r1.has_value() && r1->ok());
  EXPECT_EQ((*r1)->flat<float>()[0], 2.0f);
  EXPECT_EQ(p.peer->collective_calls.load(), 2);
}

TEST(WorkerCollectivesTest, GlooReducesStepAfterStep) {
  Pair p;
  for (int step = 0; step < 3; ++step) {
    CollectiveCall c0 = RingReduce(kTask0), c1 = RingReduce(kTask1);
    c0.communication_hint = c1.communication_hint = "gloo";
    c0.dtype = c1.dtype = DT_INT64;
    c0.final_op = c1.final_op = "Id";
    Awaited a, b;
    p.member->Run(c1, Tensor::FromVector<int64_t>({int64_t{1} << 40, step, -7}), nullptr,
                  b.Into());
    p.leader->Run(c0, Tensor::FromVector<int64_t>({5, 10, 3}), nullptr, a.Into());
    absl::StatusOr<Tensor> ra = a.Get(), rb = b.Get();
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    for (const Tensor* t : {&*ra, &*rb}) {
      EXPECT_EQ(t->flat<int64_t>()[0], (int64_t{1} << 40) + 5);
      EXPECT_EQ(t->flat<int64_t>()[1], 10 + step);
      EXPECT_EQ(t->flat<int64_t>()[2], -4);
    }
  }
}

TEST(WorkerCollectivesTest, ARingMemberThatGoesAwayFailsThePeerAndTheNextStepRebuilds) {
  Pair p;
  {
    Awaited a, b;
    p.leader->Run(RingReduce(kTask0), Tensor::FromVector<float>({1}), nullptr, a.Into());
    p.member->Run(RingReduce(kTask1), Tensor::FromVector<float>({3}), nullptr, b.Into());
    ASSERT_TRUE(a.Get().ok() && b.Get().ok());
  }
  {  // Task 0's step is cancelled as its part starts: it sends nothing and
     // closes its ring.
    CancellationManager cm;
    Awaited a, b;
    cm.StartCancel();
    p.leader->Run(RingReduce(kTask0), Tensor::FromVector<float>({1}), &cm, a.Into());
    absl::StatusOr<Tensor> ra = a.Get();
    EXPECT_FALSE(ra.ok());
    // Task 1 comes to the same execution: its ring's peer is gone.
    p.member->Run(RingReduce(kTask1), Tensor::FromVector<float>({3}), nullptr, b.Into());
    absl::StatusOr<Tensor> rb = b.Get();
    ASSERT_FALSE(rb.ok());
    EXPECT_THAT(std::string(rb.status().message()),
                HasSubstr(absl::StrCat("over a ring (ranks: 0 ", kTask0, "/device:CPU:0, 1 ",
                                       kTask1, "/device:CPU:0)")));
  }
  {  // The next execution makes a new ring.
    Awaited a, b;
    p.member->Run(RingReduce(kTask1), Tensor::FromVector<float>({5}), nullptr, b.Into());
    p.leader->Run(RingReduce(kTask0), Tensor::FromVector<float>({1}), nullptr, a.Into());
    absl::StatusOr<Tensor> ra = a.Get(), rb = b.Get();
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    EXPECT_EQ(ra->flat<float>()[0], 3.0f);
  }
}

}  // namespace
}  // namespace graphrun
