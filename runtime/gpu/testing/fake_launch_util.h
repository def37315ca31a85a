// What every launcher of the fake GPU (fake_*_launch.cc) does before its
// host loop: check that the bytes its kernel will touch through each
// pointer it was given lie inside one block of the fake GPU's device
// memory, as a GPU kernel given host memory or too small a block would
// fault, and queue the loop on the fake stream.
#ifndef GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_LAUNCH_UTIL_H_
#define GRAPHRUN_RUNTIME_GPU_TESTING_FAKE_LAUNCH_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"

namespace graphrun {
namespace gpu {
namespace fake {

// The `bytes` bytes at `ptr` a kernel touches through one of its pointers.
struct DeviceSpan {
  const void* ptr;
  int64_t bytes;
};

// The span of `n` elements of T at `p`.
template <typename T>
DeviceSpan SpanOf(const T* p, int64_t n) {
  return {p, n * static_cast<int64_t>(sizeof(T))};
}

// OK when every span lies inside one block of the fake GPU's device
// memory. nullptr with no bytes is an empty tensor's and passes; a pointer
// with no bytes has its first byte checked. InvalidArgument naming the
// launcher `what`, the span's place in `spans` (from 0) and its bytes
// otherwise; FailedPrecondition without a stream.
inline absl::Status OnDevice(void* stream, const char* what,
                             std::initializer_list<DeviceSpan> spans) {
  if (stream == nullptr) return absl::FailedPreconditionError("no stream");
  const FakeGpuPlatform* platform = FakeGpuPlatform::PlatformOf(static_cast<GpuStream*>(stream));
  int arg = 0;
  for (const DeviceSpan& s : spans) {
    const int64_t bytes = std::max<int64_t>(s.bytes, 1);
    if ((s.ptr != nullptr || s.bytes > 0) &&
        !platform->IsDeviceMemory(s.ptr, static_cast<size_t>(bytes))) {
      return absl::InvalidArgumentError(
          absl::StrCat("the fake GPU's ", what, " was given ", bytes, " bytes at argument ", arg,
                       " that are not inside one block of the GPU's memory"));
    }
    ++arg;
  }
  return absl::OkStatus();
}

// The same for a launch over `n` elements: nothing to check when n is 0.
inline absl::Status OnDevice(void* stream, int64_t n, const char* what,
                             std::initializer_list<DeviceSpan> spans) {
  if (stream == nullptr) return absl::FailedPreconditionError("no stream");
  return n == 0 ? absl::OkStatus() : OnDevice(stream, what, spans);
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
