// Conv2D's paths: oneDNN (conv_onednn.h), Eigen, and the default choice
// (with the skinny product of skinny_gemm.h for few output pixels), set
// with GRAPHRUN_CONV2D_LIBRARY, against a direct convolution loop in double, on
// the shapes of the Keras models (on a 4-thread device, so images are split
// by rows too); and the oneDNN path's caches (primitives by geometry,
// reordered weights by filter buffer) across computes of one kernel.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_onednn.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::RunOp;

struct Spec {
  int64_t n, h, w, c;      // input, NHWC
  int64_t fh, fw, oc;      // filter [fh, fw, c, oc]
  int64_t stride = 1;
  std::string padding = "SAME";
  // EXPLICIT: top, bottom, left, right.
  std::vector<int64_t> pads = {};
};

Tensor Random(const TensorShape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DT_FLOAT, shape);
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

// Direct NHWC convolution in double with TensorFlow's SAME / VALID padding.
std::vector<double> Naive(const Spec& s, const Tensor& in, const Tensor& f,
                          std::vector<int64_t>* shape) {
  auto out_size = [&](int64_t size, int64_t k, int64_t* pad, bool rows) {
    if (s.padding == "EXPLICIT") {
      *pad = s.pads[rows ? 0 : 2];
      return (size + s.pads[rows ? 0 : 2] + s.pads[rows ? 1 : 3] - k) / s.stride + 1;
    }
    if (s.padding == "VALID") {
      *pad = 0;
      return (size - k + s.stride) / s.stride;
    }
    const int64_t out = (size + s.stride - 1) / s.stride;
    *pad = std::max<int64_t>(0, (out - 1) * s.stride + k - size) / 2;
    return out;
  };
  int64_t pt = 0, pl = 0;
  const int64_t oh = out_size(s.h, s.fh, &pt, true), ow = out_size(s.w, s.fw, &pl, false);
  *shape = {s.n, oh, ow, s.oc};
  auto x = in.flat<float>();
  auto w = f.flat<float>();
  std::vector<double> out(s.n * oh * ow * s.oc, 0.0);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo)
        for (int64_t i = 0; i < s.fh; ++i)
          for (int64_t j = 0; j < s.fw; ++j) {
            const int64_t iy = y * s.stride + i - pt;
            const int64_t ix = xo * s.stride + j - pl;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            for (int64_t c = 0; c < s.c; ++c) {
              const double v = x[((b * s.h + iy) * s.w + ix) * s.c + c];
              const float* row = &w[((i * s.fw + j) * s.c + c) * s.oc];
              double* dst = &out[((b * oh + y) * ow + xo) * s.oc];
              for (int64_t o = 0; o < s.oc; ++o) dst[o] += v * row[o];
            }
          }
  return out;
}

std::map<std::string, AttrValue> Attrs(const Spec& s) {
  std::map<std::string, AttrValue> attrs = {{"strides", AttrInts({1, s.stride, s.stride, 1})},
                                            {"padding", AttrS(s.padding)},
                                            {"data_format", AttrS("NHWC")}};
  if (s.padding == "EXPLICIT") {
    attrs["explicit_paddings"] =
        AttrInts({0, 0, s.pads[0], s.pads[1], s.pads[2], s.pads[3], 0, 0});
  }
  return attrs;
}

// Expects `got` to match the double reference within float accumulation
// error over `terms` products of values in [-1, 1).
void ExpectMatches(const Tensor& got, const std::vector<double>& expected,
                   const std::vector<int64_t>& shape, int64_t terms) {
  ASSERT_EQ(got.shape(), *TensorShape::FromDims(shape));
  const double tol = 2e-6 * terms;
  auto g = got.flat<float>();
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(g[i], expected[i], tol) << "at flat index " << i;
  }
}

