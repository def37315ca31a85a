// BiasAddGrad, BroadcastGradientArgs, ShapeN, UnsortedSegmentSum,
// MaxPoolGrad, AvgPoolGrad and Conv2DBackpropFilter against TensorFlow's
// outputs (grad_ops_test_data.h, made by make_grad_ops_test_data.py), and
// their errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "graph/testing/shape_test_util.h"
#include "gtest/gtest.h"
#include "kernels/cpu/grad_ops_test_data.h"
#include "kernels/cpu/conv_grad_test_case.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrInts;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::AttrType;
using ::graphrun::testing::ExpectError;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::ShapeRun;
using ::graphrun::testing::ToDoubles;
namespace data = ::graphrun::grad_ops_test;

Tensor Floats(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  Tensor t(DT_FLOAT, testing::ShapeOf(dims));
  EXPECT_EQ(static_cast<size_t>(t.NumElements()), values.size());
  std::copy(values.begin(), values.begin() + std::min<size_t>(values.size(), t.NumElements()),
            t.flat<float>().data());
  return t;
}

// A tensor of `dtype` (float, half or bfloat16) holding `values`, which are
// exact in it.
Tensor Typed(const std::vector<float>& values, const std::vector<int64_t>& dims, DataType dtype) {
  const std::vector<double> v(values.begin(), values.end());
  switch (dtype) {
    case DT_HALF:
      return testing::MakeTensor<half>(v, dims);
    case DT_BFLOAT16:
      return testing::MakeTensor<bfloat16>(v, dims);
    default:
      return testing::MakeTensor<float>(v, dims);
  }
}

// The elements of a float, half or bfloat16 tensor.
std::vector<double> ValuesOf(const Tensor& t) {
  switch (t.dtype()) {
    case DT_HALF:
      return ToDoubles<half>(t);
    case DT_BFLOAT16:
      return ToDoubles<bfloat16>(t);
    default:
      return ToDoubles<float>(t);
  }
}

template <typename T>
Tensor Ints(const std::vector<int64_t>& values, const std::vector<int64_t>& dims) {
  return Tensor::FromVector<T>(std::vector<T>(values.begin(), values.end()),
                               testing::ShapeOf(dims));
}
template <typename T>
Tensor Ints(const std::vector<int64_t>& values) {
  return Ints<T>(values, {static_cast<int64_t>(values.size())});
}

void ExpectClose(const Tensor& got, const Tensor& want, double rtol, double atol) {
  std::string why;
  EXPECT_TRUE(testing::AllClose(got, want, rtol, atol, &why)) << why;
}

// Sums of a few dozen floats in [-1, 1], added in another order than
// TensorFlow's (Eigen's reduction; oneDNN's convolution): a few units of the
// float's last place.
constexpr double kSumRtol = 1e-5, kSumAtol = 1e-6;

