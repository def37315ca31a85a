// The narrow convolution kernels against a direct convolution loop in
// double: forward (plain, and with bias and Relu) and filter gradient, over
// every input depth, output depth, filter width and stride they take, with
// padding on either side, odd widths (a last vector only partly output
// pixels) and a pool of threads or none.
#include "kernels/cpu/narrow_conv.h"

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

struct Case {
  int64_t batch, rows, cols, in_depth, kh, kw, out_depth, stride, pad;
  int threads;  // 0: no pool
};

std::string Name(const Case& c) {
  return "batch " + std::to_string(c.batch) + " " + std::to_string(c.rows) + "x" +
         std::to_string(c.cols) + "x" + std::to_string(c.in_depth) + " filter " +
         std::to_string(c.kh) + "x" + std::to_string(c.kw) + "x" +
         std::to_string(c.out_depth) + " stride " + std::to_string(c.stride) + " pad " +
         std::to_string(c.pad) + " threads " + std::to_string(c.threads);
}

NarrowConvGeometry GeometryOf(const Case& c) {
  NarrowConvGeometry g;
  g.batch = c.batch;
  g.in_rows = c.rows;
  g.in_cols = c.cols;
  g.in_depth = c.in_depth;
  g.filter_rows = c.kh;
  g.filter_cols = c.kw;
  g.out_depth = c.out_depth;
  g.stride_rows = g.stride_cols = c.stride;
  // Padding `pad` before and, for SAME-like sizes, what the stride leaves after.
  g.pad_top = std::min(c.pad, c.kh - 1);
  g.pad_left = std::min(c.pad, c.kw - 1);
  g.out_rows = (c.rows + 2 * g.pad_top - c.kh) / c.stride + 1;
  g.out_cols = (c.cols + 2 * g.pad_left - c.kw) / c.stride + 1;
  return g;
}

// in at (b, r, c, ci) with zero outside.
double At(const NarrowConvGeometry& g, const std::vector<float>& in, int64_t b, int64_t r,
          int64_t c, int64_t ci) {
  if (r < 0 || r >= g.in_rows || c < 0 || c >= g.in_cols) return 0.0;
  return in[((b * g.in_rows + r) * g.in_cols + c) * g.in_depth + ci];
}

