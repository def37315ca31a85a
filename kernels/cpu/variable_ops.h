// The variable kernels (variable_ops.cc) for any device type: this library
// registers them for CPUs, whose memory is the host's; a device with memory
// of its own registers the same kernels with the ways its memory is copied
// and added to, and with the variable's handle, flags and shape in host
// memory (kernels/gpu/).
#ifndef GRAPHRUN_KERNELS_CPU_VARIABLE_OPS_H_
#define GRAPHRUN_KERNELS_CPU_VARIABLE_OPS_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {

// How the kernels touch a variable's elements. Empty members: host memory
// (memcpy, and loops for float, double, int32 and int64).
struct VariableDeviceOps {
  // Copies `bytes` bytes between two buffers of the device's memory, in
  // order with the work its kernels queue.
  std::function<absl::Status(OpKernelContext* ctx, const void* src, void* dst, size_t bytes)>
      copy;
  // var += value (`add`) or var -= value: the same dtype and shape, both in
  // the device's memory.
  std::function<absl::Status(OpKernelContext* ctx, Tensor* var, const Tensor& value, bool add)>
      accumulate;
};

// The kernel of `op` (VariableV2, VarHandleOp, Assign, AssignAdd,
// AssignSub, AssignAddVariableOp, AssignSubVariableOp,
// IsVariableInitialized, VarIsInitializedOp, ReadVariableOp,
// AssignVariableOp, DestroyResourceOp, VariableShape) with `ops`; an empty
// factory for any other op.
KernelFactory VariableKernel(const std::string& op, VariableDeviceOps ops);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_VARIABLE_OPS_H_
