#include "runtime/gpu/testing/fake_gpu_platform.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace graphrun {

class FakeGpuEvent : public GpuEvent {
 public:
  absl::Mutex mu;
  int64_t recorded ABSL_GUARDED_BY(mu) = 0;  // points marked so far
  int64_t passed ABSL_GUARDED_BY(mu) = 0;    // the last point passed
};

// One thread runs the queue in order. Each operation gets the stream's
// first error so far: work is skipped after an error, events are still
// marked (no other stream waits forever), callbacks get the error.
class FakeGpuStream : public GpuStream {
 public:
  using Op = std::function<absl::Status(const absl::Status& stream_error)>;

  explicit FakeGpuStream(FakeGpuPlatform* platform)
      : platform_(platform), thread_([this] { Loop(); }) {
    absl::MutexLock lock(&platform_->mu_);
    platform_->streams_.insert(this);
  }
  ~FakeGpuStream() override {
    {
      absl::MutexLock lock(&platform_->mu_);
      platform_->streams_.erase(this);
    }
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

  FakeGpuPlatform* platform() const { return platform_; }

  // The stream itself, as a GpuStream* (FakeGpuPlatform::Enqueue takes it).
  void* native() const override {
    return static_cast<GpuStream*>(const_cast<FakeGpuStream*>(this));
  }

  absl::Status MemcpyHostToDevice(void* dst, const void* src, size_t bytes) override {
    return Copy("host to device", dst, true, src, false, bytes, &platform_->h2d_);
  }
  absl::Status MemcpyDeviceToHost(void* dst, const void* src, size_t bytes) override {
    return Copy("device to host", dst, false, src, true, bytes, &platform_->d2h_);
  }
  absl::Status MemcpyDeviceToDevice(void* dst, const void* src, size_t bytes) override {
    return Copy("device to device", dst, true, src, true, bytes, &platform_->d2d_);
  }
  absl::Status Record(GpuEvent* event) override {
    auto* e = static_cast<FakeGpuEvent*>(event);
    int64_t point;
    {
      absl::MutexLock lock(&e->mu);
      point = ++e->recorded;
    }
    Push([e, point](const absl::Status&) {
      absl::MutexLock lock(&e->mu);
      if (e->passed < point) e->passed = point;
      return absl::OkStatus();
    });
    return absl::OkStatus();
  }
  absl::Status Wait(GpuEvent* event) override {
    auto* e = static_cast<FakeGpuEvent*>(event);
    int64_t point;
    {
      absl::MutexLock lock(&e->mu);
      point = e->recorded;
    }
    Push([e, point](const absl::Status&) {
      absl::MutexLock lock(&e->mu);
      const auto passed = [e, point]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return e->passed >= point;
      };
      e->mu.Await(absl::Condition(&passed));
      return absl::OkStatus();
    });
    return absl::OkStatus();
  }
  absl::Status ThenCall(std::function<void(const absl::Status&)> fn) override {
    Push([fn = std::move(fn)](const absl::Status& error) {
      fn(error);
      return absl::OkStatus();
    });
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    absl::Notification done;
    absl::Status result;
    Push([&](const absl::Status& error) {
      result = error;
      done.Notify();
      return absl::OkStatus();
    });
    done.WaitForNotification();
    return result;
  }

  // Runs `fn` once the stream got past everything queued so far (errors
  // or not).
  void ThenRun(std::function<void()> fn) {
    Push([fn = std::move(fn)](const absl::Status&) {
      fn();
      return absl::OkStatus();
    });
  }

  // Work as a kernel launch: skipped after an error, its own error sticks;
  // device memory is readable while it runs.
  void PushWork(std::function<absl::Status()> work) {
    Push([platform = platform_, work = std::move(work)](const absl::Status& error) {
      if (!error.ok()) return absl::OkStatus();
      platform->BeginDeviceWork();
      absl::Status s = work();
      platform->EndDeviceWork();
      return s;
    });
  }

