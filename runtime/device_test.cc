#include "runtime/device.h"

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

}  // namespace
}  // namespace graphrun
