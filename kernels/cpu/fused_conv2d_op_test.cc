// _FusedConv2D on both Conv2D libraries (GRAPHRUN_CONV2D_LIBRARY): against
// TensorFlow's Conv2D + BiasAdd + activation for every activation, SAME and
// VALID, strides 1 and 2 (fused_conv2d_op_test_data.h); on bigger shapes
// (threaded epilogue, several im2col blocks, 1x1, explicit padding, NCHW)
// against a direct loop in double; and the errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/fused_conv2d_op_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrF;
using ::graphrun::testing::AttrI;
using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::ExpectError;
using ::graphrun::testing::RandomDoubles;
using ::graphrun::testing::RunOp;

AttrValue FusedOps(const std::vector<std::string>& ops) {
  AttrValue a;
  a.mutable_list();  // set, even when empty
  for (const std::string& s : ops) a.mutable_list()->add_s(s);
  return a;
}

// The attrs of a _FusedConv2D with BiasAdd and `activation` ("": none).
std::map<std::string, AttrValue> Attrs(const std::string& padding, int64_t stride,
                                       const std::string& activation, float alpha = 0.2f) {
  std::vector<std::string> ops = {"BiasAdd"};
  if (!activation.empty()) ops.push_back(activation);
  return {{"strides", AttrInts({1, stride, stride, 1})},
          {"padding", AttrS(padding)},
          {"num_args", AttrI(1)},
          {"fused_ops", FusedOps(ops)},
          {"leakyrelu_alpha", AttrF(alpha)}};
}

Tensor FloatTensor(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  return Tensor::FromVector<float>(v, *TensorShape::FromDims(dims));
}

class FusedConv2DTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { setenv("GRAPHRUN_CONV2D_LIBRARY", GetParam(), 1); }
  void TearDown() override { unsetenv("GRAPHRUN_CONV2D_LIBRARY"); }
};

TEST_P(FusedConv2DTest, MatchesTensorFlow) {
  using namespace fused_conv2d_test;  // NOLINT: the test data
  const Tensor x = FloatTensor(kInput, kInputDims);
  const Tensor w = FloatTensor(kFilter, kFilterDims);
  const Tensor b = FloatTensor(kBias, {static_cast<int64_t>(kBias.size())});
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << GetParam() << " " << c.padding << " stride "
                                      << c.stride << " BiasAdd " << c.activation);
    for (int threads : {1, 4}) {
      auto out = RunOp("_FusedConv2D", Attrs(c.padding, c.stride, c.activation, kLeakyReluAlpha),
                       {x, w, b}, threads);
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& y = (*out)[0];
      ASSERT_EQ(y.shape(), *TensorShape::FromDims(c.out_dims));
      for (size_t i = 0; i < c.expected.size(); ++i) {
        EXPECT_NEAR(y.flat<float>()[i], c.expected[i], 1e-5 * (1 + std::abs(c.expected[i])))
            << "threads " << threads << " at " << i;
      }
    }
  }
}

double Activate(const std::string& act, double x, double alpha) {
  if (act == "Relu") return std::max(x, 0.0);
  if (act == "Relu6") return std::min(std::max(x, 0.0), 6.0);
  if (act == "Elu") return x < 0 ? std::expm1(x) : x;
  if (act == "LeakyRelu") return x < 0 ? alpha * x : x;
  if (act == "Tanh") return std::tanh(x);
  if (act == "Sigmoid") return 1 / (1 + std::exp(-x));
  return x;
}

struct Shape {
  int64_t n, h, w, c;  // input, NHWC
  int64_t fh, fw, oc;  // filter [fh, fw, c, oc]
  int64_t stride;
  std::string padding;                   // SAME, VALID or EXPLICIT
  std::vector<int64_t> pads = {0, 0, 0, 0};  // EXPLICIT: top, bottom, left, right
  bool nchw = false;
};

