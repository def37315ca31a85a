// A task's Worker served over gRPC from this process: what `graphrun
// worker` runs, and what a client runs for its own task (`graphrun run
// --in_process_worker`), as TensorFlow's session on a server's target does.
// Other tasks reach it over gRPC and its data plane; the client's master
// reaches it without a socket (ConnectWithSelf), so feeds and fetches
// are handed over in memory instead of travelling through a RunGraph call.
#ifndef GRAPHRUN_DISTRIBUTED_SERVED_WORKER_H_
#define GRAPHRUN_DISTRIBUTED_SERVED_WORKER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/grpc_worker.h"
#include "distributed/worker.h"

namespace graphrun {

class ServedWorker : public std::enable_shared_from_this<ServedWorker> {
 public:
  // Creates the worker and starts serving it; the worker's or the server's
  // error (InvalidArgument for a task name that is not canonical,
  // Unavailable naming the address it cannot listen on).
  static absl::StatusOr<std::shared_ptr<ServedWorker>> Start(
      const WorkerOptions& worker, const GrpcWorkerServerOptions& server);
  // Stops serving (calls in flight are cancelled), then ends the worker's
  // steps.
  ~ServedWorker();

  Worker* worker() const { return worker_.get(); }
  const std::string& task_name() const { return worker_->task_name(); }
  // The port it listens on.
  int port() const { return server_->port(); }
  // Blocks until Shutdown, from another thread.
  void Wait() { server_->Wait(); }
  void Shutdown() { server_->Shutdown(); }

  // `others` for every task but this one, which is this worker itself,
  // kept alive by what the function returns.
  ConnectFn ConnectWithSelf(ConnectFn others);

 private:
  ServedWorker() = default;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<GrpcWorkerServer> server_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_SERVED_WORKER_H_
