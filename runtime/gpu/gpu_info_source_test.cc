#include "runtime/gpu/gpu_info_source.h"

#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace graphrun {
namespace {

using placer::FormatGpuChoice;
using placer::GpuChoice;
using placer::GpuInfoSource;
using placer::GpuStatus;
using placer::NvmlGpuInfoSource;
using placer::SelectGpus;

// The real sources on this machine. Without a visible GPU each must say
// Unavailable (not crash, not another code), and the test is skipped: there
// is nothing to list. With one, NVML and the CUDA runtime must agree on the
// GPUs (count, memory) and selection must pick among them.
TEST(GpuInfoSourceTest, RealSourcesAgreeOnThisMachinesGpus) {
  NvmlGpuInfoSource nvml;
  CudaRuntimeGpuInfoSource cuda;
  absl::StatusOr<std::vector<GpuStatus>> by_nvml = nvml.Query();
  absl::StatusOr<std::vector<GpuStatus>> by_cuda = cuda.Query();
  for (const auto* answer : {&by_nvml, &by_cuda}) {
    if (!answer->ok()) {
      EXPECT_TRUE(absl::IsUnavailable(answer->status())) << answer->status();
    }
  }
  if (!by_nvml.ok() || !by_cuda.ok()) {
    GTEST_SKIP() << "no GPU visible here, nothing to compare (NVML: "
                 << by_nvml.status() << "; CUDA runtime: " << by_cuda.status() << ")";
  }
  ASSERT_FALSE(by_nvml->empty());
  ASSERT_EQ(by_nvml->size(), by_cuda->size());
  // Matched by physical index: the sources may list in different orders.
  std::map<int, GpuStatus> cuda_by_index;
  for (const GpuStatus& g : *by_cuda) cuda_by_index[g.index] = g;
  for (const GpuStatus& a : *by_nvml) {
    const int i = a.index;
    ASSERT_EQ(cuda_by_index.count(i), 1u) << "GPU " << i << " unknown to the CUDA runtime";
    const GpuStatus& b = cuda_by_index[i];
    EXPECT_GT(a.total_memory, 0) << i;
    EXPECT_LE(a.free_memory, a.total_memory) << i;
    EXPECT_LE(b.free_memory, b.total_memory) << i;
    // The CUDA runtime reports what the driver lets a context use: within
    // a few percent of NVML's total.
    EXPECT_NEAR(static_cast<double>(b.total_memory), static_cast<double>(a.total_memory),
                0.05 * static_cast<double>(a.total_memory))
        << i;
  }
  std::unique_ptr<GpuInfoSource> source = DefaultGpuInfoSource();
  absl::StatusOr<GpuChoice> choice = SelectGpus({}, source.get(), nullptr);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_FALSE(choice->selected.empty());
  for (int index : choice->selected) EXPECT_EQ(cuda_by_index.count(index), 1u) << index;
  std::cout << FormatGpuChoice(*choice) << "\n";
}

}  // namespace
}  // namespace graphrun
