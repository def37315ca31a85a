// The vectorized float erfc against std::erfc in double, on both of its
// paths (Eigen packets, and the scalar one for leftover elements), over
// [-12, 12] densely, and at its edges: the segment boundaries, the
// subnormal range, +-inf and NaN.
#include "kernels/cpu/erfc_float.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

// Within 1e-6 relative of erfc(x) (x exactly as the float given), or, where
// the true value is below the smallest normal float, within 2^-140 (the
// subnormal range has fewer bits to round to).
void ExpectClose(float x, float got, const char* path) {
  const double want = std::erfc(static_cast<double>(x));
  if (want < std::numeric_limits<float>::min()) {
    EXPECT_NEAR(got, want, std::ldexp(1.0, -140)) << path << " x=" << x;
  } else {
    EXPECT_NEAR(got, want, 1e-6 * want) << path << " x=" << x;
  }
}

std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = 0; i <= 240000; ++i) x.push_back(-12.f + i * 1e-4f);
  for (float edge : {0.5f, 2.f, 10.06f}) {
    x.push_back(std::nextafter(edge, -1.f));
    x.push_back(edge);
    x.push_back(std::nextafter(edge, 20.f));
  }
  for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 9.3f, 9.4f, 9.5f, 10.f, 10.05f, 3e4f, -3e4f}) {
    x.push_back(v);
  }
  return x;
}

TEST(ErfcFloatTest, PacketsMatchDoublePrecision) {
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.size());
  Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>> in(x.data(), x.size());
  Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> out(y.data(), y.size());
  out = in.unaryExpr(ErfcFloatOp());
  for (size_t i = 0; i < x.size(); ++i) {
    ExpectClose(x[i], y[i], "packet");
    if (::testing::Test::HasFailure()) return;  // one report, not thousands
  }
}

TEST(ErfcFloatTest, ScalarPathMatchesDoublePrecision) {
  for (float v : Inputs()) {
    ExpectClose(v, ErfcFloatOp()(v), "scalar");
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(ErfcFloatTest, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-inf, inf, nan, -inf, inf, nan, 1.f, 2.f,
                          -inf, inf, nan, -inf, inf, nan, 1.f, 2.f, nan};
  std::vector<float> y(x.size());
  Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>> in(x.data(), x.size());
  Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> out(y.data(), y.size());
  out = in.unaryExpr(ErfcFloatOp());
  for (size_t i = 0; i < x.size(); ++i) {
    for (float got : {y[i], ErfcFloatOp()(x[i])}) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(got)) << i;
      } else if (std::isinf(x[i])) {
        EXPECT_EQ(got, x[i] < 0 ? 2.f : 0.f) << i;
      }
    }
  }
}

}  // namespace
}  // namespace cpu
}  // namespace graphrun
