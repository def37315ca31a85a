// Which float tensors between tasks are gradients. Under the `gradients`
// wire policy (the default over workers) only an edge into an optimizer
// update's gradient input travels lossy (fp16 or bfloat16): in
// parameter-server training, what a worker sends to the ps task that
// applies it. Variables' values, restored values, hyperparameters and
// activations travel exact. The partitioner marks such a transfer's _Send
// and _Recv with the bool attr kGradientAttr, so the tasks that carry it
// know without the rest of the graph.
#ifndef GRAPHRUN_PARTITION_WIRE_POLICY_H_
#define GRAPHRUN_PARTITION_WIRE_POLICY_H_

#include "graph/graph.h"

namespace graphrun {

inline constexpr char kGradientAttr[] = "_wire_gradient";

// True when input `input` of `dst` is the gradient of an optimizer update:
// the `grad` (or `delta`) of an Apply*, ResourceApply*, SparseApply* or
// ResourceSparseApply* op, the `gradient` of an accumulator's
// ApplyGradient, or any input of a data-parallel gradient exchange node
// (graph/replicate.h's kGradientExchangeAttr).
bool IsGradientInput(const Node& dst, int input);

}  // namespace graphrun

#endif  // GRAPHRUN_PARTITION_WIRE_POLICY_H_
