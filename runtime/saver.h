// Saving and restoring a session's variables as a TensorFlow V2 checkpoint,
// keyed as TensorFlow's v1 Saver keys them (the variable op's name), beside
// the Session: what `graphrun train --save/--restore` uses, and the C++
// API's. The session's graph gains, on first use, the read and assign nodes
// this needs (named "graphrun_save/..." and "graphrun_restore/...").
//
//   GR_RETURN_IF_ERROR(session->Run({}, {}, {"init"}, &out));
//   ... training steps: session->Run(feeds, {"loss"}, {"train"}, &out) ...
//   GR_ASSIGN_OR_RETURN(int saved, SaveVariables(graph, session.get(), "/ckpt/model"));
//   GR_RETURN_IF_ERROR(UpdateCheckpointState("/ckpt/model"));  // tf.train.latest_checkpoint
//   // later, in another session over the same graph:
//   GR_ASSIGN_OR_RETURN(int restored, RestoreVariables(graph, other.get(), "/ckpt"));
#ifndef GRAPHRUN_RUNTIME_SAVER_H_
#define GRAPHRUN_RUNTIME_SAVER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {

// Writes every variable of `graph` (VariableV2, VarHandleOp) to PREFIX.index
// and PREFIX.data-00000-of-00001 (written beside and renamed: a save killed
// midway leaves what was there). Returns how many variables were saved;
// UpdateCheckpointState then publishes the checkpoint.
absl::StatusOr<int> SaveVariables(const GraphDef& graph, Session* session,
                                  const std::string& prefix);

// Assigns every variable of `graph` its value in the checkpoint at PREFIX
// (or the newest checkpoint named by PREFIX's `checkpoint` file when PREFIX
// is a directory). NotFound naming the key and the checkpoint when one is
// missing; InvalidArgument naming the variable when the dtype or shape
// differs. Returns how many variables were restored.
absl::StatusOr<int> RestoreVariables(const GraphDef& graph, Session* session,
                                     const std::string& prefix);

// Waits until every variable of `graph` holds a value (another client, the
// chief of a between-graph replicated job, initializes or restores them
// on the ps tasks), asking every 50-500 ms. DeadlineExceeded after
// `timeout`, naming the variables still without a value.
// `wait_for`, when set, picks the variables to wait for by name and device
// (a between-graph replica leaves out its own task's local variables,
// which it sets itself once the shared ones have values).
absl::Status WaitForVariables(
    const GraphDef& graph, Session* session, absl::Duration timeout,
    const std::function<bool(const std::string& name, const std::string& device)>& wait_for =
        nullptr);

// PREFIX itself, or the newest checkpoint named by the `checkpoint` file of
// PREFIX when PREFIX is a directory.
absl::StatusOr<std::string> ResolveCheckpointPrefix(const std::string& prefix_or_dir);

// The directory a checkpoint PREFIX lives in ("." for a bare name).
std::string CheckpointDirectory(const std::string& prefix);

// Points the `checkpoint` file of PREFIX's directory at PREFIX (appended to
// the ones kept, less `dropped`), as TensorFlow's Saver does after a save.
absl::Status UpdateCheckpointState(const std::string& prefix,
                                   const std::vector<std::string>& dropped = {});

// Removes the checkpoint at PREFIX (its index first, then its data shards);
// best effort.
void RemoveCheckpoint(const std::string& prefix);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_SAVER_H_
