// Moving a tensor from one end of a rendezvous to the other when the two
// ends keep tensors in different memory: a GPU's and the host's, or two
// GPUs'. Copies go through the devices' DeviceContexts
// (kernels/device_context.h), so they are ordered after the work that made
// the value; two devices' memories are joined through a host buffer.
// Host memory to host memory costs nothing: the buffer is shared.
#ifndef GRAPHRUN_RUNTIME_COPY_TENSOR_H_
#define GRAPHRUN_RUNTIME_COPY_TENSOR_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"
#include "kernels/rendezvous.h"

namespace graphrun {

using CopyTensorDone = std::function<void(const absl::Status& status, const Tensor& value)>;

// True when `value` sent from `send` can be handed to `recv` as it is (both
// ends in host memory, or both on one device's memory).
bool SameMemorySpace(const Rendezvous::Args& send, const Rendezvous::Args& recv);

// Calls `done` once, with `value` in the memory `recv` wants: at once when
// SameMemorySpace, else when the copy is done (on a thread of a device's
// choosing). Errors name the transfer (`key`) and both ends: a device in
// the way that has no DeviceContext (Unimplemented), a destination that
// cannot be allocated (ResourceExhausted), a failed copy (the device's
// error), a dtype without fixed-size elements (strings stay in host
// memory).
void CopyTensorBetweenEnds(absl::string_view key, const Rendezvous::Args& send,
                           const Rendezvous::Args& recv, const Tensor& value,
                           CopyTensorDone done);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_COPY_TENSOR_H_
