// Device: a place kernels run, with its full TensorFlow-style name, its
// allocator and (for CPUs) an intra-op thread pool. DeviceBase (kernels/)
// is the part kernels see; Device adds what the runtime and placer need.
// Thread-safe.
#ifndef GRAPHRUN_RUNTIME_DEVICE_H_
#define GRAPHRUN_RUNTIME_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/allocator.h"
#include "kernels/device_base.h"
#include "kernels/resource_mgr.h"

namespace graphrun {

// Wraps an allocator and counts what passes through it. AllocateRaw returns
// nullptr, without asking the base allocator, when the request would take
// the bytes in use past `bytes_limit` (0 = no limit) or is over 2^60 bytes;
// concurrent requests never overshoot the limit together. Lock-free;
// thread-safe.
class TrackingAllocator : public Allocator {
 public:
  TrackingAllocator(Allocator* base, std::string name, int64_t bytes_limit = 0);
  // For an allocator made with `new` whose owner (a device) goes away while
  // tensors it allocated may live on (fetched outputs): the allocator
  // deletes itself once its owner has released it and the last of its
  // buffers is freed.
  void Release();
  std::string Name() const override { return name_; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override;
  void DeallocateRaw(void* ptr, size_t num_bytes) override;
  AllocatorStats Stats() const;
  std::optional<AllocatorStats> GetStats() const override { return Stats(); }
  bool ResetPeak() override;
  bool IsHostMemory() const override { return base_->IsHostMemory(); }

 private:
  Allocator* const base_;
  const std::string name_;
  const int64_t bytes_limit_;
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};
  // The owner's reference plus one per live buffer.
  std::atomic<int64_t> refs_{1};
};

class Device : public DeviceBase {
 public:
  // A random nonzero number drawn when the device is made, so that two
  // instances of one device name (a worker restarted) differ. Rendezvous
  // keys carry the sender's (TensorFlow's send_device_incarnation), and a
  // key made for another instance is refused.
  uint64_t incarnation() const { return incarnation_; }
  // e.g. "GPU: device: 0, name: NVIDIA H200, ..." as in TensorFlow's device
  // mapping; "" for CPUs.
  virtual std::string physical_description() const { return ""; }
  virtual int64_t memory_limit() const = 0;
  // The device allocator's (allocator()) statistics; zeros when it keeps
  // none.
  AllocatorStats allocator_stats() const {
    return allocator()->GetStats().value_or(AllocatorStats());
  }
  void ResetAllocatorPeak() { allocator()->ResetPeak(); }
  // Variables and other state kept across steps, freed with the device.
  ResourceMgr* resource_manager() override { return &resources_; }

 protected:
  Device();

 private:
  const uint64_t incarnation_;
  ResourceMgr resources_;
};

struct CpuDeviceOptions {
  // Threads inside big kernels; 0 = all cores.
  int intra_op_threads = 0;
  int64_t memory_limit = 0;  // 0 = no limit
};

// A CPU device. `index` gives /device:CPU:<index>; several share the host.
std::unique_ptr<Device> NewCpuDevice(const std::string& name_prefix, int index,
                                     const CpuDeviceOptions& options);

// Number of cores this process may use (sched_getaffinity), at least 1.
int NumSchedulableCpus();

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_DEVICE_H_
