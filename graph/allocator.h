// Allocator: where tensor buffers come from. graph/ defines the interface and
// a plain aligned host allocator; runtime/ provides devices' allocators (with
// statistics, and on GPU a BFC allocator). Implementations are thread-safe.
#ifndef GRAPHRUN_GRAPH_ALLOCATOR_H_
#define GRAPHRUN_GRAPH_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace graphrun {

// Buffers are aligned for the widest vector loads (AVX-512) Eigen may use.
inline constexpr size_t kTensorAlignment = 64;

// What passed through an allocator.
struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;  // 0 = no limit
  // Memory taken from the system (a device's regions); 0 when the allocator
  // keeps none of its own.
  int64_t bytes_reserved = 0;
  // The largest request that would succeed without taking more memory from
  // the system; 0 when not tracked.
  int64_t largest_free_block = 0;
};

// Where a kernel wants an output or temporary: a device whose memory is not
// the host's (a GPU) still keeps some tensors in host memory (shapes, sizes:
// the kernel's HostMemory arguments).
struct AllocatorAttributes {
  bool on_host = false;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // Returns nullptr when the memory is not available (never throws).
  virtual void* AllocateRaw(size_t alignment, size_t num_bytes) = 0;
  virtual void DeallocateRaw(void* ptr, size_t num_bytes) = 0;
  // What passed through; nullopt for an allocator that keeps no count.
  virtual std::optional<AllocatorStats> GetStats() const { return std::nullopt; }
  // Sets the peak to the current use, so that a step can measure its own
  // peak; false for an allocator that keeps no count.
  virtual bool ResetPeak() { return false; }
  // A step that uses this allocator starts / has ended (every tensor it
  // made that is not an output is freed by then). Allocators that plan a
  // step's memory from the step before (BfcAllocator) use these; steps may
  // overlap. Default: nothing.
  virtual void BeginStep() {}
  virtual void EndStep() {}
  // Whether the host may read and write this allocator's memory directly:
  // false for a GPU's device memory, whose buffers are also reused in the
  // order of the device's stream rather than the host's.
  virtual bool IsHostMemory() const { return true; }
};

// The process-wide default host allocator (aligned_alloc/free). Never null;
// lives for the whole process. Freed blocks of 1 MiB and more are kept (at
// most 64 blocks and an eighth of the machine's memory, clamped to 256 MiB
// .. 4 GiB; oldest evicted first) and handed back to
// the next request of the same size rounded to 64 bytes, with its pages
// already mapped. Requests past 2^60 bytes, or whose alignment is not a power
// of two, get nullptr.
Allocator* HostAllocator();

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_ALLOCATOR_H_
