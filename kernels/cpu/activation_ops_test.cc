// Tests for Relu, Relu6, Elu, Softmax, LogSoftmax and BiasAdd against
// hand-computed values and naive reference loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AllClose;
using testing::AttrS;
using testing::RunOp;

template <typename T>
Tensor Make(const std::vector<double>& v, const TensorShape& shape) {
  std::vector<T> t;
  for (double x : v) t.push_back(static_cast<T>(x));
  return Tensor::FromVector(t, shape);
}

template <typename T>
std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (T x : t.flat<T>()) v.push_back(static_cast<double>(x));
  return v;
}

std::vector<double> Random(int64_t n, double lo, double hi, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want,
                double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    if (!(err <= tol * (1 + std::abs(want[i]))) && ++failures <= 5) {
      ADD_FAILURE() << what << " element " << i << ": got " << got[i]
                    << ", want " << want[i];
    }
  }
}

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
  auto out = RunOp("Relu", {}, {Make<T>(in, shape)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<T>((*out)[0]), relu);
  out = RunOp("Relu6", {}, {Make<T>(in, shape)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<T>((*out)[0]), relu6);
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
  std::vector<double> in = Random(n, -10, 10, 1);
  std::vector<double> want;
  for (double x : in) want.push_back(std::min(std::max(static_cast<double>(static_cast<float>(x)), 0.0), 6.0));
  out = RunOp("Relu6", {}, {Make<float>(in, TensorShape({n}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), want);
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
    if (n > 6) in = Random(n, -4, 4, 2);
    Tensor x = Make<T>(in, TensorShape({n}));
    std::vector<double> want;
    for (double v : Values<T>(x)) want.push_back(v < 0 ? std::exp(v) - 1 : v);
    auto out = RunOp("Elu", {}, {x}, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<T>((*out)[0]), want, Tol<T>(), "Elu");
  }
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
    Tensor x = Make<T>(Random(shape.num_elements(), -5, 5, 3), shape);
    for (bool log : {false, true}) {
      auto out = RunOp(log ? "LogSoftmax" : "Softmax", {}, {x}, 4);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].shape(), shape);
      ExpectNear(Values<T>((*out)[0]),
                 NaiveSoftmax(Values<T>(x), shape.dim_size(shape.dims() - 1), log),
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
  ExpectNear(Values<float>((*out)[0]), {0, 0, 0, e / (1 + e), 1 / (1 + e)}, 1e-6,
             "softmax");
  out = RunOp("LogSoftmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = Values<float>((*out)[0]);
  EXPECT_NEAR(got[3], -1 - std::log1p(e), 1e-4);
  EXPECT_NEAR(got[4], -std::log1p(e), 1e-4);
  EXPECT_NEAR(got[0], -9001 - std::log1p(e), 1e-1);
  for (double v : got) EXPECT_TRUE(std::isfinite(v));
}

TEST(SoftmaxTest, HandValuesAndEmpty) {
  Tensor x = Tensor::FromVector<double>({0, std::log(3.0)}, TensorShape({2}));
  auto out = RunOp("Softmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<double>((*out)[0]), {0.25, 0.75}, 1e-15, "softmax");
  out = RunOp("LogSoftmax", {}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<double>((*out)[0]), {std::log(0.25), std::log(0.75)}, 1e-15,
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
                     {Make<T>(v, TensorShape({2, 3})),
                      Make<T>({10, 20, 30}, TensorShape({3}))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<T>((*out)[0]),
              (std::vector<double>{11, 22, 33, 14, 25, 36}))
        << format;
  }
  // NCHW [2,2,1,3]: bias along dim 1.
  std::vector<double> x(12);
  for (int i = 0; i < 12; ++i) x[i] = i;
  auto out = RunOp("BiasAdd", {{"data_format", AttrS("NCHW")}},
                   {Make<T>(x, TensorShape({2, 2, 1, 3})),
                    Make<T>({10, 20}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<T>((*out)[0]),
            (std::vector<double>{10, 11, 12, 23, 24, 25, 16, 17, 18, 29, 30, 31}));
  // NHWC of the same values with 3 channels.
  out = RunOp("BiasAdd", {},
              {Make<T>(x, TensorShape({2, 2, 1, 3})),
               Make<T>({10, 20, 30}, TensorShape({3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<T>((*out)[0]),
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
  std::vector<double> vals = Random(n * c * h * w, -1, 1, 4);
  std::vector<double> bias = Random(c, -1, 1, 5);
  std::vector<double> want_nchw(vals.size()), want_nhwc(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    const double xv = static_cast<float>(vals[i]);
    want_nchw[i] = xv + static_cast<float>(bias[(i / (h * w)) % c]);
    want_nhwc[i] = xv + static_cast<float>(bias[i % c]);
  }
  out = RunOp("BiasAdd", {{"data_format", AttrS("NCHW")}},
              {Make<float>(vals, TensorShape({n, c, h, w})),
               Make<float>(bias, TensorShape({c}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), want_nchw, 1e-6, "nchw");
  out = RunOp("BiasAdd", {},
              {Make<float>(vals, TensorShape({n, h, w, c})),
               Make<float>(bias, TensorShape({c}))}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), want_nhwc, 1e-6, "nhwc");
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
