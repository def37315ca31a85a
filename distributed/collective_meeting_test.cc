#include "distributed/collective_meeting.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/lower_collectives.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using ::testing::HasSubstr;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

std::string Device(int task) {
  return absl::StrCat("/job:worker/replica:0/task:", task, "/device:CPU:0");
}

CollectiveCall Call(CollectiveKind kind, int task, int64_t group_size = 2) {
  CollectiveCall c;
  c.kind = kind;
  c.node = absl::StrCat("n", task);
  c.device = Device(task);
  c.group_size = group_size;
  c.group_key = 1;
  c.instance_key = 7;
  c.merge_op = "Add";
  c.final_op = "Id";
  return c;
}

// Where a member's answer lands.
struct Got {
  std::optional<absl::StatusOr<Tensor>> result;
  CollectiveMeeting::Done Done() {
    return [this](absl::StatusOr<Tensor> r) { result = std::move(r); };
  }
  std::vector<float> Floats() const {
    EXPECT_TRUE(result.has_value() && result->ok());
    auto f = (*result)->flat<float>();
    return std::vector<float>(f.begin(), f.end());
  }
  std::string Error() const {
    EXPECT_TRUE(result.has_value() && !result->ok());
    return std::string(result->status().message());
  }
};

TEST(CollectiveMeetingTest, MeanOfThreeInRankOrderForEveryMember) {
  CollectiveMeeting m;
  Got got[3];
  // Arriving out of rank order; ranks follow the device names.
  for (int task : {2, 0, 1}) {
    CollectiveCall c = Call(CollectiveKind::kReduce, task, 3);
    c.final_op = "Div";
    m.Join(c, Tensor::FromVector<float>({1.0f * task, 3.0f}), kT0, got[task].Done());
    EXPECT_EQ(got[task].result.has_value(), task == 1) << "task " << task;
  }
  for (const Got& g : got) EXPECT_EQ(g.Floats(), (std::vector<float>{1.0f, 3.0f}));
  EXPECT_TRUE(m.Waits().empty());
}

TEST(CollectiveMeetingTest, GatherConcatenatesByDeviceName) {
  CollectiveMeeting m;
  Got a, b;
  m.Join(Call(CollectiveKind::kGather, 1), Tensor::FromVector<float>({3, 4}), kT0, b.Done());
  m.Join(Call(CollectiveKind::kGather, 0), Tensor::FromVector<float>({1}), kT0, a.Done());
  EXPECT_EQ(a.Floats(), (std::vector<float>{1, 3, 4}));
  EXPECT_EQ(b.Floats(), (std::vector<float>{1, 3, 4}));
}

TEST(CollectiveMeetingTest, RanksCompareTaskNumbersAsNumbers) {
  // TensorFlow ranks task 2 before task 10 (text order would not).
  CollectiveMeeting m;
  Got a, b;
  m.Join(Call(CollectiveKind::kGather, 10), Tensor::FromVector<float>({10}), kT0, a.Done());
  m.Join(Call(CollectiveKind::kGather, 2), Tensor::FromVector<float>({2}), kT0, b.Done());
  EXPECT_EQ(a.Floats(), (std::vector<float>{2, 10}));
  EXPECT_TRUE(CollectiveRankBefore("/job:worker/replica:0/task:0/device:CPU:2",
                                   "/job:worker/replica:0/task:0/device:CPU:10"));
  EXPECT_FALSE(CollectiveRankBefore("/job:worker/replica:0/task:10/device:CPU:0",
                                    "/job:worker/replica:0/task:9/device:CPU:0"));
  EXPECT_TRUE(CollectiveRankBefore("/job:chief/replica:0/task:0/device:CPU:0",
                                   "/job:worker/replica:0/task:0/device:CPU:0"));
}

