// CollectiveMeeting: where the members of collective instances meet (the
// group's leader task keeps one; kernels/collective.h says who comes).
//
// Members join an instance execution, keyed by (scope, group key, instance
// key, execution), with their call and input. When the group's size of members
// has come, they are ranked by device name and each gets its output:
// reduce and gather the combination of the inputs in rank order
// (CombineCollective), a broadcast's sender its own input and each
// receiver the sender's, in the shape it asked for. Members that do not fit
// together (kernels/collective.h, CheckCollectiveMembers), a second member
// from one device, and a receiver whose shape holds another number of
// elements than the sender's tensor fail the whole execution for all its
// members, with InvalidArgument naming them.
//
// A member that comes to an execution that has met already (more members
// use the keys than the group size says) fails at once, InvalidArgument.
// A member that goes away (its step cancelled, its connection lost) fails
// the execution for the others (Leave). A member that comes to an execution
// that has failed fails at once with the same error, so every device's
// count of executions stays in step with the others' after a failure. A member with a timeout fails the
// execution, DeadlineExceeded, when it has waited that long (Sweep, which
// its owner calls every so often); the message names the members that came
// and, once the group has met before, the devices still missing.
//
// Thread-safe. Members' `done` callbacks run outside the lock, on the
// thread that completed or failed the execution.
#ifndef GRAPHRUN_DISTRIBUTED_COLLECTIVE_MEETING_H_
#define GRAPHRUN_DISTRIBUTED_COLLECTIVE_MEETING_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/collective.h"

namespace graphrun {

class CollectiveMeeting {
 public:
  using Done = CollectiveExecutor::Done;

  // An id for a member about to join: its owner can arrange to Leave
  // (register a cancellation) before the Join, whose `done` may run at
  // once.
  int64_t NewId();
  // Joins as member `id` (from NewId).
  void Join(int64_t id, const CollectiveCall& call, Tensor input, absl::Time now, Done done);
  // Joins under a new id, which it returns.
  int64_t Join(const CollectiveCall& call, Tensor input, absl::Time now, Done done);
  // Member `id` has gone (`why` says how): if its execution still waits,
  // it fails for every member that came, with `why` and the member named.
  // Nothing for a member whose execution is over; a member that leaves
  // before it joins fails at its Join.
  void Leave(int64_t id, const absl::Status& why);
  // Fails the executions in which a member has waited past its timeout.
  void Sweep(absl::Time now);

  struct Waiting {
    std::string scope;
    int64_t group_key = 0, instance_key = 0, execution = 0;
    absl::Time since;
    // The group's devices from earlier executions that have not come yet
    // (empty while the group has never met).
    std::vector<std::string> missing;
  };
  // Forgets what the group of `scope` learned (a session that ended).
  void ForgetScope(const std::string& scope);
  // The executions still waiting.
  std::vector<Waiting> Waits() const;
  // Fails the waiting execution `key` with `why` (its missing member's
  // task is lost). Nothing when it is over.
  void Fail(const Waiting& which, const absl::Status& why);

 private:
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t>;
  struct Member {
    int64_t id = 0;
    CollectiveCall call;
    Tensor input;
    absl::Time deadline = absl::InfiniteFuture();
    Done done;
  };
  struct Execution {
    absl::Time since;
    std::vector<Member> members;
  };
  // Ends `key`'s execution: removes it, returns its members to answer.
  std::vector<Member> TakeLocked(const Key& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each member's output, or the execution's error.
  static absl::StatusOr<std::vector<Tensor>> Outputs(std::vector<Member>* members);
  static void Answer(std::vector<Member> members, const absl::Status& failed);
  static std::string Came(const std::vector<Member>& members);

  mutable absl::Mutex mu_;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<Key, Execution> executions_ ABSL_GUARDED_BY(mu_);
  // Member id -> its execution.
  std::map<int64_t, Key> member_of_ ABSL_GUARDED_BY(mu_);
  // Ids from NewId not joined yet; those that left before joining, why.
  std::set<int64_t> pending_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, absl::Status> left_early_ ABSL_GUARDED_BY(mu_);
  // Executions that failed before all their members came, with why; the
  // newest kMaxFailed.
  static constexpr size_t kMaxFailed = 4096;
  void RecordFailureLocked(const Key& key, const absl::Status& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::map<Key, absl::Status> failed_ ABSL_GUARDED_BY(mu_);
  std::deque<Key> failed_order_ ABSL_GUARDED_BY(mu_);
  // Executions that met, the newest kMaxFailed: a member coming to one
  // later is one too many.
  bool RecentlyMetLocked(const Key& key) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::set<Key> met_ ABSL_GUARDED_BY(mu_);
  std::deque<Key> met_order_ ABSL_GUARDED_BY(mu_);
  // (scope, group key) -> the devices of its members, from complete
  // executions.
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> groups_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_COLLECTIVE_MEETING_H_
