// `graphrun train --replicas=N`: the training graph replicated over N
// devices of this process (GPUs when it has N, else N CPU devices) or over
// the first N worker tasks (--local_workers, --cluster), each replica fed
// a slice of every batch, gradients averaged between them
// (graph/replicate.h, runtime/replicated_session.h).
#ifndef GRAPHRUN_TOOLS_TRAIN_REPLICAS_H_
#define GRAPHRUN_TOOLS_TRAIN_REPLICAS_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"
#include "tools/run_command.h"

namespace graphrun {

struct ReplicaArgs {
  int replicas = 1;
  // Gradients fused into buckets of at most this many MiB; each bucket's
  // exchange starts as soon as the backward pass has made all of it.
  double fusion_threshold_mb = 25;
  // Over worker tasks: "ring" (a collective reduce per bucket and task,
  // run over a ring between the tasks), "gloo" (the same over gloo's TCP
  // ring, float32 on the wire) or "graph" (the exchange in the dataflow
  // graph). In one process the exchange is always the graph's.
  std::string allreduce = "ring";
  bool check_replicas = false;      // compare every replica's variables each step
  bool fetch_all_replicas = false;  // fetches stacked over the replicas
};

// The session (a ReplicatedSession over the session `run` asks for) and,
// as RunSession::graph, replica 0's graph, which checkpoints are written
// from. Where each replica runs is printed unless run.quiet.
absl::StatusOr<RunSession> NewReplicatedRunSession(RunCommandArgs run, const GraphDef& graph,
                                                   const ReplicaArgs& replicas);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_TRAIN_REPLICAS_H_