// conv(x, w) + b in double, NHWC, from the direct definition.
std::vector<double> Reference(const Shape& s, const std::vector<double>& x,
                              const std::vector<double>& w, const std::vector<double>& b,
                              std::vector<int64_t>* dims) {
  int64_t top = s.pads[0], left = s.pads[2], oh, ow;
  if (s.padding == "SAME") {
    oh = (s.h + s.stride - 1) / s.stride;
    ow = (s.w + s.stride - 1) / s.stride;
    top = std::max<int64_t>(0, (oh - 1) * s.stride + s.fh - s.h) / 2;
    left = std::max<int64_t>(0, (ow - 1) * s.stride + s.fw - s.w) / 2;
  } else {
    oh = (s.h + s.pads[0] + s.pads[1] - s.fh) / s.stride + 1;
    ow = (s.w + s.pads[2] + s.pads[3] - s.fw) / s.stride + 1;
  }
  *dims = {s.n, oh, ow, s.oc};
  std::vector<double> out(s.n * oh * ow * s.oc);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo)
        for (int64_t o = 0; o < s.oc; ++o) {
          double sum = b[o];
          for (int64_t i = 0; i < s.fh; ++i)
            for (int64_t j = 0; j < s.fw; ++j) {
              const int64_t iy = y * s.stride + i - top, ix = xo * s.stride + j - left;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              for (int64_t c = 0; c < s.c; ++c) {
                sum += x[((n * s.h + iy) * s.w + ix) * s.c + c] *
                       w[((i * s.fw + j) * s.c + c) * s.oc + o];
              }
            }
          out[((n * oh + y) * ow + xo) * s.oc + o] = sum;
        }
  return out;
}

// NHWC values of `dims` as NCHW, or back (`to_nchw` false).
std::vector<double> Transpose(const std::vector<double>& v, const std::vector<int64_t>& dims,
                              bool to_nchw) {
  const int64_t n = dims[0], h = dims[1], w = dims[2], c = dims[3];
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < h * w; ++p)
      for (int64_t k = 0; k < c; ++k) {
        const int64_t nhwc = (b * h * w + p) * c + k, nchw = (b * c + k) * h * w + p;
        if (to_nchw) {
          out[nchw] = v[nhwc];
        } else {
          out[nhwc] = v[nchw];
        }
      }
  return out;
}

