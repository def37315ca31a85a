// The `checkpoint` state file that TensorFlow keeps in a checkpoint directory
// (what tf.train.latest_checkpoint reads): a text-format CheckpointState
// naming the newest checkpoint prefix and those kept. Writes are atomic.
// Stateless; thread-safe (concurrent writers: the last rename wins).
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_CHECKPOINT_STATE_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_CHECKPOINT_STATE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/checkpoint/protos/checkpoint_state.pb.h"

namespace graphrun {

// "DIR/checkpoint".
std::string CheckpointStatePath(const std::string& dir);

// Reads DIR/checkpoint. NotFound when it does not exist; DataLoss naming the
// file when it does not parse or names no model_checkpoint_path.
absl::StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);

// Replaces DIR/checkpoint atomically (temporary file, fsync, rename), so a
// reader sees the old state or the new one. InvalidArgument when
// model_checkpoint_path is empty.
absl::Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);

// The prefix of the newest checkpoint in `dir`, as TensorFlow resolves it: a
// relative model_checkpoint_path is taken relative to `dir`. NotFound when
// there is no state file.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_CHECKPOINT_STATE_H_
