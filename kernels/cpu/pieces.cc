#include "kernels/cpu/pieces.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "kernels/eigen.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace graphrun {
namespace cpu {
namespace {

// How long a pool thread that ran pieces keeps looking for the next call's
// pieces before it goes back to the pool (and to sleep). Waking a sleeping
// thread costs tens of microseconds on virtual machines, as much as a
// piece of a small product: the kernels of a training step (a layer's
// products, its gradient's, the convolutions' pieces) come one after the
// other within this time.
constexpr std::chrono::microseconds kHelperLinger(100);
// How long the caller waits for the helpers' last pieces before it sleeps.
constexpr std::chrono::microseconds kCallerSpin(200);

// One turn of a wait: the core to any other thread ready to run on it (a
// lingering thread must not hold up a kernel where there are more threads
// than cores), then a pause.
void Relax() {
  sched_yield();
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

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

// Tasks scheduled on the intra-op pools and not yet started.
std::atomic<int> queued_pool_tasks{0};

// Where a call offers its pieces to the pool threads still lingering after
// an earlier call on the same pool. A few boards, picked by the pool's
// address; a lingering thread takes only its own pool's offers.
struct Board {
  std::atomic<int> lingering{0};
  std::atomic<uint64_t> offers{0};  // counts offers, so lingerers see a new one
  absl::Mutex mu;
  const void* pool ABSL_GUARDED_BY(mu) = nullptr;
  std::shared_ptr<PieceState> state ABSL_GUARDED_BY(mu);
  int n ABSL_GUARDED_BY(mu) = 0;
  std::optional<absl::FunctionRef<void(int)>> run ABSL_GUARDED_BY(mu);
  int wanted ABSL_GUARDED_BY(mu) = 0;  // helpers the offer still takes
};

constexpr int kBoards = 16;
Board& BoardOf(const void* pool) {
  static Board* boards = new Board[kBoards];
  return boards[(reinterpret_cast<uintptr_t>(pool) >> 6) % kBoards];
}

// Run by a pool thread after its pieces: takes the offers of later calls
// on `pool` until none comes for kHelperLinger.
void Linger(Board& board, const void* pool) {
  using Clock = std::chrono::steady_clock;
  // The offers counted before this thread is: a caller that sees it
  // lingering posts after this load, so its offer is seen.
  uint64_t seen = board.offers.load(std::memory_order_acquire);
  board.lingering.fetch_add(1, std::memory_order_acq_rel);
  Clock::time_point until = Clock::now() + kHelperLinger;
  for (int spins = 0;; ++spins) {
    const uint64_t now_offers = board.offers.load(std::memory_order_acquire);
    if (now_offers != seen) {
      seen = now_offers;
      std::shared_ptr<PieceState> state;
      int n = 0;
      std::optional<absl::FunctionRef<void(int)>> run;
      {
        absl::MutexLock lock(&board.mu);
        if (board.pool == pool && board.wanted > 0 && board.state != nullptr) {
          --board.wanted;
          state = board.state;
          n = board.n;
          run.emplace(*board.run);
        }
      }
      if (state != nullptr) {
        board.lingering.fetch_sub(1, std::memory_order_acq_rel);
        Work(state, n, *run);
        board.lingering.fetch_add(1, std::memory_order_acq_rel);
        until = Clock::now() + kHelperLinger;
        continue;
      }
    }
    if (queued_pool_tasks.load(std::memory_order_relaxed) > 0) break;
    if ((spins & 7) == 7 && Clock::now() >= until) break;
    Relax();
  }
  board.lingering.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace

void PoolTaskQueued() { queued_pool_tasks.fetch_add(1, std::memory_order_relaxed); }
void PoolTaskStarted() { queued_pool_tasks.fetch_sub(1, std::memory_order_relaxed); }

void RunPieceRanges(const Eigen::ThreadPoolDevice* pool, int64_t count, int pieces,
                    absl::FunctionRef<void(int, int64_t, int64_t)> run) {
  if (pieces < 1) pieces = 1;
  auto piece = [&](int i) { run(i, count * i / pieces, count * (i + 1) / pieces); };
  if (pool == nullptr || pieces == 1) {
    for (int i = 0; i < pieces; ++i) piece(i);
    return;
  }
  RunPieces(*pool, pieces, piece);
}

void RunPieces(const Eigen::ThreadPoolDevice& pool, int n,
               absl::FunctionRef<void(int)> run) {
  if (n <= 0) return;
  const int helpers = std::min(n, pool.numThreads()) - 1;
  if (helpers <= 0) {
    for (int i = 0; i < n; ++i) run(i);
    return;
  }
  auto state = std::make_shared<PieceState>(n);
  const void* key = pool.getPool();
  Board& board = BoardOf(key);
  int to_schedule = helpers;
  const int lingering = board.lingering.load(std::memory_order_acquire);
  if (lingering > 0) {
    // Threads of this pool (or of one sharing the board) are looking for
    // work: offer them the pieces instead of waking others. An offer that
    // replaces an earlier one finds that call's pieces all claimed or
    // being claimed by its caller, which runs any left itself.
    absl::MutexLock lock(&board.mu);
    board.pool = key;
    board.state = state;
    board.n = n;
    board.run.emplace(run);
    board.wanted = std::min(helpers, lingering);
    to_schedule = helpers - board.wanted;
    board.offers.fetch_add(1, std::memory_order_acq_rel);
  }
  // At most all but one of the pool's threads linger: the pool's other
  // work (Eigen's parallelFor) finds one free.
  const int max_lingering = pool.numThreads() - 1;
  for (int k = 0; k < to_schedule; ++k) {
    pool.getPool()->Schedule([state, n, run, key, max_lingering] {
      Work(state, n, run);
      Board& board = BoardOf(key);
      if (board.lingering.load(std::memory_order_acquire) < max_lingering) Linger(board, key);
    });
  }
  Work(state, n, run);
  if (lingering > 0) {
    // Every piece is claimed: the offer is spent.
    absl::MutexLock lock(&board.mu);
    if (board.state == state) {
      board.state = nullptr;
      board.run.reset();
      board.wanted = 0;
    }
  }
  const auto until = std::chrono::steady_clock::now() + kCallerSpin;
  for (int spins = 0; state->remaining.load(std::memory_order_acquire) > 0; ++spins) {
    if ((spins & 7) == 7 && std::chrono::steady_clock::now() >= until) break;
    Relax();
  }
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(&state->done));
}

}  // namespace cpu
}  // namespace graphrun
