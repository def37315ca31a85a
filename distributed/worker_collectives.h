// WorkerCollectives: a worker task's part in TensorFlow's collective ops
// whose members sit in the graphs of several clients (between-graph, as
// MultiWorkerMirroredStrategy runs them; kernels/collective.h).
//
// The worker installs one on each of its devices as their
// CollectiveExecutor. A member's call goes to the group's leader task (the
// cluster's /job:chief/replica:0/task:0 when it has a chief, else
// /job:worker/replica:0/task:0, as TensorFlow's collective_group_leader is
// usually set): in its own process when this task leads, else over the
// Collective call of the worker service. The leader's CollectiveMeeting
// waits for the group's members, combines their inputs and answers each.
// Every member's input and output travel whole, so a group of n moves
// about 2(n-1) times a tensor through the leader: meant for the small
// groups of between-graph scripts. A reduce whose communication_hint is
// "ring" goes round a ring between the members' tasks instead
// (distributed/collective_rings.h), meeting the leader only to trade ring
// addresses at its first execution.
//
// Before its first call to a leader, a member waits up to
// `connect_timeout` for the leader's task to answer (clients start in any
// order); after that a leader that goes away fails the member's step with
// Unavailable naming it. A member whose step is cancelled, or whose task
// goes away in the middle of a call, fails the instance for the others. The
// leader also asks, every second, after the tasks of members that have kept
// an execution waiting for `probe_after` (known once the group has met
// once): one that does not answer fails the execution, Unavailable, naming
// the task and device. Thread-safe.
#ifndef GRAPHRUN_DISTRIBUTED_WORKER_COLLECTIVES_H_
#define GRAPHRUN_DISTRIBUTED_WORKER_COLLECTIVES_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/collective_meeting.h"
#include "distributed/collective_rings.h"
#include "distributed/worker_interface.h"
#include "kernels/collective.h"

namespace graphrun {

struct WorkerCollectivesOptions {
  // This task's canonical name.
  std::string task_name;
  // The tasks of the cluster this task knows (from registered graphs),
  // besides its own.
  std::function<std::set<std::string>()> cluster_tasks;
  // The client of another task.
  std::function<absl::StatusOr<std::shared_ptr<WorkerInterface>>(const std::string& task)> peer;
  absl::Duration connect_timeout = absl::Seconds(60);
  // Where the rings of reduces with communication_hint "ring" listen
  // (distributed/collective_rings.h).
  std::string ring_host = "127.0.0.1";
  absl::Duration probe_after = absl::Seconds(2);
  std::function<absl::Time()> clock = absl::Now;
};

class WorkerCollectives : public CollectiveExecutor,
                          public std::enable_shared_from_this<WorkerCollectives> {
 public:
  // Held by shared_ptr (its calls in flight keep it).
  explicit WorkerCollectives(WorkerCollectivesOptions options);
  ~WorkerCollectives() override;

  // A member's call, from a kernel of this task (CollectiveExecutor).
  void Run(CollectiveCall call, Tensor input, CancellationManager* cancellation,
           Done done) override;
  // A member's call from another task, at this task as the leader.
  void Serve(const CollectiveRequest* request, CollectiveResponse* response, CallOptions* opts,
             StatusCallback done);
  // Timeouts, and probes of the tasks of missing members. The worker calls
  // it every second.
  void Sweep();

  // The leader task's name: /job:chief/replica:0/task:0 when this task or
  // one it knows is of job chief, else /job:worker/replica:0/task:0.
  std::string Leader() const;
  // A session ended: the counts and rings of its replicas' collectives go.
  void SessionEnded(const std::string& handle, const absl::Status& why) override;
  std::string DebugString() const override { return "collective executor of " + options_.task_name; }

 private:
  // Sends the call to the leader (or joins the meeting here).
  void Meet(CollectiveCall call, Tensor input, CancellationManager* cancellation, Done done);
  void RunRemote(const std::string& leader, const CollectiveCall& call, const Tensor& input,
                 CancellationManager* cancellation, Done done);
  // Joins the meeting here; `cancel` withdraws the member.
  int64_t JoinHere(const CollectiveCall& call, Tensor input, Done done);

  const WorkerCollectivesOptions options_;
  CollectiveMeeting meeting_;
  std::unique_ptr<CollectiveRings> rings_;
  absl::Mutex mu_;
  // (scope, device, group key, instance key) -> executions run so far.
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, int64_t> executions_
      ABSL_GUARDED_BY(mu_);
  // Leaders that have answered once.
  std::set<std::string> reached_ ABSL_GUARDED_BY(mu_);
  // Tasks being probed now.
  std::set<std::string> probing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_WORKER_COLLECTIVES_H_
