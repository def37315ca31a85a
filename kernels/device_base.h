// DeviceBase: what a kernel may use of the device it runs on — its name and
// type, the allocators for its outputs and temporaries (the device's memory,
// and host memory for HostMemory arguments), on CPU the intra-op Eigen
// thread pool, and on devices with memory of their own the device context
// (streams and copies, kernels/device_context.h). runtime/ implements it
// (CpuDevice, GpuDevice); tests implement it with a plain host device.
// Implementations are thread-safe: many kernels use one device at once.
#ifndef GRAPHRUN_KERNELS_DEVICE_BASE_H_
#define GRAPHRUN_KERNELS_DEVICE_BASE_H_

#include <string>

#include "absl/status/status.h"
#include "graph/allocator.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {

class ResourceMgr;  // kernels/resource_mgr.h

class DeviceContext;  // kernels/device_context.h

// Device types, as TensorFlow spells them.
inline constexpr char kDeviceCpu[] = "CPU";
inline constexpr char kDeviceGpu[] = "GPU";

class DeviceBase {
 public:
  virtual ~DeviceBase() = default;
  // Full name: /job:localhost/replica:0/task:0/device:CPU:0.
  virtual const std::string& name() const = 0;
  // "CPU", "GPU".
  virtual const std::string& device_type() const = 0;
  // The device's own memory.
  virtual Allocator* allocator() const = 0;
  // Where a tensor `attr` describes goes: host memory the CPU can read when
  // attr.on_host, else the device's own. CPU devices: allocator() always.
  virtual Allocator* GetAllocator(const AllocatorAttributes& attr) const {
    (void)attr;
    return allocator();
  }
  // Streams and copies in and out of the device's memory; nullptr on
  // devices whose memory is the host's (CPUs). Owned by the device.
  virtual DeviceContext* device_context() const { return nullptr; }
  // Waits until the work queued on the device so far is done; the first
  // error it met. CPUs run kernels synchronously: OK at once.
  virtual absl::Status Sync() { return absl::OkStatus(); }
  // Eigen device for CPU kernels: runs Eigen expressions on the intra-op
  // pool. nullptr on devices that are not CPUs.
  virtual const Eigen::ThreadPoolDevice* eigen_cpu_device() const = 0;
  // Threads in the intra-op pool (1 = kernels run single-threaded).
  virtual int intra_op_threads() const = 0;
  // State that outlives steps (variables): the device's own, freed with
  // it. nullptr on devices that keep none.
  virtual ResourceMgr* resource_manager() { return nullptr; }
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_DEVICE_BASE_H_