// "winograd": oneDNN with Winograd forced wherever oneDNN has it.
class Conv2DLibraryTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const bool winograd = std::string(GetParam()) == "winograd";
    setenv("GRAPHRUN_CONV2D_LIBRARY", winograd ? "onednn" : GetParam(), 1);
    if (winograd) setenv("GRAPHRUN_CONV2D_ALGORITHM", "winograd", 1);
  }
  void TearDown() override {
    unsetenv("GRAPHRUN_CONV2D_LIBRARY");
    unsetenv("GRAPHRUN_CONV2D_ALGORITHM");
  }
};

TEST_P(Conv2DLibraryTest, MatchesDirectLoopOnModelShapes) {
  const Spec specs[] = {
      {2, 8, 8, 64, 3, 3, 64},                      // ResNet50 3x3
      {2, 16, 16, 32, 3, 3, 48},                    // Winograd by default
      {1, 24, 20, 32, 3, 3, 32},                    // same, split by rows
      {2, 14, 13, 32, 3, 3, 32, 1, "VALID"},        // 12x11 out: direct
      {2, 14, 14, 32, 3, 3, 32, 1, "VALID"},        // 12x12 out: Winograd
      {2, 8, 8, 64, 1, 1, 256, 1, "VALID"},         // ResNet50 1x1
      {2, 8, 8, 256, 1, 1, 128, 2, "VALID"},        // ResNet50 1x1 stride 2
      {2, 38, 38, 3, 7, 7, 64, 2, "VALID"},         // ResNet50 stem
      {2, 2, 2, 512, 3, 3, 64},                     // VGG16 last block
      {2, 75, 75, 3, 3, 3, 32, 2, "VALID"},         // InceptionV3 stem
      {2, 7, 7, 48, 5, 5, 64},                      // InceptionV3 5x5
      {2, 3, 3, 160, 1, 7, 160},                    // InceptionV3 1x7
      {2, 33, 33, 64, 1, 1, 128, 2},                // Xception SAME 1x1 s2
      {2, 6, 5, 3, 4, 4, 5, 1},                     // even filter, SAME
      {1, 1, 1, 3, 1, 1, 2, 1, "VALID"},            // one pixel
      {1, 9, 7, 16, 3, 3, 24, 2},                   // one image, split by rows
      {1, 10, 10, 8, 5, 5, 16, 1, "VALID"},
      {3, 11, 6, 8, 3, 3, 16, 3, "VALID"},          // unused bottom rows
      {2, 5, 5, 40, 1, 1, 100, 1, "VALID"},         // few pixels: by channels
      {2, 3, 3, 24, 3, 3, 200},                     // same, 3x3 SAME
      // A map smaller than the window: only some taps meet the input (the
      // filter is cropped to them), few pixels (the skinny product).
      {2, 1, 1, 512, 3, 3, 64},                     // only the centre tap
      {2, 2, 2, 64, 3, 3, 96, 2},                   // stride 2: 2x2 taps
      {1, 2, 2, 256, 3, 3, 128},                    // taps reach some pixels
      {2, 2, 2, 128, 1, 1, 1000, 1, "VALID"},       // 8 pixels, odd width
      {2, 1, 1, 300, 1, 1, 40, 1, "VALID"},
      // Explicit padding (a folded ZeroPadding2D), asymmetric.
      {2, 3, 3, 16, 3, 3, 32, 1, "EXPLICIT", {1, 2, 0, 1}},
      {2, 1, 1, 128, 3, 3, 256, 1, "EXPLICIT", {1, 1, 1, 1}},
      {2, 9, 9, 8, 7, 7, 16, 2, "EXPLICIT", {3, 3, 3, 3}},
      {1, 5, 4, 8, 3, 3, 8, 2, "EXPLICIT", {2, 0, 1, 2}},
  };
  uint32_t seed = 1;
  for (const Spec& s : specs) {
    SCOPED_TRACE(::testing::Message()
                 << GetParam() << " [" << s.n << "," << s.h << "," << s.w
                 << "," << s.c << "] filter " << s.fh << "x" << s.fw << "->"
                 << s.oc << " stride " << s.stride << " " << s.padding);
    Tensor in = Random(TensorShape({s.n, s.h, s.w, s.c}), seed++);
    Tensor f = Random(TensorShape({s.fh, s.fw, s.c, s.oc}), seed++);
    std::vector<int64_t> shape;
    std::vector<double> expected = Naive(s, in, f, &shape);
    auto out = RunOp("Conv2D", Attrs(s), {in, f});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectMatches((*out)[0], expected, shape, s.fh * s.fw * s.c);
  }
}

