// RunPieces: runs run(0) ... run(n - 1), the pieces of one kernel's work,
// on the calling thread and the device's pool together. Pieces are claimed
// one at a time from a shared counter, so the calling thread goes on to the
// next unclaimed piece when it finishes one instead of waiting for a pool
// thread that has not woken up yet; it returns once every piece has run.
// A pool task that starts after all pieces were claimed finds nothing and
// exits (it touches only state it co-owns). `run` must be safe to call
// concurrently for different pieces.
#ifndef GRAPHRUN_KERNELS_CPU_PIECES_H_
#define GRAPHRUN_KERNELS_CPU_PIECES_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

// At most min(n, pool.numThreads()) threads work on the pieces at once:
// the caller and up to numThreads() - 1 pool tasks.
void RunPieces(const Eigen::ThreadPoolDevice& pool, int n,
               absl::FunctionRef<void(int)> run);

// [0, count) cut into `pieces` contiguous ranges as even as integers allow
// (a batch into groups of images), run(piece, first, last) for each as
// RunPieces runs them; with no pool, or one piece, on this thread alone.
void RunPieceRanges(const Eigen::ThreadPoolDevice* pool, int64_t count, int pieces,
                    absl::FunctionRef<void(int piece, int64_t first, int64_t last)> run);

// A pool thread that ran pieces lingers a moment for the next call's
// pieces (a wake-up costs as much as a small piece), unless the pool has
// other work: the intra-op pools' thread environment (runtime/float_env.h)
// reports each task scheduled and each task started, and a lingering
// thread goes back to its pool while any is waiting.
void PoolTaskQueued();
void PoolTaskStarted();

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_PIECES_H_
