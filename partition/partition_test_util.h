// Helpers for partition tests: building small GraphDefs, partitioning them
// with the invariants every result must satisfy checked (gtest
// expectations), finding nodes, and a tiny evaluator that runs a set of
// partitions against each other through an in-memory rendezvous.
#ifndef GRAPHRUN_PARTITION_PARTITION_TEST_UTIL_H_
#define GRAPHRUN_PARTITION_PARTITION_TEST_UTIL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/protos/graph.pb.h"
#include "partition/partition.h"

namespace graphrun {
namespace partition_testing {

// A scalar Const (float, or int32 holding `value`).
NodeDef* AddConst(GraphDef* g, const std::string& name,
                  const std::string& device, float value,
                  DataType dtype = DT_FLOAT);
// A node of `op` with these inputs and attr T = `type`.
NodeDef* AddOp(GraphDef* g, const std::string& name, const std::string& op,
               const std::vector<std::string>& inputs,
               const std::string& device, DataType type = DT_FLOAT);

// ImportGraphDef with allow_internal_names; null (and a test failure) on
// error.
std::unique_ptr<Graph> Import(const GraphDef& def);

// Imports and partitions `def`, and checks what every result must satisfy:
// each partition re-imports, every node's device is its partition, and each
// Recv has exactly one Send with the same rendezvous key. {} on failure.
std::map<std::string, GraphDef> PartitionOk(
    const GraphDef& def, const PartitionOptions& options = {},
    PartitionStats* stats = nullptr);

// The node named `name`, or null.
const NodeDef* Find(const GraphDef& g, const std::string& name);
// The nodes of `op`, in order.
std::vector<const NodeDef*> WithOp(const GraphDef& g, const std::string& op);
// The inputs of `n` ({} for null).
std::vector<std::string> Inputs(const NodeDef* n);

// Evaluates GraphDefs of Const (float scalar or empty), Identity, AddV2,
// Cast (as identity), _Send and _Recv: sends post into a shared rendezvous
// that recvs read. Returns every node's value by name; nodes that never
// became ready are missing.
std::map<std::string, float> Evaluate(const std::vector<const GraphDef*>& gs);

}  // namespace partition_testing
}  // namespace graphrun

#endif  // GRAPHRUN_PARTITION_PARTITION_TEST_UTIL_H_
