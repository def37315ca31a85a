// MaxPool and AvgPool against a direct pooling loop in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

template <typename T>
Tensor RandomPoolInput(const TensorShape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (auto& v : t.flat<T>()) {
    if constexpr (std::is_integral_v<T>) {
      const float lo = std::is_signed_v<T> ? -50.0f : 0.0f;
      v = static_cast<T>(std::lround(lo + (dist(gen) + 1.0f) * 50.0f));
    } else {
      v = static_cast<T>(dist(gen));
    }
  }
  return t;
}

struct PoolSpec {
  int64_t n, h, w, c;
  int64_t kh, kw, sh, sw;
  std::string padding = "VALID";
  std::vector<int64_t> explicit_pads;  // NHWC order, 8 values
};

// Direct pooling in double; NHWC.
std::vector<double> NaivePool(const PoolSpec& s, const std::vector<double>& in,
                              bool max, std::vector<int64_t>* out_shape) {
  auto window = [&](int64_t size, int64_t k, int64_t st, int64_t pb,
                    int64_t pa, int64_t* pad) {
    if (s.padding == "VALID") {
      *pad = 0;
      return (size - k + st) / st;
    }
    if (s.padding == "EXPLICIT") {
      *pad = pb;
      return (size + pb + pa - k + st) / st;
    }
    const int64_t out = (size + st - 1) / st;
    *pad = std::max<int64_t>(0, (out - 1) * st + k - size) / 2;
    return out;
  };
  const auto& ep = s.explicit_pads;
  int64_t pt = 0, pl = 0;
  const int64_t oh = window(s.h, s.kh, s.sh, ep.empty() ? 0 : ep[2],
                            ep.empty() ? 0 : ep[3], &pt);
  const int64_t ow = window(s.w, s.kw, s.sw, ep.empty() ? 0 : ep[4],
                            ep.empty() ? 0 : ep[5], &pl);
  *out_shape = {s.n, oh, ow, s.c};
  std::vector<double> out;
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t c = 0; c < s.c; ++c) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int count = 0;
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t iy = y * s.sh + i - pt, ix = x * s.sw + j - pl;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              const double v = in[((b * s.h + iy) * s.w + ix) * s.c + c];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          out.push_back(max ? best : sum / count);
        }
  return out;
}

std::map<std::string, AttrValue> PoolAttrs(const PoolSpec& s,
                                           const std::string& format = "NHWC") {
  const bool nhwc = format == "NHWC";
  std::map<std::string, AttrValue> attrs = {
      {"ksize", AttrInts(nhwc ? std::vector<int64_t>{1, s.kh, s.kw, 1}
                              : std::vector<int64_t>{1, 1, s.kh, s.kw})},
      {"strides", AttrInts(nhwc ? std::vector<int64_t>{1, s.sh, s.sw, 1}
                                : std::vector<int64_t>{1, 1, s.sh, s.sw})},
      {"padding", AttrS(s.padding)},
      {"data_format", AttrS(format)}};
  if (!s.explicit_pads.empty()) {
    attrs["explicit_paddings"] = AttrInts(s.explicit_pads);
  }
  return attrs;
}

template <typename T>
void CheckPool(const std::string& op, const PoolSpec& s, double tol,
               uint32_t seed = 5) {
  SCOPED_TRACE(::testing::Message()
               << op << " " << DataTypeString(DataTypeToEnum<T>::value)
               << " in [" << s.n << "," << s.h << "," << s.w << "," << s.c
               << "] ksize " << s.kh << "x" << s.kw << " strides " << s.sh
               << "," << s.sw << " " << s.padding);
  Tensor in = RandomPoolInput<T>(TensorShape({s.n, s.h, s.w, s.c}), seed);
  std::vector<double> in_d;
  for (const T& v : in.flat<T>()) in_d.push_back(static_cast<double>(v));
  std::vector<int64_t> out_shape;
  std::vector<double> expected =
      NaivePool(s, in_d, op == "MaxPool", &out_shape);
  auto out = RunOp(op, PoolAttrs(s), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dtype(), DataTypeToEnum<T>::value);
  ASSERT_EQ(y.shape(), *TensorShape::FromDims(out_shape));
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    ASSERT_NEAR(static_cast<double>(y.flat<T>()[i]), expected[i],
                tol * (1 + std::abs(expected[i])))
        << "at flat index " << i;
  }
}

