// Conv2D against a direct convolution loop in double on random inputs;
// float cases on both of its libraries (oneDNN and Eigen).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AllClose;
using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::RunOp;
using ::testing::HasSubstr;

// A tensor of `shape` with uniform values in [-1, 1) (rounded through T).
template <typename T>
Tensor Random(const TensorShape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (auto& v : t.flat<T>()) {
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(std::lround(dist(gen) * 5));
    } else {
      v = static_cast<T>(dist(gen));
    }
  }
  return t;
}

template <typename T>
std::vector<double> ToDouble(const Tensor& t) {
  std::vector<double> out;
  for (const T& v : t.flat<T>()) out.push_back(static_cast<double>(v));
  return out;
}

struct ConvSpec {
  int64_t n, h, w, c;          // input, NHWC
  int64_t fh, fw, fc, oc;      // filter
  int64_t sh = 1, sw = 1;      // strides
  int64_t dh = 1, dw = 1;      // dilations
  std::string padding = "VALID";
  std::vector<int64_t> explicit_pads;  // 8 values, NHWC order
};

// Direct convolution in double: returns NHWC output and its shape.
std::vector<double> NaiveConv(const ConvSpec& s, const std::vector<double>& in,
                              const std::vector<double>& f,
                              std::vector<int64_t>* out_shape) {
  auto window = [&](int64_t in_size, int64_t k, int64_t d, int64_t st,
                    int64_t pb, int64_t pa, int64_t* pad) {
    const int64_t eff = (k - 1) * d + 1;
    if (s.padding == "VALID") {
      *pad = 0;
      return (in_size - eff + st) / st;
    }
    if (s.padding == "EXPLICIT") {
      *pad = pb;
      return (in_size + pb + pa - eff + st) / st;
    }
    const int64_t out = (in_size + st - 1) / st;
    *pad = std::max<int64_t>(0, (out - 1) * st + eff - in_size) / 2;
    return out;
  };
  int64_t pt = 0, pl = 0;
  const auto& ep = s.explicit_pads;
  const int64_t oh = window(s.h, s.fh, s.dh, s.sh, ep.empty() ? 0 : ep[2],
                            ep.empty() ? 0 : ep[3], &pt);
  const int64_t ow = window(s.w, s.fw, s.dw, s.sw, ep.empty() ? 0 : ep[4],
                            ep.empty() ? 0 : ep[5], &pl);
  *out_shape = {s.n, oh, ow, s.oc};
  const int64_t groups = s.c / s.fc;
  const int64_t group_out = s.oc / groups;
  std::vector<double> out(s.n * oh * ow * s.oc, 0.0);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t o = 0; o < s.oc; ++o) {
          const int64_t g = o / group_out;
          double acc = 0;
          for (int64_t i = 0; i < s.fh; ++i)
            for (int64_t j = 0; j < s.fw; ++j) {
              const int64_t iy = y * s.sh + i * s.dh - pt;
              const int64_t ix = x * s.sw + j * s.dw - pl;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              for (int64_t q = 0; q < s.fc; ++q) {
                const int64_t ic = g * s.fc + q;
                acc += in[((b * s.h + iy) * s.w + ix) * s.c + ic] *
                       f[((i * s.fw + j) * s.fc + q) * s.oc + o];
              }
            }
          out[((b * oh + y) * ow + x) * s.oc + o] = acc;
        }
  return out;
}

std::map<std::string, AttrValue> ConvAttrs(const ConvSpec& s,
                                           const std::string& format = "NHWC") {
  std::map<std::string, AttrValue> attrs = {
      {"strides", AttrInts(format == "NHWC"
                               ? std::vector<int64_t>{1, s.sh, s.sw, 1}
                               : std::vector<int64_t>{1, 1, s.sh, s.sw})},
      {"dilations", AttrInts(format == "NHWC"
                                 ? std::vector<int64_t>{1, s.dh, s.dw, 1}
                                 : std::vector<int64_t>{1, 1, s.dh, s.dw})},
      {"padding", AttrS(s.padding)},
      {"data_format", AttrS(format)}};
  if (!s.explicit_pads.empty()) {
    std::vector<int64_t> pads = s.explicit_pads;
    if (format == "NCHW") {
      pads = {0, 0, 0, 0, pads[2], pads[3], pads[4], pads[5]};
    }
    attrs["explicit_paddings"] = AttrInts(pads);
  }
  return attrs;
}

