#include "graph/allocator.h"

#include <cstdlib>

namespace graphrun {
namespace {

class AlignedHostAllocator : public Allocator {
 public:
  std::string Name() const override { return "host"; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    // aligned_alloc wants a size that is a multiple of the alignment.
    size_t rounded = (num_bytes + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    return std::aligned_alloc(alignment, rounded);
  }
  void DeallocateRaw(void* ptr, size_t) override { std::free(ptr); }
};

}  // namespace

Allocator* HostAllocator() {
  static Allocator* const allocator = new AlignedHostAllocator();
  return allocator;
}

}  // namespace graphrun