 private:
  absl::Status Copy(const char* kind, void* dst, bool dst_device, const void* src,
                    bool src_device, size_t bytes, std::atomic<int64_t>* counter) {
    FakeGpuPlatform* platform = platform_;
    PushWork([=]() {
      absl::Status s = platform->TakeInjectedFailure();
      if (s.ok()) s = platform->CheckCopy(kind, dst, dst_device, src, src_device, bytes);
      if (!s.ok()) return s;
      if (bytes > 0) std::memcpy(dst, src, bytes);
      counter->fetch_add(1);
      if (!src_device && dst_device && platform->IsPinnedHost(src)) {
        platform->h2d_pinned_.fetch_add(1);
      }
      return absl::OkStatus();
    });
    return absl::OkStatus();
  }

  void Push(Op op) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(op));
  }

  void Loop() {
    while (true) {
      Op op;
      absl::Status error;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](FakeGpuStream* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
              return s->stop_ || !s->queue_.empty();
            },
            this));
        if (queue_.empty()) return;  // stopping, and everything ran
        op = std::move(queue_.front());
        queue_.pop_front();
        error = error_;
      }
      const absl::Status s = op(error);
      if (!s.ok()) {
        absl::MutexLock lock(&mu_);
        if (error_.ok()) error_ = s;
      }
    }
  }

  FakeGpuPlatform* const platform_;
  absl::Mutex mu_;
  std::deque<Op> queue_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the rest is made
};

FakeGpuPlatform::FakeGpuPlatform(FakeGpuOptions options) : options_(std::move(options)) {}

namespace {

// The pages a device block of `bytes` takes (at least one).
size_t MappedBytes(size_t bytes) {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return std::max<size_t>(1, (bytes + page - 1) / page) * page;
}

void Protect(uintptr_t block, size_t bytes, bool readable) {
  if (::mprotect(reinterpret_cast<void*>(block), MappedBytes(bytes),
                 readable ? PROT_READ | PROT_WRITE : PROT_NONE) != 0) {
    std::abort();  // the fake's own mapping: cannot fail but for a bug here
  }
}

}  // namespace

FakeGpuPlatform::~FakeGpuPlatform() {
  absl::MutexLock lock(&mu_);
  for (auto& [p, size] : device_blocks_) ::munmap(reinterpret_cast<void*>(p), MappedBytes(size));
  for (auto& [p, size] : retiring_blocks_) ::munmap(reinterpret_cast<void*>(p), MappedBytes(size));
  for (auto& [p, size] : pinned_blocks_) std::free(reinterpret_cast<void*>(p));
}

std::string FakeGpuPlatform::description() const {
  return absl::StrCat("device: ", options_.ordinal, ", name: ", options_.name,
                      ", pci bus id: 0000:00:00.0, compute capability: 9.0");
}

absl::StatusOr<int64_t> FakeGpuPlatform::free_memory() const {
  absl::MutexLock lock(&mu_);
  return options_.total_memory - options_.used_by_others - device_in_use_;
}

void* FakeGpuPlatform::AllocateDevice(size_t bytes) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int64_t>(bytes) >
      options_.total_memory - options_.used_by_others - device_in_use_) {
    return nullptr;
  }
  void* p = ::mmap(nullptr, MappedBytes(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Poisoned, as a real GPU's fresh memory holds whatever was there: all
  // bits set reads as NaN in float, so a kernel that reads its output before
  // writing it shows as NaN in the comparisons.
  std::memset(p, 0xFF, bytes);
  if (running_work_ == 0) Protect(reinterpret_cast<uintptr_t>(p), bytes, false);
  device_blocks_[reinterpret_cast<uintptr_t>(p)] = bytes;
  device_in_use_ += static_cast<int64_t>(bytes);
  return p;
}

void FakeGpuPlatform::FreeDevice(void* ptr) {
  absl::MutexLock lock(&mu_);
  auto it = device_blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == device_blocks_.end()) std::abort();  // not ours: a real GPU would fault
  const size_t mapped = MappedBytes(it->second);
  const size_t it_bytes = it->second;
  device_in_use_ -= static_cast<int64_t>(it->second);
  device_blocks_.erase(it);
  if (streams_.empty()) {
    ::munmap(ptr, mapped);
    return;
  }
  // As cudaFree waits for the GPU's work: the host memory goes back once
  // every stream got past what was queued before (a kernel queued earlier
  // may still read or write the block), without blocking this thread.
  // Until then the work queued before may touch it: it opens and closes
  // with the live blocks.
  retiring_blocks_[reinterpret_cast<uintptr_t>(ptr)] = it_bytes;
  auto pending = std::make_shared<std::atomic<size_t>>(streams_.size());
  for (FakeGpuStream* stream : streams_) {
    stream->ThenRun([this, pending, ptr, mapped] {
      if (pending->fetch_sub(1) != 1) return;
      absl::MutexLock lock(&mu_);
      retiring_blocks_.erase(reinterpret_cast<uintptr_t>(ptr));
      ::munmap(ptr, mapped);
    });
  }
}

