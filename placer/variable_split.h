// Splitting one large variable over parameter-server tasks.
//
// One variable with its optimizer slots can hold most of a model's bytes
// (an MLP's first layer: three quarters), and then no placement of whole
// variables balances the ps tasks. SplitVariables cuts such variables along
// their first dimension into parts, each a variable of its own
// ("NAME/part_K", rows as even as they go, the first parts one row more, as
// TensorFlow's fixed_size_partitioner cuts them), and rewrites what uses
// them:
//   - a read (ReadVariableOp) becomes, under its own name, a ConcatV2 of the
//     parts' reads: its consumers see the whole value;
//   - an assign (AssignVariableOp, AssignAdd/AssignSubVariableOp) gives each
//     part its rows of the value (SplitV), and becomes a NoOp that waits for
//     them;
//   - a dense update (ResourceApply*) runs once per part with the parts of
//     the variable and its slots and the gradient's rows, its
//     hyperparameters shared, and becomes a NoOp that waits for them;
//   - VarIsInitializedOp asks the first part (parts are set together).
// Names keep meaning what they meant: fetches, targets, init ops and the
// graph's own Saver (which reads and assigns through these ops, so its
// checkpoint keeps the whole tensor under the variable's name) run
// unchanged. Colocations with a split variable ("loc:@NAME") go to its
// first part; a slot's part K goes with the variable's part K.
//
// Ref variables (VariableV2) are split the same way: their Identity reads
// become ConcatV2s as ReadVariableOp does, any other read of their value
// gets a ConcatV2 of its own, and Assign/AssignAdd/AssignSub and Apply*
// run per part when nothing reads the ref they pass on.
//
// Each part carries the attr `_graphrun_part_of` (the variable's name), by
// which runtime/saver.h saves and restores the parts as one tensor under
// that name, so checkpoints stay TensorFlow's.
//
// Only variables of a fully known shape are split, and only when every
// use is one of the above (no gather, scatter or sparse update, no handle
// passed on); otherwise they stay whole and the reason is returned.
#ifndef GRAPHRUN_PLACER_VARIABLE_SPLIT_H_
#define GRAPHRUN_PLACER_VARIABLE_SPLIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace placer {

// The attr each part carries: the split variable's name.
inline constexpr char kPartOfAttr[] = "_graphrun_part_of";

struct SplitResult {
  bool split = false;
  std::string why_not;  // when not split: the use or shape that prevents it
  // Rows of each part (the first dimension), in part order.
  std::vector<int64_t> rows;
};

// Splits `variables` (a variable and its slots: variables of one kind,
// dtype and shape) into `parts` parts each. InvalidArgument for parts < 2 or
// a name that is not a variable of `graph`.
absl::StatusOr<SplitResult> SplitVariables(GraphDef* graph,
                                           const std::vector<std::string>& variables, int parts);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_VARIABLE_SPLIT_H_
