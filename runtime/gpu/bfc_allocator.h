// BfcAllocator: best-fit-with-coalescing allocator for device memory.
//
// A GPU device gets big regions of memory from a SubAllocator (cudaMalloc on a
// GPU, a fake in tests) and hands tensors pieces of them: chunks of whole
// 256-byte units, free chunks kept in power-of-two size bins so a request
// takes the smallest free chunk that fits, split off its remainder, and
// merged with free neighbours when freed. Regions are reserved either all at
// once (the whole limit, on the first request) or on demand, starting small
// and doubling (`allow_growth`). Never touches the memory it manages, so it
// runs on CPU in tests. Thread-safe: one mutex guards all state.
//
// Step plans (allow_growth only): between BeginStep and EndStep, while no
// other step runs, the allocator records each allocation's size and
// lifetime. A step that ends with nothing left to record differently from
// the plan it ran with gets a new plan (step_plan.h): one region of the
// plan's size, taken at the next BeginStep, whose wholly free BFC regions
// are then given back (a plan region bigger than the plan needs stays a few
// steps, longer each time it had to grow back soon after shrinking: a step
// whose peak alternates between two sizes keeps one region). The k-th
// allocation of a later step takes its planned place when it has the
// planned size and that place is free (an
// output of the step before may still hold it; that one allocation is
// then served as before). One of another size means the step went another
// way: it and the rest of the step are served as before, and the step is
// planned anew. A steady loop of steps then holds about its peak in use
// (reserved / peak 1.00-1.05 in BM_DeviceAllocator's step loop, where
// doubling regions reserved 1.23x).
#ifndef GRAPHRUN_RUNTIME_GPU_BFC_ALLOCATOR_H_
#define GRAPHRUN_RUNTIME_GPU_BFC_ALLOCATOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/allocator.h"
#include "runtime/gpu/step_plan.h"

namespace graphrun {

// Where a BfcAllocator's regions come from. Called with the allocator's lock
// held, so implementations need not be thread-safe unless shared.
class SubAllocator {
 public:
  virtual ~SubAllocator() = default;
  // Returns `bytes` bytes aligned to `alignment` (a power of two), or nullptr
  // when the device cannot give them. Never throws.
  virtual void* Alloc(size_t alignment, size_t bytes) = 0;
  // Gives back a region Alloc returned, with the same `bytes`.
  virtual void Free(void* ptr, size_t bytes) = 0;
};

struct BfcAllocatorOptions {
  // e.g. "GPU_0_bfc"; returned by Name().
  std::string name;
  // Most bytes the allocator reserves from the SubAllocator, in total
  // (rounded down to 256 bytes; at most 2^60). Requests past it fail.
  size_t memory_limit = 0;
  // false (TensorFlow's default): the first request reserves the whole
  // limit as one region. true: regions start at `initial_region_bytes` and
  // each new one is twice the last (or what a request needs), as
  // TensorFlow's GPUOptions.allow_growth.
  bool allow_growth = false;
  size_t initial_region_bytes = size_t{2} << 20;
  // When a request finds no chunk and no room to reserve a region, give
  // regions with nothing in use back to the SubAllocator and try once more
  // (a bigger region may then fit under the limit).
  bool release_free_regions_on_oom = true;
};

struct BfcAllocatorStats {
  int64_t num_allocs = 0;         // successful AllocateRaw calls
  int64_t num_failed_allocs = 0;  // requests that got nullptr
  // Bytes of the chunks handed out (requests rounded up to 256 bytes).
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;  // largest chunk ever handed out
  int64_t bytes_limit = 0;
  // Bytes held from the SubAllocator now, and the most ever held.
  int64_t bytes_reserved = 0;
  int64_t peak_bytes_reserved = 0;
  int64_t largest_free_chunk = 0;  // within the reserved regions
  int64_t num_regions = 0;
};

// A request that could not be met, as the allocator saw it then.
struct BfcFailedRequest {
  size_t bytes = 0;
  std::string description;  // as DescribeOutOfMemory(bytes) said then
};

class BfcAllocator : public Allocator {
 public:
  // Every chunk is a whole number of these and starts at a multiple of it.
  static constexpr size_t kAllocationUnit = 256;

