// Session options with one fake GPU (runtime/gpu/testing/fake_gpu_platform.h)
// of 256 MiB (or `memory_limit` bytes) beside the CPU, for the tests that
// run GPU kernels on it.
#ifndef GRAPHRUN_TESTS_FAKE_GPU_SESSION_H_
#define GRAPHRUN_TESTS_FAKE_GPU_SESSION_H_

#include <cstdint>
#include <memory>

#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"

namespace graphrun {
namespace testing {

inline SessionOptions WithFakeGpuOf(int64_t memory_limit) {
  SessionOptions options;
  GpuDeviceOptions o;
  o.memory_limit = memory_limit;
  options.make_gpu_devices = GpuDevicesOn({std::make_shared<FakeGpuPlatform>()}, o);
  return options;
}

inline SessionOptions WithFakeGpu() { return WithFakeGpuOf(int64_t{256} << 20); }

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_FAKE_GPU_SESSION_H_
