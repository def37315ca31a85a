#include "runtime/gpu/bfc_allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kUnit = BfcAllocator::kAllocationUnit;

// Device memory for tests: `capacity` bytes, handed out first fit. Backed by
// a host buffer (so tests can write through the pointers) or, for sizes a
// test machine cannot hold, by fake addresses that must never be touched.
// Records every request.
class FakeDeviceMemory {
 public:
  enum class Backing { kHost, kNone };
  FakeDeviceMemory(size_t capacity, Backing backing) : capacity_(capacity) {
    if (backing == Backing::kHost) {
      buffer_ = std::make_unique<char[]>(capacity + 4096);
      base_ = (reinterpret_cast<uintptr_t>(buffer_.get()) + 4095) / 4096 * 4096;
    } else {
      base_ = uintptr_t{1} << 44;
    }
  }

  void* Alloc(size_t alignment, size_t bytes) {
    asked.push_back(bytes);
    last_alignment = alignment;
    if (fail_all) return nullptr;
    // First fit among the gaps between live regions.
    size_t offset = 0;
    for (const auto& [start, size] : live_) {
      if (start - offset >= bytes) break;
      offset = start + size;
      offset = (offset + alignment - 1) / alignment * alignment;
    }
    if (offset > capacity_ || capacity_ - offset < bytes) return nullptr;
    live_[offset] = bytes;
    granted.push_back(bytes);
    outstanding += bytes;
    peak_outstanding = std::max(peak_outstanding, outstanding);
    return reinterpret_cast<void*>(base_ + offset + misalign);
  }

  void Free(void* ptr, size_t bytes) {
    ++free_calls;
    const size_t offset = reinterpret_cast<uintptr_t>(ptr) - misalign - base_;
    auto it = live_.find(offset);
    ASSERT_NE(it, live_.end()) << "freed a region never handed out";
    EXPECT_EQ(it->second, bytes) << "freed with another size";
    outstanding -= it->second;
    live_.erase(it);
  }

  // Whether [p, p + bytes) lies inside one live region.
  bool Contains(const void* p, size_t bytes) const {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    for (const auto& [start, size] : live_) {
      const uintptr_t lo = base_ + start + misalign;
      if (addr >= lo && addr - lo <= size && size - (addr - lo) >= bytes) {
        return true;
      }
    }
    return false;
  }
  uintptr_t RegionBase(int i) const {
    auto it = live_.begin();
    std::advance(it, i);
    return base_ + it->first + misalign;
  }

  std::vector<size_t> asked;    // every Alloc's size, failed or not
  std::vector<size_t> granted;  // the sizes of the regions handed out
  size_t last_alignment = 0;
  int free_calls = 0;
  size_t outstanding = 0;
  size_t peak_outstanding = 0;
  bool fail_all = false;
  uintptr_t misalign = 0;  // added to every address handed out

 private:
  const size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  uintptr_t base_;
  std::map<size_t, size_t> live_;  // offset -> bytes
};

class FakeSubAllocator : public SubAllocator {
 public:
  explicit FakeSubAllocator(FakeDeviceMemory* memory) : memory_(memory) {}
  void* Alloc(size_t alignment, size_t bytes) override {
    return memory_->Alloc(alignment, bytes);
  }
  void Free(void* ptr, size_t bytes) override { memory_->Free(ptr, bytes); }

 private:
  FakeDeviceMemory* const memory_;
};

std::unique_ptr<BfcAllocator> MakeAllocator(FakeDeviceMemory* memory,
                                            size_t limit, bool allow_growth) {
  BfcAllocatorOptions options;
  options.name = "GPU_0_bfc";
  options.memory_limit = limit;
  options.allow_growth = allow_growth;
  return std::make_unique<BfcAllocator>(
      std::make_unique<FakeSubAllocator>(memory), options);
}

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(FormatBytesTest, BinaryUnitsThreeDigits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(300 * kKiB), "300.0 KiB");
  EXPECT_EQ(FormatBytes(512 * kMiB), "512.0 MiB");
  EXPECT_EQ(FormatBytes(3 * (size_t{1} << 29)), "1.50 GiB");
  EXPECT_EQ(FormatBytes(15 * (size_t{1} << 30)), "15.0 GiB");
  EXPECT_EQ(FormatBytes(std::numeric_limits<uint64_t>::max()), "16.0 EiB");
}

TEST(BfcAllocatorTest, EveryPointerIsAlignedTo256) {
  FakeDeviceMemory memory(8 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, 8 * kMiB, /*allow_growth=*/true);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(0, 20000);
  const size_t alignments[] = {1, 8, 64, 256};
  std::vector<void*> live;
  for (int i = 0; i < 300; ++i) {
    void* p = allocator->AllocateRaw(alignments[i % 4], size(rng));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Addr(p) % 256, 0u);
    live.push_back(p);
  }
  EXPECT_EQ(memory.last_alignment, 256u);
  for (void* p : live) allocator->DeallocateRaw(p, 0);
}

