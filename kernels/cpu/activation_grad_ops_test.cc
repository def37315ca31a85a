// The activation gradients against TensorFlow's outputs
// (grad_ops_test_data.h, made by make_grad_ops_test_data.py) in float,
// double, half and bfloat16, and their shape check.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/grad_ops_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrF;
using ::graphrun::testing::MakeTensor;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::ToDoubles;
namespace data = ::graphrun::grad_ops_test;

// Calls f(T{}) for the case's dtype.
template <typename F>
void WithType(DataType dtype, F f) {
  switch (dtype) {
    case DT_FLOAT:
      return f(float{});
    case DT_DOUBLE:
      return f(double{});
    case DT_HALF:
      return f(half{});
    case DT_BFLOAT16:
      return f(bfloat16{});
    default:
      FAIL() << "unexpected dtype " << dtype;
  }
}

// The relative error allowed for `op` in T. Zero (bit-exact) where the
// kernel evaluates TensorFlow's expression with the same operations in the
// same order: every grad but SoftplusGrad. SoftplusGrad calls exp, whose
// last bit may differ between TensorFlow's Eigen and this build's: 4 units
// of T's last place.
template <typename T>
double Tolerance(const std::string& op) {
  if (op != "SoftplusGrad") return 0;
  return 4 * static_cast<double>(std::numeric_limits<T>::epsilon());
}

TEST(ActivationGradTest, MatchesTensorFlow) {
  for (const data::ActivationCase& c : data::kActivationCases) {
    SCOPED_TRACE(std::string(c.op) + " " + DataTypeString(c.dtype));
    WithType(c.dtype, [&](auto zero) {
      using T = decltype(zero);
      std::map<std::string, AttrValue> attrs;
      if (std::string(c.op) == "LeakyReluGrad") attrs["alpha"] = AttrF(0.3f);
      auto out = RunOp(c.op, attrs, {MakeTensor<T>(c.a), MakeTensor<T>(c.b)});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].dtype(), c.dtype);
      const std::vector<double> got = ToDoubles<T>((*out)[0]);
      ASSERT_EQ(got.size(), c.want.size());
      const double tol = Tolerance<T>(c.op);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], c.want[i], tol * std::abs(c.want[i]))
            << "element " << i << " of inputs " << c.a[i] << ", " << c.b[i];
      }
    });
  }
}

TEST(ActivationGradTest, IntegerReluGrads) {
  const Tensor g = MakeTensor<int32_t>({5, -3, 7, 2, 9});
  const Tensor f = MakeTensor<int32_t>({-1, 0, 1, 6, 7});
  auto relu = RunOp("ReluGrad", {}, {g, f});
  ASSERT_TRUE(relu.ok()) << relu.status();
  EXPECT_EQ(ToDoubles<int32_t>((*relu)[0]), (std::vector<double>{0, 0, 7, 2, 9}));
  auto relu6 = RunOp("Relu6Grad", {}, {g, f});
  ASSERT_TRUE(relu6.ok()) << relu6.status();
  EXPECT_EQ(ToDoubles<int32_t>((*relu6)[0]), (std::vector<double>{0, 0, 7, 0, 0}));
}

TEST(ActivationGradTest, LargeInputsRunOnThePool) {
  // Past kParallelElements the expression runs on the intra-op pool; the
  // result is the same element by element.
  const int64_t n = 100000;
  std::vector<double> g(n), f(n);
  for (int64_t i = 0; i < n; ++i) {
    g[i] = static_cast<double>(i % 7) - 3;
    f[i] = static_cast<double>(i % 5) - 2;
  }
  auto out = RunOp("ReluGrad", {}, {MakeTensor<float>(g), MakeTensor<float>(f)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles<float>((*out)[0]);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], f[i] > 0 ? g[i] : 0.0) << i;
}

// TensorFlow's ReluGrad is gradients * (features > 0).cast<T>(): where the
// feature is not positive (or is NaN) the gradient is multiplied by zero,
// so a negative gradient gives -0 and an infinite or NaN one gives NaN.
TEST(ActivationGradTest, ReluGradMultipliesByZeroWhereTheFeatureIsNotPositive) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> g = {-2.0f, 3.0f, inf, -inf, nan, inf, -5.0f, 7.0f};
  const std::vector<float> f = {-1.0f, 0.0f, -1.0f, nan, 1.0f, 2.0f, -0.0f, 1e-30f};
  for (int64_t copies : {int64_t{1}, int64_t{8192}}) {  // on the calling thread, then the pool
    std::vector<float> gg, ff;
    for (int64_t c = 0; c < copies; ++c) {
      gg.insert(gg.end(), g.begin(), g.end());
      ff.insert(ff.end(), f.begin(), f.end());
    }
    Tensor gt(DT_FLOAT, TensorShape({static_cast<int64_t>(gg.size())}));
    Tensor ft(DT_FLOAT, TensorShape({static_cast<int64_t>(ff.size())}));
    std::copy(gg.begin(), gg.end(), gt.flat<float>().data());
    std::copy(ff.begin(), ff.end(), ft.flat<float>().data());
    auto out = RunOp("ReluGrad", {}, {gt, ft});
    ASSERT_TRUE(out.ok()) << out.status();
    const float* z = (*out)[0].flat<float>().data();
    for (size_t i = 0; i < gg.size(); ++i) {
      const float want = gg[i] * (ff[i] > 0.0f ? 1.0f : 0.0f);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(z[i])) << i;
      } else {
        ASSERT_EQ(z[i], want) << i;
        ASSERT_EQ(std::signbit(z[i]), std::signbit(want)) << "element " << i << ": " << z[i];
      }
    }
  }
}

TEST(ActivationGradTest, InputsOfDifferentShapesAreAnError) {
  for (const char* op : {"ReluGrad", "SigmoidGrad", "LeakyReluGrad"}) {
    auto out = RunOp(op, {}, {MakeTensor<float>({1, 2, 3}), MakeTensor<float>({1, 2})});
    testing::ExpectError(out, absl::StatusCode::kInvalidArgument, "same shape");
  }
}

}  // namespace
}  // namespace graphrun
