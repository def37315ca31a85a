// Expected values: TensorFlow 2.21, checked by make_conv_nd_ops_test_values.py beside this file.
// Conv3D, Conv2DBackpropInput, MaxPool3D and AvgPool3D (and a dilated,
// explicitly padded Conv2D) against values from TensorFlow 2.21 (strides,
// dilations, SAME / VALID / EXPLICIT, pointwise filters), channels-first
// layouts and 16-bit types against the same values, a bigger transposed
// convolution against a direct loop, and the errors.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_grad_test_case.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::ExpectTensorNear;
using ::graphrun::testing::FirstTestInput;
using ::graphrun::testing::MakeTensor;
using ::graphrun::testing::NumElementsOf;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::SecondTestInput;
using ::testing::HasSubstr;

// Channels-last values as channels-first (any rank), and the dims.
std::vector<double> ToChannelsFirst(const std::vector<double>& v,
                                    const std::vector<int64_t>& dims) {
  const int64_t batch = dims.front(), channels = dims.back();
  const int64_t pixels = NumElementsOf(dims) / batch / std::max<int64_t>(channels, 1);
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < channels; ++c)
        out[(b * channels + c) * pixels + p] = v[(b * pixels + p) * channels + c];
  return out;
}
std::vector<int64_t> FirstDims(const std::vector<int64_t>& d) {
  std::vector<int64_t> out = {d.front(), d.back()};
  out.insert(out.end(), d.begin() + 1, d.end() - 1);
  return out;
}
// A window attr (strides, dilations) of the spatial values, batch and
// channel 1.
std::vector<int64_t> WindowAttr(const std::vector<int64_t>& spatial,
                                bool channels_first) {
  std::vector<int64_t> out = {1};
  if (channels_first) out.push_back(1);
  out.insert(out.end(), spatial.begin(), spatial.end());
  if (!channels_first) out.push_back(1);
  return out;
}

struct Conv3DCase {
  std::vector<int64_t> input, filter, strides, dilations;
  std::string padding;
  std::vector<int64_t> explicit_paddings, out;
  std::vector<double> expected;
};

