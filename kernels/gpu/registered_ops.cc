// Kernels that only move tensors, registered for GPUs: the same kernels as
// on CPUs (the rendezvous copies between memory spaces; forwarding never
// touches the bytes). _HostSend and _HostRecv keep their tensor in host
// memory, as TensorFlow's.
#include <vector>

#include "kernels/cpu/control_flow_ops.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/gpu/gpu_kernel_util.h"
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

// Registers `build` for `op` on GPUs twice: for the device-memory types,
// and for int32 with `int32_host_args` in host memory.
void RegisterBoth(const char* op, const std::vector<const char*>& int32_host_args,
                  const KernelFactory& factory, const std::vector<const char*>& host_args = {}) {
  KernelDefBuilder device(op);
  device.Device(kDeviceGpu).TypeConstraint("T", gpu::DeviceMemoryTypes());
  KernelDefBuilder host(op);
  host.Device(kDeviceGpu).TypeConstraint<int32_t>("T");
  for (const char* arg : host_args) {
    device.HostMemory(arg);
    host.HostMemory(arg);
  }
  for (const char* arg : int32_host_args) host.HostMemory(arg);
  KernelRegistry::Global()->Register(device.Build(factory));
  KernelRegistry::Global()->Register(host.Build(factory));
}

KernelRegistrar Forward(const char* op) {
  return KernelRegistrar(KernelDefBuilder(op)
                             .Device(kDeviceGpu)
                             .TypeConstraint("T", gpu::DeviceMemoryTypes())
                             .Build(NewForwardInputsOp));
}
const KernelRegistrar kIdentity = Forward("Identity");
const KernelRegistrar kIdentityN = Forward("IdentityN");
const KernelRegistrar kStopGradient = Forward("StopGradient");
const KernelRegistrar kPreventGradient = Forward("PreventGradient");
const KernelRegistrar kSnapshot = Forward("Snapshot");
const KernelRegistrar kNoOp(KernelDefBuilder("NoOp").Device(kDeviceGpu).Build(NewNoOp));

// int32 Identity and its kin, on host memory.
const bool kInt32Forwards = [] {
  for (const char* op : {"Identity", "IdentityN", "StopGradient", "PreventGradient", "Snapshot"}) {
    KernelRegistry::Global()->Register(KernelDefBuilder(op)
                                           .Device(kDeviceGpu)
                                           .TypeConstraint<int32_t>("T")
                                           .HostMemory("input")
                                           .HostMemory("output")
                                           .Build(NewForwardInputsOp));
  }
  return true;
}();

// v1 control flow (a loop's frame may span the CPU and a GPU, and the
// partitioner's control loops run on every device the frame reaches): the
// CPU's kernels, the predicates and Merge's index in host memory, int32
// values too.
const bool kControlFlow = [] {
  for (const char* op : {"Enter", "Exit", "NextIteration"}) {
    RegisterBoth(op, {"data", "output"}, NewControlForwardOp);
  }
  RegisterBoth("Switch", {"data", "output_false", "output_true"}, NewSwitchOp, {"pred"});
  RegisterBoth("Merge", {"inputs", "output"}, NewMergeOp, {"value_index"});
  return true;
}();
const KernelRegistrar kLoopCond(KernelDefBuilder("LoopCond")
                                    .Device(kDeviceGpu)
                                    .HostMemory("input")
                                    .HostMemory("output")
                                    .Build(NewControlForwardOp));
const KernelRegistrar kControlTrigger(
    KernelDefBuilder("ControlTrigger").Device(kDeviceGpu).Build(NewControlTriggerOp));

}  // namespace
}  // namespace graphrun
