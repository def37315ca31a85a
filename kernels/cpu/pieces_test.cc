#include "kernels/cpu/pieces.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>
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

// RunPieceRanges cuts [0, count) into its pieces' ranges: each element in
// exactly one, each piece once, the ranges in order and contiguous; with
// no pool or fewer than one piece too.
TEST(RunPiecesTest, RangesCoverTheCountOnce) {
  Eigen::ThreadPool pool(2);
  Eigen::ThreadPoolDevice device(&pool, 2);
  for (const Eigen::ThreadPoolDevice* d : {static_cast<const Eigen::ThreadPoolDevice*>(nullptr),
                                           static_cast<const Eigen::ThreadPoolDevice*>(&device)}) {
    for (int64_t count : {0, 1, 7, 64}) {
      for (int pieces : {0, 1, 3, 8}) {
        std::vector<std::atomic<int>> hits(count);
        std::vector<std::pair<int64_t, int64_t>> ranges(std::max(pieces, 1), {-1, -1});
        RunPieceRanges(d, count, pieces, [&](int piece, int64_t first, int64_t last) {
          ranges[piece] = {first, last};
          for (int64_t i = first; i < last; ++i) hits[i].fetch_add(1);
        });
        for (int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[i].load(), 1) << i;
        int64_t next = 0;
        for (const auto& [first, last] : ranges) {
          EXPECT_EQ(first, next);
          EXPECT_LE(first, last);
          next = last;
        }
        EXPECT_EQ(next, count) << "count " << count << " pieces " << pieces;
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

// Pool threads linger after their pieces for the next call's; with many
// pools (whose lingerers share a few boards) each piece still runs once,
// on the caller or on a thread of the caller's pool, never another's.
TEST(RunPiecesTest, LingeringThreadsTakeOnlyTheirOwnPoolsPieces) {
  constexpr int kPools = 40, kRounds = 50, kPieces = 4;
  std::vector<std::unique_ptr<Eigen::ThreadPool>> pools;
  std::vector<std::unique_ptr<Eigen::ThreadPoolDevice>> devices;
  for (int p = 0; p < kPools; ++p) {
    pools.push_back(std::make_unique<Eigen::ThreadPool>(2));
    devices.push_back(std::make_unique<Eigen::ThreadPoolDevice>(pools.back().get(), 2));
  }
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> foreign{0}, helped{0};
  // A few calls in a row on each pool (its threads linger between them),
  // then the next pool's while the last one's may still linger.
  for (int r = 0; r < kRounds * kPools; ++r) {
    {
      const int p = (r / 4) % kPools;
      std::vector<std::atomic<int>> runs(kPieces);
      RunPieces(*devices[p], kPieces, [&](int i) {
        // Long enough (5 us) that the pool's threads come for pieces.
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
        while (std::chrono::steady_clock::now() < until) {
        }
        runs[i].fetch_add(1);
        if (std::this_thread::get_id() != caller) {
          helped.fetch_add(1);
          if (pools[p]->CurrentThreadId() < 0) foreign.fetch_add(1);
        }
      });
      for (int i = 0; i < kPieces; ++i) ASSERT_EQ(runs[i].load(), 1) << "pool " << p;
    }
  }
  EXPECT_EQ(foreign.load(), 0);
  // Not asserted (it depends on the machine's timing): how many pieces the
  // pools' threads took.
  std::printf("pieces run by pool threads: %d of %d\n", helped.load(),
              kPools * kRounds * kPieces);
}

}  // namespace
}  // namespace cpu
}  // namespace graphrun
