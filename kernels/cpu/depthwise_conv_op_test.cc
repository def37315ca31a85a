// Expected values: TensorFlow 2.21, checked by make_depthwise_conv_op_test_values.py
// beside this file.
// DepthwiseConv2dNative against values from TensorFlow 2.21 (strides,
// dilations, SAME / VALID / EXPLICIT padding, channel multipliers), NCHW
// and 16-bit types against the same values, bigger random inputs against a
// direct loop in double, and errors at the kernel and at import.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
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

// NHWC values as NCHW, and back.
std::vector<double> ToNchw(const std::vector<double>& v,
                           const std::vector<int64_t>& d) {
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t y = 0; y < d[1]; ++y)
      for (int64_t x = 0; x < d[2]; ++x)
        for (int64_t c = 0; c < d[3]; ++c)
          out[((b * d[3] + c) * d[1] + y) * d[2] + x] =
              v[((b * d[1] + y) * d[2] + x) * d[3] + c];
  return out;
}

struct Case {
  std::vector<int64_t> input, filter, strides, dilations;
  std::string padding;
  std::vector<int64_t> explicit_paddings, out;
  std::vector<double> expected;
};

const std::vector<Case>& Cases() {
  static const auto* const cases = new std::vector<Case>{
    {{1, 4, 4, 2}, {3, 3, 2, 1}, {1, 1}, {1, 1}, "VALID", {}, {1, 2, 2, 2},
     {3.8125, 0.25, -1.125, -0.5, -0.125, 0.0, 1.8125, -2.125}},
    {{2, 5, 5, 3}, {3, 3, 3, 2}, {2, 2}, {1, 1}, "SAME", {}, {2, 3, 3, 6},
     {-0.6875, 2.375, -1.6875, 0.8125, 0.875, 0.8125, 1.8125, 1.5625, 0.875, -0.625, 0.1875, -2.75, 1.625, 1.125, 1.125, 0.6875, -0.3125, 0.3125, -0.5, 2.75, 0.875, 0.875, 0.3125, 0.3125, 0.8125, 1.875, 0.625, -1.6875, -2.0, 2.0625, 2.375, -0.8125, 0.9375, 0.375, 1.9375, -1.3125, 0.3125, 0.375, 1.3125, -1.1875, 0.0625, -0.5625, -0.8125, 0.9375, -2.8125, 1.5625, -2.875, 3.3125, 0.9375, -0.3125, 0.1875, -0.8125, 1.8125, -2.1875, 1.0625, -2.6875, 0.9375, -0.3125, 0.1875, -0.8125, -1.9375, -1.5625, 0.8125, 2.0, 0.0, -0.25, -1.5625, 0.0625, -0.1875, -1.5625, 1.25, -2.5, -0.5, 2.0, 0.8125, -1.375, 1.125, -1.3125, 1.75, -0.375, 1.75, 1.75, 1.0, -1.1875, -1.0625, -0.5625, -1.9375, 0.5625, -1.4375, -0.5625, -0.0625, 1.125, -0.9375, -0.3125, 1.375, -0.1875, 2.25, -2.25, 0.125, -1.75, 1.3125, -1.8125, -1.9375, -0.0625, -2.5625, 1.0, -0.8125, -1.25}},
    {{1, 6, 6, 2}, {3, 3, 2, 1}, {1, 1}, {2, 2}, "SAME", {}, {1, 6, 6, 2},
     {2.75, -0.25, -1.5625, -1.1875, -1.4375, 3.5, 1.5, -1.75, -0.75, -1.875, -0.4375, 2.5, -1.8125, 1.6875, 2.8125, -0.625, -2.375, -1.1875, -1.5, 1.8125, 1.8125, 1.0, -0.625, -1.5, -1.6875, -2.125, -1.9375, 0.75, 3.25, 0.125, 0.375, -1.3125, -2.0, 3.4375, 1.0625, 1.0625, 4.375, 0.6875, -2.0625, -0.5625, -3.6875, 1.8125, 3.0625, -0.3125, -2.1875, -1.875, -1.875, -2.1875, -1.5625, 0.0625, 2.875, 2.3125, 0.5625, -0.25, -2.3125, 0.6875, 0.6875, -0.8125, 2.5, -0.4375, -2.4375, -0.875, -2.125, -0.6875, 3.25, -2.1875, 0.375, 0.8125, -1.5, -0.625, 1.0, 1.8125}},
    {{1, 5, 4, 2}, {2, 3, 2, 2}, {1, 2}, {1, 1}, "EXPLICIT", {0, 0, 1, 2, 0, 1, 0, 0}, {1, 7, 2, 4},
     {0.4375, -0.25, 1.125, 1.75, 1.5, -1.75, -1.125, -0.1875, 0.4375, -0.8125, 2.5625, -2.75, -0.25, -0.4375, -1.6875, 0.8125, -2.5, 1.1875, -0.5625, -0.125, -2.5, 2.4375, -1.8125, 1.125, 0.0625, -0.25, -0.25, 0.4375, 0.75, 1.875, 2.1875, 2.125, -0.125, -1.0, 0.0625, 1.0, 0.5625, 1.3125, 2.75, -0.3125, 0.75, -2.0625, 0.8125, 0.125, 0.9375, 0.0, 1.5, -1.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}},
    {{1, 7, 7, 3}, {3, 2, 3, 1}, {2, 1}, {2, 3}, "VALID", {}, {1, 2, 4, 3},
     {2.625, 1.4375, 2.5625, -0.125, 1.1875, 1.5, -0.125, -1.125, 1.8125, -0.125, -1.375, 2.125, -0.125, -1.375, 2.125, -3.5625, -1.625, -4.4375, -3.5625, -1.1875, -4.125, -0.125, -1.4375, -3.8125}},
  };
  return *cases;
}

