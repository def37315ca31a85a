#include "distributed/ring_allreduce.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

// Runs `body(rank, ring)` on n threads, each with its own ring on loopback.
void OnRing(int n, const std::function<void(int, Ring*)>& body,
            absl::Duration stall = absl::Seconds(30)) {
  std::vector<std::unique_ptr<RingListener>> listeners;
  RingOptions options;
  options.stall_timeout = stall;
  options.chunk_bytes = 4096;  // many chunks even for small tensors
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<std::unique_ptr<RingListener>> l = RingListener::Listen("127.0.0.1");
    ASSERT_TRUE(l.ok()) << l.status();
    options.addresses.push_back((*l)->address());
    listeners.push_back(*std::move(l));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i, listener = std::move(listeners[i])]() mutable {
      RingOptions mine = options;
      mine.rank = i;
      absl::StatusOr<std::unique_ptr<Ring>> ring = Ring::Connect(std::move(listener), mine);
      ASSERT_TRUE(ring.ok()) << ring.status();
      body(i, ring->get());
    });
  }
  for (std::thread& t : threads) t.join();
}

// Rank r holds value (r + 1) * (i % 13 - 6) at index i: integers, so every
// order of summation gives the exact sum, n(n+1)/2 * (i % 13 - 6).
template <typename T>
void CheckSum(int n, int64_t count, DataType dtype) {
  std::vector<std::vector<T>> data(n, std::vector<T>(count));
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) data[r][i] = static_cast<T>((r + 1) * (i % 13 - 6));
  }
  OnRing(n, [&](int r, Ring* ring) {
    absl::Status s = ring->Allreduce(data[r].data(), count, dtype);
    EXPECT_TRUE(s.ok()) << s;
  });
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(data[r][i], static_cast<T>(n * (n + 1) / 2 * (i % 13 - 6)))
          << "rank " << r << " index " << i << " of " << count << " over " << n << " ranks";
    }
  }
}

TEST(RingAllreduceTest, SumsEveryDtypeOverOddSizesAndRankCounts) {
  for (int n : {1, 2, 3, 7}) {
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1001}, int64_t{65539}}) {
      CheckSum<float>(n, count, DT_FLOAT);
    }
    CheckSum<double>(n, 1001, DT_DOUBLE);
    CheckSum<int32_t>(n, 1001, DT_INT32);
    CheckSum<int64_t>(n, 1001, DT_INT64);
  }
}

TEST(RingAllreduceTest, LargeTensorInChunks) { CheckSum<float>(4, (int64_t{1} << 20) + 5, DT_FLOAT); }

// fp16 on the wire, float32 sums: every rank ends bit-identical, within
// fp16 rounding of the exact mean.
TEST(RingAllreduceTest, Fp16WireMeanIsCloseAndIdenticalOnEveryRank) {
  const int n = 4;
  const int64_t count = 10007;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> data(n, std::vector<float>(count));
  std::vector<double> want(count, 0);
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < count; ++i) {
      data[r][i] = dist(gen);
      want[i] += data[r][i] / n;
    }
  }
  std::vector<RingStats> stats(n);
  OnRing(n, [&](int r, Ring* ring) {
    absl::Status s = ring->Allreduce(data[r].data(), count, DT_FLOAT,
                                     AllreduceOptions{WIRE_ENCODING_FP16, /*mean=*/true},
                                     &stats[r]);
    EXPECT_TRUE(s.ok()) << s;
  });
  for (int64_t i = 0; i < count; ++i) {
    for (int r = 1; r < n; ++r) ASSERT_EQ(data[r][i], data[0][i]) << i;
    // Each of the 2(n-1) hops rounds to 11 significant bits.
    ASSERT_NEAR(data[0][i], want[i], 2 * (n - 1) * std::ldexp(1.0, -11)) << i;
  }
  // Half the bytes of float32: 2(n-1)/n of the tensor, 2 bytes a value.
  EXPECT_GE(stats[0].bytes_sent, 2 * (n - 1) * (count / n) * 2);
  EXPECT_LE(stats[0].bytes_sent, 2 * (n - 1) * (count / n + 1) * 2);
  EXPECT_EQ(stats[0].fp16_saturated, 0);
}

// Four gradients of 40,000: their sum overflows fp16 (65,504), their mean
// does not; summed in float32 with the mean's prescale nothing saturates.
TEST(RingAllreduceTest, MeanOnAnFp16WireDoesNotOverflow) {
  const int n = 4;
  std::vector<std::vector<float>> data(n, std::vector<float>(100, 40000.0f));
  std::vector<RingStats> stats(n);
  OnRing(n, [&](int r, Ring* ring) {
    EXPECT_TRUE(ring->Allreduce(data[r].data(), 100, DT_FLOAT,
                                AllreduceOptions{WIRE_ENCODING_FP16, /*mean=*/true}, &stats[r])
                    .ok());
  });
  for (int r = 0; r < n; ++r) {
    for (float v : data[r]) ASSERT_EQ(v, 40000.0f);
    EXPECT_EQ(stats[r].fp16_saturated, 0);
  }
  // The plain sum saturates on the way, and says so.
  std::vector<std::vector<float>> sum(n, std::vector<float>(100, 40000.0f));
  int64_t saturated = 0;
  OnRing(n, [&](int r, Ring* ring) {
    RingStats s;
    EXPECT_TRUE(ring->Allreduce(sum[r].data(), 100, DT_FLOAT,
                                AllreduceOptions{WIRE_ENCODING_FP16, false}, &s)
                    .ok());
    if (r == 0) saturated = s.fp16_saturated;
  });
  EXPECT_GT(saturated, 0);
}

// A rank that goes away mid-group: its neighbours fail at once, naming it,
// instead of waiting.
TEST(RingAllreduceTest, ARankThatGoesAwayFailsItsNeighbours) {
  const int n = 3;
  std::vector<absl::Status> got(n);
  OnRing(
      n,
      [&](int r, Ring* ring) {
        std::vector<float> v(1 << 16, 1.0f);
        if (r == 2) {
          ring->Abort();
          return;
        }
        got[r] = ring->Allreduce(v.data(), v.size(), DT_FLOAT);
        // A broken ring refuses later calls at once.
        absl::Status again = ring->Allreduce(v.data(), v.size(), DT_FLOAT);
        EXPECT_FALSE(again.ok());
      },
      /*stall=*/absl::Minutes(10));
  for (int r = 0; r < 2; ++r) EXPECT_FALSE(got[r].ok()) << r;
  EXPECT_EQ(got[0].code(), absl::StatusCode::kUnavailable) << got[0];
  EXPECT_TRUE(absl::StrContains(got[0].message(), "rank 2 at 127.0.0.1:")) << got[0];
}

TEST(RingAllreduceTest, BadArguments) {
  RingOptions options;
  options.rank = 3;
  options.addresses = {"127.0.0.1:1", "127.0.0.1:2"};
  absl::StatusOr<std::unique_ptr<RingListener>> l = RingListener::Listen("127.0.0.1");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(Ring::Connect(*std::move(l), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  OnRing(2, [&](int r, Ring* ring) {
    std::vector<uint8_t> v(8);
    absl::Status s = ring->Allreduce(v.data(), 8, DT_UINT8);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(s.message(), "uint8")) << s;
  });
}

}  // namespace
}  // namespace graphrun
