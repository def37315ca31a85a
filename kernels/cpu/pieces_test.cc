#include "kernels/cpu/pieces.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

TEST(RunPiecesTest, EveryPieceRunsOnce) {
  for (int threads : {1, 2, 4}) {
    Eigen::ThreadPool pool(threads);
    Eigen::ThreadPoolDevice device(&pool, threads);
    for (int n : {0, 1, 2, 3, 7, 64}) {
      std::vector<std::atomic<int>> runs(n);
      RunPieces(device, n, [&](int i) { runs[i].fetch_add(1); });
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(runs[i].load(), 1) << "threads " << threads << " n " << n << " piece " << i;
      }
    }
  }
}

// Callers on several threads share one pool: each gets all its pieces run
// (none is lost or run twice) and none waits forever, though the pool's
// threads are busy with other callers' pieces.
TEST(RunPiecesTest, ConcurrentCallersShareAPool) {
  Eigen::ThreadPool pool(2);
  Eigen::ThreadPoolDevice device(&pool, 2);
  constexpr int kCallers = 4, kRounds = 200, kPieces = 3;
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        std::atomic<int> mine{0};
        RunPieces(device, kPieces, [&](int) {
          mine.fetch_add(1);
          total.fetch_add(1);
        });
        EXPECT_EQ(mine.load(), kPieces);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), kCallers * kRounds * kPieces);
}

}  // namespace
}  // namespace cpu
}  // namespace graphrun