TEST(BiasAddGradTest, MatchesTensorFlow) {
  for (const data::BiasAddGradCase& c : data::kBiasAddGradCases) {
    SCOPED_TRACE(std::string(c.data_format) + " " + DataTypeString(c.dtype));
    auto out = RunOp("BiasAddGrad", {{"data_format", AttrS(c.data_format)}},
                     {Typed(c.input, c.dims, c.dtype)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dtype(), c.dtype);
    // half and bfloat16 sum in float (as TensorFlow) and round once: the two
    // float sums, in different orders, may round to neighbouring values, so
    // one unit of the type's last place.
    const double tol = c.dtype == DT_HALF ? 1e-3 : c.dtype == DT_BFLOAT16 ? 8e-3 : kSumRtol;
    testing::ExpectAllNear(ValuesOf((*out)[0]), std::vector<double>(c.want.begin(), c.want.end()),
                           tol, "bias gradient");
  }
}

TEST(BiasAddGradTest, NeedsRankTwo) {
  ExpectError(RunOp("BiasAddGrad", {}, {Floats({1, 2}, {2})}), absl::StatusCode::kInvalidArgument,
              "at least 2D");
}

template <typename T>
void CheckBroadcastGradientArgs() {
  for (const data::BroadcastCase& c : data::kBroadcastCases) {
    auto out = RunOp("BroadcastGradientArgs", {}, {Ints<T>(c.s0), Ints<T>(c.s1)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ(ToDoubles<T>((*out)[0]), std::vector<double>(c.r0.begin(), c.r0.end()));
    EXPECT_EQ(ToDoubles<T>((*out)[1]), std::vector<double>(c.r1.begin(), c.r1.end()));
  }
}

TEST(BroadcastGradientArgsTest, MatchesTensorFlow) {
  CheckBroadcastGradientArgs<int32_t>();
  CheckBroadcastGradientArgs<int64_t>();
}

TEST(BroadcastGradientArgsTest, IncompatibleShapes) {
  ExpectError(RunOp("BroadcastGradientArgs", {}, {Ints<int32_t>({2, 3}), Ints<int32_t>({4})}),
              absl::StatusCode::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]");
}

TEST(ShapeNTest, ShapesOfEachInput) {
  const Tensor a = Floats(std::vector<float>(6), {2, 3});
  const Tensor b = Floats({1}, {});
  const Tensor c = Floats({}, {4, 0, 5});
  auto out = RunOp("ShapeN", {}, {a, b, c});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ(ToDoubles<int32_t>((*out)[0]), (std::vector<double>{2, 3}));
  EXPECT_EQ((*out)[1].NumElements(), 0);
  EXPECT_EQ(ToDoubles<int32_t>((*out)[2]), (std::vector<double>{4, 0, 5}));
  auto wide = RunOp("ShapeN", {{"out_type", AttrType(DT_INT64)}}, {a});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(ToDoubles<int64_t>((*wide)[0]), (std::vector<double>{2, 3}));
}

TEST(UnsortedSegmentSumTest, MatchesTensorFlow) {
  // Rows are added in order, as TensorFlow adds them: exact.
  for (const data::SegmentSumCase& c : data::kSegmentSumCases) {
    for (DataType ids_type : {DT_INT32, DT_INT64}) {
      const Tensor ids = ids_type == DT_INT32 ? Ints<int32_t>(c.ids, c.ids_dims)
                                              : Ints<int64_t>(c.ids, c.ids_dims);
      auto out = RunOp("UnsortedSegmentSum", {},
                       {Floats(c.data, c.data_dims), ids, Ints<int64_t>({c.num_segments}, {})});
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<int64_t> dims = {c.num_segments};
      for (size_t d = c.ids_dims.size(); d < c.data_dims.size(); ++d) {
        dims.push_back(c.data_dims[d]);
      }
      ExpectClose((*out)[0], Floats(c.want, dims), 0, 0);
    }
  }
}

TEST(UnsortedSegmentSumTest, IdOutOfRange) {
  ExpectError(RunOp("UnsortedSegmentSum", {},
                    {Floats({1, 2}, {2}), Ints<int32_t>({0, 3}),
                     Tensor::FromVector<int32_t>({2}, TensorShape({}))}),
              absl::StatusCode::kInvalidArgument, "segment_ids[1] = 3 is out of range [0, 2)");
}

std::map<std::string, AttrValue> PoolAttrs(const data::PoolCase& c) {
  std::map<std::string, AttrValue> attrs = {{"ksize", AttrInts({1, c.ksize, c.ksize, 1})},
                                            {"strides", AttrInts({1, c.stride, c.stride, 1})},
                                            {"padding", AttrS(c.padding)}};
  if (!c.explicit_paddings.empty()) {
    attrs["explicit_paddings"] = AttrInts(c.explicit_paddings);
  }
  return attrs;
}

TEST(MaxPoolGradTest, MatchesTensorFlowWithTies) {
  // The inputs are integers in [0, 2], so most windows hold ties: the
  // gradient goes to the first maximum in row-major order, as TensorFlow's.
  // Each input's gradients are added in output order, as TensorFlow adds
  // them: exact.
  for (const data::PoolCase& c : data::kMaxPoolGradCases) {
    SCOPED_TRACE(c.name);
    // orig_output is only checked for its shape: the maxima are found again
    // in orig_input (so are TensorFlow's).
    const Tensor y = Typed(std::vector<float>(c.grad.size()), c.grad_dims, c.dtype);
    auto out = RunOp("MaxPoolGrad", PoolAttrs(c),
                     {Typed(c.input, c.dims, c.dtype), y, Typed(c.grad, c.grad_dims, c.dtype)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ValuesOf((*out)[0]), std::vector<double>(c.want.begin(), c.want.end()));
  }
}

TEST(AvgPoolGradTest, MatchesTensorFlow) {
  // Each window's gradient times 1 / (its element count), rounded to the
  // type, added in output order, as TensorFlow: exact.
  for (const data::PoolCase& c : data::kAvgPoolGradCases) {
    SCOPED_TRACE(c.name);
    const Tensor shape = Tensor::FromVector<int32_t>(
        std::vector<int32_t>(c.dims.begin(), c.dims.end()), TensorShape({4}));
    auto out = RunOp("AvgPoolGrad", PoolAttrs(c), {shape, Typed(c.grad, c.grad_dims, c.dtype)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ValuesOf((*out)[0]), std::vector<double>(c.want.begin(), c.want.end()));
  }
}

// The graph optimizer's ReluGrad(MaxPoolGrad(x, y, dy), x) in one kernel:
// TensorFlow's MaxPoolGrad output, then ReluGrad's rule (the gradient where
// x > 0, else the gradient times 0, a -0 for a negative one). Half the
// inputs are 0 here (integers in [0, 2]), so the mask matters.
TEST(MaxPoolGradTest, FusedWithReluGradMasksTensorFlowsGradient) {
  for (const data::PoolCase& c : data::kMaxPoolGradCases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, AttrValue> attrs = PoolAttrs(c);
    attrs["fused_ops"].mutable_list()->add_s("ReluGrad");
    const Tensor y = Typed(std::vector<float>(c.grad.size()), c.grad_dims, c.dtype);
    auto out = RunOp("_FusedMaxPoolGrad", attrs,
                     {Typed(c.input, c.dims, c.dtype), y, Typed(c.grad, c.grad_dims, c.dtype)});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> got = ValuesOf((*out)[0]);
    ASSERT_EQ(got.size(), c.want.size());
    int masked = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = c.input[i] > 0 ? c.want[i] : c.want[i] * 0.0;
      masked += c.input[i] > 0 ? 0 : 1;
      EXPECT_EQ(got[i], want) << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << i;
    }
    EXPECT_GT(masked, 0);
  }
  const data::PoolCase& c = data::kMaxPoolGradCases[0];
  std::map<std::string, AttrValue> attrs = PoolAttrs(c);
  attrs["fused_ops"].mutable_list()->add_s("Relu6Grad");
  ExpectError(RunOp("_FusedMaxPoolGrad", attrs,
                    {Typed(c.input, c.dims, c.dtype),
                     Typed(std::vector<float>(c.grad.size()), c.grad_dims, c.dtype),
                     Typed(c.grad, c.grad_dims, c.dtype)}),
              absl::StatusCode::kUnimplemented, "got [Relu6Grad]");
}

// An empty batch, and images without channels: empty gradients, and the
// bias gradient zeros of the channel count.
TEST(MaxPoolGradTest, FusedOnEmptyInputsGivesEmptyGradients) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{0, 4, 4, 8}, std::vector<int64_t>{1, 4, 4, 0}}) {
    std::map<std::string, AttrValue> attrs;
    for (const char* key : {"ksize", "strides"}) {
      for (int64_t v : {1, 2, 2, 1}) attrs[key].mutable_list()->add_i(v);
    }
    attrs["padding"].set_s("VALID");
    attrs["T"].set_type(DT_FLOAT);
    attrs["fused_ops"].mutable_list()->add_s("ReluGrad");
    attrs["fused_ops"].mutable_list()->add_s("BiasAddGrad");
    const std::vector<int64_t> pooled = {dims[0], 2, 2, dims[3]};
    const int64_t n = dims[0] * 16 * dims[3], m = dims[0] * 4 * dims[3];
    auto out = RunOp("_FusedMaxPoolGrad", attrs,
                     {Typed(std::vector<float>(n), dims, DT_FLOAT),
                      Typed(std::vector<float>(m), pooled, DT_FLOAT),
                      Typed(std::vector<float>(m), pooled, DT_FLOAT)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].NumElements(), 0);
    EXPECT_EQ(ValuesOf((*out)[1]), std::vector<double>(dims[3], 0.0));
  }
}

// With BiasAddGrad fused as well, output 1 is the channel sums of output 0
// (summed here in double, from TensorFlow's MaxPoolGrad values masked by
// ReluGrad's rule); without it, zeros.
TEST(MaxPoolGradTest, FusedWithBiasAddGradSumsTheMaskedGradientPerChannel) {
  for (const data::PoolCase& c : data::kMaxPoolGradCases) {
    if (c.dtype != DT_FLOAT) continue;
    SCOPED_TRACE(c.name);
    const int64_t depth = c.dims.back();
    std::vector<double> want(depth, 0.0);
    for (size_t i = 0; i < c.want.size(); ++i) {
      want[i % depth] += c.input[i] > 0 ? c.want[i] : 0.0;
    }
    for (bool bias : {true, false}) {
      std::map<std::string, AttrValue> attrs = PoolAttrs(c);
      attrs["fused_ops"].mutable_list()->add_s("ReluGrad");
      if (bias) attrs["fused_ops"].mutable_list()->add_s("BiasAddGrad");
      auto out = RunOp("_FusedMaxPoolGrad", attrs,
                       {Typed(c.input, c.dims, c.dtype),
                        Typed(std::vector<float>(c.grad.size()), c.grad_dims, c.dtype),
                        Typed(c.grad, c.grad_dims, c.dtype)});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->size(), 2u);
      const std::vector<double> got = ValuesOf((*out)[1]);
      ASSERT_EQ(got.size(), static_cast<size_t>(depth));
      for (int64_t ch = 0; ch < depth; ++ch) {
        EXPECT_NEAR(got[ch], bias ? want[ch] : 0.0, 1e-5 * (1 + std::abs(want[ch]))) << ch;
      }
    }
  }
}

