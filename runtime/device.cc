#include "runtime/device.h"

#include <sched.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "kernels/eigen.h"
#include "runtime/float_env.h"

namespace graphrun {
namespace {

// Past this a single request is refused: the in-use count (int64_t) can then
// hold any number of live buffers a machine could have without overflow.
constexpr int64_t kMaxTrackedBytes = int64_t{1} << 60;

void UpdateMax(std::atomic<int64_t>* target, int64_t value) {
  int64_t cur = target->load(std::memory_order_relaxed);
  while (value > cur &&
         !target->compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

class CpuDevice : public Device {
 public:
  CpuDevice(std::string name, const CpuDeviceOptions& options)
      : name_(std::move(name)),
        type_(kDeviceCpu),
        threads_(options.intra_op_threads > 0 ? options.intra_op_threads
                                              : NumSchedulableCpus()),
        allocator_(new TrackingAllocator(HostAllocator(), "cpu", options.memory_limit)),
        pool_(threads_, true),
        eigen_(&pool_, threads_) {}

  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  // Tensors the device allocated (fetched outputs) may outlive it.
  ~CpuDevice() override { allocator_->Release(); }

  Allocator* allocator() const override { return allocator_; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return &eigen_; }
  int intra_op_threads() const override { return threads_; }
  int64_t memory_limit() const override { return allocator_->Stats().bytes_limit; }

 private:
  const std::string name_;
  const std::string type_;
  const int threads_;
  TrackingAllocator* const allocator_;
  // Its threads run kernels' pieces in TensorFlow's float environment.
  KernelThreadPool pool_;
  Eigen::ThreadPoolDevice eigen_;
};

// A random nonzero 64-bit number from the OS's entropy source.
uint64_t NewIncarnation() {
  std::random_device entropy;
  uint64_t n = 0;
  while (n == 0) {
    n = (static_cast<uint64_t>(entropy()) << 32) ^ static_cast<uint64_t>(entropy());
  }
  return n;
}

}  // namespace

Device::Device() : incarnation_(NewIncarnation()) {}

TrackingAllocator::TrackingAllocator(Allocator* base, std::string name,
                                     int64_t bytes_limit)
    : base_(base), name_(std::move(name)), bytes_limit_(bytes_limit) {}

void* TrackingAllocator::AllocateRaw(size_t alignment, size_t num_bytes) {
  // Counted in int64_t: a request that does not fit (or that alone passes
  // the limit) is refused before it can wrap the count.
  if (num_bytes > static_cast<size_t>(kMaxTrackedBytes) ||
      (bytes_limit_ > 0 && num_bytes > static_cast<size_t>(bytes_limit_))) {
    return nullptr;
  }
  const int64_t bytes = static_cast<int64_t>(num_bytes);
  // Reserve first so concurrent allocations cannot overshoot the limit.
  const int64_t now = in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (bytes_limit_ > 0 && now > bytes_limit_) {
    in_use_.fetch_sub(bytes, std::memory_order_relaxed);
    return nullptr;
  }
  void* p = base_->AllocateRaw(alignment, num_bytes);
  if (p == nullptr) {
    in_use_.fetch_sub(bytes, std::memory_order_relaxed);
    return nullptr;
  }
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  refs_.fetch_add(1, std::memory_order_relaxed);
  UpdateMax(&peak_, now);
  UpdateMax(&largest_, bytes);
  return p;
}

void TrackingAllocator::DeallocateRaw(void* ptr, size_t num_bytes) {
  base_->DeallocateRaw(ptr, num_bytes);
  in_use_.fetch_sub(static_cast<int64_t>(num_bytes), std::memory_order_relaxed);
  // acq_rel: every use of this allocator happens before its deletion.
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void TrackingAllocator::Release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

AllocatorStats TrackingAllocator::Stats() const {
  AllocatorStats s;
  s.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  s.bytes_in_use = in_use_.load(std::memory_order_relaxed);
  s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
  s.largest_alloc_size = largest_.load(std::memory_order_relaxed);
  s.bytes_limit = bytes_limit_;
  return s;
}

bool TrackingAllocator::ResetPeak() {
  peak_.store(in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  return true;
}

int NumSchedulableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return 1;
}

std::unique_ptr<Device> NewCpuDevice(const std::string& name_prefix, int index,
                                     const CpuDeviceOptions& options) {
  return std::make_unique<CpuDevice>(
      absl::StrCat(name_prefix, "/device:CPU:", index), options);
}

}  // namespace graphrun
