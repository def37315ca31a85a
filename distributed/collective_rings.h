// CollectiveRings: collective reduces that go round a ring between the
// members' tasks (distributed/ring_allreduce.h) instead of through the
// group's leader: those whose communication_hint is "ring" (TensorFlow's
// CommunicationImplementation.RING, and graphrun's own replicas over worker
// tasks), and those of 1 MiB and more whose hint is "auto", an Add of
// float, double, int32 or int64 values. A hint of "gloo"
// (`graphrun train --allreduce=gloo`) runs the same reduce over gloo's TCP
// transport and ring instead (distributed/gloo_group.h), float32 on the
// wire, its rendezvous store being the same trade through the leader. Each member sends
// and receives 2(n-1)/n of the tensor, chunked and pipelined, and with a
// wire_float of fp16 or bf16 floats travel in that type and are summed in
// float32; every member ends with the same bits. final_op Div averages:
// the sum divided by n, as TensorFlow's ring does (integers truncating);
// over a 16-bit wire floats are scaled by 1/n before the sum instead, so
// partial sums stay in the wire type's range.
//
// Each member device's instance (scope, group key, instance key) has a
// ring of its own, made at its first execution: the members trade their ring
// addresses through the meeting (a gather under the execution's key with
// the sign flipped, `meet`), rank themselves by device name and connect;
// later executions reuse it. Each ring runs its executions one at a time
// on a thread of its own, so instances never wait on each other. A failed
// execution (a peer gone, the step cancelled: the ring is aborted, which
// fails the peers' calls at once) drops the ring, and the next execution
// makes a new one. Errors name the instance, the node and the devices of
// the ring's ranks. Thread-safe.
#ifndef GRAPHRUN_DISTRIBUTED_COLLECTIVE_RINGS_H_
#define GRAPHRUN_DISTRIBUTED_COLLECTIVE_RINGS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernels/collective.h"

namespace graphrun {

class CollectiveRings {
 public:
  // How a member meets the others of an instance (the executor's path to
  // the leader).
  using Meet = std::function<void(CollectiveCall call, Tensor input,
                                  CancellationManager* cancellation, CollectiveExecutor::Done)>;
  // Rings listen on `host`; `connect_timeout` bounds the wait for the
  // neighbours to connect.
  CollectiveRings(std::string host, Meet meet, absl::Duration connect_timeout);
  // Aborts the rings and joins their threads.
  ~CollectiveRings();

  // "auto" (TensorFlow's default hint, as MultiWorkerMirroredStrategy
  // exports it) takes the ring from this many bytes up: on CPUs
  // TensorFlow's own "auto" is its ring.
  static constexpr int64_t kAutoRingBytes = int64_t{1} << 20;
  // True for a call this transport carries, `bytes` the size of its
  // tensor (the same on every member).
  static bool Suits(const CollectiveCall& call, int64_t bytes);
  void Run(CollectiveCall call, Tensor input, CancellationManager* cancellation,
           CollectiveExecutor::Done done);
  // Closes the rings of `scope` (a session that ended), on a thread of
  // their own.
  void Forget(const std::string& scope);

 private:
  class Lane;
  const std::string host_;
  const Meet meet_;
  const absl::Duration connect_timeout_;
  absl::Mutex mu_;
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, std::shared_ptr<Lane>> lanes_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_COLLECTIVE_RINGS_H_
