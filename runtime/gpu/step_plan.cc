#include "runtime/gpu/step_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace graphrun {

StepPlan PlanStep(std::vector<StepAllocation> allocations) {
  const size_t n = allocations.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; among equals, the earlier made.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return allocations[a].size > allocations[b].size;
  });
  std::vector<size_t> placed;  // indices, by offset
  placed.reserve(n);
  size_t bytes = 0;
  for (size_t i : order) {
    StepAllocation& a = allocations[i];
    // The lowest gap between the placed allocations alive at the same time
    // that holds `a` (they are scanned by offset).
    size_t offset = 0;
    for (size_t j : placed) {
      const StepAllocation& p = allocations[j];
      if (p.end <= a.begin || a.end <= p.begin) continue;  // lifetimes apart
      if (p.offset >= offset + a.size) break;              // the gap fits
      offset = std::max(offset, p.offset + p.size);
    }
    a.offset = offset;
    bytes = std::max(bytes, offset + a.size);
    placed.insert(std::upper_bound(placed.begin(), placed.end(), i,
                                   [&](size_t x, size_t y) {
                                     return allocations[x].offset < allocations[y].offset;
                                   }),
                  i);
  }
  StepPlan plan;
  plan.allocations = std::move(allocations);
  plan.bytes = bytes;
  return plan;
}

}  // namespace graphrun
