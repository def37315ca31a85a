// SmallConv against a direct convolution in double precision, over the
// channel counts, filters, strides and paddings it takes (borders where the
// window leaves the input, rows of fewer pixels than a group of four).
#include "kernels/cpu/small_conv.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

// The kernel exists where the compiler targets AVX2 with FMA (as
// -march=native does on the machines this is built on); elsewhere
// SmallConvFits must turn every geometry down.
#if defined(__AVX2__) && defined(__FMA__)
constexpr bool kBuilt = true;
#else
constexpr bool kBuilt = false;
#endif

struct Case {
  int64_t batch, rows, cols, in_depth, fr, fc, out_depth, sr, sc;
  bool same;  // TensorFlow's SAME padding, else VALID
};

ConvGeometry GeometryOf(const Case& c) {
  ConvGeometry g;
  g.batch = c.batch;
  g.in_rows = c.rows;
  g.in_cols = c.cols;
  g.in_depth = c.in_depth;
  g.filter_rows = c.fr;
  g.filter_cols = c.fc;
  g.out_depth = c.out_depth;
  g.stride_rows = c.sr;
  g.stride_cols = c.sc;
  if (c.same) {
    g.out_rows = (c.rows + c.sr - 1) / c.sr;
    g.out_cols = (c.cols + c.sc - 1) / c.sc;
    g.pad_top = std::max<int64_t>((g.out_rows - 1) * c.sr + c.fr - c.rows, 0) / 2;
    g.pad_left = std::max<int64_t>((g.out_cols - 1) * c.sc + c.fc - c.cols, 0) / 2;
  } else {
    g.out_rows = (c.rows - c.fr) / c.sr + 1;
    g.out_cols = (c.cols - c.fc) / c.sc + 1;
  }
  return g;
}

// The convolution in double, and the sum of its terms' magnitudes (the
// scale a float sum's rounding is measured against).
void Reference(const ConvGeometry& g, const std::vector<float>& in,
               const std::vector<float>& filter, std::vector<double>* out,
               std::vector<double>* magnitude) {
  out->assign(g.batch * g.out_rows * g.out_cols * g.out_depth, 0.0);
  magnitude->assign(out->size(), 0.0);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t r = 0; r < g.out_rows; ++r) {
      for (int64_t c = 0; c < g.out_cols; ++c) {
        for (int64_t o = 0; o < g.out_depth; ++o) {
          const int64_t at = ((b * g.out_rows + r) * g.out_cols + c) * g.out_depth + o;
          for (int64_t kr = 0; kr < g.filter_rows; ++kr) {
            for (int64_t kc = 0; kc < g.filter_cols; ++kc) {
              const int64_t ir = r * g.stride_rows - g.pad_top + kr;
              const int64_t ic = c * g.stride_cols - g.pad_left + kc;
              if (ir < 0 || ir >= g.in_rows || ic < 0 || ic >= g.in_cols) continue;
              for (int64_t i = 0; i < g.in_depth; ++i) {
                const double term =
                    static_cast<double>(in[((b * g.in_rows + ir) * g.in_cols + ic) * g.in_depth + i]) *
                    filter[((kr * g.filter_cols + kc) * g.in_depth + i) * g.out_depth + o];
                (*out)[at] += term;
                (*magnitude)[at] += std::fabs(term);
              }
            }
          }
        }
      }
    }
  }
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

const Case kCases[] = {
    {2, 28, 28, 1, 5, 5, 8, 1, 1, true},    // the training CNN's first layer
    {2, 14, 14, 4, 5, 5, 16, 1, 1, true},   // four channels in
    {2, 9, 11, 3, 3, 3, 32, 2, 2, true},    // a stride-2 stem, odd sizes
    {1, 7, 6, 3, 3, 3, 24, 1, 1, false},    // VALID, 24 outputs
    {3, 5, 5, 2, 1, 1, 8, 1, 1, false},     // 1x1
    {1, 3, 3, 4, 5, 5, 16, 1, 1, true},     // window wider than the input
    {2, 10, 13, 2, 4, 2, 32, 3, 2, true},   // even filter, uneven strides
    {1, 2, 9, 1, 3, 7, 8, 1, 3, true},      // rows shorter than a group
};

