#include "graph/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace graphrun {
namespace {

// Host memory, 64-byte aligned. Large blocks are kept for reuse after they
// are freed: a step that allocates the same big tensors as the step before
// gets the same, already-mapped pages back instead of paying for fresh
// mmap()ed memory and its page faults every time (glibc serves blocks this
// size with mmap). The cache is bounded; blocks of other sizes are freed.
class AlignedHostAllocator : public Allocator {
 public:
  std::string Name() const override { return "host"; }

  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    // Rounding up must not wrap a huge request around to a small block.
    if (num_bytes > kMaxRequestBytes || alignment > kMaxRequestBytes ||
        alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return nullptr;
    }
    if (num_bytes <= kSmallBytes && alignment <= kSmallBytes) return SmallBlocks().Pop();
    // aligned_alloc wants a size that is a multiple of the alignment.
    size_t rounded = (num_bytes + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    if (rounded >= kMinCachedBytes && alignment <= kCacheAlignment) {
      // Cached blocks are keyed by their size rounded as DeallocateRaw
      // rounds it, whatever alignment this request asked for.
      rounded = (rounded + kCacheAlignment - 1) / kCacheAlignment * kCacheAlignment;
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < cache_.size(); ++i) {
        if (cache_[i].second == rounded) {
          void* p = cache_[i].first;
          cached_bytes_ -= rounded;
          cache_.erase(cache_.begin() + static_cast<long>(i));
          return p;
        }
      }
    }
    if (rounded >= kMinCachedBytes && alignment <= kCacheAlignment) {
      alignment = kCacheAlignment;  // so the block can serve any later request
    }
    if (rounded >= kHugeBytes && alignment <= kHugePage) {
      // Transparent huge pages: a fresh 1 GB tensor takes 512 page faults
      // instead of 262,144 (a 1 GB Fill + Mean step: 513 -> 190 ms here).
      // DeallocateRaw frees such blocks as any other.
      const size_t huge = (rounded + kHugePage - 1) / kHugePage * kHugePage;
      void* p = std::aligned_alloc(kHugePage, huge);
      if (p != nullptr) madvise(p, huge, MADV_HUGEPAGE);
      return p;
    }
    return std::aligned_alloc(alignment, rounded);
  }

  void DeallocateRaw(void* ptr, size_t num_bytes) override {
    if (ptr == nullptr) return;
    if (num_bytes <= kSmallBytes) {
      SmallBlocks().Push(ptr);
      return;
    }
    size_t rounded = (num_bytes + kCacheAlignment - 1) / kCacheAlignment * kCacheAlignment;
    if (rounded >= kMinCachedBytes && rounded <= MaxCachedBytes()) {
      std::vector<void*> evicted;
      {
        absl::MutexLock lock(&mu_);
        cache_.emplace_back(ptr, rounded);
        cached_bytes_ += rounded;
        // Oldest first out.
        while (cached_bytes_ > MaxCachedBytes() || cache_.size() > kMaxCachedBlocks) {
          evicted.push_back(cache_.front().first);
          cached_bytes_ -= cache_.front().second;
          cache_.erase(cache_.begin());
        }
      }
      for (void* p : evicted) std::free(p);
      return;
    }
    std::free(ptr);
  }

 private:
  // Blocks of up to kSmallBytes (scalars, short vectors: most tensors of a
  // loop's bookkeeping) are all kSmallBytes-sized and -aligned, and each
  // thread keeps up to kSmallCached of them that it freed for its next
  // requests: no lock, no aligned_alloc. A block may be freed by another
  // thread than the one that allocated it.
  static constexpr size_t kSmallBytes = 64;
  static constexpr int kSmallCached = 512;
  class SmallBlockCache {
   public:
    ~SmallBlockCache() {
      for (int i = 0; i < size_; ++i) std::free(blocks_[i]);
      size_ = 0;
      exited_ = true;  // blocks freed later, during thread exit, go to free()
    }
    void* Pop() {
      if (size_ > 0) return blocks_[--size_];
      return std::aligned_alloc(kSmallBytes, kSmallBytes);
    }
    void Push(void* p) {
      if (size_ < kSmallCached && !exited_) {
        blocks_[size_++] = p;
      } else {
        std::free(p);
      }
    }

   private:
    void* blocks_[kSmallCached];
    int size_ = 0;
    bool exited_ = false;
  };
  static SmallBlockCache& SmallBlocks() {
    static thread_local SmallBlockCache cache;
    return cache;
  }

  static constexpr size_t kCacheAlignment = 64;
  // Blocks this big are aligned to, and sized in, 2 MB huge pages.
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeBytes = size_t{32} << 20;
  static constexpr size_t kMinCachedBytes = size_t{1} << 20;
  // An eighth of the machine's memory, between 256 MB and 4 GB: enough to
  // keep a step's 1 GB tensors mapped from one step to the next (fresh,
  // the kernel zeroes their pages every step).
  static size_t MaxCachedBytes() {
    static const size_t bytes = [] {
      const long pages = sysconf(_SC_PHYS_PAGES);
      const long page = sysconf(_SC_PAGESIZE);
      const size_t eighth =
          pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 8 : 0;
      return std::min(std::max(eighth, size_t{256} << 20), size_t{4} << 30);
    }();
    return bytes;
  }
  static constexpr size_t kMaxCachedBlocks = 64;
  // Far past any real tensor (2^48 elements of 16 bytes is 2^52 bytes).
  static constexpr size_t kMaxRequestBytes = size_t{1} << 60;

  absl::Mutex mu_;
  std::vector<std::pair<void*, size_t>> cache_ ABSL_GUARDED_BY(mu_);
  size_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

Allocator* HostAllocator() {
  static Allocator* const allocator = new AlignedHostAllocator();
  return allocator;
}

}  // namespace graphrun
