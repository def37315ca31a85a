// What the tests that need a real GPU share: a skip (saying why) where no
// GPU is visible, session options with GPU 0 as a device, and TF32 off for
// the whole binary so GPU results are held to float tolerances.
#ifndef GRAPHRUN_TESTS_GPU_TEST_UTIL_H_
#define GRAPHRUN_TESTS_GPU_TEST_UTIL_H_

#include <cstdlib>
#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "runtime/gpu/cuda_probe.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_platform.h"
#include "runtime/session.h"

namespace graphrun {
namespace testing {

// cuBLAS and cuDNN read NVIDIA_TF32_OVERRIDE when they start: with it 0,
// float products and convolutions run in float, not on TF32 tensor cores.
// Set before main, ahead of any CUDA library.
inline const bool kNoTf32 = [] {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  return true;
}();

// Skips the test unless GPU 0 can be used.
#define GR_REQUIRE_GPU()                                                       \
  do {                                                                         \
    const ::graphrun::GpuInventory inventory = ::graphrun::QueryGpus();        \
    if (inventory.gpus.empty()) {                                              \
      GTEST_SKIP() << "no GPU visible (" << inventory.why_none                 \
                   << "): the GPU checks run on a GPU machine "                \
                      "(tools/gpu_check.sh)";                                  \
    }                                                                          \
  } while (0)

// A session's options with GPU 0 (2 GiB for graphrun) beside the CPU; the
// optimizer off. `soft`: nodes without a GPU kernel fall back to the CPU.
inline SessionOptions WithGpu(bool soft) {
  SessionOptions options;
  options.allow_soft_placement = soft;
  options.optimize = SessionOptions::Optimize::kNone;
  absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(0);
  EXPECT_TRUE(platform.ok()) << platform.status();
  if (platform.ok()) {
    GpuDeviceOptions o;
    o.memory_limit = int64_t{2} << 30;
    options.make_gpu_devices =
        GpuDevicesOn({std::shared_ptr<GpuPlatform>(*std::move(platform))}, o);
  }
  return options;
}

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_GPU_TEST_UTIL_H_
