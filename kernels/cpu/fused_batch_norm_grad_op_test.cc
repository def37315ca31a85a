// FusedBatchNormGrad, FusedBatchNormGradV2 and FusedBatchNormGradV3 against
// TensorFlow's outputs (fused_batch_norm_grad_test_data.h, made by
// make_fused_batch_norm_grad_test_data.py): training and inference, NHWC,
// NCHW, NDHWC and NCDHW, float, half and bfloat16; inputs past the
// parallel threshold against the formulas in double; empty inputs, bad
// inputs and the shape function.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/testing/shape_test_util.h"
#include "gtest/gtest.h"
#include "kernels/cpu/fused_batch_norm_grad_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrB;
using ::graphrun::testing::AttrF;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::ExpectAllNear;
using ::graphrun::testing::ExpectError;
using ::graphrun::testing::MakeTensor;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::ShapeRun;
using ::graphrun::testing::ToDoubles;
namespace data = ::graphrun::batch_norm_grad_test;

std::vector<double> Doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

Tensor Typed(const std::vector<double>& values, const std::vector<int64_t>& dims,
             DataType dtype) {
  switch (dtype) {
    case DT_HALF:
      return MakeTensor<half>(values, dims);
    case DT_BFLOAT16:
      return MakeTensor<bfloat16>(values, dims);
    default:
      return MakeTensor<float>(values, dims);
  }
}

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

Tensor Vector(const std::vector<double>& v) { return MakeTensor<float>(v); }

// The op's five (V3: six) inputs.
std::vector<Tensor> Inputs(const std::string& op, const Tensor& dy, const Tensor& x,
                           const std::vector<double>& scale, const std::vector<double>& mean,
                           const std::vector<double>& variance) {
  std::vector<Tensor> in = {dy, x, Vector(scale), Vector(mean), Vector(variance)};
  if (op == "FusedBatchNormGradV3") in.push_back(MakeTensor<float>({}, {0}));
  return in;
}

std::map<std::string, AttrValue> Attrs(const std::string& data_format, bool is_training,
                                       float epsilon) {
  return {{"data_format", AttrS(data_format)},
          {"is_training", AttrB(is_training)},
          {"epsilon", AttrF(epsilon)}};
}

// Sums of a few dozen products of floats, in another order than
// TensorFlow's: a few units of the float's last place; 1e-5 absolute and
// relative, as the other gradient tests.
constexpr double kTol = 1e-5;

TEST(FusedBatchNormGradTest, MatchesTensorFlow) {
  for (const data::BatchNormGradCase& c : data::kBatchNormGradCases) {
    SCOPED_TRACE(c.name);
    const Tensor dy = Typed(Doubles(c.y_backprop), c.dims, c.dtype);
    const Tensor x = Typed(Doubles(c.x), c.dims, c.dtype);
    auto out = RunOp(c.op, Attrs(c.data_format, c.is_training, c.epsilon),
                     Inputs(c.op, dy, x, Doubles(c.scale), Doubles(c.reserve_space_1),
                            Doubles(c.reserve_space_2)));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 5u);
    const Tensor& dx = (*out)[0];
    ASSERT_EQ(dx.dtype(), c.dtype);
    ASSERT_EQ(dx.shape(), x.shape());
    // half and bfloat16 compute in float and round once, as TensorFlow: the
    // two float values may round to neighbouring ones, one unit of the
    // type's last place.
    const double dx_tol = c.dtype == DT_HALF ? 1e-3 : c.dtype == DT_BFLOAT16 ? 8e-3 : kTol;
    ExpectAllNear(ValuesOf(dx), Doubles(c.x_backprop), dx_tol, "x_backprop");
    ExpectAllNear(ToDoubles<float>((*out)[1]), Doubles(c.scale_backprop), kTol,
                  "scale_backprop");
    ExpectAllNear(ToDoubles<float>((*out)[2]), Doubles(c.offset_backprop), kTol,
                  "offset_backprop");
    for (int i = 3; i < 5; ++i) {
      EXPECT_EQ((*out)[i].dtype(), DT_FLOAT);
      EXPECT_EQ((*out)[i].shape(), TensorShape({0}));
    }
  }
}

// The gradients in double from the formulas, for x viewed as [outer,
// channels, inner].
struct Reference {
  std::vector<double> dx, dscale, doffset;
};

