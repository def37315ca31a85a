#include "runtime/gpu/bfc_allocator.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/check.h"

namespace graphrun {
namespace {

constexpr size_t kUnit = BfcAllocator::kAllocationUnit;
constexpr size_t kMaxLimit = size_t{1} << 60;

size_t RoundDownToUnit(size_t bytes) { return bytes / kUnit * kUnit; }

// Callers make sure `bytes` is at most a unit-multiple limit, so this cannot
// overflow.
size_t RoundUpToUnit(size_t bytes) {
  return (bytes + kUnit - 1) / kUnit * kUnit;
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB",
                                           "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit + 1 < 6) {
    value /= 1024.0;
    ++unit;
  }
  return value < 10.0 ? absl::StrFormat("%.2f %s", value, kUnits[unit])
                      : absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

BfcAllocator::BfcAllocator(std::unique_ptr<SubAllocator> sub_allocator,
                           BfcAllocatorOptions options)
    : options_(std::move(options)),
      limit_(RoundDownToUnit(std::min(options_.memory_limit, kMaxLimit))),
      sub_allocator_(std::move(sub_allocator)) {
  absl::MutexLock lock(&mu_);
  if (options_.allow_growth) {
    const size_t initial = std::min(options_.initial_region_bytes, limit_);
    next_region_bytes_ = std::max(kUnit, RoundUpToUnit(initial));
  } else {
    next_region_bytes_ = std::max(kUnit, limit_);
  }
  stats_.bytes_limit = static_cast<int64_t>(limit_);
}

BfcAllocator::~BfcAllocator() {
  absl::MutexLock lock(&mu_);
  for (const Region& region : regions_) {
    sub_allocator_->Free(reinterpret_cast<void*>(region.base), region.size);
  }
  if (plan_region_bytes_ > 0) {
    sub_allocator_->Free(reinterpret_cast<void*>(plan_base_), plan_region_bytes_);
  }
}

// Bin b holds free chunks of [256 << b, 256 << (b + 1)) bytes; the last bin
// holds everything from 256 MiB up.
int BfcAllocator::BinFor(size_t size) {
  size_t units = size / kUnit;
  int bin = 0;
  while (units > 1 && bin + 1 < kNumBins) {
    units >>= 1;
    ++bin;
  }
  return bin;
}

BfcAllocator::ChunkHandle BfcAllocator::NewChunk() {
  if (!unused_handles_.empty()) {
    const ChunkHandle h = unused_handles_.back();
    unused_handles_.pop_back();
    chunks_[h] = Chunk();
    return h;
  }
  chunks_.emplace_back();
  return static_cast<ChunkHandle>(chunks_.size() - 1);
}

void BfcAllocator::DeleteChunk(ChunkHandle h) { unused_handles_.push_back(h); }

void BfcAllocator::InsertFree(ChunkHandle h) {
  const Chunk& c = chunks_[h];
  bins_[BinFor(c.size)].insert(FreeKey{c.size, c.ptr, h});
}

void BfcAllocator::RemoveFree(ChunkHandle h) {
  const Chunk& c = chunks_[h];
  const size_t erased = bins_[BinFor(c.size)].erase(FreeKey{c.size, c.ptr, h});
  GR_CHECK(erased == 1);
}

void* BfcAllocator::TakeChunk(size_t rounded) {
  for (int b = BinFor(rounded); b < kNumBins; ++b) {
    std::set<FreeKey>& bin = bins_[b];
    // Bins above the request's hold only bigger chunks, so their first
    // (smallest) one is the best fit; in the request's own bin, the first
    // chunk at least as big.
    auto it = bin.lower_bound(FreeKey{rounded, 0, kNoChunk});
    if (it == bin.end()) continue;
    const ChunkHandle h = it->handle;
    bin.erase(it);
    if (chunks_[h].size > rounded) {
      // The rest becomes a free chunk of its own. Its right neighbour is in
      // use (free neighbours are always merged), so it merges with nothing.
      const ChunkHandle rest = NewChunk();
      Chunk& c = chunks_[h];  // after NewChunk, which may move chunks_
      Chunk& r = chunks_[rest];
      r.ptr = c.ptr + rounded;
      r.size = c.size - rounded;
      r.prev = h;
      r.next = c.next;
      if (c.next != kNoChunk) chunks_[c.next].prev = rest;
      c.next = rest;
      c.size = rounded;
      InsertFree(rest);
    }
    Chunk& c = chunks_[h];
    c.in_use = true;
    in_use_.emplace(c.ptr, h);
    return reinterpret_cast<void*>(c.ptr);
  }
  return nullptr;
}

bool BfcAllocator::AddRegion(size_t rounded) {
  const size_t available = limit_ - static_cast<size_t>(stats_.bytes_reserved);
  if (rounded > available) return false;
  // The planned size, doubled as often as this request needs; kept only
  // if a region is obtained, so a failed huge request changes nothing.
  size_t planned = next_region_bytes_;
  bool enlarged = false;
  while (planned < rounded) {
    planned = planned > limit_ / 2 ? limit_ : planned * 2;
    enlarged = true;
  }
  size_t bytes = std::min(planned, available);
  void* mem = sub_allocator_->Alloc(kUnit, bytes);
  // The device may have less free than the limit says: ask for 10% less
  // each time, ending with exactly what this request needs.
  while (mem == nullptr && bytes > rounded) {
    bytes = std::max(rounded, RoundDownToUnit(bytes / 10 * 9));
    mem = sub_allocator_->Alloc(kUnit, bytes);
  }
  if (mem == nullptr) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  if (base % kUnit != 0) {
    // A SubAllocator that ignored the alignment: chunks could not be
    // aligned, so the region is unusable.
    sub_allocator_->Free(mem, bytes);
    return false;
  }
  release_.Undone(/*window=*/2);
  // The next region is twice this one, unless this request already made it
  // bigger than planned.
  next_region_bytes_ =
      enlarged ? planned : (planned > limit_ / 2 ? limit_ : planned * 2);
  const ChunkHandle h = NewChunk();
  chunks_[h].ptr = base;
  chunks_[h].size = bytes;
  InsertFree(h);
  regions_.push_back(Region{base, bytes, h});
  stats_.bytes_reserved += static_cast<int64_t>(bytes);
  stats_.peak_bytes_reserved =
      std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  stats_.num_regions = static_cast<int64_t>(regions_.size());
  return true;
}

bool BfcAllocator::ReleaseFreeRegions() {
  bool released = false;
  for (size_t i = 0; i < regions_.size();) {
    const Region region = regions_[i];
    const Chunk& first = chunks_[region.first];
    if (first.in_use || first.next != kNoChunk) {
      ++i;
      continue;
    }
    RemoveFree(region.first);
    DeleteChunk(region.first);
    sub_allocator_->Free(reinterpret_cast<void*>(region.base), region.size);
    stats_.bytes_reserved -= static_cast<int64_t>(region.size);
    regions_.erase(regions_.begin() + i);
    released = true;
  }
  stats_.num_regions = static_cast<int64_t>(regions_.size());
  if (released && options_.allow_growth) {
    // Growth restarts from what is still held (twice it, as when that was
    // reserved), not from the regions given back: regions taken and given
    // back over and over would otherwise double without end.
    size_t held = 0;
    for (const Region& region : regions_) held += region.size;
    const size_t initial = std::max(kUnit, RoundUpToUnit(std::min(options_.initial_region_bytes, limit_)));
    next_region_bytes_ = std::max(initial, held > limit_ / 2 ? limit_ : held * 2);
  }
  return released;
}

void* BfcAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > kUnit) {
    return nullptr;
  }
  absl::MutexLock lock(&mu_);
  void* ptr = nullptr;
  if (num_bytes <= limit_) {
    const size_t rounded = num_bytes == 0 ? kUnit : RoundUpToUnit(num_bytes);
    uintptr_t planned = 0;
    if (TakePlanned(rounded, &planned)) ptr = reinterpret_cast<void*>(planned);
    if (ptr == nullptr) ptr = TakeChunk(rounded);
    if (ptr == nullptr && AddRegion(rounded)) ptr = TakeChunk(rounded);
    if (ptr == nullptr && options_.release_free_regions_on_oom) {
      // Only worth it when the freed room plus the unreserved room could
      // hold the request.
      size_t free_region_bytes = 0;
      for (const Region& region : regions_) {
        const Chunk& first = chunks_[region.first];
        if (!first.in_use && first.next == kNoChunk) {
          free_region_bytes += region.size;
        }
      }
      const size_t unreserved =
          limit_ - static_cast<size_t>(stats_.bytes_reserved);
      if (free_region_bytes > 0 && rounded <= unreserved + free_region_bytes &&
          ReleaseFreeRegions() && AddRegion(rounded)) {
        ptr = TakeChunk(rounded);
      }
    }
    if (ptr != nullptr) {
      const int64_t size = static_cast<int64_t>(rounded);
      if (recording_) {
        step_index_[reinterpret_cast<uintptr_t>(ptr)] = step_.size();
        step_.push_back(StepAllocation{rounded, clock_, INT64_MAX, 0});
      }
      ++clock_;
      ++stats_.num_allocs;
      stats_.bytes_in_use += size;
      stats_.peak_bytes_in_use =
          std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, size);
      return ptr;
    }
  }
  ++stats_.num_failed_allocs;
  last_failure_ = BfcFailedRequest{num_bytes, DescribeLocked(num_bytes)};
  return nullptr;
}