TEST(BfcAllocatorTest, UnsupportedAlignmentIsRefusedNotCountedAsOom) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  EXPECT_EQ(allocator->AllocateRaw(0, 64), nullptr);
  EXPECT_EQ(allocator->AllocateRaw(3, 64), nullptr);
  EXPECT_EQ(allocator->AllocateRaw(512, 64), nullptr);
  EXPECT_EQ(allocator->BfcStats().num_failed_allocs, 0);
  EXPECT_FALSE(allocator->LastFailure().has_value());
  EXPECT_TRUE(memory.asked.empty());
}

TEST(BfcAllocatorTest, BestFitTakesTheSmallestFreeChunkThatFits) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  // Free chunks of 5, 7, 6, 3 and 40 units, kept apart by one-unit chunks
  // in use, then the rest of the region.
  const size_t free_units[] = {5, 7, 6, 3, 40};
  std::vector<void*> gaps;
  for (size_t units : free_units) {
    gaps.push_back(allocator->AllocateRaw(256, units * kUnit));
    ASSERT_NE(gaps.back(), nullptr);
    ASSERT_NE(allocator->AllocateRaw(256, kUnit), nullptr);
  }
  void* tail = allocator->AllocateRaw(256, kUnit);
  allocator->DeallocateRaw(tail, kUnit);
  for (size_t i = 0; i < gaps.size(); ++i) {
    allocator->DeallocateRaw(gaps[i], free_units[i] * kUnit);
  }
  // Same bin ([4, 8) units): 6 takes the 6-unit chunk, not 5 or 7.
  EXPECT_EQ(allocator->AllocateRaw(256, 6 * kUnit), gaps[2]);
  // 4 takes the 5-unit chunk; its last unit stays free...
  EXPECT_EQ(allocator->AllocateRaw(256, 4 * kUnit), gaps[0]);
  // ...and is the best fit for one unit.
  EXPECT_EQ(Addr(allocator->AllocateRaw(256, 1)), Addr(gaps[0]) + 4 * kUnit);
  EXPECT_EQ(allocator->AllocateRaw(256, 2 * kUnit), gaps[3]);
  EXPECT_EQ(allocator->AllocateRaw(256, 7 * kUnit), gaps[1]);
  // Nothing in 20's bin ([16, 32) units): the next bin's smallest chunk.
  EXPECT_EQ(allocator->AllocateRaw(256, 20 * kUnit), gaps[4]);
  // 41 units fit nowhere but in the rest of the region.
  EXPECT_EQ(allocator->AllocateRaw(256, 41 * kUnit), tail);
}

TEST(BfcAllocatorTest, SplitsAndCoalescesNeighbours) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* a = allocator->AllocateRaw(256, 1000);  // 4 units
  void* b = allocator->AllocateRaw(256, 2000);  // 8 units
  void* c = allocator->AllocateRaw(256, 3000);  // 12 units
  const size_t rest = kMiB - 24 * kUnit;
  void* d = allocator->AllocateRaw(256, rest);  // the rest of the region
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(Addr(b), Addr(a) + 4 * kUnit);
  EXPECT_EQ(Addr(c), Addr(b) + 8 * kUnit);
  EXPECT_EQ(Addr(d), Addr(c) + 12 * kUnit);
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk, 0);
  EXPECT_EQ(allocator->BfcStats().bytes_in_use, static_cast<int64_t>(kMiB));

  allocator->DeallocateRaw(b, 2000);
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk, 8 * 256);
  allocator->DeallocateRaw(a, 1000);  // merges with b on its right
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk, 12 * 256);
  allocator->DeallocateRaw(c, 3000);  // merges with a+b on its left
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk, 24 * 256);
  allocator->DeallocateRaw(d, rest);  // both sides: the whole region
  const BfcAllocatorStats stats = allocator->BfcStats();
  EXPECT_EQ(stats.largest_free_chunk, static_cast<int64_t>(kMiB));
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.num_regions, 1);
  // One chunk again: the whole limit fits at the region's start.
  EXPECT_EQ(allocator->AllocateRaw(256, kMiB), a);
}

TEST(BfcAllocatorTest, FragmentationFailsAndSaysWhy) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* q[4];
  for (void*& p : q) {
    p = allocator->AllocateRaw(256, 256 * kKiB);
    ASSERT_NE(p, nullptr);
  }
  allocator->DeallocateRaw(q[0], 256 * kKiB);
  allocator->DeallocateRaw(q[2], 256 * kKiB);
  // 512 KiB free in total, but in two pieces of 256 KiB.
  EXPECT_EQ(allocator->AllocateRaw(256, 300 * kKiB), nullptr);
  const std::string expected =
      "asked 300.0 KiB, largest free chunk 256.0 KiB, in use 512.0 KiB of "
      "1.00 MiB limit, reserved 1.00 MiB";
  const std::optional<BfcFailedRequest> failure = allocator->LastFailure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->bytes, 300 * kKiB);
  EXPECT_EQ(failure->description, expected);
  EXPECT_EQ(allocator->DescribeOutOfMemory(300 * kKiB), expected);
  const absl::Status status = allocator->OutOfMemoryError(
      "output 0 of node 'conv1' (Conv2D)", 300 * kKiB);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "OOM when allocating output 0 of node 'conv1' (Conv2D) on "
            "GPU_0_bfc: " +
                expected);
  EXPECT_EQ(allocator->BfcStats().num_failed_allocs, 1);
  EXPECT_EQ(memory.asked.size(), 1u);  // the region, nothing more

  // Freeing the chunk between the two free ones makes 768 KiB in one piece.
  allocator->DeallocateRaw(q[1], 256 * kKiB);
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk,
            static_cast<int64_t>(768 * kKiB));
  EXPECT_EQ(allocator->AllocateRaw(256, 300 * kKiB), q[0]);
}