  BfcAllocator(std::unique_ptr<SubAllocator> sub_allocator,
               BfcAllocatorOptions options);
  // Gives every region back to the SubAllocator. Buffers still handed out
  // dangle: whoever owns the allocator must outlive them.
  ~BfcAllocator() override;
  BfcAllocator(const BfcAllocator&) = delete;
  BfcAllocator& operator=(const BfcAllocator&) = delete;

  std::string Name() const override { return options_.name; }
  // Returns a pointer aligned to 256 bytes, or nullptr when the memory is
  // not available (the failure is counted and kept for LastFailure()). A
  // zero-byte request gets a distinct 256-byte chunk, as on the host.
  // `alignment` must be a power of two no larger than 256; any other value
  // gets nullptr (a caller's mistake, not counted as out of memory).
  void* AllocateRaw(size_t alignment, size_t num_bytes) override;
  // `ptr` must come from this allocator's AllocateRaw (nullptr is ignored);
  // anything else aborts.
  void DeallocateRaw(void* ptr, size_t num_bytes) override;

  BfcAllocatorStats BfcStats() const;
  // The common statistics (in use, peak, limit, reserved, largest free
  // chunk), as every allocator gives them.
  std::optional<AllocatorStats> GetStats() const override;
  // Sets the peak bytes in use to the current use, so a step can measure
  // its own peak.
  bool ResetPeak() override;
  // The last request that got nullptr for want of memory, if any.
  std::optional<BfcFailedRequest> LastFailure() const;

  void BeginStep() override;
  void EndStep() override;
  // The bytes of the plan the next steps run with (0: none), and how many
  // of the last step's allocations took their planned place.
  size_t PlannedBytes() const;
  int64_t LastStepPlannedAllocations() const;

  // e.g. "asked 1.50 GiB, largest free chunk 512.0 MiB, in use 14.2 GiB of
  // 15.0 GiB limit, reserved 15.0 GiB", from the current state.
  std::string DescribeOutOfMemory(size_t bytes) const;
  // ResourceExhausted: "OOM when allocating <what> on GPU_0_bfc: " followed
  // by DescribeOutOfMemory(bytes); `what` names the node and output, e.g.
  // "output 0 of node 'conv1' (Conv2D)".
  absl::Status OutOfMemoryError(absl::string_view what, size_t bytes) const;

 private:
  using ChunkHandle = int32_t;
  static constexpr ChunkHandle kNoChunk = -1;
  static constexpr int kNumBins = 21;

  // A run of whole units inside one region; its neighbours in the region
  // are `prev` and `next` (kNoChunk at the region's ends).
  struct Chunk {
    uintptr_t ptr = 0;
    size_t size = 0;
    bool in_use = false;
    ChunkHandle prev = kNoChunk;
    ChunkHandle next = kNoChunk;
  };
  // Free chunks in one bin, smallest first, then lowest address.
  struct FreeKey {
    size_t size;
    uintptr_t ptr;
    ChunkHandle handle;
    bool operator<(const FreeKey& o) const {
      return size != o.size ? size < o.size : ptr < o.ptr;
    }
  };
  struct Region {
    uintptr_t base;
    size_t size;
    // The chunk at `base`: survives every split and merge in the region.
    ChunkHandle first;
  };