TEST(MaxPoolGradTest, GradOfTheWrongShape) {
  const Tensor x = Floats(std::vector<float>(16), {1, 4, 4, 1});
  const Tensor y = Floats(std::vector<float>(4), {1, 2, 2, 1});
  auto out = RunOp("MaxPoolGrad",
                   {{"ksize", AttrInts({1, 2, 2, 1})},
                    {"strides", AttrInts({1, 2, 2, 1})},
                    {"padding", AttrS("VALID")}},
                   {x, y, Floats(std::vector<float>(9), {1, 3, 3, 1})});
  ExpectError(out, absl::StatusCode::kInvalidArgument, "grad has shape");
}

TEST(Conv2DBackpropFilterTest, MatchesTensorFlow) {
  for (const data::ConvCase& c : data::kConvCases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, AttrValue> attrs = {
        {"strides", AttrInts({1, c.stride, c.stride, 1})},
        {"dilations", AttrInts({1, c.dilation, c.dilation, 1})},
        {"padding", AttrS(c.padding)}};
    if (!c.explicit_paddings.empty()) {
      attrs["explicit_paddings"] = AttrInts(c.explicit_paddings);
    }
    const Tensor sizes = Tensor::FromVector<int32_t>(
        std::vector<int32_t>(c.filter_dims.begin(), c.filter_dims.end()), TensorShape({4}));
    auto out = RunOp("Conv2DBackpropFilter", attrs,
                     {Floats(c.input, c.input_dims), sizes, Floats(c.grad, c.grad_dims)});
    ASSERT_TRUE(out.ok()) << out.status();
    // Each element is a float sum of up to batch * out_rows * out_cols
    // products of values in [-1, 1], ordered differently here (Gemm's blocks
    // or one after another) and in TensorFlow (oneDNN): its partial sums grow
    // like the square root of the count, so does the rounding error per
    // term, and the two can differ by about 2 float epsilons per term.
    const double terms = static_cast<double>(c.grad_dims[0] * c.grad_dims[1] * c.grad_dims[2]);
    ExpectClose((*out)[0], Floats(c.want, c.filter_dims), kSumRtol, 2.4e-7 * terms);
  }
}