TEST(BfcAllocatorTest, WithoutGrowthTheFirstRequestReservesTheLimit) {
  FakeDeviceMemory memory(64 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, 64 * kMiB, /*allow_growth=*/false);
  EXPECT_EQ(allocator->BfcStats().bytes_reserved, 0);
  std::vector<void*> live;
  for (int i = 0; i < 50; ++i)
    live.push_back(allocator->AllocateRaw(256, kMiB));
  EXPECT_EQ(memory.asked, std::vector<size_t>{64 * kMiB});
  const BfcAllocatorStats stats = allocator->BfcStats();
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(64 * kMiB));
  EXPECT_EQ(stats.num_regions, 1);
  EXPECT_EQ(stats.bytes_limit, static_cast<int64_t>(64 * kMiB));
  for (void* p : live) allocator->DeallocateRaw(p, kMiB);
  allocator.reset();
  EXPECT_EQ(memory.free_calls, 1);
  EXPECT_EQ(memory.outstanding, 0u);
}

TEST(BfcAllocatorTest, GrowthDoublesRegionsAndStaysUnderTheLimit) {
  FakeDeviceMemory memory(kMiB << 10, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, 64 * kMiB, /*allow_growth=*/true);
  ASSERT_NE(allocator->AllocateRaw(256, kMiB), nullptr);  // region of 2 MiB
  ASSERT_NE(allocator->AllocateRaw(256, kMiB), nullptr);  // fills it
  EXPECT_EQ(allocator->BfcStats().bytes_reserved,
            static_cast<int64_t>(2 * kMiB));
  ASSERT_NE(allocator->AllocateRaw(256, kMiB), nullptr);      // region of 4
  ASSERT_NE(allocator->AllocateRaw(256, 3 * kMiB), nullptr);  // fills it
  ASSERT_NE(allocator->AllocateRaw(256, kMiB), nullptr);      // region of 8
  EXPECT_EQ(allocator->BfcStats().bytes_reserved,
            static_cast<int64_t>(14 * kMiB));
  // 20 MiB needs more than the planned 16: the region doubles to 32, and
  // the one after stays planned at 32.
  ASSERT_NE(allocator->AllocateRaw(256, 20 * kMiB), nullptr);
  EXPECT_EQ(memory.asked,
            (std::vector<size_t>{2 * kMiB, 4 * kMiB, 8 * kMiB, 32 * kMiB}));
  EXPECT_EQ(allocator->BfcStats().bytes_reserved,
            static_cast<int64_t>(46 * kMiB));
  // 7 and 12 MiB are free in two regions, 18 MiB unreserved: 20 fits
  // nowhere, and no region is wholly free to give back.
  EXPECT_EQ(allocator->AllocateRaw(256, 20 * kMiB), nullptr);
  EXPECT_EQ(memory.asked.size(), 4u);
  // 16 MiB: the planned 32 is capped to the 18 left under the limit.
  ASSERT_NE(allocator->AllocateRaw(256, 16 * kMiB), nullptr);
  EXPECT_EQ(memory.asked.back(), 18 * kMiB);
  const BfcAllocatorStats stats = allocator->BfcStats();
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(64 * kMiB));
  EXPECT_EQ(stats.peak_bytes_reserved, static_cast<int64_t>(64 * kMiB));
  EXPECT_EQ(stats.num_regions, 5);
  EXPECT_EQ(stats.largest_free_chunk, static_cast<int64_t>(12 * kMiB));
  EXPECT_EQ(allocator->AllocateRaw(256, 13 * kMiB), nullptr);
  EXPECT_EQ(memory.asked.size(), 5u);
  EXPECT_LE(memory.peak_outstanding, 64 * kMiB);
}

