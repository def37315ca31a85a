// The one place kernels include Eigen's Tensor module (with threading on), so
// every kernel sees the same configuration, the row-major views kernels
// take of tensor buffers, and the size at which kernels go parallel.
#ifndef GRAPHRUN_KERNELS_EIGEN_H_
#define GRAPHRUN_KERNELS_EIGEN_H_

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

#include <cstdint>

namespace graphrun {

// Element-wise work over this many elements runs on the device's intra-op
// pool; less stays on the calling thread (the pool hand-off costs more).
// One figure for every CPU kernel.
inline constexpr int64_t kParallelElements = 32 * 1024;

// Row-major Eigen views of a buffer: ConstTensorMap<float, 2>(data, rows,
// cols); rank 1 unless given.
template <typename T, int Rank = 1>
using ConstTensorMap =
    Eigen::TensorMap<Eigen::Tensor<const T, Rank, Eigen::RowMajor>>;
template <typename T, int Rank = 1>
using TensorMap = Eigen::TensorMap<Eigen::Tensor<T, Rank, Eigen::RowMajor>>;

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_EIGEN_H_