// Runs Conv2D on random data of type T and compares with NaiveConv.
template <typename T>
void CheckConv(const ConvSpec& s, double rtol, double atol,
               uint32_t seed = 1) {
  SCOPED_TRACE(::testing::Message()
               << DataTypeString(DataTypeToEnum<T>::value) << " in [" << s.n
               << "," << s.h << "," << s.w << "," << s.c << "] filter ["
               << s.fh << "," << s.fw << "," << s.fc << "," << s.oc
               << "] strides " << s.sh << "," << s.sw << " dilations " << s.dh
               << "," << s.dw << " " << s.padding);
  Tensor in = Random<T>(TensorShape({s.n, s.h, s.w, s.c}), seed);
  Tensor f = Random<T>(TensorShape({s.fh, s.fw, s.fc, s.oc}), seed + 7);
  std::vector<int64_t> out_shape;
  std::vector<double> expected =
      NaiveConv(s, ToDouble<T>(in), ToDouble<T>(f), &out_shape);
  // float runs on oneDNN and on Eigen (GRAPHRUN_CONV2D_LIBRARY).
  std::vector<const char*> libraries = {"auto"};
  if (std::is_same_v<T, float>) libraries = {"onednn", "eigen"};
  for (const char* library : libraries) {
    SCOPED_TRACE(library);
    setenv("GRAPHRUN_CONV2D_LIBRARY", library, 1);
    auto out = RunOp("Conv2D", ConvAttrs(s), {in, f});
    unsetenv("GRAPHRUN_CONV2D_LIBRARY");
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.dtype(), DataTypeToEnum<T>::value);
    ASSERT_EQ(y.shape(), *TensorShape::FromDims(out_shape));
    std::vector<double> got = ToDouble<T>(y);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], atol + rtol * std::abs(expected[i]))
          << "at flat index " << i;
    }
  }
}

TEST(Conv2DTest, ValidOddSizesBatch) {
  CheckConv<float>({2, 5, 7, 3, 3, 3, 3, 4}, 1e-5, 1e-5);
}

TEST(Conv2DTest, SameStrideOne) {
  ConvSpec s{2, 6, 5, 3, 3, 3, 3, 5};
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, SameStrideTwoOddSizes) {
  ConvSpec s{3, 7, 9, 2, 3, 2, 2, 4};
  s.padding = "SAME";
  s.sh = 2;
  s.sw = 2;
  CheckConv<float>(s, 1e-5, 1e-5);
  s.padding = "VALID";
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, EvenFilterSameAsymmetricPadding) {
  // Total padding 1 per dim: TF puts the extra row/col after.
  ConvSpec s{1, 4, 4, 1, 2, 2, 1, 1};
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, StridesDifferPerDim) {
  ConvSpec s{2, 8, 9, 3, 2, 3, 3, 2};
  s.padding = "SAME";
  s.sh = 3;
  s.sw = 2;
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, DilationTwo) {
  ConvSpec s{2, 9, 8, 3, 3, 3, 3, 4};
  s.dh = 2;
  s.dw = 2;
  CheckConv<float>(s, 1e-5, 1e-5);
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
  s.dw = 3;
  s.sh = 2;
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, OneByOneIsGemm) {
  ConvSpec s{2, 5, 3, 6, 1, 1, 6, 4};
  CheckConv<float>(s, 1e-5, 1e-5);
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
  s.sh = 2;  // strided 1x1 takes the im2col path
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, FilterCoversInput) {
  CheckConv<float>({3, 4, 5, 2, 4, 5, 2, 3}, 1e-5, 1e-5);
  ConvSpec s{3, 4, 5, 2, 4, 5, 2, 3};
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, FilterLargerThanInputValidIsEmpty) {
  ConvSpec s{1, 2, 5, 1, 3, 3, 1, 2};
  s.sh = 2;  // (2 - 3 + 2) / 2 == 0 rows; 5 - 3 + 1 == 3 cols
  Tensor in = Random<float>(TensorShape({1, 2, 5, 1}), 3);
  Tensor f = Random<float>(TensorShape({3, 3, 1, 2}), 4);
  auto out = RunOp("Conv2D", ConvAttrs(s), {in, f});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 0, 3, 2}));
}

