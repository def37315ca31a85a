// A training loop over a Session whose variables persist from step to step,
// with periodic checkpoints and recovery: what `graphrun train` runs, for
// programs that train through the C++ API.
//
// Each step runs the train op with that step's feeds and fetches. Every
// `save_every` steps the variables go to PREFIX-<step> (as TensorFlow's
// Saver names them with a global step), the newest `keep_periodic` kept,
// each published in its directory's `checkpoint` file only once complete;
// after the last step (or a stop) they go to PREFIX. With `recover`, a step
// or periodic save that fails because a task went away (Unavailable,
// Aborted) drops the session, asks the factory for a new one (which may
// start the tasks again, wait for them, or leave out the ones that are
// gone), restores the newest complete checkpoint this run saved (or sets the
// variables anew when it saved none yet) and goes on from its step: the
// loss curve continues where that checkpoint left it.
//
//   TrainLoopOptions o;
//   o.train_op = "train";
//   o.fetches = {"loss"};
//   o.steps = 1000;
//   o.feeds = [&](int step) -> absl::StatusOr<Feeds> { return BatchOf(step); };
//   o.initialize = [](Session* s, const GraphDef&) {
//     std::vector<Tensor> out;
//     return s->Run({}, {}, {"init"}, &out);
//   };
//   o.save = "/ckpt/model.ckpt";
//   o.save_every = 100;
//   o.recover = true;
//   absl::StatusOr<TrainLoopResult> r = RunTrainLoop(
//       [&](const absl::Status& failure) -> absl::StatusOr<TrainSession> {
//         ... a session over the cluster (failure is OK the first time) ...
//       },
//       o);
//
// Thread-compatible: one loop per call; the callbacks run on the caller's
// thread.
#ifndef GRAPHRUN_RUNTIME_TRAIN_LOOP_H_
#define GRAPHRUN_RUNTIME_TRAIN_LOOP_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"
#include "graph/protos/saver.pb.h"
#include "graph/tensor.h"
#include "runtime/session.h"

namespace graphrun {

// A session to train in, the graph it runs (whose variables the loop saves
// and restores) and whatever must outlive the session (worker processes,
// GPU claims). The loop drops the session before `keep`.
struct TrainSession {
  std::unique_ptr<Session> session;
  GraphDef graph;
  std::shared_ptr<void> keep;
};

// Makes the session to train in. `failure` is OK for the first one; when
// recovering, it is the failure the loop recovers from, and the old session
// is gone.
using TrainSessionFactory = std::function<absl::StatusOr<TrainSession>(const absl::Status& failure)>;

using TrainFeeds = std::vector<std::pair<std::string, Tensor>>;

struct TrainLoopOptions {
  std::string train_op;               // run every step; may be empty
  std::vector<std::string> fetches;   // fetched every step
  int steps = 0;
  // Step i's feeds; none when unset.
  std::function<absl::StatusOr<TrainFeeds>(int step)> feeds;
  int64_t timeout_ms = 0;  // per step, 0 none
  // Sets the variables of the first session (initializers, a checkpoint).
  // Required.
  std::function<absl::Status(Session*, const GraphDef&)> initialize;
  // Runs after a recovery's restore (replicas copy replica 0's values).
  std::function<absl::Status(Session*)> after_restore;
  // Runs after each step (replicas compare their variables).
  std::function<absl::Status(Session*, int step)> after_step;
  // The graph's own Saver (SaveV2 and RestoreV2 nodes in the graph, fed the
  // prefix); without one, SaveVariables and RestoreVariables.
  std::optional<SaverDef> saver;
  std::string save;  // PREFIX: after the last step; "" none
  int save_every = 0;  // also every K steps, to PREFIX-<step>; 0 never
  int keep_periodic = 5;
  // Recover from a task that went away; needs save_every >= 1. Gives up
  // when a recovery makes no progress (a failure no later than the last
  // one, from the same checkpoint) or after max_recoveries.
  bool recover = false;
  int max_recoveries = 10;
  // Ops that each run over and over on a thread of their own while the
  // steps run, as TensorFlow's queue runners (the chief's sync op of a
  // SyncReplicasOptimizer): started once the variables are set, stopped
  // (their step cancelled) before the final save and before a recovery,
  // started again after it. One ending with OutOfRange (its queue closed)
  // stops quietly; another failure cancels the running step and ends the
  // loop with it, or is recovered from when it lost a task.
  std::vector<std::string> queue_runners;
  // Ops run once when the loop ends, after the queue runners stop (before
  // the final save), whether it ended well or not: the queues' close ops,
  // as TensorFlow's queue runners close their queues when the coordinator
  // stops. The chief closing the token queue of a SyncReplicasOptimizer is
  // what lets the other workers' steps end (OutOfRange) instead of waiting
  // for a token out to their timeout. A failure here is given to `log`
  // (a ps task may be gone) and does not change the loop's result.
  std::vector<std::string> close_at_end;
  // Keep every step's fetches in the result (else only the last step's).
  bool keep_fetches = false;
  // Trace the last step (RunOptions::FULL_TRACE) into the result.
  bool trace_last_step = false;
  // Asked before each step; true ends the loop (the final save still runs).
  std::function<bool()> stop;
  // After each step, with its fetches.
  std::function<void(int step, const std::vector<Tensor>& fetched)> on_step;
  // A line for the user after each periodic save.
  std::function<void(const std::string& line)> log;
  // Before each recovery: the failure, and the checkpoint and step it goes
  // on from ("" and 0 when the run had saved none yet: `initialize` then
  // sets the variables again).
  std::function<void(const absl::Status& failure, const std::string& prefix, int step)>
      on_recover;
};

struct TrainLoopResult {
  int steps_done = 0;  // steps whose effects the variables hold
  std::vector<Tensor> last;  // the last step's fetches
  // fetched[k][i]: fetch k of step i, with keep_fetches; steps lost to a
  // recovery are dropped and run again.
  std::vector<std::vector<Tensor>> fetched;
  std::vector<double> step_ms;  // every step run, failed ones included
  int recoveries = 0;
  bool stopped = false;  // `stop` ended the loop
  // A step that fails with OutOfRange (a queue it dequeues from closed and
  // empty, as when the chief has ended a synchronous run) ends the steps as
  // TensorFlow's MonitoredSession does, without an error and with the final
  // save run; this then says where: "step K: <its message>".
  std::string end_of_input;
  RunMetadata trace;     // with trace_last_step
};

// Runs the loop in sessions from `make`. Errors name the step (or save) and
// the failure; a recovery that gives up says why.
absl::StatusOr<TrainLoopResult> RunTrainLoop(const TrainSessionFactory& make,
                                             const TrainLoopOptions& options);

// The checkpoint PREFIX-<step>'s step; -1 when PREFIX names none.
int CheckpointStep(const std::string& prefix);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_TRAIN_LOOP_H_
