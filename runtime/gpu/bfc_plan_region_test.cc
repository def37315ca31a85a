// The step plan's region (bfc_allocator.h) when a step's peak alternates
// between two sizes, as a chain of kernels does when a buffer is freed a
// little early one step and a little late the next: the region must not be
// given back and taken again every other step.
#include <cstdlib>
#include <memory>

#include "gtest/gtest.h"
#include "runtime/gpu/bfc_allocator.h"

namespace graphrun {
namespace {

// Host memory standing for a device's, counting the regions taken.
class CountingSubAllocator : public SubAllocator {
 public:
  explicit CountingSubAllocator(int* regions) : regions_(regions) {}
  void* Alloc(size_t alignment, size_t bytes) override {
    ++*regions_;
    return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  void Free(void* ptr, size_t) override { std::free(ptr); }

 private:
  int* const regions_;
};

std::unique_ptr<BfcAllocator> GrowingAllocator(int* regions) {
  BfcAllocatorOptions options;
  options.name = "GPU_0_bfc";
  options.memory_limit = size_t{64} << 20;
  options.allow_growth = true;
  return std::make_unique<BfcAllocator>(std::make_unique<CountingSubAllocator>(regions), options);
}

// One step holding `buffers` buffers of 1 KiB at once (a kernel that
// reuses its input's buffer one step allocates one fewer the next).
void Step(BfcAllocator* a, int buffers) {
  a->BeginStep();
  void* held[2];
  for (int i = 0; i < buffers; ++i) held[i] = a->AllocateRaw(256, 1024);
  for (int i = 0; i < buffers; ++i) a->DeallocateRaw(held[i], 1024);
  a->EndStep();
}

TEST(BfcPlanRegionTest, AlternatingPeaksTakeFewRegions) {
  int regions = 0;
  auto allocator = GrowingAllocator(&regions);
  for (int step = 0; step < 200; ++step) Step(allocator.get(), step % 4 < 2 ? 2 : 1);
  // Each shrink that had to grow back soon doubles the wait before the next:
  // O(log steps) regions, where shrinking at once took one every other step.
  EXPECT_LE(regions, 20);
  EXPECT_EQ(allocator->BfcStats().bytes_in_use, 0);
}

TEST(BfcPlanRegionTest, ARegionTooBigForLongIsGivenBack) {
  int regions = 0;
  auto allocator = GrowingAllocator(&regions);
  for (int step = 0; step < 4; ++step) Step(allocator.get(), 2);
  const int64_t reserved_for_two = allocator->BfcStats().bytes_reserved;
  for (int step = 0; step < 50; ++step) Step(allocator.get(), 1);
  // A step that only ever needs one buffer ends up with a smaller plan region.
  EXPECT_LT(allocator->BfcStats().bytes_reserved, reserved_for_two);
}

}  // namespace
}  // namespace graphrun