Reference Direct(const std::vector<double>& dy, const std::vector<double>& x,
                 const std::vector<double>& scale, const std::vector<double>& mean,
                 const std::vector<double>& var, int64_t outer, int64_t channels, int64_t inner,
                 double epsilon, bool is_training) {
  Reference r;
  r.dx.resize(x.size());
  r.dscale.assign(channels, 0.0);
  r.doffset.assign(channels, 0.0);
  std::vector<double> sum_dy_xc(channels, 0.0);
  auto index = [&](int64_t o, int64_t c, int64_t i) { return (o * channels + c) * inner + i; };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = index(o, c, i);
        r.doffset[c] += dy[k];
        sum_dy_xc[c] += dy[k] * (x[k] - mean[c]);
      }
  const double n = static_cast<double>(outer * inner);
  for (int64_t c = 0; c < channels; ++c) {
    const double c0 = 1.0 / std::sqrt(var[c] + epsilon);
    r.dscale[c] = sum_dy_xc[c] * c0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = index(o, c, i);
        r.dx[k] = is_training ? scale[c] * c0 *
                                    (dy[k] - r.doffset[c] / n -
                                     (x[k] - mean[c]) * c0 * c0 * sum_dy_xc[c] / n)
                              : dy[k] * scale[c] * c0;
      }
  }
  return r;
}

// Past the parallel threshold (65,536 elements), both layouts, both modes.
// The kernel takes the statistics as given, so any mean and variance do.
TEST(FusedBatchNormGradTest, LargeInputsMatchTheFormulas) {
  const int64_t channels = 32;
  for (const bool nchw : {false, true}) {
    for (const bool is_training : {true, false}) {
      SCOPED_TRACE(::testing::Message() << (nchw ? "NCHW" : "NHWC")
                                        << (is_training ? " training" : " inference"));
      const std::vector<int64_t> dims = nchw ? std::vector<int64_t>{8, channels, 16, 16}
                                             : std::vector<int64_t>{8, 16, 16, channels};
      const int64_t n = testing::NumElementsOf(dims);
      std::vector<double> dy = testing::RandomDoubles(n, -1, 1, 3);
      std::vector<double> x = testing::RandomDoubles(n, -2, 2, 4);
      std::vector<double> scale = testing::RandomDoubles(channels, 0.5, 1.5, 5);
      std::vector<double> mean = testing::RandomDoubles(channels, -0.5, 0.5, 6);
      std::vector<double> var = testing::RandomDoubles(channels, 0.5, 2, 7);
      for (auto* v : {&dy, &x, &scale, &mean, &var})
        for (double& e : *v) e = static_cast<float>(e);
      auto out = RunOp("FusedBatchNormGradV3", Attrs(nchw ? "NCHW" : "NHWC", is_training, 1e-3f),
                       Inputs("FusedBatchNormGradV3", MakeTensor<float>(dy, dims),
                              MakeTensor<float>(x, dims), scale, mean, var));
      ASSERT_TRUE(out.ok()) << out.status();
      const int64_t outer = dims[0] * (nchw ? 1 : dims[1] * dims[2]);
      const int64_t inner = nchw ? dims[2] * dims[3] : 1;
      const Reference want =
          Direct(dy, x, scale, mean, var, outer, channels, inner, 1e-3f, is_training);
      // Sums of 2,048 float products per channel.
      ExpectAllNear(ToDoubles<float>((*out)[0]), want.dx, 1e-4, "x_backprop");
      ExpectAllNear(ToDoubles<float>((*out)[1]), want.dscale, 1e-4, "scale_backprop");
      ExpectAllNear(ToDoubles<float>((*out)[2]), want.doffset, 1e-4, "offset_backprop");
    }
  }
}

