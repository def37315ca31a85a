// Worker: one task of a cluster, in process. It owns the task's CPU
// devices, holds the partitions masters register with it, runs them once
// per step, and serves the tensors its partitions send to other tasks.
//
// A step's tensors meet in the step's rendezvous, found by step id. A
// _Recv whose key names a sending device of another task of the cluster
// (RegisterGraphRequest.cluster) pulls the value from that task with
// RecvTensor; that task answers once its _Send has run. Small tensors
// travel inside the RecvTensor response; larger ones (above
// WorkerOptions::inline_limit_bytes) over the data plane
// (distributed/data_plane.h) when both workers have one, straight into the
// receiving tensor. float32 tensors travel as fp16 or bf16 when the step
// says so (RunGraphRequest.wire_encoding), converted on the way, except
// those carrying a fed value from the client's _Recv or a fetched value to
// the client's _Send, and (when the step compresses gradients only) those
// that carry no gradient.
//
// CleanupStep ends a step: its rendezvous is aborted (receives still
// waiting fail, RecvTensor calls in flight are cancelled) and forgotten;
// a RecvTensor for a step that has ended is refused with Aborted instead
// of waiting for a value that will never come. A worker whose peer dies
// fails the receives waiting on it with Unavailable naming the peer's task.
//
// Collective ops whose members sit in several clients' graphs meet through
// the worker's WorkerCollectives (distributed/worker_collectives.h): this
// task's members' calls go to the group's leader task, and as the leader
// it holds the meetings (the Collective call).
//
// Worker implements WorkerInterface, so a master drives an in-process
// worker exactly as a remote one (distributed/grpc_worker.h serves a
// Worker over gRPC). Thread-safe.
#ifndef GRAPHRUN_DISTRIBUTED_WORKER_H_
#define GRAPHRUN_DISTRIBUTED_WORKER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distributed/worker_interface.h"
#include "distributed/worker_sessions.h"
#include "runtime/device.h"
#include "runtime/local_rendezvous.h"

namespace Eigen {
class ThreadPoolInterface;
}  // namespace Eigen

namespace graphrun {

class DataPlaneServer;
class DataPlaneClient;
class WorkerCollectives;
class WorkerStep;
struct RegisteredGraph;

// Makes the client of another task ("/job:worker/replica:0/task:1") at
// "host:port".
using ConnectFn = std::function<absl::StatusOr<std::shared_ptr<WorkerInterface>>(
    const std::string& task, const std::string& address)>;

struct WorkerOptions {
  // This task's name, canonical: "/job:worker/replica:0/task:0".
  std::string task_name = "/job:worker/replica:0/task:0";
  // Virtual CPU devices and threads, as SessionOptions.
  int cpu_devices = 1;
  int inter_op_threads = 0;
  int intra_op_threads = 0;
  // Serve tensors larger than inline_limit_bytes over a data plane
  // listening on data_plane_host (port chosen by the system).
  bool data_plane = true;
  std::string data_plane_host = "127.0.0.1";
  int64_t inline_limit_bytes = int64_t{64} << 10;
  // How the worker reaches other tasks. Required for steps that receive
  // from other tasks.
  ConnectFn connect;
  // Print a line to stderr as each RunGraph starts and ends
  // ("graphrun worker /job:worker/replica:0/task:1: step 42 started").
  bool log_steps = false;
  // A session whose master has not called for this long (RegisterGraph,
  // RunGraph, CleanupGraph, or Health naming it; masters send Health every
  // second) is dropped: its graphs freed, its steps aborted. A step in
  // flight also ends when its master's RunGraph call is cancelled (the
  // master's process died and its connection closed).
  absl::Duration session_timeout = absl::Seconds(30);
  // A session whose master has not called for this long is reported lost
  // to this task's resources (once per silence; it is not dropped): a
  // queue only its steps filled fails the dequeues waiting on it (a
  // synchronous worker waiting for a token from a killed chief) instead of
  // leaving them to their timeout.
  absl::Duration session_lost_after = absl::Seconds(5);
  // The time sessions are stamped with (tests set their own).
  std::function<absl::Time()> clock = absl::Now;
};

class Worker : public WorkerInterface {
 public:
  // InvalidArgument for a task name that is not canonical; the data
  // plane's error when it cannot listen.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(const WorkerOptions& options);
  // Aborts every step still running and waits for them.
  ~Worker() override;

  const std::string& task_name() const { return options_.task_name; }
  bool in_process() const override { return true; }
  uint64_t incarnation() const { return incarnation_; }
  std::vector<Device*> devices() const;
  // Steps with state here, registered graphs: for tests and clean-up checks.
  int NumSteps() const;
  int NumGraphs() const;
  // Tensors peers and masters pulled from this worker's data plane (0
  // without one).
  int64_t DataPlaneTransfers() const;

