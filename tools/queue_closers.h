// The close ops of the queues a training run's queue runners fill, run when
// the run ends (TrainLoopOptions::close_at_end), as TensorFlow's
// QueueRunner runs its cancel op when the coordinator stops.
#ifndef GRAPHRUN_TOOLS_QUEUE_CLOSERS_H_
#define GRAPHRUN_TOOLS_QUEUE_CLOSERS_H_

#include <string>
#include <vector>

#include "graph/protos/graph.pb.h"

namespace graphrun {

// For each of `runner_ops` that enqueues into a queue (QueueEnqueue*), the
// graph's QueueCloseV2 on that queue, preferring the one that cancels
// pending enqueues (the QueueRunner's cancel op, which TensorFlow's
// SyncReplicasOptimizer and tf.train.QueueRunner always create beside the
// plain close); queues without a close op, and runner ops that are not
// enqueues, give none. Each queue once, in `runner_ops` order.
std::vector<std::string> QueueCloseOps(const GraphDef& graph,
                                       const std::vector<std::string>& runner_ops);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_QUEUE_CLOSERS_H_