TEST(FusedBatchNormGradTest, EmptyInputGivesZeroGradients) {
  const Tensor empty = MakeTensor<float>({}, {0, 2, 2, 3});
  auto out = RunOp("FusedBatchNormGradV3", Attrs("NHWC", true, 1e-3f),
                   Inputs("FusedBatchNormGradV3", empty, empty, {1, 2, 3}, {0, 0, 0}, {1, 1, 1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), empty.shape());
  EXPECT_EQ(ToDoubles<float>((*out)[1]), std::vector<double>(3, 0.0));
  EXPECT_EQ(ToDoubles<float>((*out)[2]), std::vector<double>(3, 0.0));
}

TEST(FusedBatchNormGradTest, BadInputs) {
  const std::string op = "FusedBatchNormGradV3";
  const Tensor x = MakeTensor<float>(std::vector<double>(120, 0.5), {2, 3, 4, 5});
  const Tensor other = MakeTensor<float>(std::vector<double>(80, 0.5), {2, 2, 4, 5});
  const std::vector<double> five(5, 1.0), four(4, 1.0);
  const auto attrs = Attrs("NHWC", true, 1e-3f);
  ExpectError(RunOp(op, attrs, Inputs(op, x, other, five, five, five)),
              absl::StatusCode::kInvalidArgument,
              "x and y_backprop must have same shape, but x has shape [2,2,4,5] and "
              "y_backprop has shape [2,3,4,5]");
  ExpectError(RunOp(op, attrs, Inputs(op, x, x, four, five, five)),
              absl::StatusCode::kInvalidArgument,
              "scale must have the same number of elements as the channels of x, got 4 and 5");
  ExpectError(RunOp(op, attrs, Inputs(op, x, x, five, four, five)),
              absl::StatusCode::kInvalidArgument,
              "reserve_space_1 must have the same number of elements as the channels of x, "
              "got 4 and 5");
  ExpectError(RunOp(op, attrs, Inputs(op, x, x, five, five, four)),
              absl::StatusCode::kInvalidArgument,
              "reserve_space_2 must have the same number of elements as the channels of x, "
              "got 4 and 5");
  // NCHW: the channels are dim 1.
  ExpectError(RunOp(op, Attrs("NCHW", false, 1e-3f), Inputs(op, x, x, five, five, five)),
              absl::StatusCode::kInvalidArgument, "got 5 and 3");
  const Tensor flat = MakeTensor<float>(std::vector<double>(10, 0.5), {2, 5});
  ExpectError(RunOp(op, attrs, Inputs(op, flat, flat, five, five, five)),
              absl::StatusCode::kInvalidArgument, "input must be 4 or 5-dimensional");
  std::vector<Tensor> matrix_scale = Inputs(op, x, x, five, five, five);
  matrix_scale[2] = MakeTensor<float>(five, {1, 5});
  ExpectError(RunOp(op, attrs, matrix_scale), absl::StatusCode::kInvalidArgument,
              "scale must be 1-dimensional");
}

TEST(FusedBatchNormGradTest, ShapeFunction) {
  EXPECT_EQ(ShapeRun("FusedBatchNormGradV3")
                .In(PartialShape({2, 3, 4, -1}))
                .In(PartialShape({2, 3, 4, 5}))
                .In(PartialShape({-1}))
                .In(PartialShape({5}))
                .In(PartialShape({5}))
                .In(PartialShape({-1}))
                .Str(),
            "[2,3,4,5];[5];[5];[0];[0]");
  EXPECT_EQ(ShapeRun("FusedBatchNormGradV3")
                .Attr("data_format", AttrS("NCDHW"))
                .In(PartialShape({2, 3, 4, 5, 6}))
                .In(PartialShape({-1, -1, -1, -1, -1}))
                .In(PartialShape({-1}))
                .In(PartialShape({-1}))
                .In(PartialShape({-1}))
                .In(PartialShape({-1}))
                .Str(),
            "[2,3,4,5,6];[3];[3];[0];[0]");
  EXPECT_EQ(ShapeRun("FusedBatchNormGrad")
                .Attr("data_format", AttrS("NCHW"))
                .In(PartialShape({2, 3, 4, 5}))
                .In(PartialShape({2, 3, 4, 5}))
                .In(PartialShape({3}))
                .In(PartialShape({3}))
                .In(PartialShape({3}))
                .Str(),
            "[2,3,4,5];[3];[3];[0];[0]");
  const std::string error = ShapeRun("FusedBatchNormGradV2")
                                .In(PartialShape({2, 3, 4, 5}))
                                .In(PartialShape({2, 3, 4, 5}))
                                .In(PartialShape({4}))
                                .In(PartialShape({5}))
                                .In(PartialShape({5}))
                                .Error();
  EXPECT_NE(error.find("Dimensions must be equal, but are 5 and 4"), std::string::npos) << error;
  EXPECT_NE(ShapeRun("FusedBatchNormGradV3")
                .In(PartialShape({2, 3, 4}))
                .In(PartialShape({2, 3, 4}))
                .In(PartialShape({4}))
                .In(PartialShape({4}))
                .In(PartialShape({4}))
                .In(PartialShape({4}))
                .Error()
                .find("Shape must be rank 4 but is rank 3"),
            std::string::npos);
}

}  // namespace
}  // namespace graphrun