template <typename T>
void CheckConv3D(bool channels_first, double tol) {
  const std::vector<Conv3DCase> cases = {
    {{1, 4, 4, 3, 2}, {2, 2, 2, 2, 3}, {1, 1, 1}, {1, 1, 1}, "VALID", {}, {1, 3, 3, 2, 3},
     {2.5625, -2.1875, -6.125, -1.875, 3.75, -3.625, -0.4375, -5.6875, 2.0625, 4.0625, -3.1875, -2.3125, -2.75, 3.875, -0.0625, -3.0625, -1.875, 1.75, -1.875, 3.75, -3.625, -2.1875, 1.4375, 5.0625, 4.0625, -3.1875, -2.3125, -0.375, 2.75, 0.1875, -3.0625, -1.875, 1.75, 2.125, 1.3125, -1.9375, -2.1875, 1.4375, 5.0625, -0.4375, -5.6875, 2.0625, -0.375, 2.75, 0.1875, -2.75, 3.875, -0.0625, 2.125, 1.3125, -1.9375, 1.125, -1.6875, 6.0625}},
    {{2, 5, 4, 4, 2}, {3, 2, 3, 2, 2}, {2, 1, 2}, {1, 1, 1}, "SAME", {}, {2, 3, 4, 2, 2},
     {-9.25, 7.3125, 0.5625, -2.625, 5.5625, 8.5625, -7.0625, 0.0625, 6.625, 2.9375, -1.625, -5.5, 4.1875, -1.0625, -2.125, 0.75, 0.6875, -9.0, 9.25, 5.1875, -4.3125, -1.0625, 8.875, -9.5625, -8.625, 0.0, -1.125, -3.6875, -6.5, 6.3125, -4.125, 0.125, -5.5, 1.5625, -6.625, 6.1875, 0.0625, -0.375, 4.4375, 6.25, -4.0, 0.4375, 5.1875, 2.875, 2.25, -4.3125, 4.5, -2.3125, -4.5, 0.6875, 6.1875, -6.625, -4.8125, 0.5625, -0.0625, -2.5625, -9.25, 7.3125, 0.5625, -2.625, 3.4375, 4.0625, -3.375, 0.75, 0.375, -2.875, 5.1875, 9.25, -8.0625, -0.4375, 6.1875, 6.1875, 0.6875, -9.0, 9.25, 5.1875, -2.125, 5.3125, 6.1875, -5.4375, 6.75, -0.0625, -2.625, 0.5625, 6.8125, -7.5, -2.5625, -0.0625, -5.5, 1.5625, -6.625, 6.1875, 1.125, -1.375, 3.6875, 1.8125}},
    {{1, 5, 5, 5, 1}, {2, 2, 2, 1, 2}, {1, 1, 1}, {2, 1, 2}, "VALID", {}, {1, 3, 4, 3, 2},
     {1.0, 1.375, -4.625, 0.125, 2.8125, -2.5, 1.75, 0.625, -2.5, 2.8125, 0.125, -4.625, 3.1875, -2.875, 1.0, 1.375, -4.625, 0.125, -0.875, -0.875, 1.75, 0.625, -2.5, 2.8125, 0.625, 1.75, -0.875, -0.875, 1.75, 0.625, 1.375, 1.0, -2.875, 3.1875, 3.1875, -2.875, 2.8125, -2.5, 0.625, 1.75, -0.875, -0.875, 0.125, -4.625, 1.375, 1.0, -2.875, 3.1875, -2.5, 2.8125, 0.125, -4.625, 1.375, 1.0, 1.0, 1.375, -4.625, 0.125, 2.8125, -2.5, 1.75, 0.625, -2.5, 2.8125, 0.125, -4.625, 3.1875, -2.875, 1.0, 1.375, -4.625, 0.125}},
    {{1, 3, 3, 3, 4}, {1, 1, 1, 4, 3}, {1, 1, 1}, {1, 1, 1}, "VALID", {}, {1, 3, 3, 3, 3},
     {-0.5625, -0.25, -2.375, -0.8125, 0.125, 1.875, 1.0, -0.875, 1.3125, -1.3125, 0.875, 1.4375, 0.5, -0.125, 0.875, 1.625, 1.625, -2.4375, 0.0, 0.625, 0.4375, 0.4375, -1.75, -1.5, -0.5, 1.375, 0.0, -0.0625, -1.0, -1.9375, -0.3125, -0.625, 2.3125, -0.5625, -0.25, -2.375, -0.8125, 0.125, 1.875, 1.0, -0.875, 1.3125, -1.3125, 0.875, 1.4375, 0.5, -0.125, 0.875, 1.625, 1.625, -2.4375, 0.0, 0.625, 0.4375, 0.4375, -1.75, -1.5, -0.5, 1.375, 0.0, -0.0625, -1.0, -1.9375, -0.3125, -0.625, 2.3125, -0.5625, -0.25, -2.375, -0.8125, 0.125, 1.875, 1.0, -0.875, 1.3125, -1.3125, 0.875, 1.4375, 0.5, -0.125, 0.875}},
  };
  for (const Conv3DCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "filter " << c.filter[0] << "x"
                                      << c.filter[1] << "x" << c.filter[2]
                                      << " " << c.padding);
    std::vector<double> in = FirstTestInput(NumElementsOf(c.input));
    std::vector<double> want = c.expected;
    std::vector<int64_t> in_dims = c.input, out_dims = c.out;
    if (channels_first) {
      in = ToChannelsFirst(in, c.input);
      want = ToChannelsFirst(want, c.out);
      in_dims = FirstDims(c.input);
      out_dims = FirstDims(c.out);
    }
    auto out = RunOp(
        "Conv3D",
        {{"strides", AttrInts(WindowAttr(c.strides, channels_first))},
         {"dilations", AttrInts(WindowAttr(c.dilations, channels_first))},
         {"padding", AttrS(c.padding)},
         {"data_format", AttrS(channels_first ? "NCDHW" : "NDHWC")}},
        {MakeTensor<T>(in, in_dims), MakeTensor<T>(SecondTestInput(NumElementsOf(c.filter)), c.filter)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(out_dims));
    ExpectTensorNear<T>((*out)[0], want, tol);
  }
}

TEST(Conv3DTest, MatchesTensorFlow) {
  CheckConv3D<float>(false, 1e-6);
  CheckConv3D<float>(true, 1e-6);
  CheckConv3D<double>(false, 1e-12);
  CheckConv3D<half>(true, 2e-3);
}

struct BackpropCase {
  std::vector<int64_t> input, filter, out_backprop, strides, dilations;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::vector<double> expected;
};

