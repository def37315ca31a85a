// The _Send/_Recv kernels move tensors through the step's rendezvous, which
// copies between memory spaces where the two ends need it
// (runtime/copy_tensor.h), so one kernel serves every device type: this file
// registers them for CPUs, and device packages (kernels/gpu/) for theirs.
#ifndef GRAPHRUN_KERNELS_CPU_SENDRECV_OPS_H_
#define GRAPHRUN_KERNELS_CPU_SENDRECV_OPS_H_

#include "kernels/op_kernel.h"

namespace graphrun {

// _Send and _HostSend.
OpKernel* NewSendOp(OpKernelConstruction* c);
// _Recv and _HostRecv (asynchronous).
OpKernel* NewRecvOp(OpKernelConstruction* c);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_SENDRECV_OPS_H_
