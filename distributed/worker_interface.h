// WorkerInterface: how a master, or another worker, talks to one worker.
// Each call takes its request and response (borrowed until `done` runs)
// and calls `done` exactly once, on some thread, with the outcome. The
// in-process Worker (distributed/worker.h) and the gRPC client of a remote
// worker (distributed/grpc_worker.h) implement it, so masters and the
// remote rendezvous run the same over a socket and in a test.
//
// CallOptions bound a call's time and let its owner cancel it (a step that
// fails stops waiting for its other workers at once).
#ifndef GRAPHRUN_DISTRIBUTED_WORKER_INTERFACE_H_
#define GRAPHRUN_DISTRIBUTED_WORKER_INTERFACE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/protos/worker.pb.h"
#include "graph/tensor.h"

namespace graphrun {

using StatusCallback = std::function<void(const absl::Status&)>;

// Thread-safe.
class CallOptions {
 public:
  // The call fails with DeadlineExceeded (or Unavailable when the worker
  // was never reached) after this long; infinite by default.
  void SetTimeout(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    timeout_ = timeout;
  }
  absl::Duration timeout() const {
    absl::MutexLock lock(&mu_);
    return timeout_;
  }
  // Keep trying to reach a worker that is not (yet) listening until the
  // timeout, instead of failing at once (session creation).
  void SetWaitForReady(bool wait) {
    absl::MutexLock lock(&mu_);
    wait_for_ready_ = wait;
  }
  bool wait_for_ready() const {
    absl::MutexLock lock(&mu_);
    return wait_for_ready_;
  }
  // Cancels the call: now if it runs, at its start if it has not started.
  void StartCancel() {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return;
      cancelled_ = true;
      fn = std::move(cancel_);
    }
    if (fn) fn();
  }
  bool cancelled() const {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }
  // For implementations: `fn` runs on StartCancel, or at once when the call
  // was cancelled already. ClearCancelCallback when the call is over.
  void SetCancelCallback(std::function<void()> fn) {
    {
      absl::MutexLock lock(&mu_);
      if (!cancelled_) {
        cancel_ = std::move(fn);
        return;
      }
    }
    fn();
  }
  void ClearCancelCallback() {
    absl::MutexLock lock(&mu_);
    cancel_ = nullptr;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Duration timeout_ ABSL_GUARDED_BY(mu_) = absl::InfiniteDuration();
  bool wait_for_ready_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
};

// What RecvTensor answers. A value small enough to travel inline is kept
// as a tensor rather than copied into a TensorProto: a worker in the same
// process hands it over by reference, and the gRPC transport writes its
// bytes into the response, and reads them out of it, without one
// (distributed/recv_tensor_wire.h).
struct RecvTensorReply {
  // Everything but an inline value of a fixed-size dtype. Its payload is
  // `data_plane` (the bytes follow there), `tensor` (strings), or unset:
  // then, unless `is_dead`, the value is `wire_value`.
  RecvTensorResponse meta;
  // The value as it travels: meta.dtype() under WIRE_ENCODING_NONE, else
  // DT_HALF (fp16) or DT_BFLOAT16 words of the float32 value.
  Tensor wire_value;
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;

  // A worker in the caller's own process (the Worker itself, not a client
  // of it): a master takes its fetches inline rather than over its data
  // plane.
  virtual bool in_process() const { return false; }

  // `opts` may be null (no timeout, no cancellation).
  virtual void GetStatusAsync(const GetStatusRequest* request, GetStatusResponse* response,
                              CallOptions* opts, StatusCallback done) = 0;
  virtual void RegisterGraphAsync(const RegisterGraphRequest* request,
                                  RegisterGraphResponse* response, CallOptions* opts,
                                  StatusCallback done) = 0;
  virtual void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                             CallOptions* opts, StatusCallback done) = 0;
  virtual void CleanupGraphAsync(const CleanupGraphRequest* request,
                                 CleanupGraphResponse* response, CallOptions* opts,
                                 StatusCallback done) = 0;
  virtual void CleanupStepAsync(const CleanupStepRequest* request,
                                CleanupStepResponse* response, CallOptions* opts,
                                StatusCallback done) = 0;
  virtual void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorReply* reply,
                               CallOptions* opts, StatusCallback done) = 0;
  virtual void HealthAsync(const HealthRequest* request, HealthResponse* response,
                           CallOptions* opts, StatusCallback done) = 0;
  // A member of a collective that meets at run time, at the group's leader
  // (distributed/worker_collectives.h); answers when the instance has met.
  // Unimplemented where the worker meets none.
  virtual void CollectiveAsync(const CollectiveRequest* request, CollectiveResponse* response,
                               CallOptions* opts, StatusCallback done) {
    (void)request;
    (void)response;
    (void)opts;
    done(absl::UnimplementedError("this worker does not hold collective meetings"));
  }
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_WORKER_INTERFACE_H_
