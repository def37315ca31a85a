// Allocator: where tensor buffers come from. graph/ defines the interface and
// a plain aligned host allocator; runtime/ provides devices' allocators (with
// statistics, and on GPU a BFC allocator). Implementations are thread-safe.
#ifndef GRAPHRUN_GRAPH_ALLOCATOR_H_
#define GRAPHRUN_GRAPH_ALLOCATOR_H_

#include <cstddef>
#include <string>

namespace graphrun {

// Buffers are aligned for the widest vector loads (AVX-512) Eigen may use.
inline constexpr size_t kTensorAlignment = 64;

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // Returns nullptr when the memory is not available (never throws).
  virtual void* AllocateRaw(size_t alignment, size_t num_bytes) = 0;
  virtual void DeallocateRaw(void* ptr, size_t num_bytes) = 0;
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