  static int BinFor(size_t size);
  ChunkHandle NewChunk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteChunk(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertFree(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveFree(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the best-fitting free chunk for `rounded` bytes, splits off the
  // rest and marks it in use; nullptr when no free chunk is big enough.
  void* TakeChunk(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reserves one more region big enough for `rounded` bytes, within the
  // limit; false when that is impossible.
  bool AddRegion(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives back every region with nothing in use; true when any was.
  bool ReleaseFreeRegions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t LargestFreeChunk() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DescribeLocked(size_t bytes) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const BfcAllocatorOptions options_;
  const size_t limit_;  // options_.memory_limit rounded down to a unit
  const std::unique_ptr<SubAllocator> sub_allocator_;

  mutable absl::Mutex mu_;
  std::vector<Chunk> chunks_ ABSL_GUARDED_BY(mu_);
  std::vector<ChunkHandle> unused_handles_ ABSL_GUARDED_BY(mu_);
  std::set<FreeKey> bins_[kNumBins] ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uintptr_t, ChunkHandle> in_use_ ABSL_GUARDED_BY(mu_);
  std::vector<Region> regions_ ABSL_GUARDED_BY(mu_);
  // Size the next region is asked for (before any back-off).
  size_t next_region_bytes_ ABSL_GUARDED_BY(mu_);
  BfcAllocatorStats stats_ ABSL_GUARDED_BY(mu_);
  std::optional<BfcFailedRequest> last_failure_ ABSL_GUARDED_BY(mu_);

  // Step plans. One region (plan_base_, plan_region_bytes_) outside
  // regions_ holds the planned allocations; planned_live_ maps the offset
  // of each planned allocation in use to its end.
  bool TakePlanned(size_t rounded, uintptr_t* ptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool EnsurePlanRegion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreePlanRegion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int active_steps_ ABSL_GUARDED_BY(mu_) = 0;
  bool recording_ ABSL_GUARDED_BY(mu_) = false;  // one step alone, recorded
  bool following_plan_ ABSL_GUARDED_BY(mu_) = false;
  bool followed_last_step_ ABSL_GUARDED_BY(mu_) = false;
  // Steps in a row, up to the last, that followed the plan. Free regions go
  // back only after two: a step that follows the plan only every other time
  // (a buffer of the last step still alive when the next begins) would
  // otherwise give a region back and take a new one every other step.
  int followed_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  // How long an action that gives memory back waits (in steps), doubled
  // whenever it is undone soon after it fired: the memory was still needed.
  struct Backoff {
    int64_t after = 2;
    int64_t since = -1;  // steps since it last fired; -1: not since undone
    void Tick() {
      if (since >= 0) ++since;
    }
    void Fired() { since = 0; }
    // The memory was taken back: within `window` steps of firing, wait
    // twice as long from now on.
    void Undone(int64_t window) {
      if (since >= 0 && since <= window) after = std::min<int64_t>(after * 2, int64_t{1} << 20);
      since = -1;
    }
  };
  // Releasing free regions needs release_.after followed steps in a row;
  // a region taken again within two steps of a release undoes it.
  Backoff release_ ABSL_GUARDED_BY(mu_);
  // The plan region shrinks to a smaller plan only after being too big for
  // shrink_.after steps in a row; growing again within that many steps of a
  // shrink undoes it: a step whose peak alternates between two sizes (a
  // buffer freed a little early or late) would otherwise take a new region
  // every other step.
  Backoff shrink_ ABSL_GUARDED_BY(mu_);
  int64_t oversized_steps_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t planned_this_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t planned_last_step_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<StepAllocation> step_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uintptr_t, size_t> step_index_ ABSL_GUARDED_BY(mu_);
  StepPlan plan_ ABSL_GUARDED_BY(mu_);
  uintptr_t plan_base_ ABSL_GUARDED_BY(mu_) = 0;
  size_t plan_region_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<size_t, size_t> planned_live_ ABSL_GUARDED_BY(mu_);
};

// "0 B", "1023 B", "1.50 KiB", "512.0 MiB": binary units, three significant
// digits (two decimals below 10, one above).
std::string FormatBytes(uint64_t bytes);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_BFC_ALLOCATOR_H_