TEST(MaxPoolTest, ValidAndSameOddSizes) {
  CheckPool<float>("MaxPool", {2, 5, 7, 3, 2, 2, 2, 2}, 0);
  PoolSpec s{2, 5, 7, 3, 3, 3, 2, 2};
  s.padding = "SAME";
  CheckPool<float>("MaxPool", s, 0);
  s = {1, 6, 6, 2, 3, 3, 1, 1};
  s.padding = "SAME";
  CheckPool<float>("MaxPool", s, 0);
  CheckPool<float>("MaxPool", {3, 9, 4, 1, 3, 2, 3, 1}, 0);
}

TEST(MaxPoolTest, AllNegativeInputIgnoresPadding) {
  // SAME padding must not contribute zeros to the max.
  Tensor in = Tensor::FromVector<float>({-5, -4, -3, -2},
                                        TensorShape({1, 2, 2, 1}));
  PoolSpec s{1, 2, 2, 1, 3, 3, 1, 1};
  s.padding = "SAME";
  auto out = RunOp("MaxPool", PoolAttrs(s), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor expected = Tensor::FromVector<float>({-2, -2, -2, -2},
                                              TensorShape({1, 2, 2, 1}));
  std::string why;
  EXPECT_TRUE(AllClose((*out)[0], expected, 0, 0, &why)) << why;
}

TEST(MaxPoolTest, EveryRegisteredType) {
  PoolSpec s{2, 5, 6, 3, 3, 2, 2, 2};
  s.padding = "SAME";
  CheckPool<double>("MaxPool", s, 0);
  CheckPool<half>("MaxPool", s, 0);
  CheckPool<bfloat16>("MaxPool", s, 0);
  CheckPool<int32_t>("MaxPool", s, 0);
  CheckPool<int64_t>("MaxPool", s, 0);
  CheckPool<uint8_t>("MaxPool", s, 0);
  CheckPool<int16_t>("MaxPool", s, 0);
  CheckPool<int8_t>("MaxPool", s, 0);
  CheckPool<uint16_t>("MaxPool", s, 0);
}

TEST(MaxPoolTest, ExplicitPadding) {
  PoolSpec s{2, 4, 5, 2, 2, 3, 2, 1};
  s.padding = "EXPLICIT";
  s.explicit_pads = {0, 0, 1, 0, 2, 1, 0, 0};
  CheckPool<float>("MaxPool", s, 0);
}

TEST(MaxPoolTest, DepthwisePooling) {
  Tensor in = RandomPoolInput<float>(TensorShape({2, 3, 2, 6}), 9);
  auto out = RunOp("MaxPool",
                   {{"ksize", AttrInts({1, 1, 1, 3})},
                    {"strides", AttrInts({1, 1, 1, 3})},
                    {"padding", AttrS("VALID")}},
                   {in});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape(), TensorShape({2, 3, 2, 2}));
  for (int64_t p = 0; p < 2 * 3 * 2; ++p)
    for (int g = 0; g < 2; ++g) {
      const float* v = &in.flat<float>()[p * 6 + g * 3];
      EXPECT_EQ(y.flat<float>()[p * 2 + g], std::max({v[0], v[1], v[2]}));
    }
}

TEST(MaxPoolTest, LargeRunsThreaded) {
  PoolSpec s{4, 40, 40, 16, 3, 3, 2, 2};
  s.padding = "SAME";
  CheckPool<float>("MaxPool", s, 0);
  CheckPool<float>("AvgPool", s, 1e-5);
}