std::map<std::string, AttrValue> Attrs(const Case& c, bool nchw) {
  std::map<std::string, AttrValue> attrs = {
      {"strides", AttrInts(nchw ? std::vector<int64_t>{1, 1, c.strides[0],
                                                        c.strides[1]}
                                : std::vector<int64_t>{1, c.strides[0],
                                                       c.strides[1], 1})},
      {"dilations",
       AttrInts(nchw ? std::vector<int64_t>{1, 1, c.dilations[0], c.dilations[1]}
                     : std::vector<int64_t>{1, c.dilations[0], c.dilations[1], 1})},
      {"padding", AttrS(c.padding)},
      {"data_format", AttrS(nchw ? "NCHW" : "NHWC")}};
  if (!c.explicit_paddings.empty()) {
    const auto& p = c.explicit_paddings;
    attrs["explicit_paddings"] = AttrInts(
        nchw ? std::vector<int64_t>{0, 0, 0, 0, p[2], p[3], p[4], p[5]} : p);
  }
  return attrs;
}

template <typename T>
void CheckCases(bool nchw, double tolerance) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(::testing::Message() << "input " << c.input[1] << "x"
                                      << c.input[2] << " padding " << c.padding
                                      << (nchw ? " NCHW" : " NHWC"));
    std::vector<double> in = FirstTestInput(NumElementsOf(c.input));
    std::vector<int64_t> in_dims = c.input, out_dims = c.out;
    std::vector<double> want = c.expected;
    if (nchw) {
      in = ToNchw(in, c.input);
      want = ToNchw(want, c.out);
      in_dims = {c.input[0], c.input[3], c.input[1], c.input[2]};
      out_dims = {c.out[0], c.out[3], c.out[1], c.out[2]};
    }
    auto out = RunOp("DepthwiseConv2dNative", Attrs(c, nchw),
                     {MakeTensor<T>(in, in_dims),
                      MakeTensor<T>(SecondTestInput(NumElementsOf(c.filter)), c.filter)});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.shape(), *TensorShape::FromDims(out_dims));
    ExpectTensorNear<T>(y, want, tolerance);
  }
}