void BfcAllocator::DeallocateRaw(void* ptr, size_t /*num_bytes*/) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&mu_);
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  if (recording_) {
    auto recorded = step_index_.find(address);
    if (recorded != step_index_.end()) {
      step_[recorded->second].end = clock_;
      step_index_.erase(recorded);
    }
  }
  ++clock_;
  if (plan_region_bytes_ > 0 && address >= plan_base_ &&
      address < plan_base_ + plan_region_bytes_) {
    auto planned = planned_live_.find(address - plan_base_);
    GR_CHECK(planned != planned_live_.end());  // freed twice
    stats_.bytes_in_use -= static_cast<int64_t>(planned->second - planned->first);
    planned_live_.erase(planned);
    return;
  }
  auto it = in_use_.find(address);
  GR_CHECK(it != in_use_.end());  // not from this allocator, or freed twice
  ChunkHandle h = it->second;
  in_use_.erase(it);
  chunks_[h].in_use = false;
  stats_.bytes_in_use -= static_cast<int64_t>(chunks_[h].size);
  // Merge with a free right neighbour, then into a free left one, so free
  // chunks are never adjacent.
  const ChunkHandle next = chunks_[h].next;
  if (next != kNoChunk && !chunks_[next].in_use) {
    RemoveFree(next);
    chunks_[h].size += chunks_[next].size;
    chunks_[h].next = chunks_[next].next;
    if (chunks_[next].next != kNoChunk) chunks_[chunks_[next].next].prev = h;
    DeleteChunk(next);
  }
  const ChunkHandle prev = chunks_[h].prev;
  if (prev != kNoChunk && !chunks_[prev].in_use) {
    RemoveFree(prev);
    chunks_[prev].size += chunks_[h].size;
    chunks_[prev].next = chunks_[h].next;
    if (chunks_[h].next != kNoChunk) chunks_[chunks_[h].next].prev = prev;
    DeleteChunk(h);
    h = prev;
  }
  InsertFree(h);
}

