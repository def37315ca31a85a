#include "distributed/served_worker.h"

#include <utility>

#include "graph/status_macros.h"

namespace graphrun {

absl::StatusOr<std::shared_ptr<ServedWorker>> ServedWorker::Start(
    const WorkerOptions& worker, const GrpcWorkerServerOptions& server) {
  std::shared_ptr<ServedWorker> served(new ServedWorker());
  GR_ASSIGN_OR_RETURN(served->worker_, Worker::Create(worker));
  GR_ASSIGN_OR_RETURN(served->server_, GrpcWorkerServer::Start(served->worker_.get(), server));
  return served;
}

ServedWorker::~ServedWorker() {
  if (server_ != nullptr) server_->Shutdown();
  server_.reset();
  worker_.reset();
}

ConnectFn ServedWorker::ConnectWithSelf(ConnectFn others) {
  return [self = shared_from_this(), others = std::move(others)](
             const std::string& task,
             const std::string& address) -> absl::StatusOr<std::shared_ptr<WorkerInterface>> {
    if (task == self->task_name()) {
      // Shares ownership of the whole: the worker outlives every session
      // that reaches it this way.
      return std::shared_ptr<WorkerInterface>(self, self->worker());
    }
    return others(task, address);
  };
}

}  // namespace graphrun
