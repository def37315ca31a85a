// The floating-point environment kernels run in: subnormal results flushed
// to zero, subnormal inputs read as zero, rounding to nearest. TensorFlow
// runs every CPU kernel so (its thread pools' threads set it when they
// start, and its constant folding sets it around each evaluation), so a
// product such as 1e-30f * 1e-10f is 0 there, not 1e-40; graphrun's
// kernels must give the same bits. It also keeps a training step off the
// slow path processors take on subnormal operands.
//
// ScopedKernelFloatEnv sets the environment on the calling thread and
// restores the caller's on destruction, so a thread of the embedding
// program (the one calling Session::Run) gets its own mode back.
// KernelThreadEnvironment is Eigen's std::thread environment whose threads
// set it once when they start; a pool of it (KernelThreadPool) is what the
// devices' intra-op work runs on.
#ifndef GRAPHRUN_RUNTIME_FLOAT_ENV_H_
#define GRAPHRUN_RUNTIME_FLOAT_ENV_H_

#include <functional>
#include <utility>

#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#define GRAPHRUN_HAVE_MXCSR 1
#endif

namespace graphrun {

namespace float_env {
#ifdef GRAPHRUN_HAVE_MXCSR
// MXCSR: flush-to-zero (bit 15), denormals-are-zero (bit 6), the rounding
// control (bits 13-14, zero for round to nearest even).
inline constexpr unsigned kFlushToZero = 0x8000;
inline constexpr unsigned kDenormalsAreZero = 0x0040;
inline constexpr unsigned kRoundingMask = 0x6000;

inline unsigned Get() { return _mm_getcsr(); }
inline void Set(unsigned csr) { _mm_setcsr(csr); }
inline unsigned ForKernels(unsigned csr) {
  return (csr & ~kRoundingMask) | kFlushToZero | kDenormalsAreZero;
}
#else
// Elsewhere the environment is left as it is.
inline unsigned Get() { return 0; }
inline void Set(unsigned) {}
inline unsigned ForKernels(unsigned csr) { return csr; }
#endif
}  // namespace float_env

class ScopedKernelFloatEnv {
 public:
  ScopedKernelFloatEnv() : saved_(float_env::Get()) {
    const unsigned want = float_env::ForKernels(saved_);
    if (want != saved_) float_env::Set(want);
  }
  ~ScopedKernelFloatEnv() {
    if (float_env::Get() != saved_) float_env::Set(saved_);
  }
  ScopedKernelFloatEnv(const ScopedKernelFloatEnv&) = delete;
  ScopedKernelFloatEnv& operator=(const ScopedKernelFloatEnv&) = delete;

 private:
  const unsigned saved_;
};

struct KernelThreadEnvironment : Eigen::StlThreadEnvironment {
  EnvThread* CreateThread(std::function<void()> f) {
    return new EnvThread([f = std::move(f)] {
      float_env::Set(float_env::ForKernels(float_env::Get()));
      f();
    });
  }
  // Counted, so that a thread lingering for kernel pieces
  // (kernels/cpu/pieces.h) makes way for waiting tasks.
  Task CreateTask(std::function<void()> f) {
    cpu::PoolTaskQueued();
    return Task{std::move(f)};
  }
  void ExecuteTask(const Task& t) {
    cpu::PoolTaskStarted();
    t.f();
  }
};

using KernelThreadPool = Eigen::ThreadPoolTempl<KernelThreadEnvironment>;

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_FLOAT_ENV_H_