TEST(BfcAllocatorTest, GivesBackFreeRegionsToMakeRoomForABiggerOne) {
  for (bool release : {true, false}) {
    SCOPED_TRACE(release);
    FakeDeviceMemory memory(kMiB << 10, FakeDeviceMemory::Backing::kNone);
    BfcAllocatorOptions options;
    options.name = "GPU_0_bfc";
    options.memory_limit = 16 * kMiB;
    options.allow_growth = true;
    options.release_free_regions_on_oom = release;
    BfcAllocator allocator(std::make_unique<FakeSubAllocator>(&memory),
                           options);
    for (size_t mib : {1, 3, 7}) {  // regions of 2, 4 and 8 MiB
      void* p = allocator.AllocateRaw(256, mib * kMiB);
      ASSERT_NE(p, nullptr);
      allocator.DeallocateRaw(p, mib * kMiB);
    }
    EXPECT_EQ(allocator.BfcStats().bytes_reserved,
              static_cast<int64_t>(14 * kMiB));
    void* p = allocator.AllocateRaw(256, 12 * kMiB);
    if (release) {
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(memory.free_calls, 3);
      EXPECT_EQ(memory.asked.back(), 16 * kMiB);
      EXPECT_EQ(allocator.BfcStats().bytes_reserved,
                static_cast<int64_t>(16 * kMiB));
      EXPECT_EQ(allocator.BfcStats().num_regions, 1);
      allocator.DeallocateRaw(p, 12 * kMiB);
    } else {
      EXPECT_EQ(p, nullptr);
      EXPECT_EQ(memory.free_calls, 0);
    }
  }
}

TEST(BfcAllocatorTest, BacksOffWhenTheDeviceHasLessThanTheLimit) {
  FakeDeviceMemory memory(10 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, 16 * kMiB, /*allow_growth=*/false);
  ASSERT_NE(allocator->AllocateRaw(256, kMiB), nullptr);
  ASSERT_GE(memory.asked.size(), 2u);
  EXPECT_EQ(memory.asked.front(), 16 * kMiB);
  for (size_t i = 1; i < memory.asked.size(); ++i) {
    EXPECT_LT(memory.asked[i], memory.asked[i - 1]);
    EXPECT_GE(memory.asked[i], memory.asked[i - 1] / 10 * 9 - kUnit);
    EXPECT_EQ(memory.asked[i] % kUnit, 0u);
  }
  for (size_t i = 0; i + 1 < memory.asked.size(); ++i) {
    EXPECT_GT(memory.asked[i], 10 * kMiB);
  }
  ASSERT_EQ(memory.granted.size(), 1u);
  EXPECT_LE(memory.granted[0], 10 * kMiB);
  EXPECT_EQ(allocator->BfcStats().bytes_reserved,
            static_cast<int64_t>(memory.granted[0]));
}

TEST(BfcAllocatorTest, BacksOffDownToExactlyWhatIsNeeded) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, 16 * kMiB, /*allow_growth=*/false);
  ASSERT_NE(allocator->AllocateRaw(256, kMiB - 100), nullptr);
  EXPECT_EQ(memory.asked.back(), kMiB);
  EXPECT_EQ(memory.granted, std::vector<size_t>{kMiB});
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk, 0);
}

TEST(BfcAllocatorTest, DeviceWithNoMemoryFailsCleanly) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  memory.fail_all = true;
  auto allocator = MakeAllocator(&memory, 16 * kMiB, /*allow_growth=*/true);
  EXPECT_EQ(allocator->AllocateRaw(256, 4096), nullptr);
  EXPECT_EQ(memory.asked.front(), 2 * kMiB);
  EXPECT_EQ(memory.asked.back(), 4096u);
  EXPECT_EQ(allocator->DescribeOutOfMemory(4096),
            "asked 4.00 KiB, largest free chunk 0 B, in use 0 B of 16.0 MiB "
            "limit, reserved 0 B");
  memory.fail_all = false;
  EXPECT_NE(allocator->AllocateRaw(256, 4096), nullptr);
}

TEST(BfcAllocatorTest, MisalignedRegionIsGivenBack) {
  FakeDeviceMemory memory(4 * kMiB, FakeDeviceMemory::Backing::kNone);
  memory.misalign = 16;
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  EXPECT_EQ(allocator->AllocateRaw(256, 4096), nullptr);
  EXPECT_EQ(memory.outstanding, 0u);
  EXPECT_EQ(allocator->BfcStats().bytes_reserved, 0);
}

TEST(BfcAllocatorTest, OutOfMemoryThenFreeThenSuccess) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* big = allocator->AllocateRaw(256, 768 * kKiB);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(allocator->AllocateRaw(256, 512 * kKiB), nullptr);
  allocator->DeallocateRaw(big, 768 * kKiB);
  EXPECT_NE(allocator->AllocateRaw(256, 512 * kKiB), nullptr);
  EXPECT_EQ(allocator->BfcStats().num_failed_allocs, 1);
  EXPECT_EQ(allocator->BfcStats().num_allocs, 2);
}

