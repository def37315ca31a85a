// DeviceContext: how tensors move in and out of a device whose memory is
// not the host's, in order with the work the device's kernels queued.
//
// A GPU device queues kernels on a compute stream and copies on streams of
// their own; a copy waits for what the compute stream had queued when the
// copy was asked for (an event), and `done` runs once its bytes are there,
// on a thread of the device's choosing, never by blocking the caller. The
// destination is allocated by the caller: on the device (its allocator())
// for copies into the device, in host memory for copies out. Errors (a
// failed copy, a device that went away) reach `done`, never abort.
// Implementations are thread-safe.
#ifndef GRAPHRUN_KERNELS_DEVICE_CONTEXT_H_
#define GRAPHRUN_KERNELS_DEVICE_CONTEXT_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "graph/tensor.h"

namespace graphrun {

using StatusCallback = std::function<void(const absl::Status&)>;

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;

  // The stream this device's kernels queue their work on (a cudaStream_t on
  // a GPU), opaque outside the device.
  virtual void* compute_stream() const = 0;

  // Host `cpu` into `device_tensor` (same dtype and size, in this device's
  // memory).
  virtual void CopyCpuTensorToDevice(const Tensor& cpu, Tensor* device_tensor,
                                     StatusCallback done) = 0;
  // `device_tensor` (in this device's memory) into host `cpu`.
  virtual void CopyDeviceTensorToCpu(const Tensor& device_tensor, Tensor* cpu,
                                     StatusCallback done) = 0;
  // Between two tensors in this device's memory.
  virtual void CopyTensorInSameDevice(const Tensor& src, Tensor* dst, StatusCallback done) = 0;
  // Runs `done` once the work queued on the compute stream so far is
  // finished (its first error, if any).
  virtual void ThenExecute(StatusCallback done) = 0;
};

// Calls `start` with a callback and blocks until the callback has run; its
// status. For callers off a step's path: a kernel's constructor, tests,
// benchmarks.
inline absl::Status WaitFor(const std::function<void(StatusCallback)>& start) {
  absl::Notification done;
  absl::Status status;
  start([&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_DEVICE_CONTEXT_H_