size_t BfcAllocator::LargestFreeChunk() const {
  for (int b = kNumBins - 1; b >= 0; --b) {
    if (!bins_[b].empty()) return bins_[b].rbegin()->size;
  }
  return 0;
}

BfcAllocatorStats BfcAllocator::BfcStats() const {
  absl::MutexLock lock(&mu_);
  BfcAllocatorStats stats = stats_;
  stats.largest_free_chunk = static_cast<int64_t>(LargestFreeChunk());
  return stats;
}

std::optional<AllocatorStats> BfcAllocator::GetStats() const {
  const BfcAllocatorStats b = BfcStats();
  AllocatorStats s;
  s.num_allocs = b.num_allocs;
  s.bytes_in_use = b.bytes_in_use;
  s.peak_bytes_in_use = b.peak_bytes_in_use;
  s.largest_alloc_size = b.largest_alloc_size;
  s.bytes_limit = b.bytes_limit;
  s.bytes_reserved = b.bytes_reserved;
  s.largest_free_block = b.largest_free_chunk;
  return s;
}

bool BfcAllocator::ResetPeak() {
  absl::MutexLock lock(&mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
  return true;
}

std::optional<BfcFailedRequest> BfcAllocator::LastFailure() const {
  absl::MutexLock lock(&mu_);
  return last_failure_;
}

std::string BfcAllocator::DescribeLocked(size_t bytes) const {
  return absl::StrCat(
      "asked ", FormatBytes(bytes), ", largest free chunk ",
      FormatBytes(LargestFreeChunk()), ", in use ",
      FormatBytes(static_cast<uint64_t>(stats_.bytes_in_use)), " of ",
      FormatBytes(limit_), " limit, reserved ",
      FormatBytes(static_cast<uint64_t>(stats_.bytes_reserved)));
}

std::string BfcAllocator::DescribeOutOfMemory(size_t bytes) const {
  absl::MutexLock lock(&mu_);
  return DescribeLocked(bytes);
}

absl::Status BfcAllocator::OutOfMemoryError(absl::string_view what,
                                            size_t bytes) const {
  return absl::ResourceExhaustedError(absl::StrCat("OOM when allocating ", what,
                                                   " on ", options_.name, ": ",
                                                   DescribeOutOfMemory(bytes)));
}

bool BfcAllocator::TakePlanned(size_t rounded, uintptr_t* ptr) {
  if (!following_plan_) return false;
  const size_t k = step_.size();
  if (k >= plan_.allocations.size() || plan_.allocations[k].size != rounded) {
    // The step went another way than the plan.
    following_plan_ = false;
    return false;
  }
  const size_t offset = plan_.allocations[k].offset;
  const size_t end = offset + rounded;
  // Free when no live planned allocation overlaps [offset, end).
  auto next = planned_live_.lower_bound(offset);
  if (next != planned_live_.end() && next->first < end) return false;
  if (next != planned_live_.begin() && std::prev(next)->second > offset) return false;
  planned_live_.emplace(offset, end);
  ++planned_this_step_;
  *ptr = plan_base_ + offset;
  return true;
}

void BfcAllocator::FreePlanRegion() {
  if (plan_region_bytes_ == 0) return;
  sub_allocator_->Free(reinterpret_cast<void*>(plan_base_), plan_region_bytes_);
  stats_.bytes_reserved -= static_cast<int64_t>(plan_region_bytes_);
  plan_base_ = 0;
  plan_region_bytes_ = 0;
}

bool BfcAllocator::EnsurePlanRegion() {
  const size_t want = RoundUpToUnit(plan_.bytes);
  shrink_.Tick();
  const bool big_enough = plan_region_bytes_ >= want;
  if (big_enough) {
    // A region that is big enough stays while it is not much bigger, or
    // has not been much bigger for shrink_.after steps in a row.
    if (plan_region_bytes_ - want <= want / 16) {
      oversized_steps_ = 0;
      return true;
    }
    if (++oversized_steps_ < shrink_.after) return true;
  }
  if (!planned_live_.empty()) return big_enough;
  FreePlanRegion();
  oversized_steps_ = 0;
  if (big_enough) {
    shrink_.Fired();
  } else {
    shrink_.Undone(/*window=*/shrink_.after);  // plans alternate between two peaks
  }
  if (want > limit_ - static_cast<size_t>(stats_.bytes_reserved)) ReleaseFreeRegions();
  if (want > limit_ - static_cast<size_t>(stats_.bytes_reserved)) return false;
  void* mem = sub_allocator_->Alloc(kUnit, want);
  if (mem == nullptr) return false;
  if (reinterpret_cast<uintptr_t>(mem) % kUnit != 0) {
    sub_allocator_->Free(mem, want);
    return false;
  }
  plan_base_ = reinterpret_cast<uintptr_t>(mem);
  plan_region_bytes_ = want;
  stats_.bytes_reserved += static_cast<int64_t>(want);
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return true;
}

void BfcAllocator::BeginStep() {
  absl::MutexLock lock(&mu_);
  if (++active_steps_ != 1 || !options_.allow_growth) {
    // Steps at the same time: neither is recorded nor planned.
    recording_ = false;
    following_plan_ = false;
    return;
  }
  recording_ = true;
  clock_ = 0;
  planned_this_step_ = 0;
  step_.clear();
  step_index_.clear();
  following_plan_ = !plan_.allocations.empty() && EnsurePlanRegion();
  // When the last step took everything from the plan, the ordinary regions
  // it no longer used are given back.
  release_.Tick();
  if (following_plan_ && followed_in_a_row_ >= release_.after && ReleaseFreeRegions()) {
    release_.Fired();
  }
}

void BfcAllocator::EndStep() {
  absl::MutexLock lock(&mu_);
  if (active_steps_ > 0) --active_steps_;
  if (!recording_) {
    followed_last_step_ = false;
    followed_in_a_row_ = 0;
    return;
  }
  recording_ = false;
  planned_last_step_ = planned_this_step_;
  // Followed: every allocation the plan has, in its sizes, and no more.
  followed_last_step_ = following_plan_ && step_.size() == plan_.allocations.size();
  followed_in_a_row_ = followed_last_step_ ? followed_in_a_row_ + 1 : 0;
  following_plan_ = false;
  step_index_.clear();
  // Too many allocations to plan cheaply (the greedy placement is
  // quadratic): none.
  constexpr size_t kMaxPlanned = 1 << 14;
  if (followed_last_step_) return;
  if (step_.empty() || step_.size() > kMaxPlanned) {
    plan_ = StepPlan();
    return;
  }
  plan_ = PlanStep(std::move(step_));
  step_.clear();
}

size_t BfcAllocator::PlannedBytes() const {
  absl::MutexLock lock(&mu_);
  return plan_.bytes;
}

int64_t BfcAllocator::LastStepPlannedAllocations() const {
  absl::MutexLock lock(&mu_);
  return planned_last_step_;
}

}  // namespace graphrun
