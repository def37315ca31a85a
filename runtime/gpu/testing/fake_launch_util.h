// What every launcher of the fake GPU (fake_*_launch.cc) does before its
// host loop: check that the pointers it was given are the fake GPU's
// device memory, as a GPU kernel given host memory would fault, and queue
// the loop on the fake stream.
#ifndef GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_LAUNCH_UTIL_H_
#define GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_LAUNCH_UTIL_H_

#include <functional>
#include <initializer_list>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"

namespace graphrun {
namespace gpu {
namespace fake {

// OK when every pointer lies in the fake GPU's device memory; nullptr is
// an empty tensor's and passes. FailedPrecondition without a stream.
inline absl::Status OnDevice(void* stream, const char* what,
                             std::initializer_list<const void*> ptrs) {
  if (stream == nullptr) return absl::FailedPreconditionError("no stream");
  const FakeGpuPlatform* platform = FakeGpuPlatform::PlatformOf(static_cast<GpuStream*>(stream));
  for (const void* p : ptrs) {
    if (p != nullptr && !platform->IsDeviceMemory(p)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the fake GPU's ", what, " was given memory that is not the GPU's"));
    }
  }
  return absl::OkStatus();
}

// The same for a launch over `n` elements: nothing to check when n is 0.
inline absl::Status OnDevice(void* stream, int64_t n, const char* what,
                             std::initializer_list<const void*> ptrs) {
  if (stream == nullptr) return absl::FailedPreconditionError("no stream");
  return n == 0 ? absl::OkStatus() : OnDevice(stream, what, ptrs);
}

// Queues `work` on the fake stream.
inline absl::Status Queue(void* stream, std::function<void()> work) {
  if (stream == nullptr) return absl::FailedPreconditionError("no stream");
  FakeGpuPlatform::Enqueue(static_cast<GpuStream*>(stream), [work = std::move(work)] {
    work();
    return absl::OkStatus();
  });
  return absl::OkStatus();
}

}  // namespace fake
}  // namespace gpu
}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_LAUNCH_UTIL_H_
