#include "kernels/cpu/skinny_gemm.h"

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

struct Case {
  int64_t out_rows, depth, n, taps;
  int threads;  // 0: no device
};

// Each tap reaches the rows p with (p + t) % 3 != 0 (so some taps miss
// some rows), every row reading its own input vector per tap.
void Check(const Case& c) {
  std::mt19937 rng(static_cast<unsigned>(c.out_rows * 131 + c.depth * 7 + c.n + c.taps));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::vector<float>> weights(c.taps), inputs(c.taps);
  std::vector<SkinnyTap> taps(c.taps);
  for (int64_t t = 0; t < c.taps; ++t) {
    weights[t].resize(c.depth * c.n);
    for (float& w : weights[t]) w = u(rng);
    inputs[t].resize(c.out_rows * c.depth);
    for (float& x : inputs[t]) x = u(rng);
    taps[t].weights = weights[t].data();
    for (int p = 0; p < c.out_rows; ++p) {
      if ((p + t) % 3 != 0 || c.taps == 1) {
        taps[t].rows.emplace_back(p, inputs[t].data() + p * c.depth);
      }
    }
  }
  // The reference, in double: a direct triple loop.
  std::vector<double> want(c.out_rows * c.n, 0.0);
  for (int64_t t = 0; t < c.taps; ++t) {
    for (const auto& [p, x] : taps[t].rows) {
      for (int64_t k = 0; k < c.depth; ++k) {
        for (int64_t j = 0; j < c.n; ++j) {
          want[p * c.n + j] += static_cast<double>(x[k]) * weights[t][k * c.n + j];
        }
      }
    }
  }
  std::unique_ptr<Eigen::ThreadPool> pool;
  std::unique_ptr<Eigen::ThreadPoolDevice> device;
  if (c.threads > 0) {
    pool = std::make_unique<Eigen::ThreadPool>(c.threads);
    device = std::make_unique<Eigen::ThreadPoolDevice>(pool.get(), c.threads);
  }
  std::vector<float> out(c.out_rows * c.n, 12345.f);  // overwritten
  SkinnyGemm(device.get(), taps, c.depth, c.n, c.out_rows, out.data());
  const double tol = 1e-5 * c.depth * c.taps;
  for (int64_t i = 0; i < c.out_rows * c.n; ++i) {
    ASSERT_NEAR(out[i], want[i], tol) << "element " << i << " of rows=" << c.out_rows
                                      << " depth=" << c.depth << " n=" << c.n
                                      << " taps=" << c.taps << " threads=" << c.threads;
  }
}

TEST(SkinnyGemmTest, MatchesADirectLoop) {
  for (const Case& c : std::vector<Case>{
           {1, 1, 16, 1, 0},
           {2, 7, 17, 1, 0},        // tails in depth and n
           {2, 256, 512, 1, 2},     // a dense layer at batch 2
           {8, 64, 48, 9, 2},       // a 3x3 kernel, taps missing rows
           {3, 130, 33, 4, 3},      // three pieces, odd sizes
           {5, 1024, 256, 2, 2},
           {2, 5, 16, 3, 2},        // fewer weight rows than pieces want
       }) {
    Check(c);
  }
}

TEST(SkinnyGemmTest, NoRowsGivesZeros) {
  std::vector<float> w(4 * 16, 1.f);
  std::vector<SkinnyTap> taps(2);
  taps[0].weights = w.data();
  taps[1].weights = w.data();
  std::vector<float> out(2 * 16, 7.f);
  SkinnyGemm(nullptr, taps, 4, 16, 2, out.data());
  for (float v : out) EXPECT_EQ(v, 0.f);
}

TEST(SkinnyGemmTest, WorthItOnlyForFewRowsAndBigWeights) {
  EXPECT_TRUE(SkinnyWorthIt(2, 1024, 2048, 1));
  EXPECT_FALSE(SkinnyWorthIt(kSkinnyMaxRows + 1, 1024, 2048, 1));
  EXPECT_FALSE(SkinnyWorthIt(2, 16, 16, 1));  // 1 KB of weights
  EXPECT_FALSE(SkinnyWorthIt(0, 1024, 2048, 1));
}

}  // namespace
}  // namespace cpu
}  // namespace graphrun
