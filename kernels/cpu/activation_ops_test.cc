// Expected values: TensorFlow 2.21, checked by make_activation_ops_test_values.py beside this file.
// Tests for Relu, Relu6, Elu, Softplus, Softsign, Selu, LeakyRelu, Softmax,
// LogSoftmax, BiasAdd and BiasAddV1 against hand-computed values, values
// from TensorFlow 2.21 and naive reference loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AllClose;
using testing::AttrF;
using testing::AttrS;
using testing::ExpectAllNear;
using testing::MakeTensor;
using testing::RandomDoubles;
using testing::RunOp;
using testing::ToDoubles;

// --- Relu / Relu6 / Elu ---

template <typename T>
class ReluTypedTest : public ::testing::Test {};
using ReluTypes = ::testing::Types<float, double, half, bfloat16, int8_t, uint8_t,
                                   int16_t, uint16_t, int32_t, uint32_t, int64_t,
                                   uint64_t>;
TYPED_TEST_SUITE(ReluTypedTest, ReluTypes);

TYPED_TEST(ReluTypedTest, HandValues) {
  using T = TypeParam;
  const bool is_signed = !std::is_unsigned_v<T>;
  std::vector<double> in = {0, 1, 5, 6, 7, 100};
  if (is_signed) in.insert(in.end(), {-1, -7, -100});
  const TensorShape shape({static_cast<int64_t>(in.size())});
  std::vector<double> relu, relu6;
  for (double x : in) {
    relu.push_back(std::max(x, 0.0));
    relu6.push_back(std::min(std::max(x, 0.0), 6.0));
  }
  auto out = RunOp("Relu", {}, {MakeTensor<T>(in, shape)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<T>((*out)[0]), relu);
  out = RunOp("Relu6", {}, {MakeTensor<T>(in, shape)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<T>((*out)[0]), relu6);
}

TEST(ReluTest, ScalarEmptyAndLarge) {
  auto out = RunOp("Relu", {}, {Tensor::Scalar<float>(-2.5f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape());
  EXPECT_EQ((*out)[0].scalar<float>(), 0.f);

  out = RunOp("Relu6", {}, {Tensor(DT_FLOAT, TensorShape({0, 3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3}));

  // Over the threading threshold, on the pool.
  const int64_t n = 100000;
  std::vector<double> in = RandomDoubles(n, -10, 10, 1);
  std::vector<double> want;
  for (double x : in) want.push_back(std::min(std::max(static_cast<double>(static_cast<float>(x)), 0.0), 6.0));
  out = RunOp("Relu6", {}, {MakeTensor<float>(in, TensorShape({n}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<float>((*out)[0]), want);
}

template <typename T>
class FloatTypedTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, half, bfloat16>;
TYPED_TEST_SUITE(FloatTypedTest, FloatTypes);

template <typename T>
double Tol() {
  if constexpr (std::is_same_v<T, half>) return 2e-3;
  if constexpr (std::is_same_v<T, bfloat16>) return 1.6e-2;
  if constexpr (std::is_same_v<T, float>) return 1e-6;
  return 1e-14;
}

TYPED_TEST(FloatTypedTest, Elu) {
  using T = TypeParam;
  std::vector<double> in = {-3, -1, -0.5, 0, 0.5, 2};
  for (int64_t n : {int64_t{6}, int64_t{40000}}) {
    if (n > 6) in = RandomDoubles(n, -4, 4, 2);
    Tensor x = MakeTensor<T>(in, TensorShape({n}));
    std::vector<double> want;
    for (double v : ToDoubles<T>(x)) want.push_back(v < 0 ? std::exp(v) - 1 : v);
    auto out = RunOp("Elu", {}, {x}, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectAllNear(ToDoubles<T>((*out)[0]), want, Tol<T>(), "Elu");
  }
}

// --- Softplus / Softsign / Selu / LeakyRelu ---

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// The activations by their formulas, in double.
double Softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double Softsign(double x) { return x / (1 + std::abs(x)); }
double Selu(double x) {
  return x > 0 ? kSeluScale * x : kSeluScale * kSeluAlpha * std::expm1(x);
}

TYPED_TEST(FloatTypedTest, SoftplusSoftsignSeluLeakyReluMatchTheirFormulas) {
  using T = TypeParam;
  std::vector<double> in = {-20, -3, -1, -1e-3, 0, 0.5, 2, 15, 40};
  for (int64_t n : {int64_t{9}, int64_t{40000}}) {
    if (n > 9) in = RandomDoubles(n, -12, 12, 3);
    const Tensor x = MakeTensor<T>(in, TensorShape({n}));
    const std::vector<double> xs = ToDoubles<T>(x);  // as T holds them
    struct Case {
      const char* op;
      double (*f)(double);
    } cases[] = {{"Softplus", Softplus}, {"Softsign", Softsign}, {"Selu", Selu}};
    for (const Case& c : cases) {
      std::vector<double> want;
      for (double v : xs) want.push_back(c.f(v));
      auto out = RunOp(c.op, {}, {x}, 4);
      ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
      ExpectAllNear(ToDoubles<T>((*out)[0]), want, Tol<T>(), c.op);
    }
    // alpha is a float attr: the kernel multiplies by T(0.3f).
    const double alpha = static_cast<double>(static_cast<T>(0.3f));
    std::vector<double> want;
    for (double v : xs) want.push_back(v > 0 ? v : alpha * v);
    auto out = RunOp("LeakyRelu", {{"alpha", AttrF(0.3f)}}, {x}, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectAllNear(ToDoubles<T>((*out)[0]), want, Tol<T>(), "LeakyRelu");
  }
}

// TensorFlow 2.21's values (tf.raw_ops, float64; alpha = 0.1 for LeakyRelu).
TEST(ActivationTest, MatchTensorFlow) {
  const std::vector<double> x = {-20.0, -3.0, -1.0, -0.0001, 0.0, 0.5, 2.0, 15.0, 40.0};
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"Softplus", {2.061153620314381e-09, 0.048587351573742055, 0.3132616875182228,
                    0.6930971818099453, 0.6931471805599453, 0.9740769841801067,
                    2.1269280110429722, 15.000000305902272, 40.0}},
      {"Softsign", {-0.9523809523809523, -0.75, -0.5, -9.999000099990002e-05, 0.0,
                    0.3333333333333333, 0.6666666666666666, 0.9375, 0.975609756097561}},
      {"Selu", {-1.7580993372236642, -1.670568728767112, -1.1113307378125628,
                -0.00017580114388104505, 0.0, 0.5253504936777402, 2.101401974710961,
                15.760514810332207, 42.028039494219215}},
      {"LeakyRelu", {-2.0000000298023224, -0.30000000447034836, -0.10000000149011612,
                     -1.0000000149011612e-05, 0.0, 0.5, 2.0, 15.0, 40.0}},
  };
  for (const auto& [op, want] : cases) {
    std::map<std::string, AttrValue> attrs;
    if (op == "LeakyRelu") attrs["alpha"] = AttrF(0.1f);
    auto d = RunOp(op, attrs, {MakeTensor<double>(x, TensorShape({9}))});
    ASSERT_TRUE(d.ok()) << op << ": " << d.status();
    ExpectAllNear(ToDoubles<double>((*d)[0]), want, 1e-15, op + " double");
    auto f = RunOp(op, attrs, {MakeTensor<float>(x, TensorShape({9}))});
    ASSERT_TRUE(f.ok()) << op << ": " << f.status();
    ExpectAllNear(ToDoubles<float>((*f)[0]), want, 2e-7, op + " float");
  }
}

TEST(ActivationTest, InfinitiesNanAndDefaults) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({-inf, inf, nan});
  auto values = [&](const std::string& op) {
    auto out = RunOp(op, {}, {x});
    EXPECT_TRUE(out.ok()) << op << ": " << out.status();
    return out.ok() ? ToDoubles<float>((*out)[0]) : std::vector<double>(3, 0);
  };
  // TensorFlow: Softplus [0, inf, nan], Softsign [nan, nan, nan], Selu
  // [-scale * alpha, inf, nan], LeakyRelu [-inf, inf, nan].
  std::vector<double> v = values("Softplus");
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], inf);
  EXPECT_TRUE(std::isnan(v[2]));
  for (double s : values("Softsign")) EXPECT_TRUE(std::isnan(s));
  v = values("Selu");
  EXPECT_NEAR(v[0], -kSeluScale * kSeluAlpha, 1e-6);
  EXPECT_EQ(v[1], inf);
  EXPECT_TRUE(std::isnan(v[2]));
  v = values("LeakyRelu");  // default alpha 0.2
  EXPECT_EQ(v[0], -inf);
  EXPECT_EQ(v[1], inf);
  EXPECT_TRUE(std::isnan(v[2]));
  auto leaky = RunOp("LeakyRelu", {}, {Tensor::FromVector<float>({-1, 2})});
  ASSERT_TRUE(leaky.ok()) << leaky.status();
  EXPECT_EQ(ToDoubles<float>((*leaky)[0]), (std::vector<double>{-0.2f, 2}));
  // alpha above 1 still scales only the negative side.
  leaky = RunOp("LeakyRelu", {{"alpha", AttrF(2)}}, {Tensor::FromVector<float>({-1, 0, 2})});
  ASSERT_TRUE(leaky.ok()) << leaky.status();
  EXPECT_EQ(ToDoubles<float>((*leaky)[0]), (std::vector<double>{-2, 0, 2}));
  auto empty = RunOp("Selu", {}, {Tensor(DT_DOUBLE, TensorShape({2, 0}))});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), TensorShape({2, 0}));
}

// --- Softmax / LogSoftmax ---

std::vector<double> NaiveSoftmax(const std::vector<double>& x, int64_t depth,
                                 bool log) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / depth; ++r) {
    const double* row = &x[r * depth];
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < depth; ++j) mx = std::max(mx, row[j]);
    double sum = 0;
    for (int64_t j = 0; j < depth; ++j) sum += std::exp(row[j] - mx);
    for (int64_t j = 0; j < depth; ++j) {
      y[r * depth + j] =
          log ? row[j] - mx - std::log(sum) : std::exp(row[j] - mx) / sum;
    }
  }
  return y;
}

TYPED_TEST(FloatTypedTest, SoftmaxMatchesNaive) {
  using T = TypeParam;
  for (const TensorShape& shape :
       {TensorShape({5}), TensorShape({3, 7}), TensorShape({2, 3, 4}),
        TensorShape({300, 130})}) {
    Tensor x = MakeTensor<T>(RandomDoubles(shape.num_elements(), -5, 5, 3), shape);
    for (bool log : {false, true}) {
      auto out = RunOp(log ? "LogSoftmax" : "Softmax", {}, {x}, 4);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].shape(), shape);
      ExpectAllNear(ToDoubles<T>((*out)[0]),
                 NaiveSoftmax(ToDoubles<T>(x), shape.dim_size(shape.dims() - 1), log),
                 Tol<T>() * 4, (log ? "LogSoftmax " : "Softmax ") + shape.DebugString());
    }
  }
}

