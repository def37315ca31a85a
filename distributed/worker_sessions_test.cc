// WorkerSessions on a clock the test moves: a quiet session is reported
// lost once per silence, again after it calls and falls quiet anew, and
// dropped at the timeout; closed sessions are forgotten.
#include "distributed/worker_sessions.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

using Names = std::vector<std::string>;

TEST(WorkerSessionsTest, LostOncePerSilenceThenDropped) {
  absl::Time now = absl::UnixEpoch();
  WorkerSessions sessions(absl::Seconds(5), absl::Seconds(30), [&now] { return now; });
  sessions.Touch("a");
  sessions.Touch("b");
  sessions.Touch("");  // no session
  now += absl::Seconds(4);
  sessions.Touch("b");
  WorkerSessions::Due due = sessions.Poll();
  EXPECT_EQ(due.lost, Names{});
  now += absl::Seconds(2);  // a: 6 s quiet, b: 2 s
  due = sessions.Poll();
  EXPECT_EQ(due.lost, Names{"a"});
  EXPECT_EQ(due.idle, Names{});
  now += absl::Seconds(1);
  EXPECT_EQ(sessions.Poll().lost, Names{});  // reported once
  sessions.Touch("a");  // back
  now += absl::Seconds(6);  // a: 6 s quiet again, b: 9 s
  due = sessions.Poll();
  std::sort(due.lost.begin(), due.lost.end());
  EXPECT_EQ(due.lost, (Names{"a", "b"}));
  now += absl::Seconds(25);  // a: 31 s, b: 34 s
  due = sessions.Poll();
  std::sort(due.idle.begin(), due.idle.end());
  EXPECT_EQ(due.idle, (Names{"a", "b"}));
  EXPECT_FALSE(sessions.Forget("a"));  // dropped already
}

TEST(WorkerSessionsTest, ForgottenSessionsAreNotReported) {
  absl::Time now = absl::UnixEpoch();
  WorkerSessions sessions(absl::Seconds(5), absl::Seconds(30), [&now] { return now; });
  sessions.Touch("a");
  EXPECT_TRUE(sessions.Forget("a"));
  EXPECT_FALSE(sessions.Forget("a"));
  now += absl::Seconds(60);
  const WorkerSessions::Due due = sessions.Poll();
  EXPECT_EQ(due.lost, Names{});
  EXPECT_EQ(due.idle, Names{});
}

}  // namespace
}  // namespace graphrun