TEST(SmallConvTest, MatchesDirectConvolution) {
  for (const Case& c : kCases) {
    const ConvGeometry g = GeometryOf(c);
    ASSERT_EQ(SmallConvFits(g), kBuilt) << "in_depth " << c.in_depth << " out_depth "
                                        << c.out_depth;
    if (!kBuilt) continue;
    const std::vector<float> in = Random(g.batch * g.in_rows * g.in_cols * g.in_depth, 1);
    const std::vector<float> filter =
        Random(g.filter_rows * g.filter_cols * g.in_depth * g.out_depth, 2);
    std::vector<double> want, magnitude;
    Reference(g, in, filter, &want, &magnitude);
    std::vector<float> got(want.size(), NAN);
    SmallConv(nullptr, g, in.data(), filter.data(), got.data());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6 * magnitude[i] + 1e-30)
          << "element " << i << " of the case with " << c.rows << "x" << c.cols << "x"
          << c.in_depth << " input, " << c.fr << "x" << c.fc << " filter, " << c.out_depth
          << " outputs";
    }
  }
}

// The bias and Relu / Relu6 are applied in registers, other activations on
// the stored rows: each gives the activation of the bare convolution plus
// the bias, NaN where the convolution is NaN.
TEST(SmallConvTest, PoolThreadsGiveTheSameFloatsAndTheEpilogueApplies) {
  const Case c = {4, 12, 12, 3, 3, 3, 16, 1, 1, true};
  const ConvGeometry g = GeometryOf(c);
  ASSERT_EQ(SmallConvFits(g), kBuilt);
  if (!kBuilt) return;
  std::vector<float> in = Random(g.batch * g.in_rows * g.in_cols * g.in_depth, 3);
  for (float& x : in) x *= 4.0f;  // outputs beyond 6, for Relu6
  in[5 * g.in_depth] = NAN;       // a NaN pixel in the first image's first row
  const std::vector<float> filter =
      Random(g.filter_rows * g.filter_cols * g.in_depth * g.out_depth, 4);
  const std::vector<float> bias = Random(g.out_depth, 5);
  std::vector<float> alone(g.batch * g.out_rows * g.out_cols * g.out_depth);
  SmallConv(nullptr, g, in.data(), filter.data(), alone.data());
  Eigen::ThreadPool threads(2);
  Eigen::ThreadPoolDevice device(&threads, 2);
  struct Activation {
    FusedActivation kind;
    float (*f)(float);
  };
  const Activation activations[] = {
      {FusedActivation::kNone, [](float x) { return x; }},
      {FusedActivation::kRelu, [](float x) { return std::max(x, 0.0f); }},
      {FusedActivation::kRelu6, [](float x) { return std::min(std::max(x, 0.0f), 6.0f); }},
      {FusedActivation::kElu, [](float x) { return x < 0 ? std::expm1(x) : x; }},
  };
  for (const Activation& a : activations) {
    SCOPED_TRACE(static_cast<int>(a.kind));
    BiasActivation epilogue;
    epilogue.activation = a.kind;
    std::vector<float> pooled(alone.size());
    SmallConv(&device, g, in.data(), filter.data(), pooled.data(), &epilogue, bias.data());
    int nans = 0, clipped = 0;
    for (size_t i = 0; i < alone.size(); ++i) {
      const float want = a.f(alone[i] + bias[i % g.out_depth]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(pooled[i])) << "element " << i;
        ++nans;
        continue;
      }
      ASSERT_EQ(pooled[i], want) << "element " << i;
      clipped += want != alone[i] + bias[i % g.out_depth];
    }
    EXPECT_GT(nans, 0);
    if (a.kind != FusedActivation::kNone) EXPECT_GT(clipped, 0);  // had something to do
  }
}

TEST(SmallConvTest, TakesOnlyFewChannels) {
  ConvGeometry g = GeometryOf({1, 8, 8, 3, 3, 3, 32, 1, 1, true});
  EXPECT_EQ(SmallConvFits(g), kBuilt);
  g.out_depth = 64;
  EXPECT_FALSE(SmallConvFits(g));  // 64 outputs: oneDNN's
  g.out_depth = 12;
  EXPECT_FALSE(SmallConvFits(g));  // not a multiple of 8
  g.out_depth = 16;
  g.in_depth = 5;
  EXPECT_FALSE(SmallConvFits(g));  // too many inputs
}

}  // namespace
}  // namespace cpu
}  // namespace graphrun
