// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
// against TensorFlow's outputs (depthwise_conv_grad_test_data.h, made by
// make_depthwise_conv_grad_test_data.py; the dilated cases are TensorFlow's
// gradient of the dilated convolution, see there): strides (unequal too),
// dilations, SAME / VALID / EXPLICIT padding, channel multipliers; NCHW,
// double, half and bfloat16 against the same values; inputs past the
// parallel threshold against direct sums in double; bad inputs and the
// shape functions.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/testing/shape_test_util.h"
#include "gtest/gtest.h"
#include "kernels/cpu/depthwise_conv_grad_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::ExpectAllNear;
using ::graphrun::testing::ExpectError;
using ::graphrun::testing::MakeTensor;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::ShapeRun;
using ::graphrun::testing::ToDoubles;
namespace data = ::graphrun::depthwise_grad_test;

constexpr char kInputGrad[] = "DepthwiseConv2dNativeBackpropInput";
constexpr char kFilterGrad[] = "DepthwiseConv2dNativeBackpropFilter";

std::vector<double> Doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// NHWC values and dims as NCHW.
std::vector<double> ToNchw(const std::vector<double>& v, const std::vector<int64_t>& d) {
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t y = 0; y < d[1]; ++y)
      for (int64_t x = 0; x < d[2]; ++x)
        for (int64_t c = 0; c < d[3]; ++c)
          out[((b * d[3] + c) * d[1] + y) * d[2] + x] = v[((b * d[1] + y) * d[2] + x) * d[3] + c];
  return out;
}
std::vector<int64_t> NchwDims(const std::vector<int64_t>& d) { return {d[0], d[3], d[1], d[2]}; }

Tensor Sizes(const std::vector<int64_t>& dims) {
  return Tensor::FromVector<int32_t>(std::vector<int32_t>(dims.begin(), dims.end()),
                                     TensorShape({4}));
}

std::map<std::string, AttrValue> Attrs(const data::DepthwiseGradCase& c, bool nchw) {
  const int64_t sr = c.stride_rows, sc = c.stride_cols, d = c.dilation;
  std::map<std::string, AttrValue> attrs = {
      {"strides", AttrInts(nchw ? std::vector<int64_t>{1, 1, sr, sc}
                                : std::vector<int64_t>{1, sr, sc, 1})},
      {"dilations", AttrInts(nchw ? std::vector<int64_t>{1, 1, d, d}
                                  : std::vector<int64_t>{1, d, d, 1})},
      {"padding", AttrS(c.padding)},
      {"data_format", AttrS(nchw ? "NCHW" : "NHWC")}};
  if (!c.explicit_paddings.empty()) {
    const std::vector<int64_t>& p = c.explicit_paddings;
    attrs["explicit_paddings"] =
        AttrInts(nchw ? std::vector<int64_t>{0, 0, 0, 0, p[2], p[3], p[4], p[5]} : p);
  }
  return attrs;
}

// Each case's two gradients, computed in T, against TensorFlow's float
// values within tol * (1 + |value|).
template <typename T>
void CheckCases(bool nchw, double tol) {
  for (const data::DepthwiseGradCase& c : data::kDepthwiseGradCases) {
    SCOPED_TRACE(::testing::Message() << c.name << (nchw ? " NCHW " : " NHWC ")
                                      << DataTypeString(DataTypeToEnum<T>::value));
    std::vector<double> input = Doubles(c.input), grad = Doubles(c.grad);
    std::vector<double> want_input = Doubles(c.input_backprop);
    std::vector<int64_t> input_dims = c.input_dims, grad_dims = c.grad_dims;
    if (nchw) {
      input = ToNchw(input, c.input_dims);
      grad = ToNchw(grad, c.grad_dims);
      want_input = ToNchw(want_input, c.input_dims);
      input_dims = NchwDims(c.input_dims);
      grad_dims = NchwDims(c.grad_dims);
    }
    const Tensor g = MakeTensor<T>(grad, grad_dims);
    auto dx = RunOp(kInputGrad, Attrs(c, nchw),
                    {Sizes(input_dims), MakeTensor<T>(Doubles(c.filter), c.filter_dims), g});
    ASSERT_TRUE(dx.ok()) << dx.status();
    ASSERT_EQ((*dx)[0].dtype(), DataTypeToEnum<T>::value);
    ASSERT_EQ((*dx)[0].shape(), testing::ShapeOf(input_dims));
    ExpectAllNear(ToDoubles<T>((*dx)[0]), want_input, tol, "input backprop");
    auto df = RunOp(kFilterGrad, Attrs(c, nchw),
                    {MakeTensor<T>(input, input_dims), Sizes(c.filter_dims), g});
    ASSERT_TRUE(df.ok()) << df.status();
    ASSERT_EQ((*df)[0].shape(), testing::ShapeOf(c.filter_dims));
    ExpectAllNear(ToDoubles<T>((*df)[0]), Doubles(c.filter_backprop), tol, "filter backprop");
  }
}

