// oneDNN as Debian builds it threads with OpenMP, whose idle workers spin
// on the cores the Eigen pool needs (a VGG16 step ran 2x slower that way).
// graphrun never starts an OpenMP team: every oneDNN call is one
// single-threaded piece, and the device's pool runs the pieces
// (pieces.h). oneDNN sizes its work by the calling thread's OpenMP thread
// count, so each piece first sets that count to one.
#ifndef GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_
#define GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_

#include <omp.h>

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace graphrun {
namespace cpu {

inline void OneOpenMpThread() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

// A scratchpad of at least `bytes` for the calling thread's oneDNN
// primitives (user scratchpad mode), kept and grown between calls: one of a
// few hundred KB allocated per call comes from mmap and pays its page
// faults every time. nullptr when the memory cannot be had (the caller then
// lets oneDNN allocate). Valid until the thread's next call.
inline char* ThreadScratch(size_t bytes) {
  thread_local std::unique_ptr<char, void (*)(void*)> buffer(nullptr, std::free);
  thread_local size_t held = 0;
  if (bytes > held) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    buffer.reset(static_cast<char*>(std::aligned_alloc(4096, rounded)));
    held = buffer != nullptr ? rounded : 0;
  }
  return bytes <= held ? buffer.get() : nullptr;
}

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_
