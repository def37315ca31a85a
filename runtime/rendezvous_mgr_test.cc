#include "runtime/rendezvous_mgr.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using Args = Rendezvous::Args;

TEST(RendezvousMgrTest, StepsAreIndependent) {
  RendezvousMgr mgr;
  std::shared_ptr<Rendezvous> one = mgr.Find(1);
  std::shared_ptr<Rendezvous> two = mgr.Find(2);
  EXPECT_NE(one, two);
  EXPECT_EQ(mgr.Find(1), one);
  EXPECT_EQ(mgr.NumSteps(), 2);
  ASSERT_TRUE(one->Send("k", {}, Tensor::Scalar<float>(1), false).ok());
  float got = 0;
  bool called = false;
  two->RecvAsync("k", {},
                 [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                   ASSERT_TRUE(s.ok()) << s;
                   got = v.scalar<float>();
                   called = true;
                 });
  EXPECT_FALSE(called);  // step 1's value is not step 2's
  ASSERT_TRUE(two->Send("k", {}, Tensor::Scalar<float>(2), false).ok());
  EXPECT_TRUE(called);
  EXPECT_EQ(got, 2.0f);
  // Cleaning up step 2 leaves step 1's value where it was.
  mgr.Cleanup(2);
  EXPECT_EQ(mgr.NumSteps(), 1);
  one->RecvAsync("k", {},
                 [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                   ASSERT_TRUE(s.ok()) << s;
                   got = v.scalar<float>();
                 });
  EXPECT_EQ(got, 1.0f);
}

TEST(RendezvousMgrTest, CleanupAbortsAPendingRecvNamingTheStep) {
  RendezvousMgr mgr;
  absl::Status status;
  bool called = false;
  mgr.Find(7)->RecvAsync("k", {},
                         [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
                           status = s;
                           called = true;
                         });
  EXPECT_FALSE(called);
  mgr.Cleanup(7);
  ASSERT_TRUE(called);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_NE(status.message().find("step 7"), absl::string_view::npos) << status;
  EXPECT_EQ(mgr.NumSteps(), 0);
  mgr.Cleanup(7);  // a step without a rendezvous: nothing to do
  mgr.Cleanup(8);
}

TEST(RendezvousMgrTest, ASendAfterCleanupDoesNotResurrectTheStep) {
  RendezvousMgr mgr;
  std::shared_ptr<Rendezvous> old = mgr.Find(3);
  mgr.Cleanup(3);
  const absl::Status late = old->Send("k", {}, Tensor::Scalar<float>(1), false);
  EXPECT_EQ(late.code(), absl::StatusCode::kAborted);
  EXPECT_NE(late.message().find("step 3"), absl::string_view::npos) << late;
  EXPECT_EQ(mgr.NumSteps(), 0);
  // A later Find starts afresh: the late value is nowhere.
  std::shared_ptr<Rendezvous> fresh = mgr.Find(3);
  EXPECT_NE(fresh, old);
  absl::Status status;
  bool called = false;
  fresh->RecvAsync("k", {},
                   [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
                     status = s;
                     called = true;
                   });
  EXPECT_FALSE(called);
  mgr.Cleanup(3);
  ASSERT_TRUE(called);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
}

TEST(RendezvousMgrTest, CleanupAllAbortsEveryStepWithTheStatus) {
  RendezvousMgr mgr;
  std::vector<absl::Status> statuses(3);
  for (int step = 0; step < 3; ++step) {
    mgr.Find(step)->RecvAsync("k", {},
                              [&statuses, step](const absl::Status& s, const Args&, const Args&,
                                                const Tensor&, bool) { statuses[step] = s; });
  }
  mgr.CleanupAll(absl::UnavailableError("the master went away"));
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  }
  EXPECT_EQ(mgr.NumSteps(), 0);
}

// Steps running at once, each with a sender and a receiver thread that find
// the step's rendezvous themselves and use the same keys: every receiver
// gets exactly its own step's values.
TEST(RendezvousMgrTest, ConcurrentSteps) {
  RendezvousMgr mgr;
  constexpr int kSteps = 8;
  constexpr int kKeys = 200;
  std::vector<std::atomic<int64_t>> sums(kSteps);
  std::vector<std::atomic<int>> counts(kSteps);
  std::vector<std::thread> threads;
  for (int step = 0; step < kSteps; ++step) {
    threads.emplace_back([&mgr, step] {
      for (int i = 0; i < kKeys; ++i) {
        ASSERT_TRUE(mgr.Find(step)
                        ->Send(absl::StrCat("k", i), {},
                               Tensor::Scalar<int64_t>(int64_t{step} * 1000000 + i), false)
                        .ok());
      }
    });
    threads.emplace_back([&mgr, &sums, &counts, step] {
      for (int i = kKeys - 1; i >= 0; --i) {
        mgr.Find(step)->RecvAsync(absl::StrCat("k", i), {},
                                  [&sums, &counts, step](const absl::Status& s, const Args&,
                                                         const Args&, const Tensor& v, bool) {
                                    ASSERT_TRUE(s.ok()) << s;
                                    sums[step] += v.scalar<int64_t>();
                                    ++counts[step];
                                  });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mgr.NumSteps(), kSteps);
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_EQ(counts[step].load(), kKeys);
    EXPECT_EQ(sums[step].load(),
              int64_t{step} * 1000000 * kKeys + int64_t{kKeys} * (kKeys - 1) / 2);
    mgr.Cleanup(step);
  }
  EXPECT_EQ(mgr.NumSteps(), 0);
}

// Keys carry the sending device's incarnation; once the device is made
// again under the same name (its worker restarted), keys made for the old
// instance are refused with FailedPrecondition naming the device.
TEST(RendezvousMgrTest, KeysOfARestartedDeviceAreRefused) {
  const std::string prefix = "/job:localhost/replica:0/task:0";
  std::unique_ptr<Device> before = NewCpuDevice(prefix, 0, CpuDeviceOptions());
  std::unique_ptr<Device> after = NewCpuDevice(prefix, 0, CpuDeviceOptions());
  ASSERT_EQ(before->name(), after->name());
  ASSERT_NE(before->incarnation(), after->incarnation());
  RendezvousMgr mgr(std::vector<Device*>{after.get()});
  std::shared_ptr<Rendezvous> r = mgr.Find(1);
  const std::string old_key =
      CreateRendezvousKey(after->name(), before->incarnation(), after->name(), "t", 0, 0);
  const absl::Status s = r->Send(old_key, {}, Tensor::Scalar<float>(1), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find(after->name()), absl::string_view::npos) << s;
  const std::string live_key =
      CreateRendezvousKey(after->name(), after->incarnation(), after->name(), "t", 0, 0);
  EXPECT_TRUE(r->Send(live_key, {}, Tensor::Scalar<float>(1), false).ok());
  mgr.Cleanup(1);
}

}  // namespace
}  // namespace graphrun
