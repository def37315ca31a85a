// Shared helpers for the array kernel tests (array_*_test.cc): tensor
// literals, exact comparison, and one-output runs through RunOp.
#ifndef GRAPHRUN_KERNELS_CPU_ARRAY_TEST_SUPPORT_H_
#define GRAPHRUN_KERNELS_CPU_ARRAY_TEST_SUPPORT_H_

#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "graph/tensor.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace array_test {

using Attrs = std::map<std::string, AttrValue>;

template <typename T>
Tensor Vec(const std::vector<T>& v) {
  return Tensor::FromVector<T>(v);
}
template <typename T>
Tensor Mat(const std::vector<T>& v, const TensorShape& s) {
  return Tensor::FromVector<T>(v, s);
}
// The shape of `dims` (valid dims).
inline TensorShape Shape(const std::vector<int64_t>& dims) {
  return *TensorShape::FromDims(dims);
}

// 0, 1, 2, ... of `shape`.
template <typename T>
Tensor Iota(const TensorShape& shape) {
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return Tensor::FromVector<T>(v, shape);
}

// Values of `shape` that differ from their neighbours, for any dtype:
// "s0", "s1"... for strings, i % 3 == 1 for bool, small integers otherwise
// (exact in half and bfloat16).
template <typename T>
Tensor Distinct(const TensorShape& shape) {
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      v[i] = "s" + std::to_string(i);
    } else if constexpr (std::is_same_v<T, bool>) {
      v[i] = i % 3 == 1;
    } else if constexpr (std::is_same_v<T, complex64> ||
                         std::is_same_v<T, complex128>) {
      v[i] = T(static_cast<float>(i % 101), -static_cast<float>(i % 7));
    } else {
      v[i] = static_cast<T>(static_cast<float>(i % 101));
    }
  }
  return Tensor::FromVector<T>(v, shape);
}

// Row-major strides of `shape`.
inline std::vector<int64_t> Strides(const TensorShape& shape) {
  std::vector<int64_t> s(shape.dims(), 1);
  for (int i = shape.dims() - 2; i >= 0; --i) s[i] = s[i + 1] * shape.dim_size(i + 1);
  return s;
}

// The multi-index of flat element `flat` of `shape`.
inline std::vector<int64_t> Unravel(const TensorShape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.dims());
  for (int i = shape.dims() - 1; i >= 0; --i) {
    idx[i] = flat % shape.dim_size(i);
    flat /= shape.dim_size(i);
  }
  return idx;
}

// A tensor of `out_shape` whose element i is element in_flat_of(i) of
// `in`: the reference for pure data-movement ops.
template <typename T, typename Fn>
Tensor Remap(const Tensor& in, const TensorShape& out_shape, Fn in_flat_of) {
  std::vector<T> v(static_cast<size_t>(out_shape.num_elements()));
  auto src = in.flat<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = src[in_flat_of(static_cast<int64_t>(i))];
  }
  return Tensor::FromVector<T>(v, out_shape);
}

// The dtypes the data-movement kernels handle, for typed tests.
using AllTypes =
    ::testing::Types<float, double, int32_t, int64_t, half, bfloat16, bool,
                     std::string, complex64, complex128, int8_t, uint16_t>;

// Same dtype, shape and values, exactly.
inline void ExpectEqual(const Tensor& got, const Tensor& want) {
  std::string why;
  EXPECT_TRUE(testing::AllClose(got, want, 0, 0, &why))
      << why << "\n got " << got.DebugString(24) << "\nwant "
      << want.DebugString(24);
}

// Output 0 of the op; a test failure (and an empty Tensor) on error.
inline Tensor Run1(const std::string& op, const Attrs& attrs,
                   const std::vector<Tensor>& inputs) {
  auto out = testing::RunOp(op, attrs, inputs);
  if (!out.ok()) {
    ADD_FAILURE() << op << " failed: " << out.status();
    return Tensor();
  }
  if (out->empty()) {
    ADD_FAILURE() << op << " has no outputs";
    return Tensor();
  }
  return (*out)[0];
}

// The error message of a run expected to fail with InvalidArgument.
inline std::string ErrorOf(const std::string& op, const Attrs& attrs,
                           const std::vector<Tensor>& inputs) {
  auto out = testing::RunOp(op, attrs, inputs);
  if (out.ok()) {
    ADD_FAILURE() << op << " succeeded but should have failed";
    return "";
  }
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
      << out.status();
  return std::string(out.status().message());
}

}  // namespace array_test
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_ARRAY_TEST_SUPPORT_H_
