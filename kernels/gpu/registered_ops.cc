// Kernels that only move tensors, registered for GPUs: the same kernels as
// on CPUs (the rendezvous copies between memory spaces; forwarding never
// touches the bytes). _HostSend and _HostRecv keep their tensor in host
// memory, as TensorFlow's.
#include <vector>

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

// Every forwardable type but those kept in host memory: strings, TensorList
// handles (DT_VARIANT) and TensorArray handles (DT_RESOURCE), which never
// go to a GPU (nodes passing them on stay on CPU with them), and int32,
// whose kernels below keep every argument in host memory (TensorFlow's
// convention: shapes and loop counters stay where the host reads them).
const std::vector<DataType>& GpuForwardableTypes() {
  static const std::vector<DataType>* types = [] {
    auto* v = new std::vector<DataType>();
    for (DataType t : ForwardableTypes()) {
      if (t != DT_STRING && t != DT_VARIANT && t != DT_RESOURCE && t != DT_INT32) v->push_back(t);
    }
    return v;
  }();
  return *types;
}

// Registers `build` for `op` on GPUs twice: for the device-memory types,
// and for int32 with `int32_host_args` in host memory.
void RegisterBoth(const char* op, const std::vector<const char*>& int32_host_args,
                  const KernelFactory& factory, const std::vector<const char*>& host_args = {}) {
  KernelDefBuilder device(op);
  device.Device(kDeviceGpu).TypeConstraint("T", GpuForwardableTypes());
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
                             .TypeConstraint("T", GpuForwardableTypes())
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