// Float NHWC runs on oneDNN by default and on the direct loop with
// GRAPHRUN_CONV2D_LIBRARY=eigen: both against the same values.
class DepthwiseLibraryTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { setenv("GRAPHRUN_CONV2D_LIBRARY", GetParam(), 1); }
  void TearDown() override { unsetenv("GRAPHRUN_CONV2D_LIBRARY"); }
};
INSTANTIATE_TEST_SUITE_P(Libraries, DepthwiseLibraryTest, ::testing::Values("auto", "eigen"));

TEST_P(DepthwiseLibraryTest, MatchesTensorFlowNhwc) { CheckCases<float>(false, 1e-6); }
TEST(DepthwiseConvTest, MatchesTensorFlowNchw) { CheckCases<float>(true, 1e-6); }
TEST(DepthwiseConvTest, DoubleHalfBfloat16) {
  CheckCases<double>(false, 1e-12);
  CheckCases<half>(false, 1e-3);
  CheckCases<bfloat16>(true, 2e-2);
}

// Direct depthwise convolution in double, NHWC; SAME or VALID.
std::vector<double> Naive(const std::vector<double>& in,
                          const std::vector<int64_t>& id,
                          const std::vector<double>& f,
                          const std::vector<int64_t>& fd, int64_t stride,
                          int64_t dilation, bool same,
                          std::vector<int64_t>* od) {
  auto window = [&](int64_t n, int64_t k, int64_t* pad) {
    const int64_t eff = (k - 1) * dilation + 1;
    if (!same) {
      *pad = 0;
      return (n - eff + stride) / stride;
    }
    const int64_t out = (n + stride - 1) / stride;
    *pad = std::max<int64_t>(0, (out - 1) * stride + eff - n) / 2;
    return out;
  };
  int64_t pt = 0, pl = 0;
  const int64_t oh = window(id[1], fd[0], &pt), ow = window(id[2], fd[1], &pl);
  const int64_t m = fd[3];
  *od = {id[0], oh, ow, id[3] * m};
  std::vector<double> out(NumElementsOf(*od), 0.0);
  for (int64_t b = 0; b < id[0]; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t c = 0; c < id[3]; ++c)
          for (int64_t q = 0; q < m; ++q) {
            double acc = 0;
            for (int64_t i = 0; i < fd[0]; ++i)
              for (int64_t j = 0; j < fd[1]; ++j) {
                const int64_t iy = y * stride + i * dilation - pt;
                const int64_t ix = x * stride + j * dilation - pl;
                if (iy < 0 || iy >= id[1] || ix < 0 || ix >= id[2]) continue;
                acc += in[((b * id[1] + iy) * id[2] + ix) * id[3] + c] *
                       f[((i * fd[1] + j) * id[3] + c) * m + q];
              }
            out[((b * oh + y) * ow + x) * id[3] * m + c * m + q] = acc;
          }
  return out;
}

TEST_P(DepthwiseLibraryTest, MobileNetSizedInputsMatchDirectLoop) {
  struct Big {
    std::vector<int64_t> input, filter;
    int64_t stride, dilation;
    bool same;
  };
  const std::vector<Big> bigs = {
      {{2, 28, 28, 32}, {3, 3, 32, 1}, 1, 1, true},
      {{1, 29, 29, 24}, {3, 3, 24, 1}, 2, 1, true},
      {{1, 20, 20, 17}, {5, 5, 17, 1}, 1, 2, false},
      {{2, 15, 15, 8}, {3, 3, 8, 3}, 2, 1, true},
      {{3, 9, 7, 16}, {3, 3, 16, 2}, 1, 1, true},  // more images than threads
      {{1, 1, 1, 16}, {3, 3, 16, 1}, 1, 1, true},  // only the centre tap meets the map
      {{2, 2, 2, 8}, {3, 3, 8, 2}, 1, 1, true},
      {{1, 7, 7, 40}, {5, 5, 40, 1}, 2, 1, true},
  };
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const Big& big : bigs) {
    SCOPED_TRACE(::testing::Message() << "depth " << big.input[3]);
    std::vector<double> in(NumElementsOf(big.input)), f(NumElementsOf(big.filter));
    for (double& v : in) v = static_cast<float>(dist(gen));
    for (double& v : f) v = static_cast<float>(dist(gen));
    std::vector<int64_t> od;
    const std::vector<double> want =
        Naive(in, big.input, f, big.filter, big.stride, big.dilation, big.same, &od);
    auto out = RunOp(
        "DepthwiseConv2dNative",
        {{"strides", AttrInts({1, big.stride, big.stride, 1})},
         {"dilations", AttrInts({1, big.dilation, big.dilation, 1})},
         {"padding", AttrS(big.same ? "SAME" : "VALID")}},
        {MakeTensor<float>(in, big.input), MakeTensor<float>(f, big.filter)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(od));
    for (int64_t i = 0; i < (*out)[0].NumElements(); ++i) {
      ASSERT_NEAR((*out)[0].flat<float>()[i], want[i], 1e-4) << "element " << i;
    }
  }
}