// Sums of at most 50 products of floats in [-1, 1], added in another order
// than TensorFlow's: a few units of the float's last place.
TEST(DepthwiseConvGradTest, MatchesTensorFlowNhwc) { CheckCases<float>(false, 1e-5); }
TEST(DepthwiseConvGradTest, MatchesTensorFlowNchw) { CheckCases<float>(true, 1e-5); }
TEST(DepthwiseConvGradTest, Double) { CheckCases<double>(false, 1e-5); }
TEST(DepthwiseConvGradTest, HalfAndBfloat16) {
  // The inputs rounded to the type (2^-11 and 2^-8 relative), summed in
  // float and rounded once.
  CheckCases<half>(false, 2e-2);
  CheckCases<bfloat16>(true, 1.5e-1);
}

// Both gradients in double by direct sums, NHWC, over the same window
// geometry (stride, dilation, SAME).
struct Big {
  int64_t batch, rows, cols, depth, k, mult, stride, dilation;
};

void CheckAgainstDirectSums(const Big& s) {
  const int64_t eff = (s.k - 1) * s.dilation + 1;
  const int64_t out_rows = (s.rows + s.stride - 1) / s.stride;
  const int64_t out_cols = (s.cols + s.stride - 1) / s.stride;
  const int64_t pad_r = std::max<int64_t>(0, (out_rows - 1) * s.stride + eff - s.rows) / 2;
  const int64_t pad_c = std::max<int64_t>(0, (out_cols - 1) * s.stride + eff - s.cols) / 2;
  const int64_t od = s.depth * s.mult;
  const std::vector<int64_t> in_dims = {s.batch, s.rows, s.cols, s.depth};
  const std::vector<int64_t> f_dims = {s.k, s.k, s.depth, s.mult};
  const std::vector<int64_t> g_dims = {s.batch, out_rows, out_cols, od};
  auto floats = [](int64_t n, int seed) {
    std::vector<double> v = testing::RandomDoubles(n, -1, 1, seed);
    for (double& e : v) e = static_cast<float>(e);
    return v;
  };
  const std::vector<double> in = floats(testing::NumElementsOf(in_dims), 1);
  const std::vector<double> f = floats(testing::NumElementsOf(f_dims), 2);
  const std::vector<double> g = floats(testing::NumElementsOf(g_dims), 3);
  std::vector<double> want_dx(in.size(), 0.0), want_df(f.size(), 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t y = 0; y < out_rows; ++y)
      for (int64_t x = 0; x < out_cols; ++x)
        for (int64_t i = 0; i < s.k; ++i)
          for (int64_t j = 0; j < s.k; ++j) {
            const int64_t r = y * s.stride - pad_r + i * s.dilation;
            const int64_t c = x * s.stride - pad_c + j * s.dilation;
            if (r < 0 || r >= s.rows || c < 0 || c >= s.cols) continue;
            for (int64_t ch = 0; ch < s.depth; ++ch)
              for (int64_t q = 0; q < s.mult; ++q) {
                const int64_t pi = ((b * s.rows + r) * s.cols + c) * s.depth + ch;
                const int64_t fi = ((i * s.k + j) * s.depth + ch) * s.mult + q;
                const double gv = g[((b * out_rows + y) * out_cols + x) * od + ch * s.mult + q];
                want_dx[pi] += gv * f[fi];
                want_df[fi] += gv * in[pi];
              }
          }
  const std::map<std::string, AttrValue> attrs = {
      {"strides", AttrInts({1, s.stride, s.stride, 1})},
      {"dilations", AttrInts({1, s.dilation, s.dilation, 1})},
      {"padding", AttrS("SAME")}};
  const Tensor gt = MakeTensor<float>(g, g_dims);
  auto dx = RunOp(kInputGrad, attrs, {Sizes(in_dims), MakeTensor<float>(f, f_dims), gt}, 4);
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectAllNear(ToDoubles<float>((*dx)[0]), want_dx, 1e-5, "input backprop");
  auto df = RunOp(kFilterGrad, attrs, {MakeTensor<float>(in, in_dims), Sizes(f_dims), gt}, 4);
  ASSERT_TRUE(df.ok()) << df.status();
  // Each filter element sums batch * out_rows * out_cols float products.
  const double terms = static_cast<double>(s.batch * out_rows * out_cols);
  ExpectAllNear(ToDoubles<float>((*df)[0]), want_df, 1e-7 * terms, "filter backprop");
}

TEST(DepthwiseConvGradTest, LargeInputsMatchDirectSums) {
  CheckAgainstDirectSums({4, 20, 20, 32, 3, 1, 1, 1});
  CheckAgainstDirectSums({3, 17, 15, 12, 3, 2, 2, 1});
  CheckAgainstDirectSums({2, 16, 16, 24, 3, 1, 1, 2});
}