void Check(const Case& c) {
  SCOPED_TRACE(Name(c));
  const NarrowConvGeometry g = GeometryOf(c);
  ASSERT_GT(g.out_rows, 0);
  ASSERT_GT(g.out_cols, 0);
  ASSERT_TRUE(NarrowConvComputes(g));
  std::mt19937 rng(static_cast<unsigned>(c.rows * 7 + c.cols * 131 + c.in_depth * 17 +
                                         c.kw * 3 + c.out_depth + c.stride * 1001));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto random = [&](int64_t n, float scale = 1.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = scale * u(rng);
    return v;
  };
  const std::vector<float> in = random(g.batch * g.in_rows * g.in_cols * g.in_depth);
  // Wide enough weights that Relu6 clamps some outputs at 6.
  const std::vector<float> filter =
      random(g.filter_rows * g.filter_cols * g.in_depth * g.out_depth, 3.0f);
  const std::vector<float> bias = random(g.out_depth);
  const int64_t out_size = g.batch * g.out_rows * g.out_cols * g.out_depth;
  const std::vector<float> dy = random(out_size);

  std::unique_ptr<Eigen::ThreadPool> pool;
  std::unique_ptr<Eigen::ThreadPoolDevice> device;
  if (c.threads > 0) {
    pool = std::make_unique<Eigen::ThreadPool>(c.threads);
    device = std::make_unique<Eigen::ThreadPoolDevice>(pool.get(), c.threads);
  }

  // Reference forward and filter gradient, in double.
  std::vector<double> want(static_cast<size_t>(out_size), 0.0);
  std::vector<double> want_dw(filter.size(), 0.0);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t r = 0; r < g.out_rows; ++r) {
      for (int64_t col = 0; col < g.out_cols; ++col) {
        const int64_t o = ((b * g.out_rows + r) * g.out_cols + col) * g.out_depth;
        for (int64_t i = 0; i < g.filter_rows; ++i) {
          for (int64_t j = 0; j < g.filter_cols; ++j) {
            for (int64_t ci = 0; ci < g.in_depth; ++ci) {
              const double x = At(g, in, b, r * g.stride_rows - g.pad_top + i,
                                  col * g.stride_cols - g.pad_left + j, ci);
              const int64_t f = ((i * g.filter_cols + j) * g.in_depth + ci) * g.out_depth;
              for (int64_t co = 0; co < g.out_depth; ++co) {
                want[o + co] += x * filter[f + co];
                want_dw[f + co] += x * dy[o + co];
              }
            }
          }
        }
      }
    }
  }

  // The output is poisoned first: every element must be written.
  std::vector<float> got(static_cast<size_t>(out_size), NAN);
  NarrowConvForward(device.get(), g, in.data(), filter.data(), nullptr, nullptr, got.data());
  const double tol = 3e-5 * static_cast<double>(g.filter_rows * g.filter_cols * g.in_depth);
  for (int64_t i = 0; i < out_size; ++i) {
    ASSERT_NEAR(got[i], want[i], tol) << "output " << i;
  }

  // Relu and Relu6 are applied in registers, Tanh by the epilogue after.
  for (FusedActivation act :
       {FusedActivation::kRelu, FusedActivation::kRelu6, FusedActivation::kTanh}) {
    BiasActivation epilogue;
    epilogue.activation = act;
    std::fill(got.begin(), got.end(), NAN);
    NarrowConvForward(device.get(), g, in.data(), filter.data(), &epilogue, bias.data(),
                      got.data());
    for (int64_t i = 0; i < out_size; ++i) {
      const double v = want[i] + bias[i % g.out_depth];
      const double expected = act == FusedActivation::kTanh  ? std::tanh(v)
                              : act == FusedActivation::kRelu ? std::max(0.0, v)
                                                              : std::min(6.0, std::max(0.0, v));
      ASSERT_NEAR(got[i], expected, tol) << "output " << i << " with bias and activation "
                                         << static_cast<int>(act);
    }
  }

  std::vector<float> dw(filter.size(), NAN);
  NarrowConvFilterGrad(device.get(), g, in.data(), dy.data(), dw.data());
  const double dw_tol = 1e-5 * static_cast<double>(g.batch * g.out_rows * g.out_cols);
  for (size_t i = 0; i < dw.size(); ++i) {
    ASSERT_NEAR(dw[i], want_dw[i], dw_tol) << "filter gradient " << i;
  }
}

#if defined(__AVX512F__)