INSTANTIATE_TEST_SUITE_P(EachPath, Conv2DLibraryTest,
                         ::testing::Values("auto", "onednn", "eigen", "winograd"));

// Which convolutions OneDnnConv2D runs by Winograd under each setting of
// GRAPHRUN_CONV2D_ALGORITHM, and that they match the loop, with and
// without a fused bias and activation.
TEST(Conv2DWinogradTest, RunsWhereChosenAndMatchesTheLoop) {
  struct Case {
    Spec spec;
    const char* algorithm;
    bool winograd;  // expected on every piece (else on none)
    cpu::FusedActivation activation = cpu::FusedActivation::kNone;
    bool fused = false;
    int threads = 2;
  };
  using cpu::FusedActivation;
  const Case cases[] = {
      {{2, 16, 16, 32, 3, 3, 48}, "auto", true},
      {{2, 16, 16, 32, 3, 3, 48}, nullptr, true},  // unset: auto
      {{2, 16, 16, 32, 3, 3, 48}, "direct", false},
      {{2, 16, 16, 16, 3, 3, 48}, "auto", false},  // 16 input channels
      {{2, 16, 16, 32, 3, 3, 16}, "auto", false},  // 16 output channels
      {{2, 6, 6, 64, 3, 3, 64}, "auto", false},    // 6x6 map
      {{2, 6, 6, 16, 3, 3, 16}, "winograd", true},
      {{2, 16, 16, 32, 3, 3, 48, 2}, "winograd", false},  // stride 2
      {{2, 16, 16, 32, 5, 5, 48}, "winograd", false},     // 5x5
      {{1, 24, 20, 32, 3, 3, 32}, "auto", true},          // by rows
      {{2, 16, 16, 32, 3, 3, 48}, "auto", true, FusedActivation::kRelu, true},
      {{2, 16, 16, 32, 3, 3, 48}, "auto", true, FusedActivation::kNone, true},
      // Few pixels, many channels, 4 threads: cut by output channels,
      // whose strided filter views run direct even when Winograd is asked.
      {{1, 4, 4, 64, 3, 3, 128}, "winograd", false, FusedActivation::kNone, false, 4},
      {{1, 14, 14, 256, 3, 3, 256}, "winograd", false, FusedActivation::kRelu, true, 4},
  };
  const bool available = cpu::OneDnnHasWinograd();
  uint32_t seed = 100;
  for (const Case& c : cases) {
    const Spec& s = c.spec;
    SCOPED_TRACE(::testing::Message()
                 << (c.algorithm ? c.algorithm : "(unset)") << " [" << s.n << "," << s.h << ","
                 << s.w << "," << s.c << "] filter " << s.fh << "x" << s.fw << "->" << s.oc
                 << " stride " << s.stride << (c.fused ? " with bias" : "") << ", "
                 << c.threads << " threads");
    if (c.algorithm != nullptr) setenv("GRAPHRUN_CONV2D_ALGORITHM", c.algorithm, 1);
    cpu::OneDnnConv2D conv;
    unsetenv("GRAPHRUN_CONV2D_ALGORITHM");
    Eigen::ThreadPool threads(c.threads);
    Eigen::ThreadPoolDevice pool(&threads, c.threads);
    Tensor in = Random(TensorShape({s.n, s.h, s.w, s.c}), seed++);
    Tensor f = Random(TensorShape({s.fh, s.fw, s.c, s.oc}), seed++);
    Tensor bias = Random(TensorShape({s.oc}), seed++);
    std::vector<int64_t> shape;
    std::vector<double> expected = Naive(s, in, f, &shape);
    if (c.fused) {
      for (size_t i = 0; i < expected.size(); ++i) {
        expected[i] += bias.flat<float>()[i % s.oc];
        if (c.activation == FusedActivation::kRelu) expected[i] = std::max(expected[i], 0.0);
      }
    }
    cpu::OneDnnConvGeometry g;
    g.batch = s.n;
    g.in_rows = s.h;
    g.in_cols = s.w;
    g.in_depth = s.c;
    g.filter_rows = s.fh;
    g.filter_cols = s.fw;
    g.out_depth = s.oc;
    g.stride_rows = g.stride_cols = s.stride;
    g.out_rows = shape[1];
    g.out_cols = shape[2];
    // SAME: TensorFlow's split, the odd pixel after.
    const int64_t pad_rows = std::max<int64_t>(0, (g.out_rows - 1) * s.stride + s.fh - s.h);
    const int64_t pad_cols = std::max<int64_t>(0, (g.out_cols - 1) * s.stride + s.fw - s.w);
    g.pad_top = pad_rows / 2;
    g.pad_bottom = pad_rows - g.pad_top;
    g.pad_left = pad_cols / 2;
    g.pad_right = pad_cols - g.pad_left;
    cpu::OneDnnConvBias fused;
    fused.bias = bias.flat<float>().data();
    fused.epilogue.activation = c.activation;
    Tensor out(DT_FLOAT, *TensorShape::FromDims(shape));
    ASSERT_TRUE(conv.Run(g, f, in.flat<float>().data(), out.flat<float>().data(), pool,
                         c.fused ? &fused : nullptr)
                    .ok());
    ExpectMatches(out, expected, shape, s.fh * s.fw * s.c);
    const cpu::OneDnnConv2D::Plan plan = conv.LastPlan();
    EXPECT_GT(plan.pieces, 0);
    EXPECT_EQ(plan.winograd_pieces, c.winograd && available ? plan.pieces : 0);
  }
  if (!available) {
    GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU (it needs AVX-512): the "
                    "results were checked, which pieces ran by Winograd was not";
  }
}