template <typename T>
void CheckBackprop(bool channels_first, bool spatial_sizes, double tol) {
  const std::vector<BackpropCase> cases = {
    {{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 3, 3, 3}, {1, 1}, {1, 1}, "VALID", {},
     {0.9375, 0.625, 2.0625, 2.6875, 0.1875, 1.375, -0.5625, -0.6875, -1.6875, -1.9375, 1.625, 3.125, 0.5625, 3.375, -3.375, 0.0, 0.875, 1.125, -0.8125, -1.0625, -2.4375, 2.75, -0.3125, -1.3125, -2.6875, -6.125, 3.1875, 1.0625, 2.875, 0.4375, -4.8125, -1.75, 4.75, 0.6875, 1.4375, -3.1875, 0.5625, 1.0, 1.75, 2.0, 0.3125, -2.5, 3.125, 1.75, -0.5625, -0.0625, -3.3125, -0.8125, -1.5625, 1.125}},
    {{2, 5, 6, 2}, {3, 3, 2, 3}, {2, 3, 3, 3}, {2, 2}, {1, 1}, "SAME", {},
     {0.6875, 1.1875, 0.875, 1.375, -1.3125, -0.6875, 1.125, 1.25, -0.8125, -0.9375, 1.375, 1.125, -0.25, 2.875, 1.9375, 1.8125, -4.0625, -2.875, 1.75, 2.25, -2.625, 0.875, 2.25, 2.0, 1.25, 0.625, 1.625, 1.0, -3.9375, -4.1875, 0.5, 0.875, -2.0625, -1.6875, 0.75, 0.75, -5.0, 2.125, 2.75, 1.75, 3.6875, -6.0625, -1.5625, -0.5625, 3.75, -2.3125, -1.0625, -0.8125, -2.3125, -2.6875, 1.0, 0.625, 1.6875, 1.9375, -2.1875, -1.5625, 1.5, 2.375, -1.9375, -1.6875, 1.0, 0.875, -1.6875, -1.8125, 2.5, 1.875, -1.4375, -1.9375, 2.3125, 2.3125, 0.875, 1.375, 2.0, 2.0, -0.4375, -0.4375, -2.125, 2.0, 0.0625, -0.6875, -4.125, 2.3125, 1.9375, 1.8125, 0.875, 1.0, 1.125, 1.25, -0.8125, -0.9375, 1.375, 1.125, -0.3125, -1.1875, 1.625, 1.0, -4.125, 1.25, 1.75, 2.25, -2.625, 0.875, 2.25, 2.0, -3.25, 1.1875, 2.75, 1.75, -2.6875, -2.3125, 0.5, 0.875, -2.0625, -1.6875, 0.75, 0.75, -1.5625, -1.9375, 1.0, 0.625}},
    {{1, 8, 8, 2}, {3, 3, 2, 1}, {1, 4, 4, 1}, {2, 2}, {1, 1}, "SAME", {},
     {0.625, 0.0, -0.625, 0.375, -1.8125, 0.75, 1.5625, -0.9375, 0.3125, -1.875, 0.3125, -0.1875, 1.0625, -0.375, -0.9375, 0.5625, 0.125, -0.5, 0.5, -0.125, -1.0625, 1.5, -1.25, 0.3125, 1.8125, -0.375, -0.25, 0.0625, 0.5625, -0.875, 0.75, -0.1875, -1.625, 0.625, 1.25, -1.375, 1.8125, -3.3125, 0.0, 1.5625, 0.5, 0.3125, -1.25, 1.0625, -2.1875, 2.5625, 0.9375, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.0, 0.0, 0.25, -1.0, 1.0, -0.25, -1.6875, 1.25, -0.75, 0.1875, 1.0625, -1.25, -0.3125, 1.4375, 0.6875, 0.875, -1.5625, 0.9375, -2.0, 3.125, 0.625, -1.625, 2.1875, -2.1875, -0.625, 1.3125, 0.0625, -0.25, 0.25, -0.0625, -0.0625, -1.125, 1.25, -0.3125, -2.0, 1.125, -0.5, 0.125, 0.875, -0.75, 0.5, -0.125, -1.75, 0.3125, 1.5625, -1.25, -0.4375, -0.4375, 0.3125, -1.75, 2.375, -1.625, -0.9375, 1.1875, -2.375, 2.0, 1.25, -1.375, -0.3125, 1.25, -1.25, 0.3125, 1.8125, -0.375, -0.25, 0.0625, 0.5625, -0.875, 0.75, -0.1875, -1.375, 1.375, -1.0, 0.25}},
    {{1, 6, 5, 2}, {3, 2, 2, 2}, {1, 4, 6, 2}, {2, 1}, {1, 1}, "EXPLICIT", {0, 0, 2, 1, 1, 1, 0, 0},
     {-1.125, -0.1875, -1.625, -0.625, 2.6875, 1.6875, 0.125, -0.8125, -0.375, -3.3125, 1.625, -1.3125, -2.0625, 1.75, 0.4375, 0.0, 2.25, -2.4375, -0.75, -0.75, 2.0625, 2.0, -0.5, -0.5, -1.0, -0.9375, 3.3125, 1.375, -1.3125, 1.625, 0.125, 0.5625, 1.9375, -1.875, -1.75, 1.1875, 0.75, -0.5625, -0.1875, 1.125, -1.625, -0.625, 2.6875, 1.6875, 0.125, -0.8125, -0.375, -3.3125, -2.25, -0.3125, -2.0625, 1.75, 0.4375, 0.0, 2.25, -2.4375, -0.75, -0.75, -2.375, 2.3125}},
    {{1, 7, 7, 2}, {3, 3, 2, 2}, {1, 3, 3, 2}, {1, 1}, {2, 2}, "VALID", {},
     {0.625, -1.5625, -0.3125, 0.875, -3.375, 2.625, 1.25, -0.8125, 1.3125, -1.625, -0.4375, 0.75, -1.0, 1.5, 1.25, -1.8125, 0.3125, 0.625, -2.25, 2.0, 1.75, -1.1875, 2.1875, -2.5, -0.0625, 0.25, -0.625, 1.0, -3.5, 2.9375, 2.0625, -2.625, 2.0, 1.125, -2.4375, 1.0, -2.1875, 1.0, 2.0, -2.6875, 0.75, 0.75, -1.6875, 0.9375, 1.375, -1.5625, 2.125, 0.6875, -0.4375, 0.6875, -2.375, 0.25, 1.0, -1.9375, 1.0, -0.625, 1.8125, 0.9375, -2.5, 0.9375, -1.625, -6.5625, 1.9375, 2.125, 3.125, 2.25, -2.5625, 0.875, 0.75, -2.5, 1.0625, 1.25, -0.8125, 0.3125, -2.4375, -2.25, 0.625, 1.75, 2.0, 2.1875, -1.1875, -0.0625, -0.625, -0.625, -0.4375, -1.5625, 1.125, 0.9375, 0.625, 0.25, -1.6875, -1.875, 0.6875, 0.3125, 1.1875, 1.0, -1.0, -0.25}},
    {{1, 3, 3, 4}, {1, 1, 4, 3}, {1, 3, 3, 3}, {1, 1}, {1, 1}, "VALID", {},
     {0.9375, 0.625, 1.125, 1.625, 0.9375, 1.0625, 1.1875, 1.3125, 0.9375, 1.5, 1.25, 1.0, 0.9375, 1.9375, 1.3125, 0.6875, -2.5, 0.3125, 0.6875, 1.0625, -2.5, 0.75, 0.75, 0.75, -2.5, 1.1875, 0.8125, 0.4375, 0.9375, -2.5, -1.875, -1.25, 0.9375, -2.0625, -1.8125, -1.5625}},
  };
  for (const BackpropCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "input " << c.input[1] << "x"
                                      << c.input[2] << " " << c.padding);
    std::vector<double> grad = FirstTestInput(NumElementsOf(c.out_backprop));
    std::vector<double> want = c.expected;
    std::vector<int64_t> sizes = c.input, grad_dims = c.out_backprop;
    std::vector<int64_t> pads = c.explicit_paddings;
    if (channels_first) {
      grad = ToChannelsFirst(grad, c.out_backprop);
      want = ToChannelsFirst(want, c.input);
      sizes = FirstDims(c.input);
      grad_dims = FirstDims(c.out_backprop);
      if (!pads.empty()) pads = {0, 0, 0, 0, pads[2], pads[3], pads[4], pads[5]};
    }
    if (spatial_sizes) sizes = {c.input[1], c.input[2]};
    std::map<std::string, AttrValue> attrs = {
        {"strides", AttrInts(WindowAttr(c.strides, channels_first))},
        {"dilations", AttrInts(WindowAttr(c.dilations, channels_first))},
        {"padding", AttrS(c.padding)},
        {"data_format", AttrS(channels_first ? "NCHW" : "NHWC")}};
    if (!pads.empty()) attrs["explicit_paddings"] = AttrInts(pads);
    std::vector<int32_t> sizes32(sizes.begin(), sizes.end());
    auto out = RunOp("Conv2DBackpropInput", attrs,
                     {Tensor::FromVector(sizes32),
                      MakeTensor<T>(SecondTestInput(NumElementsOf(c.filter)), c.filter),
                      MakeTensor<T>(grad, grad_dims)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(
                                     channels_first ? FirstDims(c.input) : c.input));
    ExpectTensorNear<T>((*out)[0], want, tol);
  }
}

