#include "runtime/gpu/cuda_probe.h"

#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

TEST(CudaProbeTest, InventoryIsConsistent) {
  GpuInventory inv = QueryGpus();
  if (inv.gpus.empty()) {
    EXPECT_FALSE(inv.why_none.empty()) << "no GPUs must come with a reason";
  } else {
    EXPECT_TRUE(inv.cuda_compiled);
    EXPECT_TRUE(inv.why_none.empty());
    for (const GpuInfo& g : inv.gpus) {
      EXPECT_FALSE(g.name.empty());
      EXPECT_GT(g.total_memory, 0);
      EXPECT_LE(g.free_memory, g.total_memory);
      EXPECT_GE(g.compute_major, 1);
    }
  }
}

TEST(CudaProbeTest, FillKernelRunsOnEveryGpu) {
  GpuInventory inv = QueryGpus();
  if (inv.gpus.empty()) {
    EXPECT_FALSE(FillOnGpu(0, 1.0f, {}).ok());
    GTEST_SKIP() << "no GPU visible: " << inv.why_none;
  }
  for (const GpuInfo& g : inv.gpus) {
    std::vector<float> out(1 << 20, 0.0f);
    absl::Status s = FillOnGpu(g.ordinal, 2.5f, absl::MakeSpan(out));
    ASSERT_TRUE(s.ok()) << s;
    for (size_t i = 0; i < out.size(); i += 4099) ASSERT_EQ(out[i], 2.5f) << i;
    EXPECT_EQ(out.back(), 2.5f);
  }
}

}  // namespace
}  // namespace graphrun
