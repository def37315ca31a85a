#include "kernels/cpu/pieces.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

struct PieceState {
  explicit PieceState(int n) : remaining(n) {}
  std::atomic<int> next{0};
  std::atomic<int> remaining;
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
};

// Claims and runs pieces until none is left. `run` is only called for a
// claimed piece, and the caller of RunPieces (which owns `run`) waits for
// every claimed piece to finish, so `run` outlives each call.
void Work(const std::shared_ptr<PieceState>& state, int n,
          absl::FunctionRef<void(int)> run) {
  for (int i = state->next.fetch_add(1, std::memory_order_relaxed); i < n;
       i = state->next.fetch_add(1, std::memory_order_relaxed)) {
    run(i);
    if (state->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      absl::MutexLock lock(&state->mu);
      state->done = true;
    }
  }
}

}  // namespace

void RunPieces(const Eigen::ThreadPoolDevice& pool, int n,
               absl::FunctionRef<void(int)> run) {
  if (n <= 0) return;
  const int helpers = std::min(n, pool.numThreads()) - 1;
  if (helpers <= 0) {
    for (int i = 0; i < n; ++i) run(i);
    return;
  }
  auto state = std::make_shared<PieceState>(n);
  for (int k = 0; k < helpers; ++k) {
    pool.getPool()->Schedule([state, n, run] { Work(state, n, run); });
  }
  Work(state, n, run);
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(&state->done));
}

}  // namespace cpu
}  // namespace graphrun