// One Conv2D kernel computed several times on a 2-thread device.
class KernelRunner {
 public:
  explicit KernelRunner(const Spec& s)
      : device_(testing::MakeTestCpuDevice(2)) {
    NodeDef def;
    def.set_name("conv");
    def.set_op("Conv2D");
    def.add_input("x");
    def.add_input("f");
    for (const auto& [k, v] : Attrs(s)) (*def.mutable_attr())[k] = v;
    (*def.mutable_attr())["T"].set_type(DT_FLOAT);
    auto op_def = OpRegistry::Global()->LookUp("Conv2D");
    EXPECT_TRUE(op_def.ok()) << op_def.status();
    auto kernel = KernelRegistry::Global()->CreateKernel(
        device_.get(), def, *op_def, {DT_FLOAT, DT_FLOAT}, {DT_FLOAT});
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (kernel.ok()) kernel_ = std::move(kernel).value();
  }

  absl::StatusOr<Tensor> Compute(const Tensor& in, const Tensor& filter) {
    if (kernel_ == nullptr) return absl::InternalError("no kernel");
    std::vector<Tensor> inputs = {in, filter};
    OpKernelContext::Params params;
    params.device = device_.get();
    params.op_kernel = kernel_.get();
    params.inputs = inputs.data();
    params.num_inputs = 2;
    CancellationManager cancellation;
    params.cancellation = &cancellation;
    OpKernelContext ctx(&params);
    kernel_->Compute(&ctx);
    if (!ctx.status().ok()) return ctx.status();
    return (*ctx.mutable_outputs())[0];
  }

 private:
  std::unique_ptr<DeviceBase> device_;
  std::unique_ptr<OpKernel> kernel_;
};

