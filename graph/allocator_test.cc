// Tests for HostAllocator: alignment, refused requests, and its cache of
// large freed blocks (reuse by size, eviction by count and by bytes). The cache is process-wide, so each test uses sizes no other test
// uses, and the eviction test first fills the cache with blocks of its own.
#include "graph/allocator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool AlignedTo(void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(HostAllocatorTest, AlignsAndHoldsTheBytes) {
  Allocator* a = HostAllocator();
  EXPECT_EQ(a->Name(), "host");
  for (size_t alignment : {size_t{8}, size_t{64}, size_t{4096}}) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, 3 * kMiB + 5}) {
      void* p = a->AllocateRaw(alignment, bytes);
      ASSERT_NE(p, nullptr) << alignment << " " << bytes;
      EXPECT_TRUE(AlignedTo(p, alignment)) << alignment << " " << bytes;
      std::memset(p, 0xab, bytes);  // ASan: the block holds what was asked
      a->DeallocateRaw(p, bytes);
    }
  }
}

TEST(HostAllocatorTest, RefusesWhatCannotBeServed) {
  Allocator* a = HostAllocator();
  // Rounding these up used to wrap around to a 64-byte block.
  EXPECT_EQ(a->AllocateRaw(64, std::numeric_limits<size_t>::max()), nullptr);
  EXPECT_EQ(a->AllocateRaw(64, std::numeric_limits<size_t>::max() - 10), nullptr);
  EXPECT_EQ(a->AllocateRaw(std::numeric_limits<size_t>::max(), 64), nullptr);
  EXPECT_EQ(a->AllocateRaw(0, 64), nullptr);
  EXPECT_EQ(a->AllocateRaw(48, 64), nullptr);  // not a power of two
  a->DeallocateRaw(nullptr, 100);              // a no-op
}

TEST(HostAllocatorTest, ReusesAFreedLargeBlockOfTheSameSize) {
  Allocator* a = HostAllocator();
  const size_t size = 2 * kMiB + 3 * 64;
  void* p = a->AllocateRaw(64, size);
  ASSERT_NE(p, nullptr);
  a->DeallocateRaw(p, size);
  // Same size (rounded to 64 bytes): the cached block comes back.
  void* q = a->AllocateRaw(64, size - 10);
  EXPECT_EQ(q, p);
  a->DeallocateRaw(q, size - 10);
  // A smaller alignment rounds the size differently but finds it too.
  void* r = a->AllocateRaw(16, size - 48);
  EXPECT_EQ(r, p);
  // Taken out of the cache: a second request of that size gets another.
  void* s = a->AllocateRaw(64, size);
  EXPECT_NE(s, p);
  a->DeallocateRaw(r, size);
  a->DeallocateRaw(s, size);
}

TEST(HostAllocatorTest, EvictsTheOldestPastSixtyFourBlocks) {
  Allocator* a = HostAllocator();
  // Fill the cache with 64 blocks of a size of our own, pushing out
  // whatever other tests left.
  const size_t filler = kMiB + 7 * 64;
  std::vector<void*> fill;
  for (int i = 0; i < 64; ++i) fill.push_back(a->AllocateRaw(64, filler));
  for (void* p : fill) a->DeallocateRaw(p, filler);

  const size_t size = kMiB + 11 * 64;
  std::vector<void*> blocks;
  for (int i = 0; i < 65; ++i) {
    blocks.push_back(a->AllocateRaw(64, size));
    ASSERT_NE(blocks.back(), nullptr);
  }
  // Freed oldest first: the 65th free evicts blocks[0].
  for (void* p : blocks) a->DeallocateRaw(p, size);
  std::vector<void*> again;
  for (int i = 0; i < 64; ++i) again.push_back(a->AllocateRaw(64, size));
  EXPECT_EQ(again, std::vector<void*>(blocks.begin() + 1, blocks.end()));
  for (void* p : again) a->DeallocateRaw(p, size);
}

TEST(HostAllocatorTest, EvictsTheOldestPastAnEighthOfMemory) {
  Allocator* a = HostAllocator();
  // The documented limit: an eighth of physical memory, clamped to
  // 256 MiB .. 4 GiB.
  const size_t memory = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t limit = std::min(std::max(memory / 8, 256 * kMiB), 4096 * kMiB);
  // Three blocks of 0.4 of it (address space only: never touched) cannot
  // all stay: the oldest goes, whatever smaller blocks were cached before.
  const size_t size = limit / 10 * 4 / 64 * 64 + 64;
  void* b[3];
  for (void*& p : b) {
    p = a->AllocateRaw(64, size);
    ASSERT_NE(p, nullptr);
  }
  for (void* p : b) a->DeallocateRaw(p, size);
  void* first = a->AllocateRaw(64, size);
  void* second = a->AllocateRaw(64, size);
  EXPECT_EQ(first, b[1]);
  EXPECT_EQ(second, b[2]);
  a->DeallocateRaw(first, size);
  a->DeallocateRaw(second, size);
}

}  // namespace
}  // namespace graphrun