TEST(BfcAllocatorTest, StatsThroughASequence) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* a = allocator->AllocateRaw(64, 100);   // 256
  void* b = allocator->AllocateRaw(64, 1000);  // 1024
  void* c = allocator->AllocateRaw(64, 5000);  // 5120
  BfcAllocatorStats s = allocator->BfcStats();
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.bytes_in_use, 6400);
  EXPECT_EQ(s.peak_bytes_in_use, 6400);
  EXPECT_EQ(s.largest_alloc_size, 5120);
  EXPECT_EQ(s.largest_free_chunk, static_cast<int64_t>(kMiB) - 6400);
  allocator->DeallocateRaw(b, 1000);
  s = allocator->BfcStats();
  EXPECT_EQ(s.bytes_in_use, 5376);
  EXPECT_EQ(s.peak_bytes_in_use, 6400);
  void* z = allocator->AllocateRaw(64, 0);  // 256, in b's old place
  EXPECT_EQ(z, b);
  s = allocator->BfcStats();
  EXPECT_EQ(s.bytes_in_use, 5632);
  EXPECT_EQ(s.peak_bytes_in_use, 6400);
  allocator->ResetPeak();
  EXPECT_EQ(allocator->BfcStats().peak_bytes_in_use, 5632);
  void* d = allocator->AllocateRaw(64, 256);
  EXPECT_EQ(allocator->BfcStats().peak_bytes_in_use, 5888);
  for (void* p : {a, c, z, d}) allocator->DeallocateRaw(p, 0);
  s = allocator->BfcStats();
  EXPECT_EQ(s.num_allocs, 5);
  EXPECT_EQ(s.num_failed_allocs, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, 5888);
  EXPECT_EQ(s.largest_alloc_size, 5120);
  EXPECT_EQ(s.largest_free_chunk, static_cast<int64_t>(kMiB));
}

TEST(BfcAllocatorTest, ZeroByteRequestsGetDistinctChunks) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kHost);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* a = allocator->AllocateRaw(64, 0);
  void* b = allocator->AllocateRaw(64, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(allocator->BfcStats().bytes_in_use, 512);
  allocator->DeallocateRaw(a, 0);
  allocator->DeallocateRaw(b, 0);
  EXPECT_EQ(allocator->BfcStats().bytes_in_use, 0);
}

TEST(BfcAllocatorTest, HugeRequestsFailWithoutOverflow) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  const size_t max = std::numeric_limits<size_t>::max();
  for (size_t bytes : {kMiB + 1, max, max - 1, max - 255, max / 2 + 1}) {
    EXPECT_EQ(allocator->AllocateRaw(256, bytes), nullptr) << bytes;
  }
  EXPECT_TRUE(memory.asked.empty());  // refused before asking the device
  EXPECT_EQ(allocator->BfcStats().num_failed_allocs, 5);
  EXPECT_EQ(allocator->LastFailure()->description,
            "asked 8.00 EiB, largest free chunk 0 B, in use 0 B of 1.00 MiB "
            "limit, reserved 0 B");
  EXPECT_NE(allocator->AllocateRaw(256, kMiB), nullptr);  // the limit fits
}

TEST(BfcAllocatorTest, HugeRequestUnderAHugeLimitLeavesGrowthAlone) {
  FakeDeviceMemory memory(64 * kMiB, FakeDeviceMemory::Backing::kNone);
  const size_t max = std::numeric_limits<size_t>::max();
  const size_t most = size_t{1} << 60;  // limits past it are taken as it
  auto allocator = MakeAllocator(&memory, max, /*allow_growth=*/true);
  EXPECT_EQ(allocator->BfcStats().bytes_limit, static_cast<int64_t>(most));
  EXPECT_EQ(allocator->AllocateRaw(256, most - 300), nullptr);
  // The planned region doubles up to the limit, then backs off to what the
  // request needs: most - 300 rounded up.
  EXPECT_EQ(memory.asked, (std::vector<size_t>{most, most - 256}));
  EXPECT_EQ(allocator->AllocateRaw(256, max - 300), nullptr);
  EXPECT_EQ(memory.asked.size(), 2u);
  memory.asked.clear();
  // The failed requests did not change the planned region size.
  EXPECT_NE(allocator->AllocateRaw(256, 4096), nullptr);
  EXPECT_EQ(memory.asked, std::vector<size_t>{2 * kMiB});
}

TEST(BfcAllocatorDeathTest, FreeingAForeignPointerAborts) {
  FakeDeviceMemory memory(kMiB, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, kMiB, /*allow_growth=*/false);
  void* p = allocator->AllocateRaw(256, 1024);
  ASSERT_NE(p, nullptr);
  int local = 0;
  EXPECT_DEATH(allocator->DeallocateRaw(&local, 4), "check failed");
}