TEST(Conv2DBackpropFilterTest, OutBackpropOfTheWrongShape) {
  auto out = RunOp("Conv2DBackpropFilter",
                   {{"strides", AttrInts({1, 1, 1, 1})}, {"padding", AttrS("VALID")}},
                   {Floats(std::vector<float>(16), {1, 4, 4, 1}),
                    Tensor::FromVector<int32_t>({3, 3, 1, 2}, TensorShape({4})),
                    Floats(std::vector<float>(18), {1, 3, 3, 2})});
  ExpectError(out, absl::StatusCode::kInvalidArgument, "out_backprop has shape");
}

// Conv2DBackpropFilter, SAME, 3x3, of random inputs against the sum in
// double. Each element sums up to n * oh * ow products in float (on Gemm or
// one after another): against the double sum its rounding error reaches a
// few 1e-5 at a thousand terms, so the tolerance grows with the count.
void CheckFilterGradAgainstDoubleSum(int64_t n, int64_t h, int64_t w, int64_t ci, int64_t co,
                                     int64_t stride) {
  const int64_t kh = 3, kw = 3;
  const std::vector<double> xd = testing::RandomDoubles(n * h * w * ci, -1, 1, 5);
  const Tensor x = Floats(std::vector<float>(xd.begin(), xd.end()), {n, h, w, ci});
  const int64_t oh = (h + stride - 1) / stride, ow = (w + stride - 1) / stride;
  const std::vector<double> gd = testing::RandomDoubles(n * oh * ow * co, -1, 1, 6);
  const Tensor g = Floats(std::vector<float>(gd.begin(), gd.end()), {n, oh, ow, co});
  const Tensor sizes = Tensor::FromVector<int32_t>(
      {3, 3, static_cast<int32_t>(ci), static_cast<int32_t>(co)}, TensorShape({4}));
  auto out = RunOp("Conv2DBackpropFilter",
                   {{"strides", AttrInts({1, stride, stride, 1})}, {"padding", AttrS("SAME")}},
                   {x, sizes, g});
  ASSERT_TRUE(out.ok()) << out.status();
  // SAME: the smaller half of the padding before.
  const int64_t pad_h = ((oh - 1) * stride + kh - h) / 2, pad_w = ((ow - 1) * stride + kw - w) / 2;
  std::vector<double> want(kh * kw * ci * co, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t z = 0; z < ow; ++z) {
        for (int64_t i = 0; i < kh; ++i) {
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t r = y * stride - pad_h + i, c = z * stride - pad_w + j;
            if (r < 0 || r >= h || c < 0 || c >= w) continue;
            for (int64_t p = 0; p < ci; ++p) {
              // The kernel's inputs are floats: round them the same way.
              const double v = static_cast<float>(xd[((b * h + r) * w + c) * ci + p]);
              for (int64_t q = 0; q < co; ++q) {
                want[((i * kw + j) * ci + p) * co + q] +=
                    v * static_cast<float>(gd[((b * oh + y) * ow + z) * co + q]);
              }
            }
          }
        }
      }
    }
  }
  const double terms = static_cast<double>(n * oh * ow);
  testing::ExpectAllNear(ToDoubles<float>((*out)[0]), want, 1e-7 * terms, "filter gradient");
}