TEST(Conv2DOneDnnTest, CachesFollowFilterBufferAndGeometry) {
  setenv("GRAPHRUN_CONV2D_LIBRARY", "onednn", 1);
  Spec s{2, 6, 6, 32, 3, 3, 48};
  KernelRunner runner(s);
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  Tensor in = Random(TensorShape({2, 6, 6, 32}), 1);
  Tensor f1 = Random(TensorShape({3, 3, 32, 48}), 2);
  Tensor f2 = Random(TensorShape({3, 3, 32, 48}), 3);
  Spec bigger = s;
  bigger.h = bigger.w = 9;
  Tensor in_bigger = Random(TensorShape({2, 9, 9, 32}), 4);
  struct Step {
    const Spec* spec;
    const Tensor* in;
    const Tensor* filter;
  };
  // Same filter twice (cached weights), a new filter buffer, a new
  // geometry with the same filter, and back.
  const Step steps[] = {{&s, &in, &f1},          {&s, &in, &f1},
                        {&s, &in, &f2},          {&bigger, &in_bigger, &f2},
                        {&bigger, &in_bigger, &f1}, {&s, &in, &f1}};
  int i = 0;
  for (const Step& step : steps) {
    SCOPED_TRACE(::testing::Message() << "step " << i++);
    std::vector<int64_t> shape;
    std::vector<double> expected =
        Naive(*step.spec, *step.in, *step.filter, &shape);
    auto out = runner.Compute(*step.in, *step.filter);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectMatches(*out, expected, shape, 3 * 3 * 32);
  }
}

TEST(Conv2DOneDnnTest, UnsupportedAttrsTakeTheEigenPath) {
  // Dilations and explicit padding as wide as the window with the oneDNN
  // path forced: same results as the Eigen path (which conv_ops_test
  // checks against a loop).
  Tensor in = Random(TensorShape({2, 7, 7, 4}), 5);
  Tensor f = Random(TensorShape({3, 3, 4, 6}), 6);
  std::map<std::string, AttrValue> dilated = {
      {"strides", AttrInts({1, 1, 1, 1})},
      {"dilations", AttrInts({1, 2, 2, 1})},
      {"padding", AttrS("SAME")}};
  std::map<std::string, AttrValue> explicit_pad = {
      {"strides", AttrInts({1, 2, 1, 1})},
      {"padding", AttrS("EXPLICIT")},
      {"explicit_paddings", AttrInts({0, 0, 1, 2, 0, 3, 0, 0})}};
  for (const auto* attrs : {&dilated, &explicit_pad}) {
    setenv("GRAPHRUN_CONV2D_LIBRARY", "onednn", 1);
    auto a = RunOp("Conv2D", *attrs, {in, f});
    setenv("GRAPHRUN_CONV2D_LIBRARY", "eigen", 1);
    auto b = RunOp("Conv2D", *attrs, {in, f});
    unsetenv("GRAPHRUN_CONV2D_LIBRARY");
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    std::string why;
    EXPECT_TRUE(testing::AllClose((*a)[0], (*b)[0], 0, 0, &why)) << why;
  }
}

TEST(Conv2DSkinnyTest, DilatedFewPixelsMatchTheEigenPath) {
  // 8 output pixels and 576 KB of filter: the default path streams the
  // filter (skinny_gemm.h), the taps two apart; Eigen's dilated path is
  // checked against a loop in conv_ops_test.
  Tensor in = Random(TensorShape({2, 2, 2, 128}), 7);
  Tensor f = Random(TensorShape({3, 3, 128, 128}), 8);
  std::map<std::string, AttrValue> attrs = {{"strides", AttrInts({1, 1, 1, 1})},
                                            {"dilations", AttrInts({1, 2, 2, 1})},
                                            {"padding", AttrS("SAME")}};
  setenv("GRAPHRUN_CONV2D_LIBRARY", "auto", 1);
  auto a = RunOp("Conv2D", attrs, {in, f});
  setenv("GRAPHRUN_CONV2D_LIBRARY", "eigen", 1);
  auto b = RunOp("Conv2D", attrs, {in, f});
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ((*a)[0].shape(), TensorShape({2, 2, 2, 128}));
  std::string why;
  EXPECT_TRUE(testing::AllClose((*a)[0], (*b)[0], 1e-4, 1e-4, &why)) << why;
}

}  // namespace
}  // namespace graphrun