// A seeded run against a model of the single region: the live chunks and
// the gaps between them. With the whole limit reserved as one region, best
// fit with splitting and coalescing must hand out exactly the start of the
// smallest gap that fits (lowest address on ties), and fail exactly when no
// gap fits. Host-backed: each buffer is filled and checked before it is
// freed, so overlapping chunks would show.
TEST(BfcAllocatorTest, RandomizedAgainstAModelOfTheRegion) {
  const size_t limit = 4 * kMiB;
  FakeDeviceMemory memory(limit, FakeDeviceMemory::Backing::kHost);
  auto allocator = MakeAllocator(&memory, limit, /*allow_growth=*/false);
  // Reserve the region, then give the first chunk back.
  allocator->DeallocateRaw(allocator->AllocateRaw(256, 1), 1);
  const uintptr_t base = memory.RegionBase(0);

  struct Live {
    size_t size;  // rounded
    size_t asked;
    uint8_t fill;
  };
  std::map<uintptr_t, Live> live;  // offset -> chunk
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> percent(0, 99);
  int64_t in_use = 0;
  int failures = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || percent(rng) < 55) {
      const int kind = percent(rng);
      const size_t asked =
          kind < 5    ? 0
          : kind < 70 ? std::uniform_int_distribution<size_t>(1, 8 * kKiB)(rng)
          : kind < 95
              ? std::uniform_int_distribution<size_t>(1, 128 * kKiB)(rng)
              : std::uniform_int_distribution<size_t>(1, limit)(rng);
      const size_t rounded = std::max<size_t>(1, (asked + 255) / 256) * 256;
      // Gaps from the model.
      size_t best_offset = 0, best_size = 0, largest_gap = 0;
      uintptr_t cursor = 0;
      auto consider = [&](uintptr_t start, uintptr_t end) {
        const size_t gap = end - start;
        largest_gap = std::max(largest_gap, gap);
        if (gap >= rounded && (best_size == 0 || gap < best_size)) {
          best_size = gap;
          best_offset = start;
        }
      };
      for (const auto& [offset, chunk] : live) {
        if (offset > cursor) consider(cursor, offset);
        cursor = offset + chunk.size;
      }
      if (cursor < limit) consider(cursor, limit);
      ASSERT_EQ(allocator->BfcStats().largest_free_chunk,
                static_cast<int64_t>(largest_gap));

      void* p = allocator->AllocateRaw(64, asked);
      if (best_size == 0) {
        ASSERT_EQ(p, nullptr) << "step " << step;
        ++failures;
        continue;
      }
      ASSERT_EQ(Addr(p), base + best_offset) << "step " << step;
      const uint8_t fill = static_cast<uint8_t>(step);
      std::memset(p, fill, asked);
      live[best_offset] = Live{rounded, asked, fill};
      in_use += static_cast<int64_t>(rounded);
    } else {
      auto it = live.begin();
      std::advance(
          it, std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng));
      const unsigned char* bytes =
          reinterpret_cast<const unsigned char*>(base + it->first);
      for (size_t i = 0; i < it->second.asked; ++i) {
        ASSERT_EQ(bytes[i], it->second.fill) << "step " << step;
      }
      allocator->DeallocateRaw(reinterpret_cast<void*>(base + it->first),
                               it->second.asked);
      in_use -= static_cast<int64_t>(it->second.size);
      live.erase(it);
    }
    ASSERT_EQ(allocator->BfcStats().bytes_in_use, in_use);
  }
  EXPECT_GT(failures, 0);  // the run reached the limit
  EXPECT_EQ(memory.asked.size(), 1u);
  for (const auto& [offset, chunk] : live) {
    allocator->DeallocateRaw(reinterpret_cast<void*>(base + offset), 0);
  }
  EXPECT_EQ(allocator->BfcStats().largest_free_chunk,
            static_cast<int64_t>(limit));
}

// With growth: many regions; live buffers never overlap, lie inside a
// region the device handed out, and add up to the bytes in use; the device
// never holds more than the limit.
TEST(BfcAllocatorTest, RandomizedWithGrowthStaysConsistent) {
  const size_t limit = 24 * kMiB;
  FakeDeviceMemory memory(limit, FakeDeviceMemory::Backing::kNone);
  auto allocator = MakeAllocator(&memory, limit, /*allow_growth=*/true);
  std::map<uintptr_t, size_t> live;  // address -> rounded size
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> percent(0, 99);
  int64_t in_use = 0;
  int failures = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || percent(rng) < 52) {
      const size_t asked =
          percent(rng) < 90
              ? std::uniform_int_distribution<size_t>(0, 64 * kKiB)(rng)
              : std::uniform_int_distribution<size_t>(1, 6 * kMiB)(rng);
      const size_t rounded = std::max<size_t>(1, (asked + 255) / 256) * 256;
      void* p = allocator->AllocateRaw(256, asked);
      if (p == nullptr) {
        ++failures;
        continue;
      }
      const uintptr_t a = Addr(p);
      ASSERT_TRUE(memory.Contains(p, rounded)) << "step " << step;
      auto next = live.lower_bound(a);
      if (next != live.end()) {
        ASSERT_LE(a + rounded, next->first);
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, a);
      }
      live[a] = rounded;
      in_use += static_cast<int64_t>(rounded);
    } else {
      auto it = live.begin();
      std::advance(
          it, std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng));
      allocator->DeallocateRaw(reinterpret_cast<void*>(it->first), 0);
      in_use -= static_cast<int64_t>(it->second);
      live.erase(it);
    }
    const BfcAllocatorStats stats = allocator->BfcStats();
    ASSERT_EQ(stats.bytes_in_use, in_use);
    ASSERT_EQ(static_cast<size_t>(stats.bytes_reserved), memory.outstanding);
    ASSERT_LE(memory.outstanding, limit);
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(memory.granted.size(), 3u);
  for (const auto& [addr, size] : live) {
    allocator->DeallocateRaw(reinterpret_cast<void*>(addr), size);
  }
  EXPECT_EQ(allocator->BfcStats().bytes_in_use, 0);
  allocator.reset();
  EXPECT_EQ(memory.outstanding, 0u);
}

