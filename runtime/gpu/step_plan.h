// Step plans: where each allocation of a step goes in one block of memory,
// worked out from the step before.
//
// A network's steps allocate the same tensors in the same order, each
// living from one point of the step to a later one. Given one step's
// allocations (size, and when each was made and freed, counted in
// allocator events), PlanStep places them greedily by size, largest first,
// each at the lowest offset clear of every allocation placed before it
// whose lifetime overlaps its own (the offset planning of TensorFlow Lite's
// arena). The block it needs is the plan's size, usually the step's peak
// in use or within a few percent of it, where a best-fit allocator growing
// regions on demand reserves a fifth to a half more. BfcAllocator serves
// the next steps from such a plan while they follow it (bfc_allocator.h).
#ifndef GRAPHRUN_RUNTIME_GPU_STEP_PLAN_H_
#define GRAPHRUN_RUNTIME_GPU_STEP_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphrun {

struct StepAllocation {
  size_t size = 0;
  // Allocator events: made at `begin`, freed at `end` (> begin); one still
  // live when the step ended has end = INT64_MAX.
  int64_t begin = 0, end = 0;
  size_t offset = 0;  // set by PlanStep
};

struct StepPlan {
  std::vector<StepAllocation> allocations;  // in the step's order
  size_t bytes = 0;                         // the block they fit in
};

// Offsets for `allocations` (in the order they were made; each size a
// multiple of the allocator's unit, so offsets stay aligned to it).
StepPlan PlanStep(std::vector<StepAllocation> allocations);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_STEP_PLAN_H_
