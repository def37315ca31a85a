// Data-parallel replication of a training graph: N copies of the graph, one
// per device or task, whose optimizer updates all apply the gradients
// averaged over the copies, so every copy's variables stay bit-identical.
//
// Replica 0 keeps the graph's own node names; replica r >= 1 gets its nodes
// under "replica_r/". Every node of replica r is placed on devices[r]. The
// Saver's subgraphs (what depends on SaveV2, RestoreV2, MergeV2Checkpoints)
// are not copied: checkpoints are written and read once, by replica 0, and
// a broadcast op then copies replica 0's variables to the others.
//
// The averaging is part of the dataflow graph, so the executor overlaps it
// with the backward pass and the partitioner carries it between devices and
// tasks like any other edge: the dense gradients are fused into buckets of
// at most `bucket_bytes` (in the order the backward pass produces them),
// and each bucket is averaged by a reduce-scatter and an all-gather:
//   every replica flattens and concatenates its bucket and cuts it into N
//   segments; replica j sums segment j over the replicas (AddN, in replica
//   order, float32) and scales by 1/N; every replica concatenates the N
//   averaged segments and cuts them back into the gradients.
// Each replica sends and receives 2(N-1)/N of the bucket, as a ring does,
// in two hops instead of 2(N-1). Two replicas instead send each other their
// whole bucket and both sum the two in replica order: the same bytes, one
// hop, no segment copies. The exchange nodes carry the attr
// kGradientExchangeAttr, so the wire policy compresses them as gradients
// across tasks; with `wire_float` fp16 or bf16 the sender of a segment (or
// of a bucket) keeps the rounded value it sends, so the replicas still
// agree bit for bit.
#ifndef GRAPHRUN_GRAPH_REPLICATE_H_
#define GRAPHRUN_GRAPH_REPLICATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"
#include "graph/types.h"

namespace graphrun {

inline constexpr char kGradientExchangeAttr[] = "_gradient_exchange";

struct ReplicateOptions {
  // Where each replica runs ("/device:CPU:1", "/job:worker/task:1"); its
  // size is the number of replicas (at least 1).
  std::vector<std::string> devices;
  // Gradients are fused into buckets of at most this many bytes (a larger
  // gradient is a bucket of its own).
  int64_t bucket_bytes = int64_t{25} << 20;
  // DT_HALF or DT_BFLOAT16: float gradients travel between tasks in this
  // type; DT_FLOAT: exact.
  DataType wire_float = DT_FLOAT;
  // Replicas on worker tasks, when not empty: each bucket is averaged by a
  // CollectiveReduceV2 per replica (this communication_hint, "ring" or
  // "gloo"; group key kReplicaGroupKey, instance key the bucket's index + 1,
  // the attrs kRunTimeCollectiveAttr and, for a rounding wire,
  // "_wire_float"), which the tasks run between them
  // (distributed/collective_rings.h) instead of the exchange above.
  std::string collective_exchange;
};

// The collective group of graphrun's own replicas' ring exchange.
inline constexpr int32_t kReplicaGroupKey = 1 << 30;

struct ReplicatedVariable {
  std::string name;                // replica 0's variable node
  std::vector<std::string> reads;  // a tensor holding its value, by replica
};

struct GradientBucket {
  DataType dtype = DT_INVALID;
  int64_t elements = 0;
  std::vector<std::string> updates;  // the optimizer update ops it feeds
};

struct ReplicatedGraph {
  GraphDef graph;
  int replicas = 1;
  // Nodes of the given graph copied into every replica; the others (the
  // Saver's) exist once, in replica 0.
  absl::flat_hash_set<std::string> replicated;
  // Sets replicas 1..N-1's variables to replica 0's values (after an
  // initializer or a restore).
  std::string broadcast_op;
  std::vector<ReplicatedVariable> variables;
  std::vector<GradientBucket> buckets;
  // Replica 0 alone, as placed: what a saver names variables from.
  GraphDef replica0;

  // Node `name`'s copy in replica r.
  std::string NodeName(const std::string& name, int replica) const;
  // Tensor or control input name ("x", "x:1", "^x") in replica r.
  std::string TensorName(const std::string& tensor, int replica) const;
};

// InvalidArgument naming the node when an update's gradient is sparse, its
// variable's shape is not fully known or its dtype is not a float type;
// when no optimizer update is found; when a copy's name is taken.
absl::StatusOr<ReplicatedGraph> ReplicateForDataParallel(const GraphDef& graph,
                                                         const ReplicateOptions& options);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_REPLICATE_H_
