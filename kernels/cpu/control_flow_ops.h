// v1 control flow's kernels only route tensors, never touching their
// bytes, so device packages (kernels/gpu/) register these same kernels for
// their devices, with Switch's predicate, Merge's value_index and LoopCond
// in host memory (the executor reads them there).
#ifndef GRAPHRUN_KERNELS_CPU_CONTROL_FLOW_OPS_H_
#define GRAPHRUN_KERNELS_CPU_CONTROL_FLOW_OPS_H_

#include "kernels/op_kernel.h"

namespace graphrun {

OpKernel* NewSwitchOp(OpKernelConstruction* c);
OpKernel* NewMergeOp(OpKernelConstruction* c);
// Enter, Exit, NextIteration and LoopCond: output 0 is input 0.
OpKernel* NewControlForwardOp(OpKernelConstruction* c);
OpKernel* NewControlTriggerOp(OpKernelConstruction* c);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CONTROL_FLOW_OPS_H_