TEST_P(FusedConv2DTest, MatchesDirectLoopOnBiggerShapes) {
  const Shape shapes[] = {
      {2, 24, 24, 16, 3, 3, 32, 1, "SAME"},  // epilogue on the pool
      {1, 40, 40, 512, 3, 3, 8, 1, "SAME"},  // im2col in two blocks (Eigen)
      {2, 16, 16, 32, 1, 1, 64, 1, "VALID"},                      // 1x1: one GEMM
      {2, 5, 5, 24, 1, 1, 100, 1, "VALID"},  // few pixels: oneDNN cuts channels
      {2, 9, 8, 8, 3, 3, 16, 2, "EXPLICIT", {1, 2, 0, 3}},      // Eigen only
      {2, 9, 8, 8, 3, 3, 16, 2, "EXPLICIT", {1, 2, 0, 2}},      // oneDNN too
      {2, 1, 1, 512, 3, 3, 64, 1, "SAME"},   // centre tap only; skinny (auto)
      {2, 2, 2, 256, 1, 1, 200, 1, "VALID"}, // 8 pixels, skinny (auto)
      {2, 9, 8, 8, 3, 3, 16, 2, "SAME", {0, 0, 0, 0}, true},    // NCHW: Eigen only
  };
  int seed = 1;
  for (const Shape& s : shapes) {
    const std::vector<double> x = RandomDoubles(s.n * s.h * s.w * s.c, -1, 1, seed++);
    const std::vector<double> w = RandomDoubles(s.fh * s.fw * s.c * s.oc, -1, 1, seed++);
    const std::vector<double> b = RandomDoubles(s.oc, -1, 1, seed++);
    const std::vector<int64_t> x_dims = {s.n, s.h, s.w, s.c};
    std::vector<int64_t> dims;
    const std::vector<double> biased = Reference(s, x, w, b, &dims);
    for (const char* act : {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"}) {
      SCOPED_TRACE(::testing::Message() << GetParam() << " [" << s.n << "," << s.h << "," << s.w
                                        << "," << s.c << "] filter " << s.fh << "x" << s.fw
                                        << "->" << s.oc << " stride " << s.stride << " "
                                        << s.padding << (s.nchw ? " NCHW" : "") << " " << act);
      std::vector<double> want = biased;
      for (double& v : want) v = Activate(act, v, 0.3);
      std::map<std::string, AttrValue> attrs = Attrs(s.padding, s.stride, act, 0.3f);
      if (s.padding == "EXPLICIT") {
        attrs["explicit_paddings"] =
            AttrInts({0, 0, s.pads[0], s.pads[1], s.pads[2], s.pads[3], 0, 0});
      }
      std::vector<double> in = x;
      std::vector<int64_t> in_dims = x_dims;
      if (s.nchw) {
        attrs["data_format"] = AttrS("NCHW");
        attrs["strides"] = AttrInts({1, 1, s.stride, s.stride});
        in = Transpose(x, x_dims, true);
        in_dims = {s.n, s.c, s.h, s.w};
      }
      auto out = RunOp("_FusedConv2D", attrs,
                       {testing::MakeTensor<float>(in, in_dims),
                        testing::MakeTensor<float>(w, {s.fh, s.fw, s.c, s.oc}),
                        testing::MakeTensor<float>(b)});
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<double> got = testing::ToDoubles<float>((*out)[0]);
      ASSERT_EQ(got.size(), want.size());
      if (s.nchw) got = Transpose(got, dims, false);
      // Float accumulation over fh * fw * c products of values in [-1, 1).
      const double tol = 2e-6 * s.fh * s.fw * s.c;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EachPath, FusedConv2DTest,
                         ::testing::Values("auto", "onednn", "eigen"));

TEST(FusedConv2DErrorsTest, UnsupportedFusedOpsAndBadBiases) {
  const Tensor x = testing::MakeTensor<float>(std::vector<double>(2 * 3 * 3 * 2, 1.0),
                                              {2, 3, 3, 2});
  const Tensor w = testing::MakeTensor<float>(std::vector<double>(2 * 2 * 2 * 4, 0.5),
                                              {2, 2, 2, 4});
  const Tensor b = testing::MakeTensor<float>({1, 2, 3, 4});
  auto attrs = Attrs("VALID", 1, "Gelu");
  ExpectError(RunOp("_FusedConv2D", attrs, {x, w, b}), absl::StatusCode::kInvalidArgument,
              "node 'test_node' (_FusedConv2D)");
  ExpectError(RunOp("_FusedConv2D", attrs, {x, w, b}), absl::StatusCode::kInvalidArgument,
              "unsupported fused_ops [BiasAdd, Gelu] with num_args=1");
  // Batch-norm fusion (four args) and no fused ops at all.
  attrs["fused_ops"] = FusedOps({"FusedBatchNorm", "Relu"});
  attrs["num_args"] = AttrI(4);
  ExpectError(RunOp("_FusedConv2D", attrs, {x, w, b, b, b, b}),
              absl::StatusCode::kInvalidArgument,
              "unsupported fused_ops [FusedBatchNorm, Relu] with num_args=4");
  attrs["fused_ops"] = FusedOps({});
  attrs["num_args"] = AttrI(0);
  ExpectError(RunOp("_FusedConv2D", attrs, {x, w}), absl::StatusCode::kInvalidArgument,
              "unsupported fused_ops [] with num_args=0");
  // A bias per output channel, no more, no less.
  ExpectError(RunOp("_FusedConv2D", Attrs("VALID", 1, "Relu"),
                    {x, w, testing::MakeTensor<float>({1, 2, 3})}),
              absl::StatusCode::kInvalidArgument, "bias must be a vector of the filter's 4");
  // Conv2D's own checks still apply.
  ExpectError(RunOp("_FusedConv2D", Attrs("VALID", 0, "Relu"), {x, w, b}),
              absl::StatusCode::kInvalidArgument, "strides should be larger than 0");
}

}  // namespace
}  // namespace graphrun