TEST(Conv2DTest, ExplicitPadding) {
  ConvSpec s{2, 5, 4, 3, 3, 2, 3, 2};
  s.padding = "EXPLICIT";
  s.explicit_pads = {0, 0, 2, 1, 0, 3, 0, 0};
  CheckConv<float>(s, 1e-5, 1e-5);
  s.sh = 2;
  s.dw = 2;
  CheckConv<float>(s, 1e-5, 1e-5);
}

TEST(Conv2DTest, GroupedConvolution) {
  ConvSpec s{2, 5, 5, 4, 3, 3, 2, 6};  // 2 groups of 2 in, 3 out
  s.padding = "SAME";
  CheckConv<float>(s, 1e-5, 1e-5);
  ConvSpec depthwise{1, 4, 6, 3, 2, 2, 1, 3};  // 3 groups
  CheckConv<float>(depthwise, 1e-5, 1e-5);
}

TEST(Conv2DTest, BatchOfOneSinglePixel) {
  CheckConv<float>({1, 1, 1, 1, 1, 1, 1, 1}, 1e-6, 1e-6);
}

TEST(Conv2DTest, Double) {
  ConvSpec s{2, 6, 7, 3, 3, 3, 3, 4};
  s.padding = "SAME";
  s.sw = 2;
  CheckConv<double>(s, 1e-12, 1e-12);
  CheckConv<double>({2, 3, 3, 5, 1, 1, 5, 2}, 1e-12, 1e-12);
}

TEST(Conv2DTest, HalfAndBfloat16ComputeInFloat) {
  ConvSpec s{2, 5, 6, 4, 3, 3, 4, 3};
  s.padding = "SAME";
  // Inputs are exact in the 16-bit type; only the output rounding differs.
  CheckConv<half>(s, 2e-3, 2e-3);
  CheckConv<bfloat16>(s, 1e-2, 1e-2);
  CheckConv<half>({2, 3, 3, 5, 1, 1, 5, 2}, 2e-3, 2e-3);
}

TEST(Conv2DTest, Int32) {
  ConvSpec s{2, 5, 5, 3, 3, 3, 3, 2};
  s.padding = "SAME";
  s.sh = 2;
  CheckConv<int32_t>(s, 0, 0);
}

TEST(Conv2DTest, LargeRunsThreadedAndInChunks) {
  // m*n*k far above 64^3 and an im2col matrix (8192 x 576) above the
  // chunk limit, so the GEMM runs on the pool over several chunks.
  ConvSpec s{2, 64, 64, 64, 3, 3, 64, 8};
  s.padding = "SAME";
  CheckConv<float>(s, 1e-4, 1e-4);
  ConvSpec grouped{2, 32, 32, 32, 3, 3, 16, 32};
  grouped.padding = "SAME";
  CheckConv<float>(grouped, 1e-4, 1e-4);
}