TEST(Conv2DBackpropFilterTest, OnGemmMatchesADirectSum) {
  // 1,088 terms per element, one chunk of patches.
  CheckFilterGradAgainstDoubleSum(4, 33, 31, 8, 32, 2);
}

TEST(Conv2DBackpropFilterTest, PatchesInSeveralChunks) {
  // 9.4 MB of patches per image: one image per 16 MB chunk, the chunks'
  // products added.
  CheckFilterGradAgainstDoubleSum(3, 64, 64, 64, 4, 1);
}

// Conv2DBackpropFilter on float (oneDNN's backward weights, one partial
// filter gradient per piece of images, added at the end) and on float held
// to im2col + Gemm / the direct loop (GRAPHRUN_CONV2D_LIBRARY=eigen)
// against the double kernel on the same float values. Each element sums
// n * oh * ow products of values in [-1, 1] in another order on each path;
// as CheckFilterGradAgainstDoubleSum, the float rounding reaches a few
// 1e-5 at a thousand terms, so the tolerance (relative to 1 + |want|) is
// 1e-7 * terms.
void CheckFilterGradAgainstDouble(const testing::ConvGradCase& c) {
  SCOPED_TRACE(c.Describe());
  const testing::ConvGradSetup setup = testing::SetUpConvGrad(c);
  const std::map<std::string, AttrValue>& attrs = setup.attrs;
  const int64_t oh = setup.out_rows, ow = setup.out_cols;
  const std::vector<double> x = testing::RandomFloatValues(c.n * c.h * c.w * c.ci, 9);
  const std::vector<double> dy = testing::RandomFloatValues(c.n * oh * ow * c.co, 10);
  const Tensor sizes = Ints<int32_t>({c.k, c.k, c.ci, c.co});
  auto run = [&](auto zero, int threads) {
    using T = decltype(zero);
    return RunOp("Conv2DBackpropFilter", attrs,
                 {testing::MakeTensor<T>(x, {c.n, c.h, c.w, c.ci}), sizes,
                  testing::MakeTensor<T>(dy, {c.n, oh, ow, c.co})},
                 threads);
  };
  auto want = run(0.0, 2);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::vector<double> expected = ToDoubles<double>((*want)[0]);
  const double tol = 1e-7 * static_cast<double>(c.n * oh * ow);
  auto onednn = run(0.f, c.threads);
  ASSERT_TRUE(onednn.ok()) << onednn.status();
  testing::ExpectAllNear(ToDoubles<float>((*onednn)[0]), expected, tol, "oneDNN");
  setenv("GRAPHRUN_CONV2D_LIBRARY", "eigen", 1);
  auto gemm = run(0.f, c.threads);
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  testing::ExpectAllNear(ToDoubles<float>((*gemm)[0]), expected, tol, "Gemm / direct loop");
}