TEST(BfcAllocatorTest, ConcurrentAllocateAndFree) {
  const size_t limit = 16 * kMiB;
  FakeDeviceMemory memory(limit, FakeDeviceMemory::Backing::kHost);
  auto allocator = MakeAllocator(&memory, limit, /*allow_growth=*/false);
  constexpr int kThreads = 8;
  constexpr int kSteps = 3000;
  std::vector<int64_t> successes(kThreads, 0);
  std::vector<int> corrupted(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      std::uniform_int_distribution<size_t> size(0, 64 * kKiB);
      struct Buffer {
        unsigned char* p;
        size_t n;
      };
      std::vector<Buffer> mine;
      const unsigned char fill = static_cast<unsigned char>(t + 1);
      auto release = [&](size_t i) {
        for (size_t j = 0; j < mine[i].n; ++j) {
          if (mine[i].p[j] != fill) {
            ++corrupted[t];
            break;
          }
        }
        allocator->DeallocateRaw(mine[i].p, mine[i].n);
        mine[i] = mine.back();
        mine.pop_back();
      };
      for (int s = 0; s < kSteps; ++s) {
        if (mine.size() < 16 && rng() % 2 == 0) {
          const size_t n = size(rng);
          auto* p = static_cast<unsigned char*>(allocator->AllocateRaw(64, n));
          if (p == nullptr) continue;
          ++successes[t];
          std::memset(p, fill, n);
          mine.push_back(Buffer{p, n});
        } else if (!mine.empty()) {
          release(rng() % mine.size());
        }
      }
      while (!mine.empty()) release(0);
    });
  }
  for (std::thread& thread : threads) thread.join();
  int64_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(corrupted[t], 0) << "thread " << t;
    total += successes[t];
  }
  const BfcAllocatorStats stats = allocator->BfcStats();
  EXPECT_EQ(stats.num_allocs, total);
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.largest_free_chunk, static_cast<int64_t>(limit));
  EXPECT_LE(stats.peak_bytes_in_use, static_cast<int64_t>(limit));
  EXPECT_EQ(memory.asked.size(), 1u);
}

// One step of a network-like loop: `layers` outputs cycling through
// sizes of 2-32 MiB with small tensors between, each freed two layers on
// (every fourth four), all freed by the end of the step. Checks that no
// two live allocations share a byte; returns the pointers in order.
std::vector<void*> RunStep(BfcAllocator* a, int layers, size_t scale = 1) {
  const size_t sizes[] = {8 * kMiB, 256,      16 * kMiB, 4 * kMiB, 777,      32 * kMiB, 2 * kMiB,
                          64 << 10, 12 * kMiB, 24 * kMiB, 4096,    6 * kMiB, 20 * kMiB, 1 << 18};
  struct Live {
    void* ptr;
    size_t bytes;
    int until;
  };
  std::vector<Live> live;
  std::vector<void*> out;
  a->BeginStep();
  for (int layer = 0; layer < layers + 4; ++layer) {
    if (layer < layers) {
      const size_t bytes = sizes[layer % 14] * scale;
      void* p = a->AllocateRaw(256, bytes);
      EXPECT_NE(p, nullptr) << "layer " << layer;
      for (const Live& l : live) {
        const bool apart = Addr(p) + bytes <= Addr(l.ptr) || Addr(l.ptr) + l.bytes <= Addr(p);
        EXPECT_TRUE(apart) << "layer " << layer << " overlaps a live tensor";
      }
      live.push_back({p, bytes, layer + (layer % 4 == 0 ? 4 : 2)});
      out.push_back(p);
    }
    for (size_t j = 0; j < live.size();) {
      if (live[j].until <= layer) {
        a->DeallocateRaw(live[j].ptr, live[j].bytes);
        live[j] = live.back();
        live.pop_back();
      } else {
        ++j;
      }
    }
  }
  EXPECT_TRUE(live.empty());
  a->EndStep();
  return out;
}

TEST(StepPlanTest, LiveAllocationsNeverShareBytesAndFitThePeak) {
  // Three tensors alive together, then a fourth when the first is gone.
  std::vector<StepAllocation> step = {
      {4 * kUnit, 0, 5}, {2 * kUnit, 1, 7}, {8 * kUnit, 2, 4}, {8 * kUnit, 6, 8}};
  const StepPlan plan = PlanStep(step);
  ASSERT_EQ(plan.allocations.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.allocations[i].size, step[i].size);
    for (size_t j = 0; j < i; ++j) {
      const StepAllocation& a = plan.allocations[i];
      const StepAllocation& b = plan.allocations[j];
      const bool together = a.begin < b.end && b.begin < a.end;
      const bool apart = a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
      EXPECT_TRUE(!together || apart) << i << " and " << j;
    }
  }
  // The peak (4 + 2 + 8 units) is what the plan needs here.
  EXPECT_EQ(plan.bytes, 14 * kUnit);
  EXPECT_EQ(PlanStep({}).bytes, 0u);
}