TEST(DepthwiseConvGradTest, BadInputs) {
  const std::map<std::string, AttrValue> attrs = {{"strides", AttrInts({1, 1, 1, 1})},
                                                  {"padding", AttrS("VALID")}};
  const Tensor filter = MakeTensor<float>(std::vector<double>(18), {3, 3, 2, 1});
  const Tensor input = MakeTensor<float>(std::vector<double>(50), {1, 5, 5, 2});
  const Tensor grad = MakeTensor<float>(std::vector<double>(18), {1, 3, 3, 2});
  const Tensor wrong_rows = MakeTensor<float>(std::vector<double>(24), {1, 4, 3, 2});
  ExpectError(RunOp(kInputGrad, attrs, {Sizes({1, 5, 5, 2}), filter, wrong_rows}),
              absl::StatusCode::kInvalidArgument,
              "DepthwiseConv2DBackpropInput: Number of rows of out_backprop doesn't match "
              "computed: actual = 4, computed = 3");
  ExpectError(RunOp(kFilterGrad, attrs, {input, Sizes({3, 3, 2, 1}), wrong_rows}),
              absl::StatusCode::kInvalidArgument,
              "DepthwiseConv2DBackpropFilter: Number of rows of out_backprop doesn't match");
  ExpectError(RunOp(kInputGrad, attrs, {Sizes({1, 5, 5, 3}), filter, grad}),
              absl::StatusCode::kInvalidArgument,
              "DepthwiseConv2DBackpropInput: input and filter must have the same in_depth");
  ExpectError(RunOp(kFilterGrad, attrs, {input, Sizes({3, 3, 2, 2}), grad}),
              absl::StatusCode::kInvalidArgument,
              "depth_multiplier * in_depth not equal to out_depth");
  ExpectError(RunOp(kInputGrad, attrs, {Sizes({2, 5, 5, 2}), filter, grad}),
              absl::StatusCode::kInvalidArgument,
              "input and out_backprop must have the same batch size");
  ExpectError(RunOp(kInputGrad, attrs,
                    {Tensor::FromVector<int32_t>({1, 5, 5, 2}, TensorShape({2, 2})), filter, grad}),
              absl::StatusCode::kInvalidArgument, "input_sizes input must be 1-dim, not 2");
  ExpectError(RunOp(kInputGrad, attrs, {Sizes({1, -5, 5, 2}), filter, grad}),
              absl::StatusCode::kInvalidArgument, "Dimension 1 of input_sizes must be >= 0");
  ExpectError(RunOp(kFilterGrad, attrs,
                    {input, Tensor::FromVector<int32_t>({3, 3, 2}, TensorShape({3})), grad}),
              absl::StatusCode::kInvalidArgument,
              "DepthwiseConv2DBackpropFilter: filter must be 4-dimensional");
  ExpectError(RunOp(kInputGrad,
                    {{"strides", AttrInts({1, 1, 1, 2})}, {"padding", AttrS("VALID")}},
                    {Sizes({1, 5, 5, 2}), filter, grad}),
              absl::StatusCode::kInvalidArgument,
              "strides in the batch and depth dimensions");
}

TEST(DepthwiseConvGradTest, EmptyBatch) {
  const std::map<std::string, AttrValue> attrs = {{"strides", AttrInts({1, 1, 1, 1})},
                                                  {"padding", AttrS("SAME")}};
  const Tensor grad = MakeTensor<float>({}, {0, 4, 4, 2});
  auto df = RunOp(kFilterGrad, attrs,
                  {MakeTensor<float>({}, {0, 4, 4, 2}), Sizes({3, 3, 2, 1}), grad});
  ASSERT_TRUE(df.ok()) << df.status();
  EXPECT_EQ(ToDoubles<float>((*df)[0]), std::vector<double>(18, 0.0));
  auto dx = RunOp(kInputGrad, attrs,
                  {Sizes({0, 4, 4, 2}), MakeTensor<float>(std::vector<double>(18), {3, 3, 2, 1}),
                   grad});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_EQ((*dx)[0].shape(), TensorShape({0, 4, 4, 2}));
}

TEST(DepthwiseConvGradTest, ShapeFunctions) {
  EXPECT_EQ(ShapeRun(kInputGrad)
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("SAME"))
                .In(Sizes({2, 7, 6, 3}))
                .In(PartialShape({3, 3, 3, 2}))
                .In(PartialShape({2, 7, 6, 6}))
                .Str(),
            "[2,7,6,3]");
  EXPECT_EQ(ShapeRun(kFilterGrad)
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("SAME"))
                .In(PartialShape({2, 7, 6, 3}))
                .In(Sizes({3, 3, 3, 2}))
                .In(PartialShape({2, 7, 6, 6}))
                .Str(),
            "[3,3,3,2]");
  EXPECT_EQ(ShapeRun(kFilterGrad)
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("SAME"))
                .In(PartialShape({2, 7, 6, 3}))
                .In(PartialShape({4}))
                .In(PartialShape({2, 7, 6, 6}))
                .Str(),
            "[?,?,?,?]");
  EXPECT_NE(ShapeRun(kInputGrad)
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("SAME"))
                .In(Tensor::FromVector<int32_t>({7, 6, 3}, TensorShape({3})))
                .In(PartialShape({3, 3, 3, 2}))
                .In(PartialShape({2, 7, 6, 6}))
                .Error()
                .find("Shape must be rank 4 but is rank 3"),
            std::string::npos);
}

}  // namespace
}  // namespace graphrun