TEST(Conv2DBackpropFilterTest, OneDnnMatchesDoubleOnTrainingShapes) {
  // The benchmark's shapes (bench/conv_grad_benchmark.cc): more images
  // than threads.
  CheckFilterGradAgainstDouble({64, 14, 14, 8, 5, 16, 1, "SAME", 2});
  CheckFilterGradAgainstDouble({64, 28, 28, 1, 5, 8, 1, "SAME", 4});
  CheckFilterGradAgainstDouble({64, 28, 28, 8, 5, 16, 2, "SAME", 3});
  // Fewer images than threads, and one image.
  CheckFilterGradAgainstDouble({3, 28, 28, 8, 5, 16, 2, "SAME", 8});
  CheckFilterGradAgainstDouble({1, 14, 14, 8, 5, 16, 1, "SAME", 4});
  // VALID, stride 2 over a size it does not divide, and EXPLICIT.
  CheckFilterGradAgainstDouble({5, 14, 14, 8, 5, 16, 1, "VALID", 2});
  CheckFilterGradAgainstDouble({3, 13, 12, 4, 3, 6, 2, "VALID", 4});
  CheckFilterGradAgainstDouble({3, 11, 10, 4, 3, 6, 2, "EXPLICIT", 2, {0, 0, 1, 2, 2, 0, 0, 0}});
}

TEST(NnGradShapesTest, ShapeFunctions) {
  EXPECT_EQ(ShapeRun("ReluGrad").In(PartialShape({2, -1})).In(PartialShape({-1, 3})).Str(),
            "[2,3]");
  EXPECT_NE(ShapeRun("SigmoidGrad")
                .In(PartialShape({2, 3}))
                .In(PartialShape({2, 4}))
                .Error()
                .find("for SigmoidGrad"),
            std::string::npos);
  EXPECT_EQ(ShapeRun("BiasAddGrad").In(PartialShape({2, 5, 4, 3})).Str(), "[3]");
  EXPECT_EQ(ShapeRun("BiasAddGrad")
                .Attr("data_format", AttrS("NCHW"))
                .In(PartialShape({2, 5, 4, 3}))
                .Str(),
            "[5]");
  EXPECT_EQ(ShapeRun("BroadcastGradientArgs").In(PartialShape({2})).In(PartialShape({3})).Str(),
            "[?];[?]");
  EXPECT_EQ(ShapeRun("ShapeN")
                .Attr("N", testing::AttrI(2))
                .Attr("T", AttrType(DT_FLOAT))
                .In(PartialShape({2, 3}))
                .In(PartialShape())
                .Str(),
            "[2];[?]");
  EXPECT_EQ(ShapeRun("UnsortedSegmentSum")
                .In(PartialShape({6, 4, 5}))
                .In(PartialShape({6, 4}))
                .In(Tensor::FromVector<int32_t>({7}, TensorShape({})))
                .Str(),
            "[7,5]");
  EXPECT_EQ(ShapeRun("MaxPoolGrad")
                .Attr("ksize", AttrInts({1, 2, 2, 1}))
                .Attr("strides", AttrInts({1, 2, 2, 1}))
                .Attr("padding", AttrS("VALID"))
                .In(PartialShape({1, 4, 4, 3}))
                .In(PartialShape({1, 2, 2, 3}))
                .In(PartialShape({1, 2, 2, 3}))
                .Str(),
            "[1,4,4,3]");
  EXPECT_EQ(ShapeRun("AvgPoolGrad")
                .Attr("ksize", AttrInts({1, 2, 2, 1}))
                .Attr("strides", AttrInts({1, 2, 2, 1}))
                .Attr("padding", AttrS("VALID"))
                .Attr("T", AttrType(DT_FLOAT))
                .In(Tensor::FromVector<int32_t>({1, 4, 4, 3}, TensorShape({4})))
                .In(PartialShape({1, 2, 2, 3}))
                .Str(),
            "[1,4,4,3]");
  EXPECT_EQ(ShapeRun("Conv2DBackpropFilter")
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("SAME"))
                .In(PartialShape({1, 4, 4, 3}))
                .In(Tensor::FromVector<int32_t>({3, 3, 3, 8}, TensorShape({4})))
                .In(PartialShape({1, 4, 4, 8}))
                .Str(),
            "[3,3,3,8]");
}

}  // namespace
}  // namespace graphrun
