// Control-flow frames of a graph: which while-loop frame each node runs in.
//
// A v1 while loop is a frame opened by Enter nodes (attr frame_name) and
// closed by Exit nodes; NextIteration carries values to the next iteration
// and LoopCond holds the loop's predicate. BuildControlFlowInfo walks the
// graph from its sources, giving every node the frame of the producer that
// reaches it (an Enter's consumers are inside the Enter's frame, an Exit's
// consumers outside it), and rejects malformed frames with InvalidArgument
// naming the frame and nodes: a node reached from two frames, an Exit,
// NextIteration or LoopCond outside any loop, Enters of one frame in
// different parent frames, a NextIteration that feeds no Merge.
//
// Used by import (validation), the executor (per-frame state) and the
// partitioner (control loops). Pure function of the graph; thread-safe.
#ifndef GRAPHRUN_GRAPH_CONTROL_FLOW_H_
#define GRAPHRUN_GRAPH_CONTROL_FLOW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace graphrun {

struct ControlFlowInfo {
  // An Enter of the frame the node runs in; nullptr in the root frame.
  const Node* frame = nullptr;
  // An Enter of the enclosing frame; nullptr when that is the root.
  const Node* parent_frame = nullptr;
  // The frame's frame_name attr; "" for the root frame.
  std::string frame_name;
};

// Op predicates (the Ref* variants included).
bool IsEnter(const Node& node);
bool IsExit(const Node& node);
bool IsNextIteration(const Node& node);
bool IsMerge(const Node& node);
bool IsSwitch(const Node& node);
bool IsLoopCond(const Node& node);
bool IsControlTrigger(const Node& node);
// True if the graph has any Enter, Exit, NextIteration or LoopCond.
bool HasLoops(const Graph& graph);

// One entry per node id.
absl::StatusOr<std::vector<ControlFlowInfo>> BuildControlFlowInfo(const Graph& graph);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CONTROL_FLOW_H_
