// Tests for ReverseV2 against an index-walk reference, for every dtype and
// for axis lists that collapse in different ways.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::RunOp;

// Element i of the output is the input element whose index, along every
// reversed dim d, is size(d) - 1 - index.
template <typename T>
Tensor ReverseReference(const Tensor& in, const std::vector<bool>& reversed) {
  const TensorShape& shape = in.shape();
  const std::vector<int64_t> strides = Strides(shape);
  return Remap<T>(in, shape, [&](int64_t flat) {
    std::vector<int64_t> idx = Unravel(shape, flat);
    int64_t src = 0;
    for (int d = 0; d < shape.dims(); ++d) {
      const int64_t i = reversed[d] ? shape.dim_size(d) - 1 - idx[d] : idx[d];
      src += i * strides[d];
    }
    return src;
  });
}

template <typename T>
void CheckReverse(const TensorShape& shape, const std::vector<int32_t>& axes) {
  const Tensor in = Distinct<T>(shape);
  std::vector<bool> reversed(shape.dims(), false);
  for (int32_t a : axes) reversed[a < 0 ? a + shape.dims() : a] = true;
  auto out = RunOp("ReverseV2", {}, {in, Vec<int32_t>(axes)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], ReverseReference<T>(in, reversed));
}

TEST(ReverseV2Test, MatchesTheReference) {
  CheckReverse<float>(TensorShape({5}), {0});
  CheckReverse<float>(TensorShape({2, 3}), {1});
  CheckReverse<float>(TensorShape({2, 3}), {0, 1});
  CheckReverse<float>(TensorShape({2, 1, 3, 4}), {-1, 0});
  CheckReverse<float>(TensorShape({2, 3, 4}), {1});
  CheckReverse<float>(TensorShape({3, 4}), {});
  CheckReverse<int32_t>(TensorShape({4, 3, 2}), {0, 2});
  CheckReverse<double>(TensorShape({2, 2, 2, 2, 2}), {1, 3});
  CheckReverse<bool>(TensorShape({7}), {0});
  CheckReverse<half>(TensorShape({3, 5}), {0});
  CheckReverse<std::string>(TensorShape({2, 3}), {1});
  CheckReverse<complex128>(TensorShape({3, 2}), {0});
  CheckReverse<int64_t>(TensorShape({0, 3}), {1});
}

TEST(ReverseV2Test, BadAxes) {
  const Tensor in = Iota<float>(TensorShape({2, 3}));
  absl::Status s = RunOp("ReverseV2", {}, {in, Vec<int32_t>({2})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "'axis'[0] = 2 is out of valid range [0, 1]")) << s;
  s = RunOp("ReverseV2", {}, {in, Vec<int32_t>({1, -1})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "axis 1 specified more than once.")) << s;
  s = RunOp("ReverseV2", {}, {in, Vec<int64_t>({0, 1})}).status();
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
