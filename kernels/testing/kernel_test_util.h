// Helpers for kernel tests: a host CPU device with an intra-op pool,
// RunOp() which builds a node from (op, attrs, inputs), creates its kernel
// through the KernelRegistry and computes it once, and the tensor builders,
// input generators and comparisons the kernel tests share.
//
//   auto out = RunOp("MatMul", {{"transpose_b", AttrB(true)}}, {a, b});
//   ASSERT_TRUE(out.ok()) << out.status();
//   EXPECT_EQ((*out)[0].flat<float>()[0], 6.f);
#ifndef GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_
#define GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/tensor.h"
#include "graph/testing/shape_test_util.h"
#include "gtest/gtest.h"
#include "kernels/device_base.h"

namespace graphrun {
namespace testing {

// A CPU device for tests: host allocator, Eigen pool of `threads`.
std::unique_ptr<DeviceBase> MakeTestCpuDevice(int threads = 2);

// AttrB, AttrI, AttrF, AttrS, AttrType, AttrInts, AttrTypes, AttrTensor and
// AttrShape come from graph/testing/shape_test_util.h.

// Builds a node "test_node" of `op` with these attrs; type attrs named by
// the op's inputs ("T", "Tidx", ...) and number attrs ("N") are filled from
// `inputs` when not given. Runs the CPU kernel once on a shared test device.
absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::vector<Tensor>& inputs, int threads = 2);

// RunOp with one kernel instance run once per entry of `steps` (each a full
// input list; dtypes as in the first), as a graph's node runs step after
// step: for kernels that keep something between runs (a plan chosen for
// the last shapes, packed weights). The outputs of each run.
absl::StatusOr<std::vector<std::vector<Tensor>>> RunOpSteps(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::vector<std::vector<Tensor>>& steps, int threads = 2);

// Output 0 of RunOp(op, attrs, inputs); a test failure (and an empty
// Tensor) when the op fails.
Tensor RunOk(const std::string& op, const std::vector<Tensor>& inputs,
             const std::map<std::string, AttrValue>& attrs = {});

// `out` failed with `code` and a message containing `message`.
void ExpectError(const absl::StatusOr<std::vector<Tensor>>& out,
                 absl::StatusCode code, const std::string& message);

// Approximate comparison for float results.
bool AllClose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
              double atol = 1e-6, std::string* why = nullptr);

// --- Building tensors ---

// The shape of `dims`; invalid dims (< 0) are a test failure.
TensorShape ShapeOf(const std::vector<int64_t>& dims);
// The product of `dims` (1 for none).
int64_t NumElementsOf(const std::vector<int64_t>& dims);

// A tensor of T holding `values` (each cast to T), of `shape`, of `dims`,
// or 1-D.
template <typename T>
Tensor MakeTensor(const std::vector<double>& values, const TensorShape& shape) {
  std::vector<T> v;
  for (double x : values) v.push_back(static_cast<T>(x));
  return Tensor::FromVector<T>(v, shape);
}
template <typename T>
Tensor MakeTensor(const std::vector<double>& values,
                  const std::vector<int64_t>& dims) {
  return MakeTensor<T>(values, ShapeOf(dims));
}
template <typename T>
Tensor MakeTensor(const std::vector<double>& values,
                  std::initializer_list<int64_t> dims) {
  return MakeTensor<T>(values, ShapeOf(std::vector<int64_t>(dims)));
}
template <typename T>
Tensor MakeTensor(const std::vector<double>& values) {
  return MakeTensor<T>(values, TensorShape({static_cast<int64_t>(values.size())}));
}

// The elements of a tensor of T, as doubles.
template <typename T>
std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  for (const T& x : t.flat<T>()) v.push_back(static_cast<double>(x));
  return v;
}

// Two fixed sequences of `n` multiples of 1/4 (in [-1.25, 1.25] and
// [-1.5, 1.5]): exact in half, so products and short sums are exact too.
// Tests whose expected values were computed by TensorFlow from these inputs
// build their inputs with them.
std::vector<double> FirstTestInput(int64_t n);
std::vector<double> SecondTestInput(int64_t n);

// `n` uniform values in [lo, hi) from a generator seeded with `seed`.
std::vector<double> RandomDoubles(int64_t n, double lo, double hi, int seed);

// A tensor of T of `shape` with uniform values in [lo, hi) rounded to
// multiples of 1/4, drawn from `rng`.
template <typename T>
Tensor RandomQuarters(const TensorShape& shape, std::mt19937* rng, double lo,
                      double hi) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (auto& v : t.flat<T>()) v = static_cast<T>(std::round(dist(*rng) * 4) / 4);
  return t;
}

// --- Dtypes ---

// Calls f(T{}) for T in float, double, half, bfloat16, int8_t, int16_t,
// int32_t, int64_t, uint8_t: the dtypes the arithmetic kernels register.
template <typename F>
void ForEachArithmeticType(F f) {
  f(float{});
  f(double{});
  f(half{});
  f(bfloat16{});
  f(int8_t{});
  f(int16_t{});
  f(int32_t{});
  f(int64_t{});
  f(uint8_t{});
}

// The same and then uint16_t, uint32_t, uint64_t: the real number dtypes
// the comparison and selection kernels register.
template <typename F>
void ForEachRealNumberType(F f) {
  ForEachArithmeticType(f);
  f(uint16_t{});
  f(uint32_t{});
  f(uint64_t{});
}

// --- Comparing ---

// `t` is a tensor of T whose elements (as doubles) equal `want`; a NaN in
// `want` asks for a NaN.
template <typename T>
void ExpectValues(const Tensor& t, const std::vector<double>& want) {
  ASSERT_EQ(t.dtype(), DataTypeToEnum<T>::value);
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = static_cast<double>(t.flat<T>()[i]);
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    } else {
      EXPECT_EQ(got, want[i]) << "element " << i << " of " << t.DebugString();
    }
  }
}

// Each element of `t` (a tensor of T) within tol * (1 + |want|) of `want`.
template <typename T>
void ExpectTensorNear(const Tensor& t, const std::vector<double>& want,
                      double tol) {
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(t.flat<T>()[i]), want[i],
                tol * (1 + std::abs(want[i])))
        << "element " << i;
  }
}

// The same for plain vectors, reporting at most the first five elements out
// of tolerance (prefixed with `what`).
void ExpectAllNear(const std::vector<double>& got, const std::vector<double>& want,
                   double tol, const std::string& what);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_
