// Building blocks shared by the CPU array kernels (array_*_ops.cc): element
// types chosen by size for pure data movement, the choice between the
// calling thread and the intra-op pool, reading index and shape tensors the
// way TensorFlow does, and the row-block copies behind ConcatV2, Pack, Split
// and Unpack. Stateless; thread-safe.
#ifndef GRAPHRUN_KERNELS_CPU_ARRAY_MOVEMENT_H_
#define GRAPHRUN_KERNELS_CPU_ARRAY_MOVEMENT_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/tensor.h"
#include "graph/types.h"
#include "kernels/eigen.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {

// Work of at least this many elements runs on the intra-op pool; smaller
// work stays on the calling thread.
inline constexpr int64_t kParallelMinElements = kParallelElements;

// Highest rank the Eigen-based kernels instantiate (TensorFlow's limit);
// kernels collapse adjacent dimensions first, so most higher-rank inputs
// still fit.
inline constexpr int kMaxEigenRank = 8;

// Every type a Tensor can hold, for data-movement kernels.
const std::vector<DataType>& AllTensorTypes();
// AllTensorTypes() without DT_STRING.
const std::vector<DataType>& PodTensorTypes();

// Calls fn(device) with the intra-op Eigen::ThreadPoolDevice when
// `elements` reaches kParallelMinElements and the pool has more than one
// thread, else with an Eigen::DefaultDevice (the calling thread).
template <typename Fn>
void RunOnEigenDevice(OpKernelContext* ctx, int64_t elements, Fn&& fn) {
  const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
  if (pool != nullptr && elements >= kParallelMinElements &&
      ctx->device()->intra_op_threads() > 1) {
    fn(*pool);
  } else {
    Eigen::DefaultDevice device;
    fn(device);
  }
}

// Runs fn(begin, end) over [0, n): split across the intra-op pool when
// n * bytes_per_unit is big, else in one call on this thread.
void ParallelForRange(OpKernelContext* ctx, int64_t n, int64_t bytes_per_unit,
                      const std::function<void(int64_t, int64_t)>& fn);

// Calls fn(P{}) with a type whose copies move `dtype`'s elements bitwise:
// uint8_t, uint16_t, uint32_t, uint64_t or complex128 by element size, and
// std::string for DT_STRING. Returns false for types a Tensor cannot hold.
// Data-movement kernels instantiate Eigen once per size, not per type.
template <typename Fn>
bool VisitCopyType(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) {
    fn(std::string());
    return true;
  }
  switch (DataTypeSize(dtype)) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    case 16: fn(complex128{}); return true;
    default: return false;
  }
}

// Copies n elements of the copy type P (memcpy, or assignment for
// std::string).
template <typename P>
void CopyN(const P* src, int64_t n, P* dst) {
  if constexpr (std::is_same_v<P, std::string>) {
    std::copy(src, src + n, dst);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(P));
  }
}

// The buffer of `t` as elements of the copy type P (same size as its dtype).
template <typename P>
const P* DataAs(const Tensor& t) {
  return static_cast<const P*>(t.raw_data());
}
template <typename P>
P* MutableDataAs(Tensor* t) {
  return static_cast<P*>(t->raw_data());
}

template <typename P, int N>
using EigenMap =
    Eigen::TensorMap<Eigen::Tensor<P, N, Eigen::RowMajor, Eigen::DenseIndex>>;
template <typename P, int N>
using EigenConstMap = Eigen::TensorMap<
    Eigen::Tensor<const P, N, Eigen::RowMajor, Eigen::DenseIndex>>;

// The first N entries of `dims` as Eigen sizes (dims.size() must be N).
template <int N>
Eigen::DSizes<Eigen::DenseIndex, N> ToDSizes(absl::Span<const int64_t> dims) {
  Eigen::DSizes<Eigen::DenseIndex, N> out;
  for (int i = 0; i < N; ++i) out[i] = static_cast<Eigen::DenseIndex>(dims[i]);
  return out;
}

// Calls fn(std::integral_constant<int, N>{}) for 1 <= rank <= kMaxEigenRank;
// returns false for other ranks.
template <typename Fn>
bool VisitEigenRank(int rank, Fn&& fn) {
  switch (rank) {
    case 1: fn(std::integral_constant<int, 1>{}); return true;
    case 2: fn(std::integral_constant<int, 2>{}); return true;
    case 3: fn(std::integral_constant<int, 3>{}); return true;
    case 4: fn(std::integral_constant<int, 4>{}); return true;
    case 5: fn(std::integral_constant<int, 5>{}); return true;
    case 6: fn(std::integral_constant<int, 6>{}); return true;
    case 7: fn(std::integral_constant<int, 7>{}); return true;
    case 8: fn(std::integral_constant<int, 8>{}); return true;
    default: return false;
  }
}

// The elements of an int16/int32/int64 tensor as int64_t, row-major.
std::vector<int64_t> IntValues(const Tensor& t);

// The single element of an int16/int32/int64 tensor (NumElements() == 1).
int64_t IntScalar(const Tensor& t);

// TensorFlow's tensor::MakeShape: a 1-D int32/int64 tensor of dimensions.
// InvalidArgument: "shape must be a vector of {int32,int64}, got shape
// [2,2]", "Dimension -1 must be >= 0", or too many elements.
absl::StatusOr<TensorShape> ShapeFromTensor(const Tensor& t);
// Same for dims already read: "Dimension -1 must be >= 0".
absl::StatusOr<TensorShape> ShapeFromDims(absl::Span<const int64_t> dims);

// A shape's dims with `dim` inserted at `axis` (0 <= axis <= dims).
std::vector<int64_t> InsertDim(const TensorShape& shape, int axis, int64_t dim);

// Product of dims [begin, end) of `shape`.
int64_t DimProduct(const TensorShape& shape, int begin, int end);

// True if `t`'s data starts on a kTensorAlignment boundary (or it has no
// elements). Kernels share a sub-range of an input only when aligned, as
// TensorFlow does, so consumers may rely on aligned buffers.
bool IsAligned(const Tensor& t);

// Concatenates row blocks: viewing each input as [rows, cols_i] and `out`
// as [rows, sum cols_i], out[r, :] = [in_0[r, :], in_1[r, :], ...]. All
// tensors have out's dtype.
void ConcatRows(OpKernelContext* ctx, absl::Span<const Tensor* const> inputs,
                int64_t rows, Tensor* out);

// The inverse: viewing `in` as [rows, sum cols_i] and each output as
// [rows, cols_i], out_i[r, :] = in[r, offset_i : offset_i + cols_i].
void SplitRows(OpKernelContext* ctx, const Tensor& in, int64_t rows,
               absl::Span<Tensor* const> outs);

}  // namespace array_kernels
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_ARRAY_MOVEMENT_H_