TEST_P(DepthwiseLibraryTest, FusedMatchesDepthwisePlusBiasThenActivation) {
  // [2, 9, 9, 8] with a multiplier of 2: 16 channels of bias.
  const std::vector<int64_t> id = {2, 9, 9, 8}, fd = {3, 3, 8, 2};
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> in(NumElementsOf(id)), f(NumElementsOf(fd)), bias(16);
  for (double& v : in) v = static_cast<float>(dist(gen));
  for (double& v : f) v = static_cast<float>(dist(gen));
  for (double& v : bias) v = static_cast<float>(dist(gen));
  for (int64_t stride : {1, 2}) {
    std::vector<int64_t> od;
    const std::vector<double> conv = Naive(in, id, f, fd, stride, 1, true, &od);
    for (const std::string act : {"", "Relu", "Relu6", "LeakyRelu", "Elu"}) {
      SCOPED_TRACE(::testing::Message() << "stride " << stride << " act '" << act << "'");
      AttrValue ops;
      ops.mutable_list()->add_s("BiasAdd");
      if (!act.empty()) ops.mutable_list()->add_s(act);
      AttrValue num_args, alpha;
      num_args.set_i(1);
      alpha.set_f(0.25f);
      auto out = RunOp("_FusedDepthwiseConv2dNative",
                       {{"strides", AttrInts({1, stride, stride, 1})},
                        {"padding", AttrS("SAME")},
                        {"fused_ops", ops},
                        {"num_args", num_args},
                        {"leakyrelu_alpha", alpha}},
                       {MakeTensor<float>(in, id), MakeTensor<float>(f, fd),
                        MakeTensor<float>(bias, {16})});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(od));
      for (int64_t i = 0; i < (*out)[0].NumElements(); ++i) {
        double want = conv[i] + bias[i % 16];
        if (act == "Relu") want = std::max(want, 0.0);
        if (act == "Relu6") want = std::min(std::max(want, 0.0), 6.0);
        if (act == "LeakyRelu") want = want < 0 ? 0.25 * want : want;
        if (act == "Elu") want = want < 0 ? std::expm1(want) : want;
        ASSERT_NEAR((*out)[0].flat<float>()[i], want, 1e-4) << "element " << i;
      }
    }
  }
  // The bias must have one value per output channel.
  AttrValue ops, num_args;
  ops.mutable_list()->add_s("BiasAdd");
  num_args.set_i(1);
  auto bad = RunOp("_FusedDepthwiseConv2dNative",
                   {{"strides", AttrInts({1, 1, 1, 1})}, {"padding", AttrS("SAME")},
                    {"fused_ops", ops}, {"num_args", num_args}},
                   {MakeTensor<float>(in, id), MakeTensor<float>(f, fd),
                    MakeTensor<float>(std::vector<double>(8, 0.0), {8})});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

