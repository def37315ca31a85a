// oneDNN as Debian builds it threads with OpenMP, whose idle workers spin
// on the cores the Eigen pool needs (a VGG16 step ran 2x slower that way).
// graphrun never starts an OpenMP team: every oneDNN call is one
// single-threaded piece, and the device's pool runs the pieces
// (pieces.h). oneDNN sizes its work by the calling thread's OpenMP thread
// count, so each piece first sets that count to one.
#ifndef GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_
#define GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_

#include <omp.h>

namespace graphrun {
namespace cpu {

inline void OneOpenMpThread() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_ONEDNN_THREADS_H_