TEST(AvgPoolTest, DividesByValidCount) {
  // 1x3x3x1 input 1..9, 2x2 window stride 1 SAME: the last row/col windows
  // are partly padding and average only their valid elements.
  Tensor in = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9},
                                        TensorShape({1, 3, 3, 1}));
  PoolSpec s{1, 3, 3, 1, 2, 2, 1, 1};
  s.padding = "SAME";
  auto out = RunOp("AvgPool", PoolAttrs(s), {in});
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor expected = Tensor::FromVector<float>(
      {3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}, TensorShape({1, 3, 3, 1}));
  std::string why;
  EXPECT_TRUE(AllClose((*out)[0], expected, 1e-6, 1e-6, &why)) << why;
}

TEST(AvgPoolTest, ValidAndSameOddSizes) {
  CheckPool<float>("AvgPool", {2, 5, 7, 3, 2, 2, 2, 2}, 1e-6);
  PoolSpec s{2, 5, 7, 3, 3, 3, 2, 2};
  s.padding = "SAME";
  CheckPool<float>("AvgPool", s, 1e-6);
  s = {1, 7, 5, 2, 4, 2, 3, 1};
  s.padding = "SAME";
  CheckPool<float>("AvgPool", s, 1e-6);
}

TEST(AvgPoolTest, FloatTypes) {
  PoolSpec s{2, 6, 5, 3, 3, 3, 2, 2};
  s.padding = "SAME";
  CheckPool<double>("AvgPool", s, 1e-12);
  CheckPool<half>("AvgPool", s, 2e-3);
  CheckPool<bfloat16>("AvgPool", s, 1e-2);
}

TEST(PoolTest, NchwMatchesNhwc) {
  PoolSpec s{2, 5, 6, 3, 3, 2, 2, 2};
  s.padding = "SAME";
  Tensor in = RandomPoolInput<float>(TensorShape({2, 5, 6, 3}), 2);
  Tensor in_nchw(DT_FLOAT, TensorShape({2, 3, 5, 6}));
  for (int b = 0; b < 2; ++b)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x)
        for (int c = 0; c < 3; ++c)
          in_nchw.flat<float>()[((b * 3 + c) * 5 + y) * 6 + x] =
              in.flat<float>()[((b * 5 + y) * 6 + x) * 3 + c];
  for (const std::string op : {"MaxPool", "AvgPool"}) {
    auto a = RunOp(op, PoolAttrs(s), {in});
    auto b = RunOp(op, PoolAttrs(s, "NCHW"), {in_nchw});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    const Tensor& ya = (*a)[0];
    const Tensor& yb = (*b)[0];
    ASSERT_EQ(ya.shape(), TensorShape({2, 3, 3, 3}));
    ASSERT_EQ(yb.shape(), TensorShape({2, 3, 3, 3}));
    for (int n = 0; n < 2; ++n)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 3; ++x)
          for (int c = 0; c < 3; ++c)
            EXPECT_FLOAT_EQ(ya.flat<float>()[((n * 3 + y) * 3 + x) * 3 + c],
                            yb.flat<float>()[((n * 3 + c) * 3 + y) * 3 + x])
                << op;
  }
}