TEST(Conv2DTest, NchwMatchesNhwc) {
  ConvSpec s{2, 5, 6, 3, 3, 2, 3, 4};
  s.padding = "SAME";
  s.sh = 2;
  s.sw = 2;
  Tensor in = Random<float>(TensorShape({2, 5, 6, 3}), 11);
  Tensor f = Random<float>(TensorShape({3, 2, 3, 4}), 12);
  auto nhwc = RunOp("Conv2D", ConvAttrs(s), {in, f});
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  // Transpose the input to NCHW by hand.
  Tensor in_nchw(DT_FLOAT, TensorShape({2, 3, 5, 6}));
  for (int b = 0; b < 2; ++b)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x)
        for (int c = 0; c < 3; ++c)
          in_nchw.flat<float>()[((b * 3 + c) * 5 + y) * 6 + x] =
              in.flat<float>()[((b * 5 + y) * 6 + x) * 3 + c];
  auto nchw = RunOp("Conv2D", ConvAttrs(s, "NCHW"), {in_nchw, f});
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  const Tensor& a = (*nhwc)[0];
  const Tensor& b = (*nchw)[0];
  ASSERT_EQ(a.shape(), TensorShape({2, 3, 3, 4}));
  ASSERT_EQ(b.shape(), TensorShape({2, 4, 3, 3}));
  // NHWC runs on oneDNN, NCHW on Eigen: same sums in another order.
  for (int n = 0; n < 2; ++n)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x)
        for (int c = 0; c < 4; ++c)
          EXPECT_NEAR(a.flat<float>()[((n * 3 + y) * 3 + x) * 4 + c],
                      b.flat<float>()[((n * 4 + c) * 3 + y) * 3 + x], 1e-5);
}

TEST(Conv2DTest, HandComputed) {
  // 1x3x3x1 input 1..9, 2x2 all-ones filter, VALID: sums of 2x2 blocks.
  Tensor in = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9},
                                        TensorShape({1, 3, 3, 1}));
  Tensor f = Tensor::FromVector<float>({1, 1, 1, 1}, TensorShape({2, 2, 1, 1}));
  ConvSpec s{1, 3, 3, 1, 2, 2, 1, 1};
  auto out = RunOp("Conv2D", ConvAttrs(s), {in, f});
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor expected = Tensor::FromVector<float>({12, 16, 24, 28},
                                              TensorShape({1, 2, 2, 1}));
  std::string why;
  EXPECT_TRUE(AllClose((*out)[0], expected, 0, 0, &why)) << why;
  // SAME pads after: the last row/col see zeros.
  s.padding = "SAME";
  out = RunOp("Conv2D", ConvAttrs(s), {in, f});
  ASSERT_TRUE(out.ok()) << out.status();
  expected = Tensor::FromVector<float>({12, 16, 9, 24, 28, 15, 15, 17, 9},
                                       TensorShape({1, 3, 3, 1}));
  EXPECT_TRUE(AllClose((*out)[0], expected, 0, 0, &why)) << why;
}