TEST(NarrowConvTest, EveryDepthWidthAndStrideAgreesWithADirectLoop) {
  for (int64_t in_depth : {1, 2, 3, 4}) {
    for (int64_t out_depth : {4, 8, 16}) {
      for (int64_t kw = 1; kw <= 7; ++kw) {
        for (int64_t stride : {1, 2, 3}) {
          const int64_t pad = kw / 2;
          Check({2, 9, 13 + kw, in_depth, kw == 1 ? 1 : 3, kw, out_depth, stride, pad,
                 (kw % 2) ? 2 : 0});
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(NarrowConvTest, TheFirstLayerOfAGrayscaleCnnAgreesWithADirectLoop) {
  // The training benchmark's first layer (SAME 5x5, 1 -> 8) and its
  // colour form (3 -> 16), at a batch split over a pool.
  Check({16, 28, 28, 1, 5, 5, 8, 1, 2, 2});
  Check({5, 28, 28, 3, 5, 5, 16, 1, 2, 3});
  Check({3, 31, 29, 3, 7, 7, 16, 2, 3, 2});  // a stem: 7x7 stride 2
  Check({3, 30, 30, 1, 4, 4, 8, 4, 0, 2});   // VALID, stride 4
}

TEST(NarrowConvTest, RowsTooWideToLayOutTogetherAgreeWithADirectLoop) {
  // A laid-out row of 4 channels over 2100 columns is 526 KiB, more than
  // the filter gradient lays out at once: one output row at a time.
  Check({1, 6, 2100, 4, 3, 2, 16, 1, 1, 2});
  Check({1, 7, 2100, 4, 3, 3, 16, 1, 1, 2});
}

// A NaN stays NaN through the fused Relu and Relu6, as TensorFlow's does;
// an Inf in an input column no output reads (VALID, stride 2, a last
// vector half past the output) adds nothing to the filter gradient.
TEST(NarrowConvTest, NanThroughReluAndInfInAnUnreadColumn) {
  NarrowConvGeometry g;
  g.batch = 1;
  g.in_rows = 3;
  g.in_cols = 8;
  g.in_depth = 1;
  g.filter_rows = 3;
  g.filter_cols = 3;
  g.out_depth = 8;
  g.stride_rows = 1;
  g.stride_cols = 2;
  g.out_rows = 1;
  g.out_cols = 3;  // columns 0-6 read; column 7 by no output
  ASSERT_TRUE(NarrowConvComputes(g));
  std::vector<float> in(24, 1.0f);
  std::vector<float> filter(72, 0.5f);
  const std::vector<float> bias(8, 0.0f);
  in[0] = NAN;  // row 0, column 0: read by output pixel 0 only
  for (FusedActivation act : {FusedActivation::kRelu, FusedActivation::kRelu6}) {
    BiasActivation epilogue;
    epilogue.activation = act;
    std::vector<float> out(24, 0.0f);
    NarrowConvForward(nullptr, g, in.data(), filter.data(), &epilogue, bias.data(), out.data());
    for (int co = 0; co < 8; ++co) {
      EXPECT_TRUE(std::isnan(out[co])) << "pixel 0 channel " << co;
      // Pixels 1 and 2: 9 taps of 1 * 0.5; Relu6 clamps nothing here.
      EXPECT_EQ(out[8 + co], 4.5f);
      EXPECT_EQ(out[16 + co], 4.5f);
    }
  }
  in[0] = 1.0f;
  for (int r = 0; r < 3; ++r) in[r * 8 + 7] = INFINITY;
  std::vector<float> dy(24, 1.0f);
  std::vector<float> dw(72, NAN);
  NarrowConvFilterGrad(nullptr, g, in.data(), dy.data(), dw.data());
  for (int i = 0; i < 72; ++i) EXPECT_EQ(dw[i], 3.0f) << i;  // 3 pixels of 1 * 1
}

TEST(NarrowConvTest, OnlyGrayscaleLayersWithFewFiltersAreTaken) {
  const NarrowConvGeometry g = GeometryOf({1, 8, 8, 1, 3, 3, 8, 1, 1, 0});
  EXPECT_TRUE(NarrowConvApplies(g));
  NarrowConvGeometry four = g;
  four.out_depth = 4;
  EXPECT_TRUE(NarrowConvApplies(four));
  // Computed, but slower than oneDNN.
  NarrowConvGeometry colour = g;
  colour.in_depth = 3;
  EXPECT_TRUE(NarrowConvComputes(colour));
  EXPECT_FALSE(NarrowConvApplies(colour));
  NarrowConvGeometry sixteen = g;
  sixteen.out_depth = 16;
  EXPECT_TRUE(NarrowConvComputes(sixteen));
  EXPECT_FALSE(NarrowConvApplies(sixteen));
  // Not computed.
  NarrowConvGeometry wide = g;
  wide.in_depth = 5;
  EXPECT_FALSE(NarrowConvComputes(wide));
  NarrowConvGeometry many = g;
  many.out_depth = 32;
  EXPECT_FALSE(NarrowConvComputes(many));
  NarrowConvGeometry odd = g;
  odd.out_depth = 6;
  EXPECT_FALSE(NarrowConvComputes(odd));
  NarrowConvGeometry broad = g;
  broad.filter_cols = 9;
  EXPECT_FALSE(NarrowConvComputes(broad));
}

#else

TEST(NarrowConvTest, WithoutAvx512NothingIsTaken) {
  EXPECT_FALSE(NarrowConvApplies(GeometryOf({1, 8, 8, 1, 3, 3, 8, 1, 1, 0})));
}

#endif

}  // namespace
}  // namespace cpu
}  // namespace graphrun