TEST(Conv2DBackpropInputTest, MatchesTensorFlow) {
  CheckBackprop<float>(false, false, 1e-6);
  CheckBackprop<float>(true, false, 1e-6);
  CheckBackprop<float>(false, true, 1e-6);
  CheckBackprop<double>(true, true, 1e-12);
  CheckBackprop<bfloat16>(false, false, 2e-2);
}

TEST(Conv2DBackpropInputTest, TransposedConvolutionMatchesDirectLoop) {
  // Keras Conv2DTranspose(16, 3, strides=2, padding="same") on 2x12x12x24.
  const int64_t n = 2, h = 12, w = 12, oc = 24, ic = 16, k = 3, s = 2;
  const int64_t ih = h * s, iw = w * s;
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<double> grad(n * h * w * oc), filter(k * k * ic * oc);
  for (double& v : grad) v = dist(gen);
  for (double& v : filter) v = dist(gen);
  const int64_t pad = std::max<int64_t>(0, (h - 1) * s + k - ih) / 2;
  std::vector<double> want(n * ih * iw * ic, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t iy = y * s + i - pad, ix = x * s + j - pad;
            if (iy < 0 || iy >= ih || ix < 0 || ix >= iw) continue;
            for (int64_t c = 0; c < ic; ++c)
              for (int64_t o = 0; o < oc; ++o)
                want[((b * ih + iy) * iw + ix) * ic + c] +=
                    grad[((b * h + y) * w + x) * oc + o] *
                    filter[((i * k + j) * ic + c) * oc + o];
          }
  auto out = RunOp(
      "Conv2DBackpropInput",
      {{"strides", AttrInts({1, s, s, 1})}, {"padding", AttrS("SAME")}},
      {Tensor::FromVector(std::vector<int32_t>{2, 24, 24, 16}),
       MakeTensor<float>(filter, {k, k, ic, oc}), MakeTensor<float>(grad, {n, h, w, oc})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear<float>((*out)[0], want, 1e-5);
}

// Conv2DBackpropInput on float NHWC (oneDNN's backward data, cut by image
// into one piece per thread) and on float held to the GEMM path
// (GRAPHRUN_CONV2D_LIBRARY=eigen) against the double kernel (GEMM + col2im
// in double) on the same float values. Each input-gradient element sums
// up to filter taps * out_depth products of values in [-1, 1], in another
// order on each path; each float addition rounds by at most 2^-24 of the
// running sum, so the error stays below about 1e-7 * terms (at 400 terms
// 4e-5, against sums of magnitude ~10): the tolerance, relative to
// 1 + |want|.
void CheckInputGradAgainstDouble(const testing::ConvGradCase& c) {
  SCOPED_TRACE(c.Describe());
  const testing::ConvGradSetup setup = testing::SetUpConvGrad(c);
  const std::map<std::string, AttrValue>& attrs = setup.attrs;
  const int64_t oh = setup.out_rows, ow = setup.out_cols;
  const std::vector<double> filter = testing::RandomFloatValues(c.k * c.k * c.ci * c.co, 7);
  const std::vector<double> grad = testing::RandomFloatValues(c.n * oh * ow * c.co, 8);
  const std::vector<int32_t> sizes = {static_cast<int32_t>(c.n), static_cast<int32_t>(c.h),
                                      static_cast<int32_t>(c.w), static_cast<int32_t>(c.ci)};
  auto run = [&](auto zero, int threads) {
    using T = decltype(zero);
    return RunOp("Conv2DBackpropInput", attrs,
                 {Tensor::FromVector(sizes), MakeTensor<T>(filter, {c.k, c.k, c.ci, c.co}),
                  MakeTensor<T>(grad, {c.n, oh, ow, c.co})},
                 threads);
  };
  auto want = run(0.0, 2);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::vector<double> expected = testing::ToDoubles<double>((*want)[0]);
  const double tol = 1e-7 * static_cast<double>(c.k * c.k * c.co);
  auto onednn = run(0.f, c.threads);
  ASSERT_TRUE(onednn.ok()) << onednn.status();
  ExpectTensorNear<float>((*onednn)[0], expected, tol);
  setenv("GRAPHRUN_CONV2D_LIBRARY", "eigen", 1);
  auto gemm = run(0.f, c.threads);
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  ExpectTensorNear<float>((*gemm)[0], expected, tol);
}

TEST(Conv2DBackpropInputTest, OneDnnMatchesDoubleOnTrainingShapes) {
  // The benchmark's shapes (bench/conv_grad_benchmark.cc): more images
  // than threads.
  CheckInputGradAgainstDouble({64, 14, 14, 8, 5, 16, 1, "SAME", 2});
  CheckInputGradAgainstDouble({64, 28, 28, 1, 5, 8, 1, "SAME", 4});
  CheckInputGradAgainstDouble({64, 28, 28, 8, 5, 16, 2, "SAME", 2});
  // Fewer images than threads, and one image.
  CheckInputGradAgainstDouble({3, 28, 28, 8, 5, 16, 2, "SAME", 8});
  CheckInputGradAgainstDouble({1, 14, 14, 8, 5, 16, 1, "SAME", 4});
  // VALID, stride 2 over a size it does not divide (the last input rows
  // and columns meet no window: zero gradient), and EXPLICIT.
  CheckInputGradAgainstDouble({5, 14, 14, 8, 5, 16, 1, "VALID", 2});
  CheckInputGradAgainstDouble({3, 13, 12, 4, 3, 6, 2, "VALID", 4});
  CheckInputGradAgainstDouble({3, 11, 10, 4, 3, 6, 2, "EXPLICIT", 2, {0, 0, 1, 2, 2, 0, 0, 0}});
}

TEST(Conv2DBackpropInputTest, Errors) {
  const Tensor filter = MakeTensor<float>(SecondTestInput(54), {3, 3, 2, 3});
  auto run = [&](std::vector<int32_t> sizes, std::vector<int64_t> grad_dims,
                 std::map<std::string, AttrValue> attrs) {
    attrs.emplace("strides", AttrInts({1, 1, 1, 1}));
    attrs.emplace("padding", AttrS("VALID"));
    return RunOp("Conv2DBackpropInput", attrs,
                 {Tensor::FromVector(sizes), filter,
                  MakeTensor<float>(FirstTestInput(NumElementsOf(grad_dims)), grad_dims)})
        .status();
  };
  absl::Status s = run({1, 5, 5, 2}, {1, 4, 3, 3}, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Size of out_backprop doesn't match"));
  s = run({1, 5, 5, 4}, {1, 3, 3, 3}, {});
  EXPECT_THAT(s.message(), HasSubstr("grouped convolutions are not supported"));
  s = run({1, 5, 5, 2}, {1, 3, 3, 2}, {});
  EXPECT_THAT(s.message(), HasSubstr("output depth"));
  s = run({2, 5, 5, 2}, {1, 3, 3, 3}, {});
  EXPECT_THAT(s.message(), HasSubstr("same batch size"));
  s = run({1, 5, 5}, {1, 3, 3, 3}, {});
  EXPECT_THAT(s.message(), HasSubstr("4 or 2 elements"));
  s = run({1, 5, 5, 2}, {1, 3, 3, 3}, {{"strides", AttrInts({1, 1, 1})}});
  EXPECT_THAT(s.message(), HasSubstr("strides field must specify 4"));
}

TEST(Conv3DTest, Errors) {
  absl::Status s =
      RunOp("Conv3D", {{"strides", AttrInts({1, 1, 1, 1, 1})}, {"padding", AttrS("VALID")}},
            {MakeTensor<float>(FirstTestInput(64), {1, 2, 2, 4, 4}),
             MakeTensor<float>(SecondTestInput(16), {1, 1, 1, 2, 8})})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input and filter must have the same depth"));
  s = RunOp("Conv3D", {{"strides", AttrInts({1, 1, 1, 1, 2})}, {"padding", AttrS("VALID")}},
            {MakeTensor<float>(FirstTestInput(64), {1, 2, 2, 4, 4}),
             MakeTensor<float>(SecondTestInput(16), {1, 1, 1, 4, 4})})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("batch and depth"));
}

TEST(Conv2DTest, DilatedExplicitPaddingNhwcAndNchwMatchTensorFlow) {
  const std::vector<double> want = {
      0.0, 1.8125, 1.1875, 2.0, -0.75, -1.0625, -0.1875, 0.0, 1.8125, 0.875, 0.875, -1.5625, -0.125, -0.3125, 1.9375, -1.8125, 3.3125, -2.125, -0.0625, -0.625, 2.0625, 2.3125, -0.3125, -0.5, -0.5, -0.3125, 2.3125, -1.875, 4.1875, -5.1875, 1.125, -1.625, 4.5625, 0.6875, -1.9375, 1.9375, 3.6875, -2.25, -4.125, -2.25, 4.3125, -5.375, -1.0625, -0.75, 2.0, 1.1875, 1.8125, 0.0, 3.3125, -2.125, -4.3125, -0.625, 2.0625, -3.375, -3.1875, 0.75, 3.0625, -1.625, -1.9375, 2.625, 2.6875, -1.875, -4.0};
  const std::vector<int64_t> in_dims = {1, 6, 7, 2}, out_dims = {1, 3, 7, 3};
  const Tensor filter = MakeTensor<float>(SecondTestInput(36), {3, 2, 2, 3});
  for (bool channels_first : {false, true}) {
    SCOPED_TRACE(channels_first ? "NCHW" : "NHWC");
    std::vector<double> in = FirstTestInput(NumElementsOf(in_dims));
    std::vector<double> expected = want;
    std::vector<int64_t> pads = {0, 0, 1, 2, 2, 0, 0, 0};
    if (channels_first) {
      in = ToChannelsFirst(in, in_dims);
      expected = ToChannelsFirst(want, out_dims);
      pads = {0, 0, 0, 0, 1, 2, 2, 0};
    }
    auto out = RunOp(
        "Conv2D",
        {{"strides", AttrInts(WindowAttr({2, 1}, channels_first))},
         {"dilations", AttrInts(WindowAttr({2, 2}, channels_first))},
         {"padding", AttrS("EXPLICIT")},
         {"explicit_paddings", AttrInts(pads)},
         {"data_format", AttrS(channels_first ? "NCHW" : "NHWC")}},
        {MakeTensor<float>(in, channels_first ? FirstDims(in_dims) : in_dims), filter});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(
                                     channels_first ? FirstDims(out_dims) : out_dims));
    ExpectTensorNear<float>((*out)[0], expected, 1e-6);
  }
}

struct Pool3DCase {
  std::string op;
  std::vector<int64_t> ksize, strides;
  std::string padding;
  std::vector<int64_t> out;
  std::vector<double> expected;
};

template <typename T>
void CheckPool3D(bool channels_first, double tol) {
  const std::vector<Pool3DCase> cases = {
    {"MaxPool3D", {2, 2, 2}, {2, 2, 2}, "VALID", {2, 2, 2, 1, 2},
     {0.5, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 0.5, 0.5, 1.25, 1.25, 1.0, 1.0, 1.25}},
    {"MaxPool3D", {2, 2, 2}, {2, 2, 2}, "SAME", {2, 2, 3, 2, 2},
     {0.5, 1.25, 1.25, 0.25, 1.25, 1.25, 0.25, 1.25, 1.25, 0.25, -0.75, 1.0, 1.0, 1.25, 1.25, 0.75, 1.25, 1.25, 0.75, -0.25, 1.0, 0.75, -0.25, 1.25, 1.25, 0.5, -0.5, 1.25, 0.5, 1.25, 1.25, 0.25, 1.25, 1.25, 0.25, -0.75, 1.25, 1.0, 0.0, 1.25, 1.0, 1.25, 1.25, 0.75, 0.0, 1.0, 0.75, -0.25}},
    {"MaxPool3D", {3, 3, 3}, {1, 1, 1}, "SAME", {2, 4, 5, 3, 2},
     {0.5, 1.25, 1.25, 1.25, 1.25, 0.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 0.5, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 0.75, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 0.75, 1.0, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 1.25, 0.25, 1.25, 1.25, 0.5, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 0.75, 1.25, 1.25, 0.75, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 0.5, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.0, 1.25, 1.25, 1.25, 1.25, 0.75, 0.5, 1.25, 1.25, 1.25, 1.25, 0.25}},
    {"MaxPool3D", {1, 3, 2}, {2, 1, 1}, "VALID", {2, 2, 3, 2, 2},
     {1.25, 1.25, 1.0, 1.0, 1.25, 1.0, 0.5, 1.25, 1.25, 1.0, 1.0, 1.25, 0.75, 1.25, 1.0, 0.5, 1.25, 1.25, 1.0, 1.0, 1.25, 1.0, 0.5, 1.25, 1.25, 1.25, 1.25, 1.0, 0.75, 1.25, 1.0, 0.5, 1.25, 1.25, 1.0, 1.0, 1.25, 0.75, 1.25, 1.0, 1.25, 1.25, 1.25, 1.0, 0.75, 1.25, 1.0, 0.5}},
    {"AvgPool3D", {2, 2, 2}, {2, 2, 2}, "VALID", {2, 2, 2, 1, 2},
     {-0.25, -0.21875, -0.21875, 0.5, 0.25, -0.40625, -0.40625, 0.3125, 0.40625, -0.25, -0.25, -0.21875, 0.21875, 0.25, 0.25, -0.40625}},
    {"AvgPool3D", {2, 2, 2}, {2, 2, 2}, "SAME", {2, 2, 3, 2, 2},
     {-0.25, -0.21875, 0.875, -0.125, -0.21875, 0.5, -0.125, -0.4375, 0.75, -0.25, -0.875, 0.875, 0.25, -0.40625, 0.0, 0.375, -0.40625, 0.3125, 0.375, -0.625, -0.125, 0.25, -0.375, 0.0, 0.40625, -0.25, -0.875, 0.875, -0.25, -0.21875, 0.875, -0.125, -0.3125, 0.75, 0.125, -0.875, 0.21875, 0.25, -0.375, 0.0, 0.25, -0.40625, 0.0, 0.375, -0.5, -0.125, 0.625, -0.375}},
    {"AvgPool3D", {3, 3, 3}, {1, 1, 1}, "SAME", {2, 4, 5, 3, 2},
     {-0.25, -0.21875, 0.125, -0.1875, 0.5, -0.5, -0.2708333432674408, 0.1041666641831398, 0.02777777798473835, -0.0555555559694767, 0.25, -0.2916666567325592, -0.3125, 0.2916666567325592, -0.1666666716337204, 0.0555555559694767, -0.25, -0.1041666641831398, 0.1041666641831398, 0.25, -0.0555555559694767, 0.1666666716337204, -0.2916666567325592, 0.3125, 0.3125, 0.0, 0.0, 0.1458333283662796, -0.3125, 0.40625, -0.125, -0.2083333283662796, 0.0972222238779068, -0.1388888955116272, 0.3958333432674408, -0.375, -0.2222222238779068, 0.0, 0.0, -0.0833333358168602, 0.2222222238779068, -0.3194444477558136, -0.2638888955116272, 0.2638888955116272, -0.09259258955717087, 0.02777777798473835, -0.125, -0.2083333283662796, 0.0, 0.2222222238779068, -0.0833333358168602, 0.1388888955116272, -0.3194444477558136, 0.2083333283662796, 0.2083333283662796, 0.125, -0.02777777798473835, 0.1944444477558136, -0.4166666567325592, 0.4166666567325592, 0.125, -0.4166666567325592, 0.1944444477558136, -0.1944444477558136, 0.4166666567325592, -0.125, -0.125, -0.2083333283662796, 0.046296294778585434, -0.1388888955116272, 0.3194444477558136, -0.2222222238779068, -0.3194444477558136, 0.2083333283662796, -0.046296294778585434, -0.02777777798473835, 0.125, -0.2638888955116272, -0.2083333283662796, 0.3194444477558136, -0.1388888955116272, 0.0833333358168602, -0.2222222238779068, 0.0, 0.0, 0.375, -0.0833333358168602, 0.1388888955116272, -0.3958333432674408, 0.2083333283662796, 0.25, -0.40625, 0.1666666716337204, -0.1458333283662796, 0.3125, 0.0, 0.0, -0.3125, 0.0694444477558136, -0.1666666716337204, 0.2916666567325592, -0.25, -0.2708333432674408, 0.1041666641831398, 0.02777777798473835, -0.0555555559694767, 0.25, -0.2916666567325592, -0.3125, 0.2916666567325592, -0.1666666716337204, 0.0555555559694767, -0.25, -0.1041666641831398, -0.21875, 0.5, -0.1875, 0.1875, -0.5, 0.21875, 0.40625, -0.25, -0.02083333395421505, 0.125, -0.21875, 0.5, 0.2708333432674408, -0.2708333432674408, 0.1111111119389534, 0.02777777798473835, 0.1041666641831398, 0.25, 0.0, -0.3125, 0.0694444477558136, -0.1666666716337204, 0.2916666567325592, -0.25, -0.2708333432674408, 0.1041666641831398, 0.02777777798473835, -0.0555555559694767, 0.25, -0.2916666567325592, -0.40625, 0.3125, -0.1458333283662796, 0.0, 0.0, -0.3125, 0.4166666567325592, -0.125, 0.02777777798473835, 0.0972222238779068, -0.2083333283662796, 0.3958333432674408, 0.3194444477558136, -0.2222222238779068, 0.0833333358168602, 0.0, 0.0, 0.2222222238779068, 0.125, -0.2638888955116272, 0.09259258955717087, -0.09259258955717087, 0.2638888955116272, -0.125, -0.2222222238779068, 0.0, 0.0, -0.0833333358168602, 0.2222222238779068, -0.3194444477558136, -0.3958333432674408, 0.2083333283662796, -0.0972222238779068, -0.02777777798473835, 0.125, -0.4166666567325592, 0.2083333283662796, 0.125, -0.02777777798473835, 0.1944444477558136, -0.4166666567325592, 0.4166666567325592, 0.2638888955116272, -0.125, 0.02777777798473835, 0.046296294778585434, -0.2083333283662796, 0.3194444477558136, 0.2222222238779068, -0.3194444477558136, 0.1388888955116272, -0.046296294778585434, 0.2083333283662796, 0.125, -0.125, -0.2083333283662796, 0.046296294778585434, -0.1388888955116272, 0.3194444477558136, -0.2222222238779068, -0.375, 0.0, 0.0, -0.0833333358168602, 0.375, -0.3958333432674408, 0.21875, 0.25, 0.02083333395421505, 0.1666666716337204, -0.40625, 0.3125, 0.3125, 0.0, 0.0, 0.0694444477558136, -0.3125, 0.2916666567325592, 0.2708333432674408, -0.2708333432674408, 0.1111111119389534, 0.02777777798473835, 0.1041666641831398, 0.25, 0.0, -0.3125, 0.0694444477558136, -0.1666666716337204, 0.2916666567325592, -0.25, -0.25, -0.21875, 0.125, -0.1875, 0.5, -0.5}},
    {"AvgPool3D", {1, 3, 2}, {2, 1, 1}, "VALID", {2, 2, 3, 2, 2},
     {-0.1666666716337204, 0.2083333283662796, 0.125, -0.4166666567325592, -0.2083333283662796, 0.1666666716337204, -0.375, 0.0, 0.2083333283662796, 0.125, -0.4166666567325592, 0.4166666567325592, -0.125, -0.2083333283662796, 0.1666666716337204, -0.375, -0.1666666716337204, 0.2083333283662796, 0.125, -0.4166666567325592, -0.2083333283662796, 0.1666666716337204, -0.375, 0.0, 0.375, -0.1666666716337204, 0.2083333283662796, 0.125, -0.125, -0.2083333283662796, 0.1666666716337204, -0.375, -0.1666666716337204, 0.2083333283662796, 0.125, -0.4166666567325592, 0.4166666567325592, -0.125, -0.2083333283662796, 0.1666666716337204, 0.375, -0.1666666716337204, 0.2083333283662796, 0.125, -0.125, -0.2083333283662796, 0.1666666716337204, -0.375}},
  };
  const std::vector<int64_t> in_dims = {2, 4, 5, 3, 2};
  for (const Pool3DCase& c : cases) {
    if (c.op == "MaxPool3D" && std::is_same_v<T, double>) continue;
    SCOPED_TRACE(::testing::Message() << c.op << " " << c.ksize[0] << "x"
                                      << c.ksize[1] << "x" << c.ksize[2] << " "
                                      << c.padding);
    std::vector<double> in = FirstTestInput(NumElementsOf(in_dims));
    std::vector<double> want = c.expected;
    std::vector<int64_t> dims = in_dims, out_dims = c.out;
    if (channels_first) {
      in = ToChannelsFirst(in, in_dims);
      want = ToChannelsFirst(want, c.out);
      dims = FirstDims(in_dims);
      out_dims = FirstDims(c.out);
    }
    auto out = RunOp(c.op,
                     {{"ksize", AttrInts(WindowAttr(c.ksize, channels_first))},
                      {"strides", AttrInts(WindowAttr(c.strides, channels_first))},
                      {"padding", AttrS(c.padding)},
                      {"data_format", AttrS(channels_first ? "NCDHW" : "NDHWC")}},
                     {MakeTensor<T>(in, dims)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(out_dims));
    ExpectTensorNear<T>((*out)[0], want, tol);
  }
}

TEST(Pool3DTest, MatchesTensorFlow) {
  CheckPool3D<float>(false, 1e-6);
  CheckPool3D<float>(true, 1e-6);
  CheckPool3D<double>(false, 1e-7);
  CheckPool3D<half>(false, 2e-3);
}

TEST(Pool3DTest, Errors) {
  const Tensor in = MakeTensor<float>(FirstTestInput(16), {1, 2, 2, 2, 2});
  absl::Status s = RunOp("MaxPool3D",
                         {{"ksize", AttrInts({1, 1, 1, 1, 2})},
                          {"strides", AttrInts({1, 1, 1, 1, 1})},
                          {"padding", AttrS("VALID")}},
                         {in})
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("depth dimension"));
  s = RunOp("AvgPool3D",
            {{"ksize", AttrInts({1, 2, 2})},
             {"strides", AttrInts({1, 1, 1, 1, 1})},
             {"padding", AttrS("VALID")}},
            {in})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("ksize"));
}

}  // namespace
}  // namespace graphrun
