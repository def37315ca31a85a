// The one place kernels include Eigen's Tensor module (with threading on), so
// every kernel sees the same configuration.
#ifndef GRAPHRUN_KERNELS_EIGEN_H_
#define GRAPHRUN_KERNELS_EIGEN_H_

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

#endif  // GRAPHRUN_KERNELS_EIGEN_H_