TEST(CollectiveMeetingTest, AMemberTooManyFailsInsteadOfWaiting) {
  CollectiveMeeting m;
  Got a, b, c;
  m.Join(Call(CollectiveKind::kReduce, 0), Tensor::FromVector<float>({1}), kT0, a.Done());
  m.Join(Call(CollectiveKind::kReduce, 1), Tensor::FromVector<float>({1}), kT0, b.Done());
  ASSERT_TRUE(a.result->ok());
  m.Join(Call(CollectiveKind::kReduce, 2), Tensor::FromVector<float>({1}), kT0, c.Done());
  EXPECT_THAT(c.Error(), HasSubstr("node 'n2' (reduce of group 1, instance 7, execution 0, on "
                                   "/job:worker/replica:0/task:2/device:CPU:0): the execution "
                                   "has met already"));
  EXPECT_TRUE(m.Waits().empty());
}

TEST(CollectiveMeetingTest, AMemberThatLeavesBeforeItJoinsFailsAtItsJoin) {
  CollectiveMeeting m;
  const int64_t id = m.NewId();
  m.Leave(id, absl::CancelledError("its step was cancelled"));
  Got a;
  m.Join(id, Call(CollectiveKind::kReduce, 0), Tensor::FromVector<float>({1}), kT0, a.Done());
  EXPECT_EQ(a.result->status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(a.Error(), HasSubstr("node 'n0' (reduce of group 1, instance 7, execution 0"));
  EXPECT_TRUE(m.Waits().empty());
}

TEST(CollectiveMeetingTest, BroadcastReshapesForTheReceiverAndRefusesAnotherCount) {
  CollectiveMeeting m;
  Got send, recv;
  CollectiveCall r = Call(CollectiveKind::kBcastRecv, 0);
  r.shape = TensorShape({2, 1});
  m.Join(r, Tensor(), kT0, recv.Done());
  m.Join(Call(CollectiveKind::kBcastSend, 1), Tensor::FromVector<float>({5, 6}), kT0,
         send.Done());
  EXPECT_EQ(recv.Floats(), (std::vector<float>{5, 6}));
  EXPECT_EQ((*recv.result)->shape(), TensorShape({2, 1}));
  EXPECT_EQ(send.Floats(), (std::vector<float>{5, 6}));

  Got send2, recv2;
  r.execution = 1;
  r.shape = TensorShape({3});
  CollectiveCall s = Call(CollectiveKind::kBcastSend, 1);
  s.execution = 1;
  m.Join(s, Tensor::FromVector<float>({5, 6}), kT0, send2.Done());
  m.Join(r, Tensor(), kT0, recv2.Done());
  EXPECT_THAT(send2.Error(), HasSubstr("node 'n0' (broadcast receive of group 1, instance 7, "
                                       "execution 1"));
  EXPECT_THAT(recv2.Error(), HasSubstr("expects shape [3] but the sender's tensor has 2"));
}

TEST(CollectiveMeetingTest, ExecutionsMeetSeparately) {
  CollectiveMeeting m;
  Got first0, second0, first1;
  CollectiveCall c0 = Call(CollectiveKind::kReduce, 0);
  m.Join(c0, Tensor::FromVector<float>({1}), kT0, first0.Done());
  c0.execution = 1;
  m.Join(c0, Tensor::FromVector<float>({10}), kT0, second0.Done());
  m.Join(Call(CollectiveKind::kReduce, 1), Tensor::FromVector<float>({2}), kT0, first1.Done());
  EXPECT_EQ(first0.Floats(), (std::vector<float>{3}));
  EXPECT_FALSE(second0.result.has_value());
  ASSERT_EQ(m.Waits().size(), 1u);
  EXPECT_EQ(m.Waits()[0].execution, 1);
  // The group met once: the missing member is known by its device.
  EXPECT_EQ(m.Waits()[0].missing, (std::vector<std::string>{Device(1)}));
}

TEST(CollectiveMeetingTest, MembersThatDisagreeFailTogether) {
  CollectiveMeeting m;
  Got a, b;
  CollectiveCall c1 = Call(CollectiveKind::kReduce, 1);
  c1.merge_op = "Max";
  m.Join(Call(CollectiveKind::kReduce, 0), Tensor::FromVector<float>({1}), kT0, a.Done());
  m.Join(c1, Tensor::FromVector<float>({2}), kT0, b.Done());
  EXPECT_THAT(a.Error(), HasSubstr("disagree on merge and final ops: node 'n0'"));
  EXPECT_THAT(b.Error(), HasSubstr("has Max/Id"));

  Got c, d;
  CollectiveCall same = Call(CollectiveKind::kReduce, 0);
  same.execution = 1;
  m.Join(same, Tensor::FromVector<float>({1}), kT0, c.Done());
  same.node = "other";
  m.Join(same, Tensor::FromVector<float>({1}), kT0, d.Done());
  EXPECT_THAT(c.Error(), HasSubstr("two members of one collective instance run on one device"));

  Got e, f;
  CollectiveCall wide = Call(CollectiveKind::kReduce, 1);
  wide.execution = 2;
  CollectiveCall narrow = Call(CollectiveKind::kReduce, 0);
  narrow.execution = 2;
  m.Join(narrow, Tensor::FromVector<float>({1}), kT0, e.Done());
  m.Join(wide, Tensor::FromVector<float>({1, 2}), kT0, f.Done());
  EXPECT_THAT(f.Error(), HasSubstr("differ in shape: rank 0 has [1], rank 1 has [2]"));
}

TEST(CollectiveMeetingTest, AMemberThatLeavesFailsTheOthers) {
  CollectiveMeeting m;
  Got a, b;
  CollectiveCall c = Call(CollectiveKind::kReduce, 0, 3);
  const int64_t id = m.Join(c, Tensor::FromVector<float>({1}), kT0, a.Done());
  m.Join(Call(CollectiveKind::kReduce, 1, 3), Tensor::FromVector<float>({1}), kT0, b.Done());
  m.Leave(id, absl::UnavailableError("its task went away"));
  EXPECT_EQ(b.result->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(b.Error(), HasSubstr("node 'n0' (reduce of group 1, instance 7, execution 0, on " +
                                   Device(0) + ") left the collective: its task went away"));
  EXPECT_TRUE(a.result.has_value());
  EXPECT_TRUE(m.Waits().empty());
  m.Leave(id, absl::UnavailableError("again"));  // over: nothing happens
  // The third member comes late to the failed execution: it fails at once,
  // with the same error, instead of starting a new wait.
  Got late;
  m.Join(Call(CollectiveKind::kReduce, 2, 3), Tensor::FromVector<float>({1}), kT0, late.Done());
  EXPECT_THAT(late.Error(), HasSubstr("left the collective: its task went away"));
  EXPECT_TRUE(m.Waits().empty());
}

TEST(CollectiveMeetingTest, TimeoutFailsTheExecutionNamingWhoCame) {
  CollectiveMeeting m;
  Got a;
  CollectiveCall c = Call(CollectiveKind::kReduce, 0);
  c.timeout = absl::Seconds(5);
  m.Join(c, Tensor::FromVector<float>({1}), kT0, a.Done());
  m.Sweep(kT0 + absl::Seconds(4));
  EXPECT_FALSE(a.result.has_value());
  m.Sweep(kT0 + absl::Seconds(5));
  EXPECT_EQ(a.result->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(a.Error(), HasSubstr("waited its timeout of 5s for the group's 2 members; 1 came (" +
                                   Device(0) + ")"));
}

TEST(CollectiveMeetingTest, IntegerMeanTruncates) {
  CollectiveMeeting m;
  std::optional<absl::StatusOr<Tensor>> a, b;
  CollectiveCall c0 = Call(CollectiveKind::kReduce, 0);
  c0.dtype = DT_INT32;
  c0.final_op = "Div";
  CollectiveCall c1 = c0;
  c1.device = Device(1);
  m.Join(c0, Tensor::FromVector<int32_t>({-3, 4}), kT0,
         [&](absl::StatusOr<Tensor> r) { a = std::move(r); });
  m.Join(c1, Tensor::FromVector<int32_t>({0, 1}), kT0,
         [&](absl::StatusOr<Tensor> r) { b = std::move(r); });
  ASSERT_TRUE(a.has_value() && a->ok());
  // TensorFlow's Div truncates toward zero: -3/2 = -1, 5/2 = 2.
  EXPECT_EQ((*a)->flat<int32_t>()[0], -1);
  EXPECT_EQ((*a)->flat<int32_t>()[1], 2);
}

}  // namespace
}  // namespace graphrun
