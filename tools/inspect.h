// The summary `graphrun inspect` prints: node count by op, inputs
// (Placeholders with dtype and shape), likely outputs, requested devices,
// and every op this build cannot run with the nodes that use it, looking
// inside the bodies of the library functions the graph uses.
// Stateless; thread-safe.
#ifndef GRAPHRUN_TOOLS_INSPECT_H_
#define GRAPHRUN_TOOLS_INSPECT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

struct InspectOptions {
  // Shown in the header line.
  std::string source = "graph";
  // Says why an op (registered or not) cannot run in this build, or "" if it
  // can. Defaults to "the op is not registered" for unknown ops.
  std::function<std::string(const std::string& op)> why_cannot_run;
  // How many node names to list per op / device before "...".
  int max_names = 8;
};

struct InspectReport {
  // The text `graphrun inspect` prints; its last line is "Validation: OK"
  // or the import error.
  std::string summary;
  // The strict import's verdict (OK, or the error that names node and op):
  // `graphrun inspect` exits 1 when it is not OK.
  absl::Status validation;
};

// The tensors nothing in the graph reads ("probs", "split:1"): every output
// of each node that has outputs, none consumed, and is not a Const or a
// Placeholder. What `graphrun run` fetches when given no --fetch, and
// what inspect lists as likely outputs. The graph's import error when it
// does not import.
absl::StatusOr<std::vector<std::string>> LikelyOutputs(const GraphDef& graph_def);

// Never fails on a bad graph: validation errors are part of the report.
// What `graphrun inspect --ops` prints: one line per registered op with the
// dtypes its kernels take on each device type of this build ("CPU: float,
// int32"; "any" for a kernel without type constraints; "-" for none), then
// a line counting the ops and those with a CPU and a GPU kernel.
std::string RegisteredOpsTable();

InspectReport InspectGraph(const GraphDef& graph_def,
                           const InspectOptions& options);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_INSPECT_H_
