// MasterSession: a Session (runtime/session.h) whose devices are the CPU
// devices of a cluster's worker tasks. The master runs in the client's
// process. At creation it asks every task for its devices (GetStatus),
// waiting up to connect_timeout for tasks that are not up yet and naming
// those that never answer. Each step signature (feeds, fetches, targets)
// is pruned and optimized as DirectSession does, placed over every device
// of the cluster (a node pinned to "/job:worker/task:1" runs there; the
// placer sees tasks as hosts joined by a network), partitioned, and each
// task's partitions are registered with it once. A step then runs every
// task's partitions at once (RunGraph); feeds go to, and fetches come
// from, the task of the first device, the session's client device.
//
// Failures: the first task whose RunGraph fails (an error of a kernel, a
// worker that died — Unavailable naming the task — or the step's timeout)
// aborts the step on every other task (CleanupStep with the reason) and
// cancels their calls, so Run returns that error instead of hanging. When
// every task that failed says only Cancelled or Aborted, the step's tasks
// that no longer answer are named instead (Unavailable): a task's loss may
// show first as another task's cancelled receive. After
// every step each task forgets the step's state; when the session goes,
// each forgets the session's graphs.
//
// float32 tensors that cross tasks travel as `wire_encoding` (fp16 by
// default; RunMetadata.wire_fp16_saturated counts the values fp16
// saturated), except fed values on their way to their consumers and
// fetched values on their way to the client's task, which travel exact;
// with wire_gradients_only, all but gradients travel exact.
#ifndef GRAPHRUN_DISTRIBUTED_MASTER_SESSION_H_
#define GRAPHRUN_DISTRIBUTED_MASTER_SESSION_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/worker.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {

struct MasterSessionOptions {
  // Every task the session uses, task name ("/job:worker/replica:0/task:1")
  // to "host:port". Not empty.
  std::map<std::string, std::string> cluster;
  // Makes the client of a task (GrpcConnectFn, or in-process workers in
  // tests). Required.
  ConnectFn connect;
  // The task whose first device is the client's (where feeds arrive and
  // fetches leave), canonical ("/job:worker/replica:0/task:1"): a
  // between-graph replica's own worker. Empty: the chief's, else worker
  // 0's, else the first task's.
  std::string client_task;
  // How long creation waits for every task to answer.
  absl::Duration connect_timeout = absl::Seconds(30);
  // How float32 tensors travel between tasks; with wire_gradients_only,
  // only gradients on their way to an optimizer update do (the `gradients`
  // policy), the rest exact.
  WireEncoding wire_encoding = WIRE_ENCODING_FP16;
  bool wire_gradients_only = false;
  // log_device_placement, allow_soft_placement, optimize,
  // log_optimizations and cost_profile apply; device and thread counts are
  // the workers'.
  SessionOptions session;
};

absl::StatusOr<std::unique_ptr<Session>> NewMasterSession(const GraphDef& graph,
                                                          const MasterSessionOptions& options);

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_MASTER_SESSION_H_
