// `graphrun train`: runs a TensorFlow training graph for N steps in a
// Session whose variables persist from step to step: an initializer or a
// checkpoint first, then the train op with each step's feeds, the fetches
// stacked over the steps, a loss curve, and checkpoints TensorFlow reads.
#ifndef GRAPHRUN_TOOLS_TRAIN_COMMAND_H_
#define GRAPHRUN_TOOLS_TRAIN_COMMAND_H_

#include <string>
#include <vector>

#include "tools/run_command.h"
#include "tools/train_replicas.h"

namespace graphrun {

struct TrainCommandArgs {
  // The graph, --feed (the same every step), --fetch, --out, --steps and
  // every session option, as `graphrun run` takes them.
  RunCommandArgs run;
  std::vector<std::string> init_ops;    // --init: run once before the steps
  // --local_init: run in order, each on its own, once the variables are set
  // (after --init, --restore, --wait_for_variables_s) and after each
  // recovery's restore: local variables, a SyncReplicasOptimizer's
  // local_step_init_op and chief_init_op.
  std::vector<std::string> local_init_ops;
  // --queue_runner: each runs over and over on a thread of its own while
  // the steps run (TrainLoopOptions::queue_runners).
  std::vector<std::string> queue_runners;
  // --close_queues (default): when the run ends, the queues the queue
  // runners fill are closed (tools/queue_closers.h), so the other workers
  // of a synchronous run end their steps; false keeps them open for a chief
  // run in pieces.
  bool close_queues = true;
  std::string train_op;                 // --train: run every step
  std::vector<std::string> feed_steps;  // NAME=FILE.npy; step i feeds slice i
  // --first_step K: step i feeds slice K + i of each --feed_steps file (a
  // run that goes on where another stopped).
  int first_step = 0;
  // --warmup_steps N: the median step time printed at the end leaves out
  // the first N steps (by default 1: the first step builds the plan).
  int warmup_steps = 1;
  std::string restore;                  // --restore PREFIX: a V2 checkpoint
  std::string save;                     // --save PREFIX: after the last step
  int save_every = 0;                   // --save_every K: also every K steps
  // --recover: when a task goes away, start the tasks again, restore the
  // newest checkpoint and go on from its step.
  bool recover = false;
  // --recover_with: "restarted" (the tasks started again or waited for) or
  // "remaining" (the worker tasks that are gone left out, their nodes moved
  // to the workers left).
  std::string recover_with = "restarted";
  // --wait_for_variables_s: a between-graph replica that is not the chief
  // waits for the chief to set the variables on the ps tasks.
  int wait_for_variables_s = 0;
  // --replicas=N (N >= 2): data-parallel replicas, gradients averaged.
  ReplicaArgs replicas;
};

// Returns the process exit status: 0 ok, 1 failure, 130 interrupted (the
// step in flight finished and the checkpoint was saved).
int TrainCommand(const TrainCommandArgs& args);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_TRAIN_COMMAND_H_
