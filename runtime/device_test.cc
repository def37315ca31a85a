#include "runtime/device.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graph/tensor.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

// A fetched output may outlive the session and its devices: its buffer
// stays valid and freeing it later is safe (the device's allocator lives
// until its last buffer is freed).
TEST(CpuDeviceTest, TensorsOutliveTheirDevice) {
  auto device = NewCpuDevice("/job:localhost/replica:0/task:0", 0, {});
  auto t = Tensor::Allocate(device->allocator(), DT_INT64, TensorShape({1000}));
  ASSERT_TRUE(t.ok()) << t.status();
  for (int i = 0; i < 1000; ++i) t->flat<int64_t>()[i] = i * 3;
  EXPECT_EQ(device->allocator_stats().bytes_in_use, 8000);
  device.reset();
  int64_t sum = 0;
  for (int i = 0; i < 1000; ++i) sum += t->flat<int64_t>()[i];
  EXPECT_EQ(sum, 3 * 999 * 1000 / 2);
  *t = Tensor();  // the last buffer: the allocator goes with it
}

TEST(CpuDeviceTest, TrackingAllocatorCountsAndLimits) {
  auto device = NewCpuDevice("/job:localhost/replica:0/task:0", 0, {});
  Allocator* a = device->allocator();
  void* p = a->AllocateRaw(64, 4096);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(device->allocator_stats().bytes_in_use, 4096);
  a->DeallocateRaw(p, 4096);
  EXPECT_EQ(device->allocator_stats().bytes_in_use, 0);
  EXPECT_EQ(device->allocator_stats().peak_bytes_in_use, 4096);
}

// A base allocator that hands out fake addresses and records what it was
// asked, so the tracking layer's decisions can be seen.
class RecordingAllocator : public Allocator {
 public:
  std::string Name() const override { return "recording"; }
  void* AllocateRaw(size_t, size_t num_bytes) override {
    calls.fetch_add(1);
    if (fail.load()) return nullptr;
    const int64_t now = outstanding.fetch_add(static_cast<int64_t>(num_bytes)) +
                        static_cast<int64_t>(num_bytes);
    int64_t seen = max_outstanding.load();
    while (now > seen && !max_outstanding.compare_exchange_weak(seen, now)) {
    }
    return reinterpret_cast<void*>(uintptr_t{0x1000} * (next.fetch_add(1) + 1));
  }
  void DeallocateRaw(void*, size_t num_bytes) override {
    outstanding.fetch_sub(static_cast<int64_t>(num_bytes));
  }

  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};
  std::atomic<int64_t> outstanding{0};
  std::atomic<int64_t> max_outstanding{0};
  std::atomic<uintptr_t> next{0};
};

TEST(TrackingAllocatorTest, RefusesPastTheLimitWithoutAskingTheBase) {
  RecordingAllocator base;
  TrackingAllocator a(&base, "t", /*bytes_limit=*/1000);
  void* p = a.AllocateRaw(64, 600);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(a.AllocateRaw(64, 401), nullptr);  // 1001 > 1000
  EXPECT_EQ(base.calls.load(), 1);
  EXPECT_EQ(a.Stats().bytes_in_use, 600);
  void* q = a.AllocateRaw(64, 400);  // exactly the limit
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(a.Stats().bytes_in_use, 1000);
  EXPECT_EQ(a.AllocateRaw(64, 1), nullptr);
  a.DeallocateRaw(p, 600);
  void* r = a.AllocateRaw(64, 600);  // room again once freed
  ASSERT_NE(r, nullptr);
  AllocatorStats stats = a.Stats();
  EXPECT_EQ(stats.num_allocs, 3);
  EXPECT_EQ(stats.bytes_in_use, 1000);
  EXPECT_EQ(stats.peak_bytes_in_use, 1000);
  EXPECT_EQ(stats.largest_alloc_size, 600);
  EXPECT_EQ(stats.bytes_limit, 1000);
  a.DeallocateRaw(q, 400);
  a.DeallocateRaw(r, 600);
  EXPECT_EQ(a.Stats().bytes_in_use, 0);
  EXPECT_EQ(base.outstanding.load(), 0);
}

