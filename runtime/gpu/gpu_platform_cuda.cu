// GpuPlatform over the CUDA runtime; compiled by nvcc on every build with a
// toolkit (gpu_platform_cpu.cc otherwise).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/gpu/gpu_platform.h"

namespace graphrun {
namespace {

std::string CudaError(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

absl::Status FromCuda(cudaError_t err, int ordinal, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  const std::string message =
      "GPU " + std::to_string(ordinal) + ": " + what + ": " + CudaError(err);
  switch (err) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

// Runs the callbacks of ThenCall once their events pass, from one thread per
// GPU that asks cudaEventQuery: a failed stream then reaches its callbacks
// with the error, where a host function queued on the stream would never
// run. TensorFlow's EventMgr works the same way. Callbacks of one stream run
// in the order they were queued. The thread owns the poller's state, so the
// last reference to the platform may go from inside a callback (the thread
// then detaches instead of joining itself).
class EventPoller {
 public:
  explicit EventPoller(int ordinal) : state_(std::make_shared<State>()) {
    state_->ordinal = ordinal;
    thread_ = std::thread([state = state_] { Loop(state.get()); });
  }
  ~EventPoller() {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->stop = true;
    }
    state_->cv.notify_all();
    if (std::this_thread::get_id() == thread_.get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }

  void Add(cudaStream_t stream, cudaEvent_t event, std::function<void(const absl::Status&)> fn) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->pending.push_back({stream, event, std::move(fn)});
    }
    state_->cv.notify_all();
  }

 private:
  struct Pending {
    cudaStream_t stream;
    cudaEvent_t event;
    std::function<void(const absl::Status&)> fn;
  };
  struct State {
    int ordinal = 0;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Pending> pending;
    bool stop = false;
  };

  static void Loop(State* state) {
    cudaSetDevice(state->ordinal);
    std::unique_lock<std::mutex> lock(state->mu);
    while (true) {
      state->cv.wait(lock, [state] { return state->stop || !state->pending.empty(); });
      if (state->pending.empty()) return;  // stopping, and every callback ran
      std::deque<Pending> ready;
      std::deque<Pending> waiting;
      std::vector<absl::Status> statuses;
      std::vector<cudaStream_t> blocked;  // streams with an earlier event not passed
      for (Pending& p : state->pending) {
        const bool behind =
            std::find(blocked.begin(), blocked.end(), p.stream) != blocked.end();
        const cudaError_t err = behind ? cudaErrorNotReady : cudaEventQuery(p.event);
        if (err == cudaErrorNotReady) {
          if (!behind) blocked.push_back(p.stream);
          waiting.push_back(std::move(p));
          continue;
        }
        statuses.push_back(FromCuda(err, state->ordinal, "queued work"));
        if (err != cudaSuccess) cudaGetLastError();
        ready.push_back(std::move(p));
      }
      state->pending = std::move(waiting);
      lock.unlock();
      for (size_t i = 0; i < ready.size(); ++i) {
        cudaEventDestroy(ready[i].event);
        ready[i].fn(statuses[i]);
      }
      const bool progressed = !ready.empty();
      ready.clear();  // the callbacks' captures go before the lock is taken again
      lock.lock();
      if (!progressed && !state->pending.empty()) {
        // Nothing passed yet: look again shortly (or when more arrives).
        state->cv.wait_for(lock, std::chrono::microseconds(20));
      }
    }
  }

  std::shared_ptr<State> state_;
  std::thread thread_;
};

class CudaEvent : public GpuEvent {
 public:
  explicit CudaEvent(cudaEvent_t event) : event_(event) {}
  ~CudaEvent() override { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }

