// Variables over parameter-server tasks, balanced by bytes.
//
// TensorFlow's replica_device_setter pins variables round-robin in creation
// order, which on the classic W, b layer pattern puts almost every byte on
// one ps task. PlaceVariablesOnPs spreads them instead: each variable with
// what lives beside it (its optimizer slots and Adam's beta powers, colocated
// by `_class`, its Assign, Apply and read ops, joined by reference and
// resource edges, its initializer) is one group; groups go, largest first,
// to the ps task holding the fewest bytes so far (longest-processing-time
// first: the per-step traffic to and from a ps task and the update work it
// does are both proportional to the bytes it holds, for dense variables).
// A group's nodes then request "/job:ps/task:k", keeping any device type.
// With min_part_bytes, a group too large for any whole placement to
// balance is split first (see PsPlacementOptions).
//
// Which groups move: without `override_pins` only those no node of which
// names a ps task (a graph exported without a device setter); with it,
// every group (the graph's round-robin pins replaced). Nodes outside the
// groups that request no job are pinned to /job:worker, so the forward
// and backward pass stays off the ps tasks.
#ifndef GRAPHRUN_PLACER_PS_PLACEMENT_H_
#define GRAPHRUN_PLACER_PS_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace placer {

struct PsPlacementOptions {
  int num_ps_tasks = 0;  // /job:ps/task:0..num_ps_tasks-1; at least 1
  bool override_pins = false;
  // Over 2 or more ps tasks, a group being placed that holds more than
  // half a ps task's even share of the bytes is first split into parts of
  // at most that half (placer/variable_split.h), each part at least this
  // many bytes (TensorFlow's min_slice_size is 256 KiB). 0: never split.
  int64_t min_part_bytes = 0;
};

// A group split (or considered and left whole) before placement.
struct PsVariableSplit {
  std::string variable;  // the largest variable of the group
  int variables = 0;     // variables split with it (it and its slots)
  int64_t bytes = 0;     // the group's bytes
  std::vector<int64_t> rows;  // rows of each part; empty when left whole
  std::string why_not;        // when left whole
};

struct PsVariableGroup {
  std::string variable;  // the group's variable: its shortest name
  int variables = 0;     // variables in the group (slots included)
  int64_t bytes = 0;     // their bytes (unknown dimensions count 0)
  int task = 0;          // the ps task it went to
  bool moved = false;    // placed here (false: kept the graph's pin)
  std::string why;       // for log_device_placement
};

struct PsPlacement {
  std::vector<PsVariableSplit> splits;
  std::vector<PsVariableGroup> groups;  // in decreasing bytes
  std::vector<int64_t> bytes_per_task;
  // max over tasks / mean; 0 without variables.
  double max_over_mean = 0;
};

// Rewrites `graph`'s device requests as above. InvalidArgument for a
// malformed graph or num_ps_tasks < 1, naming the node.
absl::StatusOr<PsPlacement> PlaceVariablesOnPs(GraphDef* graph, const PsPlacementOptions& options);

// The variable bytes per ps task (with slots) under the graph's own pins.
absl::StatusOr<PsPlacement> DescribePsPins(const GraphDef& graph, int num_ps_tasks);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_PS_PLACEMENT_H_
