// StepGraph: the graph one session step runs, cut from the session's full
// graph before placement. It keeps what the fetches and targets need (a fed
// tensor cuts its producers off), stands an _Arg (or a client-terminated
// _Recv) in for each fed tensor, adds a _Retval (or a client-terminated
// _Send) per fetch, and runs the graph optimizer on the result.
//
//   StepGraphOptions options;
//   absl::StatusOr<StepGraph> step =
//       BuildStepGraph(full_graph, {"x"}, {"y:0"}, {"train"}, options);
//
// A pure function of its inputs: many threads may build step graphs of the
// same full graph at once.
#ifndef GRAPHRUN_RUNTIME_STEP_GRAPH_H_
#define GRAPHRUN_RUNTIME_STEP_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/optimize/optimizer.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "placer/placer.h"

namespace graphrun {

struct StepGraphOptions {
  // Feeds arrive through a client-terminated _Recv and fetches leave
  // through a client-terminated _Send, both on `client_device`, as a remote
  // client talks to workers; otherwise through the call frame (_Arg and
  // _Retval, whose `index` is the feed's or fetch's position).
  bool feeds_through_rendezvous = false;
  std::string client_device;
  // The incarnation of `client_device` (Device::incarnation()), which the
  // client-terminated keys carry.
  uint64_t client_device_incarnation = 0;
  // Runs the graph optimizer (graph/optimize/optimizer.h) on the pruned
  // graph; feeds, fetches and targets keep their names.
  bool optimize = true;
  // Constant folding's evaluator; null: only shapes are folded.
  NodeEvaluator evaluate;
  // The shapes of the values the step is fed, one per feed, set as the
  // feed nodes' output shapes for the placer's costs; empty: each feed
  // node gets the fed tensor's shape in the full graph.
  std::vector<TensorShape> feed_value_shapes;
  // Nodes asked onto a device whatever the graph requests (node name ->
  // full device name): variables, which stay where their value lives.
  std::map<std::string, std::string> pinned_devices;
};

struct StepGraph {
  // The step's graph, output shapes from the full graph's inference.
  std::unique_ptr<Graph> graph;
  // Per feed, in the order given: the node of `graph` that stands in for
  // it, the dtype and shape a fed value must have, and how errors name
  // the fed node ("node 'x' (Placeholder)").
  std::vector<std::string> feed_nodes;
  std::vector<DataType> feed_dtypes;
  std::vector<PartialShape> feed_shapes;
  std::vector<std::string> feed_labels;
  // Per fetch, in the order given: the node of `graph` that returns it.
  std::vector<std::string> fetch_nodes;
  // With feeds_through_rendezvous: the rendezvous keys the client sends
  // each feed to and receives each fetch from (a fetch named twice gets
  // two keys).
  std::vector<std::string> feed_keys;
  std::vector<std::string> fetch_keys;
  // For log_device_placement: the nodes this step added (feeds print as
  // the node they replace) and the user's nodes the optimizer removed.
  absl::flat_hash_map<std::string, placer::LogName> log_names;
  std::vector<placer::RemovedNode> log_removed;
  // What the optimizer changed (empty without options.optimize).
  OptimizationReport optimization;
};

// InvalidArgument naming the feed and the fed node when `value`, fed as
// the step's feed `i` under the caller's `name`, has another dtype or an
// incompatible shape.
absl::Status CheckFeed(const StepGraph& step, size_t i, const std::string& name,
                       const Tensor& value);

// Builds the step graph that computes `fetches` (tensor names, "node" or
// "node:k") and runs `targets` (node names) given `feeds` (tensor names).
// A fetched tensor that is also fed returns the fed value. Errors:
// InvalidArgument for a name that is not a tensor name, an output index
// past the node's outputs, a tensor fed twice, and anything the optimizer
// or the import of the result rejects; NotFound for a feed, fetch or target
// naming no node of `full`.
absl::StatusOr<StepGraph> BuildStepGraph(const Graph& full,
                                         const std::vector<std::string>& feeds,
                                         const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets,
                                         const StepGraphOptions& options);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_STEP_GRAPH_H_