 private:
  const cudaEvent_t event_;
};

class CudaStream : public GpuStream {
 public:
  CudaStream(int ordinal, cudaStream_t stream, EventPoller* poller)
      : ordinal_(ordinal), stream_(stream), poller_(poller) {}
  ~CudaStream() override {
    cudaSetDevice(ordinal_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  void* native() const override { return stream_; }

  absl::Status MemcpyHostToDevice(void* dst, const void* src, size_t bytes) override {
    return Copy(dst, src, bytes, cudaMemcpyHostToDevice, "host to device copy");
  }
  absl::Status MemcpyDeviceToHost(void* dst, const void* src, size_t bytes) override {
    return Copy(dst, src, bytes, cudaMemcpyDeviceToHost, "device to host copy");
  }
  absl::Status MemcpyDeviceToDevice(void* dst, const void* src, size_t bytes) override {
    return Copy(dst, src, bytes, cudaMemcpyDeviceToDevice, "device to device copy");
  }
  absl::Status Record(GpuEvent* event) override {
    cudaSetDevice(ordinal_);
    return FromCuda(cudaEventRecord(static_cast<CudaEvent*>(event)->get(), stream_), ordinal_,
                    "cudaEventRecord");
  }
  absl::Status Wait(GpuEvent* event) override {
    cudaSetDevice(ordinal_);
    return FromCuda(cudaStreamWaitEvent(stream_, static_cast<CudaEvent*>(event)->get(), 0),
                    ordinal_, "cudaStreamWaitEvent");
  }
  absl::Status ThenCall(std::function<void(const absl::Status&)> fn) override {
    cudaSetDevice(ordinal_);
    cudaEvent_t event;
    cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (err != cudaSuccess) return FromCuda(err, ordinal_, "cudaEventCreate");
    err = cudaEventRecord(event, stream_);
    if (err != cudaSuccess) {
      cudaEventDestroy(event);
      return FromCuda(err, ordinal_, "cudaEventRecord");
    }
    poller_->Add(stream_, event, std::move(fn));
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    cudaSetDevice(ordinal_);
    return FromCuda(cudaStreamSynchronize(stream_), ordinal_, "cudaStreamSynchronize");
  }

 private:
  absl::Status Copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                    const char* what) {
    if (bytes == 0) return absl::OkStatus();
    cudaSetDevice(ordinal_);
    return FromCuda(cudaMemcpyAsync(dst, src, bytes, kind, stream_), ordinal_, what);
  }

  const int ordinal_;
  const cudaStream_t stream_;
  EventPoller* const poller_;
};

class CudaPlatform : public GpuPlatform {
 public:
  CudaPlatform(int ordinal, std::string description, int64_t total)
      : ordinal_(ordinal),
        description_(std::move(description)),
        total_(total),
        poller_(std::make_unique<EventPoller>(ordinal)) {}

  int ordinal() const override { return ordinal_; }
  std::string description() const override { return description_; }
  int64_t total_memory() const override { return total_; }
  absl::StatusOr<int64_t> free_memory() const override {
    cudaSetDevice(ordinal_);
    size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t err = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (err != cudaSuccess) return FromCuda(err, ordinal_, "cudaMemGetInfo");
    return static_cast<int64_t>(free_bytes);
  }
  void* AllocateDevice(size_t bytes) override {
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void FreeDevice(void* ptr) override {
    cudaSetDevice(ordinal_);
    cudaFree(ptr);
  }
  void* AllocatePinnedHost(size_t bytes) override {
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void FreePinnedHost(void* ptr) override { cudaFreeHost(ptr); }
  absl::StatusOr<std::unique_ptr<GpuStream>> NewStream() override {
    cudaSetDevice(ordinal_);
    cudaStream_t stream;
    const cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) return FromCuda(err, ordinal_, "cudaStreamCreate");
    return std::unique_ptr<GpuStream>(new CudaStream(ordinal_, stream, poller_.get()));
  }
  absl::StatusOr<std::unique_ptr<GpuEvent>> NewEvent() override {
    cudaSetDevice(ordinal_);
    cudaEvent_t event;
    const cudaError_t err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (err != cudaSuccess) return FromCuda(err, ordinal_, "cudaEventCreate");
    return std::unique_ptr<GpuEvent>(new CudaEvent(event));
  }

 private:
  const int ordinal_;
  const std::string description_;
  const int64_t total_;
  std::unique_ptr<EventPoller> poller_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuPlatform>> NewCudaPlatform(int ordinal) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return absl::UnavailableError("no usable CUDA driver (" + CudaError(err) + ")");
  }
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError("GPU " + std::to_string(ordinal) + " is not visible (" +
                                  std::to_string(count) + " visible)");
  }
  cudaDeviceProp prop;
  err = cudaGetDeviceProperties(&prop, ordinal);
  if (err != cudaSuccess) return FromCuda(err, ordinal, "cudaGetDeviceProperties");
  char bus[32] = {0};
  cudaDeviceGetPCIBusId(bus, sizeof(bus), ordinal);
  const std::string description = "device: " + std::to_string(ordinal) + ", name: " +
                                  prop.name + ", pci bus id: " + bus +
                                  ", compute capability: " + std::to_string(prop.major) +
                                  "." + std::to_string(prop.minor);
  return std::unique_ptr<GpuPlatform>(
      new CudaPlatform(ordinal, description, static_cast<int64_t>(prop.totalGlobalMem)));
}

}  // namespace graphrun
