// `graphrun place`: places a serialized graph on a set of devices (this
// machine's, or a cluster described in a JSON file) with the cost model, and
// prints the plan: a summary, optionally one line per node with the reason,
// and a Graphviz DOT picture.
#ifndef GRAPHRUN_TOOLS_PLACE_COMMAND_H_
#define GRAPHRUN_TOOLS_PLACE_COMMAND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/placer.h"

namespace graphrun {

struct PlaceCommandArgs {
  std::string graph;
  std::string devices_file;   // "" = this machine's devices
  std::string costs_file;     // "" = analytical costs only
  std::string dot_path;       // "" = no picture
  bool explain = false;       // one line per node with the reason
  bool allow_soft_placement = false;
  bool respect_memory = true;
  int cpu_devices = 1;        // local devices only
  std::string gpus = "auto";  // local devices only: auto|all|none|0,2
  int num_gpus = -1;
  std::vector<std::string> cpu_only_ops;
};

// Returns the process exit status (0 ok, 1 failure).
int PlaceCommand(const PlaceCommandArgs& args);

// What `place` computes, for the commands built on it (`partition`).
struct PlacedGraph {
  std::unique_ptr<Graph> graph;
  placer::DeviceSet devices;
  placer::CostModel costs;
  placer::Placement placement;
  std::string notes;  // GPU choice and build notes, one line each
};
absl::StatusOr<PlacedGraph> LoadAndPlace(const PlaceCommandArgs& args);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_PLACE_COMMAND_H_
