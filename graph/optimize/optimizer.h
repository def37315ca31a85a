// Graph optimizer: rewrites a pruned GraphDef before placement, as
// TensorFlow's Grappler does for a Session step. Each pass is its own unit
// (graph/optimize/*.cc) with its own tests; OptimizeGraph runs them in order:
//
//   constant folding   a node whose data inputs are all constants (and
//                      Shape/Size/Rank of fully known shapes) becomes a
//                      Const holding its value; the new Const keeps the
//                      control inputs of the node and of its inputs, so it
//                      stays in the node's loop frame or cond branch
//   dead branches      a Switch whose predicate is a constant: the nodes
//                      only its untaken output feeds are removed, the
//                      Merge after them becomes its live input (v1
//                      tf.cond), the Switch is bypassed; never in loops
//   identity removal   Identity/StopGradient/PreventGradient/Snapshot with
//                      one producer on the same device are bypassed (not
//                      after Switch, Recv or other control-flow nodes)
//   arithmetic         x*1, x+0, x-0, x/1 -> x; (x+c1)+c2 -> x+(c1+c2) and
//                      (x*c1)*c2 -> x*(c1*c2) (floats reassociated: within
//                      float rounding); inverse or identity Transposes,
//                      Reshape to the input's shape, Cast to the same dtype
//                      bypassed; Reshape and lossless Cast chains shortened
//   constant folding   again, when dead branches or arithmetic changed
//                      something (their results may now fold)
//   batch-norm folding a constant per-channel Mul and Add after Conv2D,
//                      DepthwiseConv2dNative or MatMul (Keras' frozen
//                      BatchNormalization) move into its weights and bias
//   pad folding        a zero Pad of the spatial dims read by a VALID or
//                      EXPLICIT NHWC Conv2D, _FusedConv2D or
//                      DepthwiseConv2dNative becomes the convolution's
//                      explicit padding (Keras' ZeroPadding2D)
//   LSTM cell fusion   the 14 nodes of a Keras LSTM cell step (two MatMuls,
//                      BiasAdd, Split into four gates, Sigmoid/Tanh, the
//                      state update) become TensorFlow's LSTMBlockCell with
//                      the weights stacked and reordered as it wants them
//   LSTM loop fusion   a while loop that steps one LSTMBlockCell through a
//                      TensorList of the sequence (and nothing else)
//                      becomes one BlockLSTM over the whole sequence
//   kernel fusion      MatMul or Conv2D (NHWC) + BiasAdd (or Add of a
//                      per-channel constant or vector) [+ Relu/Relu6/Elu/
//                      LeakyRelu/Tanh/Sigmoid] on the CPU becomes
//                      TensorFlow's _FusedMatMul or _FusedConv2D
//   pool gradient fusion  ReluGrad(MaxPoolGrad(r, ...), r) becomes one
//                      _FusedMaxPoolGrad, and a BiasAddGrad of it that
//                      node's second output
//   common subexpressions  nodes with the same op, device, attrs and inputs
//                      (in any order for commutative ops) are merged
//   pruning            nodes nothing consumes that are neither preserved
//                      nor stateful are removed (NoOps included); a
//                      stateless node only control edges wait for becomes
//                      a NoOp waiting for its inputs' producers
//
// Preserved nodes (feeds, fetches, targets) keep their names and outputs;
// they may be folded into a Const of the same name, never removed.
#ifndef GRAPHRUN_GRAPH_OPTIMIZE_OPTIMIZER_H_
#define GRAPHRUN_GRAPH_OPTIMIZE_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/op_registry.h"
#include "graph/protos/graph.pb.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {

// Runs one node's kernel on constant inputs and returns its outputs. The
// optimizer sits below the kernels; the session supplies the evaluator
// (a CPU device and the kernel registry).
using NodeEvaluator = std::function<absl::StatusOr<std::vector<Tensor>>(
    const NodeDef& node, const OpDef& op_def, std::vector<Tensor> inputs)>;

struct OptimizerOptions {
  const OpRegistry* registry = OpRegistry::Global();
  // Node names that must keep their name and outputs.
  absl::flat_hash_set<std::string> preserve;
  // Known output shapes by node name (from shape inference on the full
  // graph): folds Shape, Size and Rank of inputs that are not constants.
  absl::flat_hash_map<std::string, std::vector<PartialShape>> shapes;
  // Without an evaluator, only shape folding runs of constant folding.
  NodeEvaluator evaluate;
  // A folded value larger than this stays computed (TensorFlow: 10 MiB).
  int64_t max_constant_bytes = int64_t{10} << 20;
};

// What the passes changed, for --log_optimizations.
struct OptimizationReport {
  struct Pass {
    std::string name;
    int nodes_before = 0, nodes_after = 0;
    std::vector<std::string> changes;  // "folded 'x' (Mul)", ...
    // Removed node -> the node that now computes what it did (bypassed,
    // merged or fused into); removed nodes not listed were pruned.
    absl::flat_hash_map<std::string, std::string> merged_into;
  };
  std::vector<Pass> passes;
  // Over all passes: each removed node that lives on in another, by the
  // name of the node that carries it in the final graph.
  absl::flat_hash_map<std::string, std::string> merged_into;
  // One line per pass with its counts and the first changes.
  std::string ToString(int max_changes_per_pass = 20) const;
};

// Each pass alone (for tests); `report` may be null.
absl::Status FoldConstants(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report);
absl::Status PruneDeadBranches(GraphDef* graph, const OptimizerOptions& options,
                               OptimizationReport::Pass* report);
absl::Status RemoveIdentities(GraphDef* graph, const OptimizerOptions& options,
                              OptimizationReport::Pass* report);
absl::Status SimplifyArithmetic(GraphDef* graph, const OptimizerOptions& options,
                                OptimizationReport::Pass* report);
absl::Status FoldBatchNorms(GraphDef* graph, const OptimizerOptions& options,
                            OptimizationReport::Pass* report);
absl::Status FoldPads(GraphDef* graph, const OptimizerOptions& options,
                      OptimizationReport::Pass* report);
absl::Status FuseLstmCells(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report);
absl::Status FuseLstmLoops(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report);
absl::Status FuseKernels(GraphDef* graph, const OptimizerOptions& options,
                         OptimizationReport::Pass* report);
absl::Status FuseMaxPoolReluGrads(GraphDef* graph, const OptimizerOptions& options,
                                  OptimizationReport::Pass* report);
absl::Status EliminateCommonSubexpressions(GraphDef* graph, const OptimizerOptions& options,
                                           OptimizationReport::Pass* report);
absl::Status PruneUnused(GraphDef* graph, const OptimizerOptions& options,
                         OptimizationReport::Pass* report);

// All passes in order. On error the graph is left as it was.
absl::Status OptimizeGraph(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport* report = nullptr);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OPTIMIZE_OPTIMIZER_H_
