// FusedBatchNorm / FusedBatchNormV3 against per-channel statistics computed
// in double.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrB;
using ::graphrun::testing::AttrF;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::AttrType;
using ::graphrun::testing::RunOp;
using ::testing::HasSubstr;

template <typename T>
Tensor RandomTensor(const TensorShape& shape, uint32_t seed, float lo,
                    float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (auto& v : t.flat<T>()) v = static_cast<T>(dist(gen));
  return t;
}

// Channel of flat element i.
int64_t ChannelOf(const TensorShape& shape, bool channel_last, int64_t i) {
  if (channel_last) return i % shape.dim_size(shape.dims() - 1);
  int64_t inner = 1;
  for (int d = 2; d < shape.dims(); ++d) inner *= shape.dim_size(d);
  return (i / inner) % shape.dim_size(1);
}

struct BnCase {
  std::string op = "FusedBatchNormV3";
  std::string format = "NHWC";
  bool training = false;
  float epsilon = 0.001f;
  float factor = 1.0f;
};

template <typename T>
void CheckBatchNorm(const BnCase& bc, const TensorShape& shape, double tol) {
  SCOPED_TRACE(::testing::Message()
               << bc.op << " " << DataTypeString(DataTypeToEnum<T>::value)
               << " " << bc.format << " " << shape.DebugString()
               << (bc.training ? " training" : " inference") << " factor "
               << bc.factor);
  const bool last = bc.format == "NHWC" || bc.format == "NDHWC";
  const int64_t c = shape.dim_size(last ? shape.dims() - 1 : 1);
  Tensor x = RandomTensor<T>(shape, 1, -2.0f, 3.0f);
  Tensor scale = RandomTensor<float>(TensorShape({c}), 2, 0.5f, 1.5f);
  Tensor offset = RandomTensor<float>(TensorShape({c}), 3, -1.0f, 1.0f);
  Tensor mean = RandomTensor<float>(TensorShape({c}), 4, -0.5f, 0.5f);
  Tensor var = RandomTensor<float>(TensorShape({c}), 5, 0.5f, 2.0f);

  // Reference statistics in double.
  const int64_t n = x.NumElements();
  const int64_t count = n / c;
  std::vector<double> bmean(c, 0), bvar(c, 0);
  for (int64_t i = 0; i < n; ++i) {
    bmean[ChannelOf(shape, last, i)] += static_cast<double>(x.flat<T>()[i]);
  }
  for (auto& m : bmean) m /= count;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ch = ChannelOf(shape, last, i);
    const double d = static_cast<double>(x.flat<T>()[i]) - bmean[ch];
    bvar[ch] += d * d;
  }
  for (auto& v : bvar) v /= count;

  std::map<std::string, AttrValue> attrs = {
      {"epsilon", AttrF(bc.epsilon)},
      {"data_format", AttrS(bc.format)},
      {"is_training", AttrB(bc.training)},
      {"exponential_avg_factor", AttrF(bc.factor)}};
  if (bc.op == "FusedBatchNormV3") attrs["U"] = AttrType(DT_FLOAT);
  auto out = RunOp(bc.op, attrs, {x, scale, offset, mean, var});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), bc.op == "FusedBatchNormV3" ? 6u : 5u);
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape(), shape);
  ASSERT_EQ(y.dtype(), DataTypeToEnum<T>::value);

  auto at = [](const Tensor& t, int64_t i) {
    return static_cast<double>(t.flat<float>()[i]);
  };
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ch = ChannelOf(shape, last, i);
    const double m = bc.training ? bmean[ch] : at(mean, ch);
    const double v = bc.training ? bvar[ch] : at(var, ch);
    const double expected =
        (static_cast<double>(x.flat<T>()[i]) - m) / std::sqrt(v + bc.epsilon) *
            at(scale, ch) +
        at(offset, ch);
    ASSERT_NEAR(static_cast<double>(y.flat<T>()[i]), expected,
                tol * (1 + std::abs(expected)))
        << "y at " << i;
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    double want_mean = at(mean, ch), want_var = at(var, ch);
    double want_r1 = want_mean, want_r2 = want_var;
    if (bc.training) {
      const double unbiased = bvar[ch] * count / std::max<int64_t>(count - 1, 1);
      const double f = bc.factor;
      want_mean = f == 1 ? bmean[ch] : (1 - f) * at(mean, ch) + f * bmean[ch];
      want_var = f == 1 ? unbiased : (1 - f) * at(var, ch) + f * unbiased;
      want_r1 = bmean[ch];
      want_r2 = bvar[ch];
    }
    EXPECT_NEAR(at((*out)[1], ch), want_mean, 1e-4) << "batch_mean " << ch;
    EXPECT_NEAR(at((*out)[2], ch), want_var, 1e-4) << "batch_variance " << ch;
    EXPECT_NEAR(at((*out)[3], ch), want_r1, 1e-4) << "reserve_1 " << ch;
    EXPECT_NEAR(at((*out)[4], ch), want_r2, 1e-4) << "reserve_2 " << ch;
  }
  if (bc.op == "FusedBatchNormV3") {
    EXPECT_EQ((*out)[5].shape(), TensorShape());
    EXPECT_EQ((*out)[5].dtype(), DT_FLOAT);
  }
}

