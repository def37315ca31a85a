// Kernels that only move tensors, registered for GPUs: the same kernels as
// on CPUs (the rendezvous copies between memory spaces; forwarding never
// touches the bytes). _HostSend and _HostRecv keep their tensor in host
// memory, as TensorFlow's.
#include "kernels/cpu/control_flow_ops.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using internal::KernelRegistrar;

const KernelRegistrar kSend(KernelDefBuilder("_Send").Device(kDeviceGpu).Build(NewSendOp));
const KernelRegistrar kRecv(KernelDefBuilder("_Recv").Device(kDeviceGpu).Build(NewRecvOp));
const KernelRegistrar kHostSend(
    KernelDefBuilder("_HostSend").Device(kDeviceGpu).HostMemory("tensor").Build(NewSendOp));
const KernelRegistrar kHostRecv(
    KernelDefBuilder("_HostRecv").Device(kDeviceGpu).HostMemory("tensor").Build(NewRecvOp));

// Every forwardable type but the host-only ones: strings, TensorList
// handles (DT_VARIANT) and TensorArray handles (DT_RESOURCE) live in host
// memory, so nodes passing them on stay on CPU with them.
const std::vector<DataType>& GpuForwardableTypes() {
  static const std::vector<DataType>* types = [] {
    auto* v = new std::vector<DataType>();
    for (DataType t : ForwardableTypes()) {
      if (t != DT_STRING && t != DT_VARIANT && t != DT_RESOURCE) v->push_back(t);
    }
    return v;
  }();
  return *types;
}

KernelRegistrar Forward(const char* op) {
  return KernelRegistrar(KernelDefBuilder(op)
                             .Device(kDeviceGpu)
                             .TypeConstraint("T", GpuForwardableTypes())
                             .Build(NewForwardInputsOp));
}
const KernelRegistrar kIdentity = Forward("Identity");
const KernelRegistrar kIdentityN = Forward("IdentityN");
const KernelRegistrar kStopGradient = Forward("StopGradient");
const KernelRegistrar kPreventGradient = Forward("PreventGradient");
const KernelRegistrar kSnapshot = Forward("Snapshot");
const KernelRegistrar kNoOp(KernelDefBuilder("NoOp").Device(kDeviceGpu).Build(NewNoOp));

// v1 control flow (a loop's frame may span the CPU and a GPU, and the
// partitioner's control loops run on every device the frame reaches): the
// CPU's kernels, the predicates and Merge's index in host memory.
KernelRegistrar ControlForward(const char* op) {
  return KernelRegistrar(KernelDefBuilder(op)
                             .Device(kDeviceGpu)
                             .TypeConstraint("T", GpuForwardableTypes())
                             .Build(NewControlForwardOp));
}
const KernelRegistrar kEnter = ControlForward("Enter");
const KernelRegistrar kExit = ControlForward("Exit");
const KernelRegistrar kNextIteration = ControlForward("NextIteration");
const KernelRegistrar kSwitch(KernelDefBuilder("Switch")
                                  .Device(kDeviceGpu)
                                  .TypeConstraint("T", GpuForwardableTypes())
                                  .HostMemory("pred")
                                  .Build(NewSwitchOp));
const KernelRegistrar kMerge(KernelDefBuilder("Merge")
                                 .Device(kDeviceGpu)
                                 .TypeConstraint("T", GpuForwardableTypes())
                                 .HostMemory("value_index")
                                 .Build(NewMergeOp));
const KernelRegistrar kLoopCond(KernelDefBuilder("LoopCond")
                                    .Device(kDeviceGpu)
                                    .HostMemory("input")
                                    .HostMemory("output")
                                    .Build(NewControlForwardOp));
const KernelRegistrar kControlTrigger(
    KernelDefBuilder("ControlTrigger").Device(kDeviceGpu).Build(NewControlTriggerOp));

}  // namespace
}  // namespace graphrun