TEST(PoolTest, EmptyInputs) {
  PoolSpec s{0, 4, 4, 3, 2, 2, 2, 2};
  for (const std::string op : {"MaxPool", "AvgPool"}) {
    auto out = RunOp(op, PoolAttrs(s),
                     {Tensor(DT_FLOAT, TensorShape({0, 4, 4, 3}))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2, 2, 3}));
  }
  PoolSpec z{1, 4, 4, 0, 2, 2, 2, 2};
  auto out = RunOp("MaxPool", PoolAttrs(z),
                   {Tensor(DT_FLOAT, TensorShape({1, 4, 4, 0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 2, 2, 0}));
}

TEST(MaxPoolTest, HugeExplicitPadding) {
  // 2^24 + 1 output rows, all but the last made of padding only: the
  // windows are walked directly (no float-sized image patches), so the
  // output is exact: the lowest value where a window sees no input.
  Tensor in = Tensor::FromVector<uint8_t>({7}, TensorShape({1, 1, 1, 1}));
  auto out = RunOp("MaxPool",
                   {{"ksize", AttrInts({1, 1, 1, 1})},
                    {"strides", AttrInts({1, 1, 1, 1})},
                    {"padding", AttrS("EXPLICIT")},
                    {"explicit_paddings",
                     AttrInts({0, 0, int64_t{1} << 24, 0, 0, 0, 0, 0})}},
                   {in});
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t rows = (int64_t{1} << 24) + 1;
  ASSERT_EQ((*out)[0].shape(), TensorShape({1, rows, 1, 1}));
  auto v = (*out)[0].flat<uint8_t>();
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[rows / 2], 0);
  EXPECT_EQ(v[rows - 1], 7);
}

absl::Status PoolError(const std::string& op,
                       std::map<std::string, AttrValue> attrs,
                       const TensorShape& shape) {
  return RunOp(op, attrs, {Tensor(DT_FLOAT, shape)}).status();
}

TEST(PoolTest, Errors) {
  const TensorShape in({1, 4, 4, 4});
  PoolSpec s{1, 4, 4, 4, 2, 2, 2, 2};
  for (const std::string op : {"MaxPool", "AvgPool"}) {
    SCOPED_TRACE(op);
    auto attrs = PoolAttrs(s);
    attrs["ksize"] = AttrInts({2, 2, 2, 1});
    absl::Status st = PoolError(op, attrs, in);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("Pooling is not yet supported on the batch "
                          "dimension."));
    attrs = PoolAttrs(s);
    attrs["ksize"] = AttrInts({1, 0, 2, 1});
    st = PoolError(op, attrs, in);
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("Sliding window ksize for dimension 1 was zero."));
    attrs = PoolAttrs(s);
    attrs["strides"] = AttrInts({1, 0, 2, 1});
    st = PoolError(op, attrs, in);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("Stride must be > 0, but got 0"));
    attrs = PoolAttrs(s);
    attrs["ksize"] = AttrInts({1, 2, 2, 2});
    st = PoolError(op, attrs, in);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("exactly one of pooling across depth or pooling "
                          "across width/height"));
    st = PoolError(op, PoolAttrs(s), TensorShape({4, 4, 4}));
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("tensor_in must be 4-dimensional"));
    PoolSpec big{1, 4, 4, 4, 6, 2, 1, 1};
    st = PoolError(op, PoolAttrs(big), in);
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("Computed output size would be negative: -1"));
  }
  auto attrs = PoolAttrs(s);
  attrs["ksize"] = AttrInts({1, 1, 1, 2});
  attrs["strides"] = AttrInts({1, 1, 1, 2});
  absl::Status st = PoolError("AvgPool", attrs, in);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("Non-spatial pooling is not yet supported."));
  attrs["ksize"] = AttrInts({1, 1, 1, 3});
  attrs["strides"] = AttrInts({1, 1, 1, 3});
  st = PoolError("MaxPool", attrs, in);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("Depthwise max pooling requires the depth window to "
                        "evenly divide the input depth."));
  attrs["strides"] = AttrInts({1, 1, 1, 1});
  attrs["ksize"] = AttrInts({1, 1, 1, 2});
  st = PoolError("MaxPool", attrs, in);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("Depthwise max pooling requires the depth window to "
                        "equal the depth stride."));
  attrs = PoolAttrs(s);
  attrs["data_format"] = AttrS("NCHW_VECT_C");
  st = PoolError("MaxPool", attrs, TensorShape({1, 1, 4, 4, 4}));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("Default MaxPoolingOp only supports NHWC on device "
                        "type CPU"));
}

}  // namespace
}  // namespace graphrun