TEST(BfcStepPlanTest, ASteadyLoopRunsFromItsPlanAtAboutItsPeak) {
  FakeDeviceMemory memory(2048 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto a = MakeAllocator(&memory, 2048 * kMiB, /*allow_growth=*/true);
  const std::vector<void*> first = RunStep(a.get(), 56);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 0);
  const size_t planned = a->PlannedBytes();
  const int64_t peak = a->BfcStats().peak_bytes_in_use;
  EXPECT_GE(planned, static_cast<size_t>(peak));
  std::vector<void*> last;
  for (int step = 0; step < 4; ++step) last = RunStep(a.get(), 56);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 56);
  EXPECT_EQ(a->PlannedBytes(), planned);
  const BfcAllocatorStats stats = a->BfcStats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  // Only the plan's region is held once the loop is steady.
  EXPECT_EQ(stats.bytes_reserved, static_cast<int64_t>(planned));
  EXPECT_LE(static_cast<double>(stats.bytes_reserved) / static_cast<double>(peak), 1.10);
  EXPECT_EQ(memory.outstanding, planned);
}

TEST(BfcStepPlanTest, AStepThatGoesAnotherWayIsServedAndPlannedAnew) {
  FakeDeviceMemory memory(4096 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto a = MakeAllocator(&memory, 4096 * kMiB, /*allow_growth=*/true);
  RunStep(a.get(), 28);
  RunStep(a.get(), 28);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 28);
  // Twice the sizes from the first layer: nothing fits the plan.
  RunStep(a.get(), 28, /*scale=*/2);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 0);
  const size_t bigger = a->PlannedBytes();
  RunStep(a.get(), 28, 2);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 28);
  EXPECT_EQ(a->PlannedBytes(), bigger);
  // Fewer layers: the plan is followed while the sizes agree, then the
  // step ends early and is planned anew.
  RunStep(a.get(), 10, 2);
  EXPECT_EQ(a->LastStepPlannedAllocations(), 10);
  EXPECT_EQ(a->BfcStats().bytes_in_use, 0);
}

TEST(BfcStepPlanTest, AnOutputHoldingItsPlaceIsServedElsewhere) {
  FakeDeviceMemory memory(2048 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto a = MakeAllocator(&memory, 2048 * kMiB, /*allow_growth=*/true);
  // Each step's last tensor outlives it (a fetched output) until the
  // next step ends.
  void* kept = nullptr;
  for (int step = 0; step < 4; ++step) {
    a->BeginStep();
    void* x = a->AllocateRaw(256, 4 * kMiB);
    void* y = a->AllocateRaw(256, 8 * kMiB);
    a->DeallocateRaw(x, 4 * kMiB);
    void* out = a->AllocateRaw(256, 2 * kMiB);
    a->DeallocateRaw(y, 8 * kMiB);
    ASSERT_NE(out, nullptr);
    if (kept != nullptr) {
      EXPECT_NE(out, kept);
      const bool apart = Addr(out) + 2 * kMiB <= Addr(kept) || Addr(kept) + 2 * kMiB <= Addr(out);
      EXPECT_TRUE(apart);
    }
    a->EndStep();
    if (kept != nullptr) a->DeallocateRaw(kept, 2 * kMiB);
    kept = out;
  }
  // x and y took their places; the output's was held by the one before.
  EXPECT_GE(a->LastStepPlannedAllocations(), 2);
  a->DeallocateRaw(kept, 2 * kMiB);
  EXPECT_EQ(a->BfcStats().bytes_in_use, 0);
}

TEST(BfcStepPlanTest, OverlappingStepsAndFixedLimitsAreNotPlanned) {
  FakeDeviceMemory memory(2048 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto grows = MakeAllocator(&memory, 1024 * kMiB, /*allow_growth=*/true);
  grows->BeginStep();  // another step, running all along
  RunStep(grows.get(), 28);
  RunStep(grows.get(), 28);
  grows->EndStep();
  EXPECT_EQ(grows->PlannedBytes(), 0u);
  EXPECT_EQ(grows->LastStepPlannedAllocations(), 0);
  FakeDeviceMemory memory2(2048 * kMiB, FakeDeviceMemory::Backing::kNone);
  auto fixed = MakeAllocator(&memory2, 1024 * kMiB, /*allow_growth=*/false);
  RunStep(fixed.get(), 28);
  RunStep(fixed.get(), 28);
  EXPECT_EQ(fixed->PlannedBytes(), 0u);
  EXPECT_EQ(memory2.granted.size(), 1u);  // the whole limit, once
}

}  // namespace
}  // namespace graphrun