  // Ends every step and forgets every graph of `session_handle` (a master
  // that went away).
  void AbortSession(const std::string& session_handle, const absl::Status& reason);
  // Reports the sessions not heard from for session_lost_after to the
  // devices' resources, and drops those not heard from for
  // session_timeout; returns how many were dropped. The worker calls it
  // every second on its own.
  int DropIdleSessions();

  void GetStatusAsync(const GetStatusRequest* request, GetStatusResponse* response,
                      CallOptions* opts, StatusCallback done) override;
  void RegisterGraphAsync(const RegisterGraphRequest* request, RegisterGraphResponse* response,
                          CallOptions* opts, StatusCallback done) override;
  void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                     CallOptions* opts, StatusCallback done) override;
  void CleanupGraphAsync(const CleanupGraphRequest* request, CleanupGraphResponse* response,
                         CallOptions* opts, StatusCallback done) override;
  void CleanupStepAsync(const CleanupStepRequest* request, CleanupStepResponse* response,
                        CallOptions* opts, StatusCallback done) override;
  void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorReply* reply,
                       CallOptions* opts, StatusCallback done) override;
  void HealthAsync(const HealthRequest* request, HealthResponse* response, CallOptions* opts,
                   StatusCallback done) override;
  void CollectiveAsync(const CollectiveRequest* request, CollectiveResponse* response,
                       CallOptions* opts, StatusCallback done) override;

 private:
  friend class WorkerRendezvous;
  explicit Worker(const WorkerOptions& options);

  // The step's state, made on first use; null (with the reason in
  // *status) when the step has ended here.
  std::shared_ptr<WorkerStep> FindOrCreateStep(int64_t step_id, absl::Status* status);
  void EndStep(int64_t step_id, const absl::Status& reason);
  // The client of `task`, made on first use from the cluster a graph was
  // registered with. NotFound for a task no registered graph names.
  absl::StatusOr<std::shared_ptr<WorkerInterface>> Peer(const std::string& task);
  // Runs `fn` on a thread that may block (data plane transfers).
  void ScheduleBlocking(std::function<void()> fn);
  // Notes that `session_handle`'s master called.
  void TouchSession(const std::string& session_handle);
  // Tells every resource of the devices that `session_handle` ended
  // (ResourceBase::SessionEnded).
  void SessionEnded(const std::string& session_handle, const absl::Status& why);
  // True when the transfer of rendezvous key `key` travels exact: it
  // carries a fetched or fed value (exact whatever the wire encoding), or,
  // when `gradients_only`, no gradient.
  bool TravelsExact(absl::string_view key, bool gradients_only) const;

  const WorkerOptions options_;
  const uint64_t incarnation_;
  std::vector<std::unique_ptr<Device>> devices_;
  // The devices' incarnations, which every step's rendezvous checks keys
  // against (made once, shared by the steps).
  std::shared_ptr<const DeviceIncarnations> incarnations_;
  std::unique_ptr<Eigen::ThreadPoolInterface> inter_op_pool_;
  std::unique_ptr<Eigen::ThreadPoolInterface> blocking_pool_;
  std::unique_ptr<DataPlaneServer> data_plane_server_;
  std::unique_ptr<DataPlaneClient> data_plane_client_;
  // TensorFlow's collective ops between clients' graphs, on every device.
  std::shared_ptr<WorkerCollectives> collectives_;
  std::atomic<int64_t> next_graph_{1};

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const RegisteredGraph>> graphs_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, std::shared_ptr<WorkerStep>> steps_ ABSL_GUARDED_BY(mu_);
  // Steps that ended here, oldest first, bounded: late RecvTensor calls
  // for them are refused.
  absl::flat_hash_set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> ended_order_ ABSL_GUARDED_BY(mu_);
  // Task name -> address, from registered graphs; clients made so far.
  absl::flat_hash_map<std::string, std::string> cluster_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<WorkerInterface>> peers_
      ABSL_GUARDED_BY(mu_);
  // Transfers (see TravelsExact) of the registered graphs, never forgotten:
  // "send_device;recv_device;tensor_name" names are few per graph.
  absl::flat_hash_set<std::string> exact_transfers_ ABSL_GUARDED_BY(mu_);
  // Transfers this worker sends that carry a gradient: under
  // RunGraphRequest.wire_gradients_only, the only lossy ones.
  absl::flat_hash_set<std::string> gradient_transfers_ ABSL_GUARDED_BY(mu_);
  // When each session's master last called.
  WorkerSessions sessions_;
  // Wakes the thread that drops idle sessions, to stop it.
  absl::Notification stop_reaper_;
  std::unique_ptr<std::thread> reaper_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_WORKER_H_