TEST(FusedBatchNormTest, InferenceNhwcAndNchw) {
  BnCase bc;
  bc.op = "FusedBatchNorm";
  CheckBatchNorm<float>(bc, TensorShape({2, 3, 5, 4}), 1e-5);
  bc.format = "NCHW";
  CheckBatchNorm<float>(bc, TensorShape({2, 4, 3, 5}), 1e-5);
  bc.op = "FusedBatchNormV3";
  CheckBatchNorm<float>(bc, TensorShape({3, 2, 2, 3}), 1e-5);
}

TEST(FusedBatchNormTest, InferenceHalfAndBfloat16) {
  BnCase bc;
  CheckBatchNorm<half>(bc, TensorShape({2, 3, 3, 5}), 2e-3);
  CheckBatchNorm<bfloat16>(bc, TensorShape({2, 3, 3, 5}), 1e-2);
  bc.format = "NCHW";
  CheckBatchNorm<half>(bc, TensorShape({2, 5, 3, 3}), 2e-3);
}

TEST(FusedBatchNormTest, TrainingUsesBatchStatistics) {
  BnCase bc;
  bc.training = true;
  bc.op = "FusedBatchNorm";
  CheckBatchNorm<float>(bc, TensorShape({4, 3, 5, 3}), 1e-4);
  bc.format = "NCHW";
  CheckBatchNorm<float>(bc, TensorShape({4, 3, 5, 3}), 1e-4);
  bc.op = "FusedBatchNormV3";
  CheckBatchNorm<half>(bc, TensorShape({2, 3, 4, 4}), 4e-3);
  bc.format = "NHWC";
  CheckBatchNorm<bfloat16>(bc, TensorShape({2, 4, 4, 3}), 2e-2);
}

TEST(FusedBatchNormTest, TrainingExponentialAverage) {
  BnCase bc;
  bc.training = true;
  bc.factor = 0.25f;
  CheckBatchNorm<float>(bc, TensorShape({3, 4, 2, 5}), 1e-4);
  bc.format = "NCHW";
  CheckBatchNorm<float>(bc, TensorShape({3, 5, 2, 4}), 1e-4);
}

TEST(FusedBatchNormTest, FiveDimensionalFormats) {
  BnCase bc;
  bc.format = "NDHWC";
  CheckBatchNorm<float>(bc, TensorShape({2, 2, 3, 2, 3}), 1e-5);
  bc.format = "NCDHW";
  bc.training = true;
  CheckBatchNorm<float>(bc, TensorShape({2, 3, 2, 3, 2}), 1e-4);
}

TEST(FusedBatchNormTest, LargeRunsThreaded) {
  BnCase bc;
  CheckBatchNorm<float>(bc, TensorShape({4, 32, 32, 16}), 1e-5);
  bc.training = true;
  CheckBatchNorm<float>(bc, TensorShape({4, 32, 32, 16}), 1e-4);
  bc.format = "NCHW";
  CheckBatchNorm<float>(bc, TensorShape({4, 16, 32, 32}), 1e-4);
}