TEST(TrackingAllocatorTest, NoLimitAndPeakReset) {
  RecordingAllocator base;
  TrackingAllocator a(&base, "t");
  void* p = a.AllocateRaw(64, int64_t{1} << 40);  // no limit: fake memory
  ASSERT_NE(p, nullptr);
  a.DeallocateRaw(p, int64_t{1} << 40);
  EXPECT_EQ(a.Stats().peak_bytes_in_use, int64_t{1} << 40);
  void* q = a.AllocateRaw(64, 10);
  a.ResetPeak();
  EXPECT_EQ(a.Stats().peak_bytes_in_use, 10);
  a.DeallocateRaw(q, 10);
}

TEST(TrackingAllocatorTest, BaseFailureCountsNothing) {
  RecordingAllocator base;
  base.fail = true;
  TrackingAllocator a(&base, "t", 1000);
  EXPECT_EQ(a.AllocateRaw(64, 100), nullptr);
  EXPECT_EQ(base.calls.load(), 1);
  AllocatorStats stats = a.Stats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.num_allocs, 0);
  EXPECT_EQ(stats.peak_bytes_in_use, 0);
}

TEST(TrackingAllocatorTest, HugeRequestsAreRefusedNotWrapped) {
  RecordingAllocator base;
  TrackingAllocator limited(&base, "t", 1000);
  TrackingAllocator unlimited(&base, "u");
  // As an int64_t, SIZE_MAX is -1: it used to pass the limit check and
  // lower the count.
  for (size_t n : {std::numeric_limits<size_t>::max(),
                   size_t{1} << 63, (size_t{1} << 60) + 1}) {
    EXPECT_EQ(limited.AllocateRaw(64, n), nullptr) << n;
    EXPECT_EQ(unlimited.AllocateRaw(64, n), nullptr) << n;
  }
  EXPECT_EQ(base.calls.load(), 0);
  EXPECT_EQ(limited.Stats().bytes_in_use, 0);
  EXPECT_EQ(unlimited.Stats().bytes_in_use, 0);
}

TEST(TrackingAllocatorTest, ConcurrentRequestsNeverOvershootTheLimit) {
  RecordingAllocator base;
  constexpr int64_t kLimit = 10000;
  TrackingAllocator a(&base, "t", kLimit);
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t n = 1000 + 97 * ((i + t) % 20);
        void* p = a.AllocateRaw(64, n);
        if (p == nullptr) {
          ++refused;
          continue;
        }
        a.DeallocateRaw(p, n);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(base.max_outstanding.load(), kLimit);
  EXPECT_LE(a.Stats().peak_bytes_in_use, kLimit);
  EXPECT_EQ(a.Stats().bytes_in_use, 0);
  EXPECT_EQ(a.Stats().num_allocs + refused.load(), 8 * 2000);
}


// Each device made gets its own nonzero incarnation, even under one name.
TEST(CpuDeviceTest, EachDeviceHasItsOwnIncarnation) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 8; ++i) {
    auto device = NewCpuDevice("/job:localhost/replica:0/task:0", 0, {});
    EXPECT_NE(device->incarnation(), 0u);
    seen.insert(device->incarnation());
  }
  EXPECT_EQ(seen.size(), 8u);
}

}  // namespace
}  // namespace graphrun

namespace graphrun {
namespace {

// Statistics are the Allocator interface's: a CPU device's counts pass
// through it, the plain host allocator keeps none.
TEST(CpuDeviceTest, AllocatorStatisticsThroughTheAllocatorInterface) {
  auto device = NewCpuDevice("/job:localhost/replica:0/task:0", 0, {});
  Allocator* a = device->allocator();
  auto t = Tensor::Allocate(a, DT_FLOAT, TensorShape({250}));
  ASSERT_TRUE(t.ok());
  std::optional<AllocatorStats> stats = a->GetStats();
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->bytes_in_use, 1000);
  EXPECT_EQ(device->allocator_stats().bytes_in_use, 1000);
  EXPECT_TRUE(a->ResetPeak());
  EXPECT_FALSE(HostAllocator()->GetStats().has_value());
  EXPECT_FALSE(HostAllocator()->ResetPeak());
  // CPUs keep every tensor in host memory: one allocator whatever is asked.
  AllocatorAttributes host;
  host.on_host = true;
  EXPECT_EQ(device->GetAllocator(host), a);
  EXPECT_EQ(device->device_context(), nullptr);
  EXPECT_TRUE(device->Sync().ok());
}

}  // namespace
}  // namespace graphrun