void FakeGpuPlatform::BeginDeviceWork() {
  absl::MutexLock lock(&mu_);
  if (running_work_++ > 0) return;
  for (const auto& [p, bytes] : device_blocks_) Protect(p, bytes, true);
  for (const auto& [p, bytes] : retiring_blocks_) Protect(p, bytes, true);
}

void FakeGpuPlatform::EndDeviceWork() {
  absl::MutexLock lock(&mu_);
  if (--running_work_ > 0) return;
  for (const auto& [p, bytes] : device_blocks_) Protect(p, bytes, false);
  for (const auto& [p, bytes] : retiring_blocks_) Protect(p, bytes, false);
}

void* FakeGpuPlatform::AllocatePinnedHost(size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (p == nullptr) return nullptr;
  absl::MutexLock lock(&mu_);
  pinned_blocks_[reinterpret_cast<uintptr_t>(p)] = bytes;
  pinned_in_use_ += static_cast<int64_t>(bytes);
  return p;
}

void FakeGpuPlatform::FreePinnedHost(void* ptr) {
  absl::MutexLock lock(&mu_);
  auto it = pinned_blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == pinned_blocks_.end()) std::abort();
  pinned_in_use_ -= static_cast<int64_t>(it->second);
  pinned_blocks_.erase(it);
  std::free(ptr);
}

absl::StatusOr<std::unique_ptr<GpuStream>> FakeGpuPlatform::NewStream() {
  return std::unique_ptr<GpuStream>(new FakeGpuStream(this));
}

absl::StatusOr<std::unique_ptr<GpuEvent>> FakeGpuPlatform::NewEvent() {
  return std::unique_ptr<GpuEvent>(new FakeGpuEvent());
}

bool FakeGpuPlatform::IsDeviceMemory(const void* ptr, size_t bytes) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  auto it = device_blocks_.upper_bound(p);
  if (it == device_blocks_.begin()) return false;
  --it;
  return p >= it->first && p + bytes <= it->first + it->second;
}

bool FakeGpuPlatform::IsPinnedHost(const void* ptr) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  auto it = pinned_blocks_.upper_bound(p);
  if (it == pinned_blocks_.begin()) return false;
  --it;
  return p >= it->first && p < it->first + it->second;
}

int64_t FakeGpuPlatform::device_bytes_in_use() const {
  absl::MutexLock lock(&mu_);
  return device_in_use_;
}

int64_t FakeGpuPlatform::pinned_bytes_in_use() const {
  absl::MutexLock lock(&mu_);
  return pinned_in_use_;
}

void FakeGpuPlatform::FailNextCopy(absl::Status status) {
  absl::MutexLock lock(&mu_);
  injected_ = std::move(status);
}

absl::Status FakeGpuPlatform::TakeInjectedFailure() {
  absl::MutexLock lock(&mu_);
  absl::Status s = std::move(injected_);
  injected_ = absl::OkStatus();
  return s;
}

absl::Status FakeGpuPlatform::CheckCopy(const char* kind, const void* dst, bool dst_device,
                                        const void* src, bool src_device, size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  auto check = [&](const void* p, bool device, const char* which) -> absl::Status {
    if (IsDeviceMemory(p, bytes) == device) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "fake GPU ", options_.ordinal, ": ", kind, " copy of ", bytes, " bytes: the ", which,
        device ? " is not device memory" : " is device memory"));
  };
  absl::Status s = check(dst, dst_device, "destination");
  if (s.ok()) s = check(src, src_device, "source");
  return s;
}

void FakeGpuPlatform::Enqueue(GpuStream* stream, std::function<absl::Status()> work) {
  static_cast<FakeGpuStream*>(stream)->PushWork(std::move(work));
}

FakeGpuPlatform* FakeGpuPlatform::PlatformOf(GpuStream* stream) {
  return static_cast<FakeGpuStream*>(stream)->platform();
}

}  // namespace graphrun