TEST(FusedBatchNormTest, SingleElementPerChannelTraining) {
  // count == 1: Bessel's correction divides by max(count - 1, 1).
  BnCase bc;
  bc.training = true;
  CheckBatchNorm<float>(bc, TensorShape({1, 1, 1, 3}), 1e-5);
}

TEST(FusedBatchNormTest, HandComputedTraining) {
  // One channel, values 1..4: mean 2.5, biased var 1.25, unbiased 5/3.
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({1, 2, 2, 1}));
  Tensor one = Tensor::FromVector<float>({1});
  Tensor zero = Tensor::FromVector<float>({0});
  auto out = RunOp("FusedBatchNorm",
                   {{"epsilon", AttrF(0)}, {"is_training", AttrB(true)}},
                   {x, one, zero, zero, one});
  ASSERT_TRUE(out.ok()) << out.status();
  const float sd = std::sqrt(1.25f);
  EXPECT_NEAR((*out)[0].flat<float>()[0], -1.5f / sd, 1e-6);
  EXPECT_NEAR((*out)[0].flat<float>()[3], 1.5f / sd, 1e-6);
  EXPECT_FLOAT_EQ((*out)[1].flat<float>()[0], 2.5f);
  EXPECT_FLOAT_EQ((*out)[2].flat<float>()[0], 5.0f / 3.0f);
  EXPECT_FLOAT_EQ((*out)[4].flat<float>()[0], 1.25f);
}

TEST(FusedBatchNormTest, EmptyInputGivesNanStatistics) {
  for (bool training : {false, true}) {
    Tensor x(DT_FLOAT, TensorShape({0, 2, 2, 3}));
    Tensor v = Tensor::FromVector<float>({1, 1, 1});
    auto out = RunOp("FusedBatchNormV3",
                     {{"is_training", AttrB(training)},
                      {"U", AttrType(DT_FLOAT)}},
                     {x, v, v, v, v});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2, 2, 3}));
    ASSERT_EQ((*out)[1].NumElements(), 3);
    EXPECT_TRUE(std::isnan((*out)[1].flat<float>()[0]));
    EXPECT_TRUE(std::isnan((*out)[2].flat<float>()[2]));
  }
}

TEST(FusedBatchNormTest, Errors) {
  Tensor x(DT_FLOAT, TensorShape({1, 2, 2, 3}));
  Tensor v3 = Tensor::FromVector<float>({1, 1, 1});
  Tensor v2 = Tensor::FromVector<float>({1, 1});
  auto run = [](std::map<std::string, AttrValue> attrs,
                std::vector<Tensor> inputs) {
    return RunOp("FusedBatchNorm", attrs, inputs).status();
  };
  absl::Status st = run({}, {Tensor(DT_FLOAT, TensorShape({2, 3})), v3, v3,
                             v3, v3});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("input must be 4 or 5-dimensional[2,3]"));
  st = run({}, {x, v2, v3, v3, v3});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("scale must have the same number of elements as the "
                        "channels of x, got 2 and 3"));
  st = run({}, {x, v3, v2, v3, v3});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("offset must have the same number of elements as "
                        "the channels of x, got 2 and 3"));
  st = run({{"is_training", AttrB(false)}}, {x, v3, v3, v2, v3});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("When is_training=false, mean must have the same "
                        "number of elements as the channels of x, got 2 and "
                        "3"));
  st = run({{"exponential_avg_factor", AttrF(0.5f)}}, {x, v3, v3, v3, v2});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("When exponential_avg_factor != 1, variance must "
                        "have the same number of elements"));
  st = run({}, {x, Tensor(DT_FLOAT, TensorShape({1, 3})), v3, v3, v3});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("scale must be 1-dimensional[1,3]"));
  // Training with the default factor ignores the running statistics'
  // sizes (they may be empty), as TensorFlow.
  Tensor empty(DT_FLOAT, TensorShape({0}));
  EXPECT_TRUE(run({{"is_training", AttrB(true)}}, {x, v3, v3, empty, empty})
                  .ok());
}

}  // namespace
}  // namespace graphrun