TEST(Conv2DTest, EmptyBatchAndEmptySpatialInput) {
  ConvSpec s{0, 4, 4, 3, 3, 3, 3, 2};
  s.padding = "SAME";
  auto out = RunOp("Conv2D", ConvAttrs(s),
                   {Tensor(DT_FLOAT, TensorShape({0, 4, 4, 3})),
                    Random<float>(TensorShape({3, 3, 3, 2}), 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 4, 4, 2}));
  // A 0x0 image with explicit padding: every window is padding, so zeros.
  ConvSpec e{1, 0, 0, 1, 1, 1, 1, 2};
  e.padding = "EXPLICIT";
  e.explicit_pads = {0, 0, 1, 1, 1, 0, 0, 0};
  out = RunOp("Conv2D", ConvAttrs(e),
              {Tensor(DT_FLOAT, TensorShape({1, 0, 0, 1})),
               Random<float>(TensorShape({1, 1, 1, 2}), 1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({1, 2, 1, 2}));
  for (float v : (*out)[0].flat<float>()) EXPECT_EQ(v, 0.0f);
}

absl::Status ConvError(const ConvSpec& s, const TensorShape& in_shape,
                       const TensorShape& f_shape,
                       std::map<std::string, AttrValue> overrides = {}) {
  auto attrs = ConvAttrs(s);
  for (auto& [k, v] : overrides) attrs[k] = v;
  auto out = RunOp("Conv2D", attrs,
                   {Tensor(DT_FLOAT, in_shape), Tensor(DT_FLOAT, f_shape)});
  return out.status();
}

TEST(Conv2DTest, DepthMismatch) {
  ConvSpec s{1, 4, 4, 3, 2, 2, 4, 2};
  absl::Status st = ConvError(s, TensorShape({1, 4, 4, 3}),
                              TensorShape({2, 2, 4, 2}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("input depth must be evenly divisible by filter "
                        "depth: 3 vs 4"));
}

TEST(Conv2DTest, GroupsMustDivideOutDepth) {
  ConvSpec s{1, 4, 4, 4, 2, 2, 2, 3};
  absl::Status st = ConvError(s, TensorShape({1, 4, 4, 4}),
                              TensorShape({2, 2, 2, 3}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("output depth must be evenly divisible by number of "
                        "groups: 3 vs 2"));
}

TEST(Conv2DTest, ShapeErrors) {
  ConvSpec s{1, 4, 4, 3, 2, 2, 3, 2};
  absl::Status st =
      ConvError(s, TensorShape({4, 4, 3}), TensorShape({2, 2, 3, 2}));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("input must be 4-dimensional[4,4,3]"));
  st = ConvError(s, TensorShape({1, 4, 4, 3}), TensorShape({2, 3, 2}));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("filter must be 4-dimensional: [2,3,2]"));
  st = ConvError(s, TensorShape({1, 4, 4, 3}), TensorShape({2, 2, 0, 2}));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("filter depth must be stricly positive, got 0"));
  st = ConvError(s, TensorShape({1, 4, 4, 3}), TensorShape({2, 2, 3, 0}));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("filter must not have zero elements"));
  // VALID with a filter larger than the input.
  st = ConvError(s, TensorShape({1, 1, 4, 3}), TensorShape({3, 2, 3, 2}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("Computed output size would be negative: -1 "
                        "[input_size: 1, effective_filter_size: 3, stride: "
                        "1]"));
}

TEST(Conv2DTest, AttrErrors) {
  ConvSpec s{1, 4, 4, 3, 2, 2, 3, 2};
  const TensorShape in({1, 4, 4, 3}), f({2, 2, 3, 2});
  auto expect = [&](std::map<std::string, AttrValue> attrs,
                    absl::StatusCode code, const std::string& msg) {
    absl::Status st = ConvError(s, in, f, std::move(attrs));
    EXPECT_EQ(st.code(), code) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(msg));
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  expect({{"strides", AttrInts({2, 1, 1, 1})}}, kInvalid,
         "Current implementation does not yet support strides in the batch "
         "and depth dimensions.");
  expect({{"strides", AttrInts({1, 1, 1, 2})}}, kInvalid,
         "strides in the batch and depth dimensions");
  expect({{"strides", AttrInts({1, 0, 1, 1})}}, kInvalid,
         "Row and column strides should be larger than 0.");
  expect({{"strides", AttrInts({1, 1, 1})}}, kInvalid,
         "Sliding window strides field must specify 4 dimensions");
  expect({{"dilations", AttrInts({1, 1, 1, 2})}}, kInvalid,
         "does not yet support dilations in the batch and depth dimensions");
  expect({{"dilations", AttrInts({1, 0, 1, 1})}}, kInvalid,
         "Dilated rates should be larger than 0.");
  expect({{"dilations", AttrInts({1, 1})}}, kInvalid,
         "Sliding window dilations field must specify 4 dimensions");
  expect({{"padding", AttrS("EXPLICIT")},
          {"explicit_paddings", AttrInts({0, 0, 1, 1})}},
         kInvalid, "explicit_paddings attribute must contain 8 values");
  expect({{"padding", AttrS("EXPLICIT")},
          {"explicit_paddings", AttrInts({1, 0, 0, 0, 0, 0, 0, 0})}},
         kInvalid,
         "Nonzero explicit padding in the batch or depth dimensions is not "
         "supported");
  expect({{"padding", AttrS("EXPLICIT")},
          {"explicit_paddings", AttrInts({0, 0, -1, 0, 0, 0, 0, 0})}},
         kInvalid, "All elements of explicit_paddings must be nonnegative");
  expect({{"explicit_paddings", AttrInts({0, 0, 1, 1, 1, 1, 0, 0})}},
         kInvalid,
         "explicit_paddings attribute must be empty if the padding attribute "
         "is not EXPLICIT");
}

}  // namespace
}  // namespace graphrun