TEST(SoftmaxTest, LargeLogitsAreStable) {
  Tensor x = Tensor::FromVector<float>({1000, 1000, -1000, 10000, 10001},
                                       TensorShape({1, 5}));
  auto out = RunOp("Softmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  const double e = std::exp(-1.0);
  ExpectAllNear(ToDoubles<float>((*out)[0]), {0, 0, 0, e / (1 + e), 1 / (1 + e)}, 1e-6,
             "softmax");
  out = RunOp("LogSoftmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles<float>((*out)[0]);
  EXPECT_NEAR(got[3], -1 - std::log1p(e), 1e-4);
  EXPECT_NEAR(got[4], -std::log1p(e), 1e-4);
  EXPECT_NEAR(got[0], -9001 - std::log1p(e), 1e-1);
  for (double v : got) EXPECT_TRUE(std::isfinite(v));
}

TEST(SoftmaxTest, HandValuesAndEmpty) {
  Tensor x = Tensor::FromVector<double>({0, std::log(3.0)}, TensorShape({2}));
  auto out = RunOp("Softmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear(ToDoubles<double>((*out)[0]), {0.25, 0.75}, 1e-15, "softmax");
  out = RunOp("LogSoftmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear(ToDoubles<double>((*out)[0]), {std::log(0.25), std::log(0.75)}, 1e-15,
             "logsoftmax");

  out = RunOp("Softmax", {}, {Tensor(DT_FLOAT, TensorShape({0, 4}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 4}));
  out = RunOp("LogSoftmax", {}, {Tensor(DT_FLOAT, TensorShape({3, 0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3, 0}));
}

TEST(SoftmaxTest, ScalarIsAnError) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    auto out = RunOp(op, {}, {Tensor::Scalar<float>(1)});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(), "logits must have >= 1 dimension, got []");
  }
}

// --- BiasAdd ---

template <typename T>
class BiasAddTypedTest : public ::testing::Test {};
using BiasAddTypes = ::testing::Types<float, double, half, bfloat16, int8_t,
                                      uint8_t, int16_t, uint16_t, int32_t,
                                      uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(BiasAddTypedTest, BiasAddTypes);

TYPED_TEST(BiasAddTypedTest, NhwcAndNchw) {
  using T = TypeParam;
  // [2,3] + [3] (NHWC and NCHW agree for rank 2: channel is dim 1).
  std::vector<double> v = {1, 2, 3, 4, 5, 6};
  for (const char* format : {"NHWC", "NCHW"}) {
    auto out = RunOp("BiasAdd", {{"data_format", AttrS(format)}},
                     {MakeTensor<T>(v, TensorShape({2, 3})),
                      MakeTensor<T>({10, 20, 30}, TensorShape({3}))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles<T>((*out)[0]),
              (std::vector<double>{11, 22, 33, 14, 25, 36}))
        << format;
  }
  // NCHW [2,2,1,3]: bias along dim 1.
  std::vector<double> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i;
  auto out = RunOp("BiasAdd", {{"data_format", AttrS("NCHW")}},
                   {MakeTensor<T>(x, TensorShape({2, 2, 1, 3})),
                    MakeTensor<T>({10, 20}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<T>((*out)[0]),
            (std::vector<double>{10, 11, 12, 23, 24, 25, 16, 17, 18, 29, 30, 31}));
  // NHWC of the same values with 3 channels.
  out = RunOp("BiasAdd", {},
              {MakeTensor<T>(x, TensorShape({2, 2, 1, 3})),
               MakeTensor<T>({10, 20, 30}, TensorShape({3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<T>((*out)[0]),
            (std::vector<double>{10, 21, 32, 13, 24, 35, 16, 27, 38, 19, 30, 41}));
}

TEST(BiasAddTest, ComplexAndLargeMatchNaive) {
  Tensor x = Tensor::FromVector<complex64>({{1, 1}, {2, -1}}, TensorShape({1, 2}));
  Tensor b = Tensor::FromVector<complex64>({{0, 1}, {1, 0}}, TensorShape({2}));
  auto out = RunOp("BiasAdd", {}, {x, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<complex64>()[0], complex64(1, 2));
  EXPECT_EQ((*out)[0].flat<complex64>()[1], complex64(3, -1));

  // Over the threading threshold, both layouts.
  const int64_t n = 4, c = 16, h = 30, w = 25;
  std::vector<double> vals = RandomDoubles(n * c * h * w, -1, 1, 4);
  std::vector<double> bias = RandomDoubles(c, -1, 1, 5);
  std::vector<double> want_nchw(vals.size()), want_nhwc(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    const double xv = static_cast<float>(vals[i]);
    want_nchw[i] = xv + static_cast<float>(bias[(i / (h * w)) % c]);
    want_nhwc[i] = xv + static_cast<float>(bias[i % c]);
  }
  out = RunOp("BiasAdd", {{"data_format", AttrS("NCHW")}},
              {MakeTensor<float>(vals, TensorShape({n, c, h, w})),
               MakeTensor<float>(bias, TensorShape({c}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear(ToDoubles<float>((*out)[0]), want_nchw, 1e-6, "nchw");
  out = RunOp("BiasAdd", {},
              {MakeTensor<float>(vals, TensorShape({n, h, w, c})),
               MakeTensor<float>(bias, TensorShape({c}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear(ToDoubles<float>((*out)[0]), want_nhwc, 1e-6, "nhwc");
}

// BiasAddV1: BiasAdd without data_format, always along the last dimension.
TEST(BiasAddTest, BiasAddV1AddsAlongTheLastDimension) {
  auto out = RunOp("BiasAddV1", {},
                   {MakeTensor<float>({1, 2, 3, 4}, TensorShape({2, 2})),
                    MakeTensor<float>({10, 20}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<float>((*out)[0]), (std::vector<double>{11, 22, 13, 24}));
  std::vector<double> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i;
  out = RunOp("BiasAddV1", {},
              {MakeTensor<int64_t>(x, TensorShape({2, 3, 2})), MakeTensor<int64_t>({100, -100}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToDoubles<int64_t>((*out)[0]),
            (std::vector<double>{100, -99, 102, -97, 104, -95, 106, -93, 108, -91, 110, -89}));
  // TensorFlow's messages.
  out = RunOp("BiasAddV1", {},
              {MakeTensor<float>({1, 2, 3, 4}, TensorShape({2, 2})),
               MakeTensor<float>({10, 20, 3}, TensorShape({3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Must provide as many biases as the last dimension of the input "
            "tensor: [3] vs. [2,2]");
  out = RunOp("BiasAddV1", {},
              {MakeTensor<float>({1, 2}, TensorShape({2})), MakeTensor<float>({10, 20}, TensorShape({2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "Input tensor must be at least 2D: [2]");
}

TEST(BiasAddTest, EmptyAndErrors) {
  auto out = RunOp("BiasAdd", {},
                   {Tensor(DT_FLOAT, TensorShape({0, 3})),
                    Tensor(DT_FLOAT, TensorShape({3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3}));

  out = RunOp("BiasAdd", {},
              {Tensor(DT_FLOAT, TensorShape({2, 4})), Tensor(DT_FLOAT, TensorShape({3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "Must provide as many biases as the last dimension of the input "
            "tensor: [3] vs. [2,4]");
  out = RunOp("BiasAdd", {{"data_format", AttrS("NCHW")}},
              {Tensor(DT_FLOAT, TensorShape({2, 4, 3, 3})),
               Tensor(DT_FLOAT, TensorShape({3}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Must provide as many biases as the last dimension of the input "
            "tensor: [3] vs. [2,4,3,3]");
  out = RunOp("BiasAdd", {},
              {Tensor(DT_FLOAT, TensorShape({4})), Tensor(DT_FLOAT, TensorShape({4}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "Input tensor must be at least 2D: [4]");
  out = RunOp("BiasAdd", {},
              {Tensor(DT_FLOAT, TensorShape({2, 4})),
               Tensor(DT_FLOAT, TensorShape({1, 4}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "Biases must be 1D: [1,4]");
}

}  // namespace
}  // namespace graphrun
