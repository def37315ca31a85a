// Kernels that never touch their inputs' bytes work in any memory space, so
// one kernel serves every device type: kernels/cpu/ registers them for CPUs,
// device packages (kernels/gpu/) for theirs. They hand inputs on (Identity
// and its kin, NoOp), change only the shape (Reshape, ExpandDims, Squeeze:
// their shape arguments in host memory) or read only the shape (Shape,
// Size, Rank: results in host memory). Also what other devices' Const
// kernels share with the CPU's.
#ifndef GRAPHRUN_KERNELS_CPU_FORWARD_OPS_H_
#define GRAPHRUN_KERNELS_CPU_FORWARD_OPS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "graph/types.h"
#include "kernels/op_kernel.h"

namespace graphrun {

// Output i is input i, sharing its buffer (Identity, IdentityN,
// StopGradient, PreventGradient, Snapshot, PlaceholderWithDefault).
OpKernel* NewForwardInputsOp(OpKernelConstruction* c);
OpKernel* NewNoOp(OpKernelConstruction* c);
// What forwarding kernels accept: every tensor type, and the list
// (DT_VARIANT) and TensorArray (DT_RESOURCE) handles loops carry.
const std::vector<DataType>& ForwardableTypes();
// Reshape, ExpandDims, Squeeze; Shape and Size (int32 or int64 by the
// node's out_type), Rank.
OpKernel* NewReshapeOp(OpKernelConstruction* c);
OpKernel* NewExpandDimsOp(OpKernelConstruction* c);
OpKernel* NewSqueezeOp(OpKernelConstruction* c);
OpKernel* NewShapeOp(OpKernelConstruction* c);
OpKernel* NewSizeOp(OpKernelConstruction* c);
OpKernel* NewRankOp(OpKernelConstruction* c);
// Const with its value in host memory: the CPU's, and a GPU's int32 Const.
OpKernel* NewHostConstOp(OpKernelConstruction* c);
// A Const node's value (its "value" attr) in host memory; InvalidArgument
// when missing, undecodable, or not of the node's dtype.
absl::StatusOr<Tensor> ConstValue(OpKernelConstruction* ctx);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_FORWARD_OPS_H_
