// Pieces the CPU kernels share: where an Eigen expression runs (the intra-op
// pool for big work, the calling thread for small work), and the windowed
// ops' geometry from kernels/window.h.
#ifndef GRAPHRUN_KERNELS_CPU_CPU_KERNEL_UTIL_H_
#define GRAPHRUN_KERNELS_CPU_CPU_KERNEL_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "kernels/eigen.h"
#include "kernels/window.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace cpu {

// Work over this many elements runs on the intra-op pool.
using ::graphrun::kParallelElements;

// dst = expr, on the intra-op pool when `parallel`, else on this thread.
template <typename Dst, typename Expr>
void Assign(const OpKernelContext& ctx, bool parallel, Dst&& dst,
            const Expr& expr) {
  if (parallel) {
    dst.device(ctx.eigen_cpu_device()) = expr;
  } else {
    Eigen::DefaultDevice device;
    dst.device(device) = expr;
  }
}

using windowed::CheckExplicitPaddings;
using windowed::ComputeWindow;
using windowed::PaddingValueRule;
using windowed::Window;

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CPU_KERNEL_UTIL_H_
