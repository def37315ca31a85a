// DeviceBase: what a kernel may use of the device it runs on — its name and
// type, the allocator for its outputs and temporaries, and (on CPU) the
// intra-op Eigen thread pool. runtime/ implements it (CpuDevice, GpuDevice);
// tests implement it with a plain host device. Implementations are
// thread-safe: many kernels use one device at once.
#ifndef GRAPHRUN_KERNELS_DEVICE_BASE_H_
#define GRAPHRUN_KERNELS_DEVICE_BASE_H_

#include <string>

#include "graph/allocator.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {

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
  virtual Allocator* allocator() const = 0;
  // Eigen device for CPU kernels: runs Eigen expressions on the intra-op
  // pool. nullptr on devices that are not CPUs.
  virtual const Eigen::ThreadPoolDevice* eigen_cpu_device() const = 0;
  // Threads in the intra-op pool (1 = kernels run single-threaded).
  virtual int intra_op_threads() const = 0;
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_DEVICE_BASE_H_