TEST(DepthwiseConvTest, Errors) {
  const Tensor in = MakeTensor<float>(FirstTestInput(32), {1, 4, 4, 2});
  const Tensor f = MakeTensor<float>(SecondTestInput(27), {3, 3, 3, 1});
  auto run = [&](std::map<std::string, AttrValue> attrs, const Tensor& filter) {
    attrs.emplace("strides", AttrInts({1, 1, 1, 1}));
    attrs.emplace("padding", AttrS("SAME"));
    return RunOp("DepthwiseConv2dNative", attrs, {in, filter}).status();
  };
  absl::Status s = run({}, f);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input and filter must have the same depth"));
  const Tensor good = MakeTensor<float>(SecondTestInput(18), {3, 3, 2, 1});
  s = run({{"strides", AttrInts({1, 1, 1})}}, good);
  EXPECT_THAT(s.message(), HasSubstr("strides field must specify 4"));
  s = run({{"strides", AttrInts({2, 1, 1, 1})}}, good);
  EXPECT_THAT(s.message(), HasSubstr("batch and depth"));
  s = run({{"padding", AttrS("EXPLICIT")}}, good);
  EXPECT_THAT(s.message(), HasSubstr("explicit_paddings attribute must contain 8"));
  s = run({{"explicit_paddings", AttrInts({0, 0, 1, 1, 1, 1, 0, 0})}}, good);
  EXPECT_THAT(s.message(), HasSubstr("must be empty"));
  s = RunOp("DepthwiseConv2dNative",
            {{"strides", AttrInts({1, 1, 1, 1})}, {"padding", AttrS("VALID")}},
            {in, MakeTensor<float>(SecondTestInput(72), {6, 6, 2, 1})})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("negative"));
}

absl::StatusOr<std::unique_ptr<Graph>> ImportDepthwise(
    const std::string& input_shape, const std::string& attrs) {
  const std::string text =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: "
      "DT_FLOAT } } attr { key: 'shape' value { shape { " + input_shape +
      " } } } }"
      "node { name: 'f' op: 'Placeholder' attr { key: 'dtype' value { type: "
      "DT_FLOAT } } attr { key: 'shape' value { shape { dim { size: 3 } dim { "
      "size: 3 } dim { size: 8 } dim { size: 2 } } } } }"
      "node { name: 'dw' op: 'DepthwiseConv2dNative' input: 'x' input: 'f' "
      "attr { key: 'T' value { type: DT_FLOAT } } " + attrs + " }";
  auto def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def);
}

const char kStrides2Same[] =
    "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
    "attr { key: 'padding' value { s: 'SAME' } }";

TEST(DepthwiseConvImportTest, ShapeInference) {
  auto g = ImportDepthwise(
      "dim { size: -1 } dim { size: 15 } dim { size: 16 } dim { size: 8 }",
      kStrides2Same);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("dw")->output_shape(0).DebugString(), "[?,8,8,16]");
  g = ImportDepthwise(
      "dim { size: 1 } dim { size: 8 } dim { size: 10 } dim { size: 10 }",
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
      "attr { key: 'padding' value { s: 'VALID' } } "
      "attr { key: 'dilations' value { list { i: 1 i: 1 i: 2 i: 2 } } } "
      "attr { key: 'data_format' value { s: 'NCHW' } }");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("dw")->output_shape(0).DebugString(), "[1,16,6,6]");
}

TEST(DepthwiseConvImportTest, ErrorsNameTheNode) {
  auto g = ImportDepthwise(
      "dim { size: 1 } dim { size: 8 } dim { size: 8 } dim { size: 4 }",
      kStrides2Same);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'dw'"));
  EXPECT_THAT(g.status().message(), HasSubstr("Dimensions must be equal"));
  g = ImportDepthwise(
      "dim { size: 1 } dim { size: 8 } dim { size: 8 } dim { size: 8 }",
      std::string(kStrides2Same) +
          " attr { key: 'data_format' value { s: 'NCDHW' } }");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'dw'"));
  EXPECT_THAT(g.status().message(), HasSubstr("data_format"));
}

}  // namespace
}  // namespace graphrun
