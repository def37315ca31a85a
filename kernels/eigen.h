// The one place kernels include Eigen's Tensor module (with threading on), so
// every kernel sees the same configuration, and the row-major views kernels
// take of tensor buffers.
#ifndef GRAPHRUN_KERNELS_EIGEN_H_
#define GRAPHRUN_KERNELS_EIGEN_H_

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace graphrun {

// Row-major Eigen views of a buffer: ConstTensorMap<float, 2>(data, rows,
// cols); rank 1 unless given.
template <typename T, int Rank = 1>
using ConstTensorMap =
    Eigen::TensorMap<Eigen::Tensor<const T, Rank, Eigen::RowMajor>>;
template <typename T, int Rank = 1>
using TensorMap = Eigen::TensorMap<Eigen::Tensor<T, Rank, Eigen::RowMajor>>;

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_EIGEN_H_
