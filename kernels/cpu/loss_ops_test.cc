// Expected values: TensorFlow 2.21, checked by make_loss_ops_test_values.py beside this file.
// L2Loss, SoftmaxCrossEntropyWithLogits (with broadcasting) and
// SparseSoftmaxCrossEntropyWithLogits against values from TensorFlow 2.21,
// a big batch against the formula in double, and the errors.
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

using ::graphrun::testing::RunOp;
using ::testing::HasSubstr;

// The inputs the expected values were computed from: logits are multiples
// of 1/4, labels multiples of 1/13.
Tensor Logits(const std::vector<int64_t>& dims) {
  const TensorShape shape = *TensorShape::FromDims(dims);
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ((i * 7 + 3) % 11) / 4.0f - 1.25f;
  return Tensor::FromVector(v, shape);
}
Tensor Labels(const std::vector<int64_t>& dims) {
  const TensorShape shape = *TensorShape::FromDims(dims);
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ((i * 5 + 1) % 13) / 13.0f;
  return Tensor::FromVector(v, shape);
}

template <typename T>
Tensor Cast(const Tensor& t) {
  std::vector<T> v;
  for (float x : t.flat<float>()) v.push_back(static_cast<T>(x));
  return Tensor::FromVector(v, t.shape());
}

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol) {
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double got = 0;
    switch (t.dtype()) {
      case DT_DOUBLE: got = t.flat<double>()[i]; break;
      case DT_HALF: got = static_cast<float>(t.flat<half>()[i]); break;
      case DT_BFLOAT16: got = static_cast<float>(t.flat<bfloat16>()[i]); break;
      default: got = t.flat<float>()[i];
    }
    EXPECT_NEAR(got, want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
  }
}

TEST(L2LossTest, MatchesTensorFlow) {
  auto out = RunOp("L2Loss", {}, {Logits({3, 5})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape());
  ExpectNear((*out)[0], {4.65625}, 1e-7);
  out = RunOp("L2Loss", {}, {Cast<half>(Logits({3, 5}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], {4.65625}, 1e-3);
  out = RunOp("L2Loss", {}, {Tensor(DT_DOUBLE, TensorShape({0, 3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], {0}, 0);
}

struct XentCase {
  std::vector<int64_t> features, labels;
  std::vector<double> loss, backprop;
};

TEST(SoftmaxCrossEntropyTest, MatchesTensorFlowWithBroadcasting) {
  const std::vector<XentCase> cases = {
      {{3, 4}, {3, 4},
       {2.277461051940918, 2.4212584495544434, 2.7117936611175537},
       {0.026699528098106384, 0.13476845622062683, -0.6267848014831543, -0.15006786584854126, -0.17717552185058594, 0.1612081229686737, -0.32531023025512695, -0.42795318365097046, 0.08069299161434174, -0.4521794319152832, -0.4265575110912323, -0.12503303587436676}},
      {{3, 4}, {1, 4},
       {2.277461051940918, 3.544326066970825, 2.227137565612793},
       {0.026699528098106384, 0.13476845622062683, -0.6267848014831543, -0.15006786584854126, 0.3612860441207886, -0.30033034086227417, -0.7868487238883972, 0.11050836741924286, 0.15761607885360718, -0.37525632977485657, -0.34963443875312805, -0.04810994863510132}},
      {{1, 4}, {3, 4},
       {2.277461051940918, 3.914691925048828, 2.801922559738159},
       {0.026699528098106384, 0.13476845622062683, -0.6267848014831543, -0.15006786584854126, -0.5117620229721069, 0.5963069200515747, -0.16524632275104523, -0.6885294318199158, -0.05022355169057846, 0.057845354080200195, -0.7037078738212585, -0.2269909530878067}},
      {{3, 4}, {4},
       {2.277461051940918, 3.544326066970825, 2.227137565612793},
       {0.026699528098106384, 0.13476845622062683, -0.6267848014831543, -0.15006786584854126, 0.3612860441207886, -0.30033034086227417, -0.7868487238883972, 0.11050836741924286, 0.15761607885360718, -0.37525632977485657, -0.34963443875312805, -0.04810994863510132}},
  };
  for (const XentCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "labels rank " << c.labels.size()
                                      << " rows " << c.labels[0]);
    auto out = RunOp("SoftmaxCrossEntropyWithLogits", {},
                     {Logits(c.features), Labels(c.labels)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({3}));
    EXPECT_EQ((*out)[1].shape(), TensorShape({3, 4}));
    ExpectNear((*out)[0], c.loss, 1e-6);
    ExpectNear((*out)[1], c.backprop, 1e-6);
    out = RunOp("SoftmaxCrossEntropyWithLogits", {},
                {Cast<double>(Logits(c.features)), Cast<double>(Labels(c.labels))});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear((*out)[0], c.loss, 1e-6);
    out = RunOp("SoftmaxCrossEntropyWithLogits", {},
                {Cast<bfloat16>(Logits(c.features)),
                 Cast<bfloat16>(Labels(c.labels))});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear((*out)[0], c.loss, 2e-2);
  }
}

TEST(SparseSoftmaxCrossEntropyTest, MatchesTensorFlow) {
  const std::vector<double> loss = {1.5169997215270996, 0.8250590562820435, 1.7001327276229858};
  const std::vector<double> backprop = {0.10362260788679123, 0.5963069200515747, -0.7806309461593628, 0.08070136606693268, -0.5617908835411072, 0.1612081229686737, 0.05930515378713608, 0.3412775993347168, 0.23453915119171143, 0.08628213405609131, 0.49651941657066345, -0.8173407316207886};
  auto out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
                   {Logits({3, 4}), Tensor::FromVector(std::vector<int64_t>{2, 0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], loss, 1e-6);
  ExpectNear((*out)[1], backprop, 1e-6);
  out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
              {Cast<half>(Logits({3, 4})),
               Tensor::FromVector(std::vector<int32_t>{2, 0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], loss, 2e-3);
  ExpectNear((*out)[1], backprop, 2e-3);
}

TEST(SoftmaxCrossEntropyTest, BigBatchMatchesFormula) {
  const int64_t batch = 300, classes = 130;
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> logits(batch * classes);
  for (float& v : logits) v = dist(gen);
  std::vector<int32_t> labels(batch);
  for (int64_t b = 0; b < batch; ++b) labels[b] = (b * 37) % classes;
  std::vector<double> loss(batch), backprop(batch * classes);
  for (int64_t b = 0; b < batch; ++b) {
    double max = -1e30, sum = 0;
    for (int64_t c = 0; c < classes; ++c) max = std::max<double>(max, logits[b * classes + c]);
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits[b * classes + c] - max);
    loss[b] = std::log(sum) - (logits[b * classes + labels[b]] - max);
    for (int64_t c = 0; c < classes; ++c) {
      backprop[b * classes + c] = std::exp(logits[b * classes + c] - max) / sum -
                                  (c == labels[b] ? 1 : 0);
    }
  }
  auto out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
                   {Tensor::FromVector(logits, TensorShape({batch, classes})),
                    Tensor::FromVector(labels)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], loss, 1e-5);
  ExpectNear((*out)[1], backprop, 1e-5);
  // The dense form with one-hot labels gives the same.
  std::vector<float> one_hot(batch * classes, 0.0f);
  for (int64_t b = 0; b < batch; ++b) one_hot[b * classes + labels[b]] = 1;
  out = RunOp("SoftmaxCrossEntropyWithLogits", {},
              {Tensor::FromVector(logits, TensorShape({batch, classes})),
               Tensor::FromVector(one_hot, TensorShape({batch, classes}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], loss, 1e-5);
  ExpectNear((*out)[1], backprop, 1e-5);
}

TEST(SoftmaxCrossEntropyTest, Errors) {
  absl::Status s = RunOp("SoftmaxCrossEntropyWithLogits", {},
                         {Logits({3, 4}), Labels({2, 4})})
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("must be broadcastable"));
  s = RunOp("SoftmaxCrossEntropyWithLogits", {},
            {Logits({2, 3, 4}), Labels({2, 3, 4})})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("2-dimensional"));
  s = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
            {Logits({3, 4}), Tensor::FromVector(std::vector<int32_t>{1, 4, 0})})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("label value of 4 which is outside the "
                                     "valid range of [0, 4)"));
  s = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
            {Logits({3, 4}), Tensor::FromVector(std::vector<int32_t>{1, 0})})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("same first dimension"));
  s = RunOp("SparseSoftmaxCrossEntropyWithLogits", {},
            {Logits({3, 0}), Tensor::FromVector(std::vector<int32_t>{0, 0, 0})})
          .status();
  EXPECT_THAT(s.message(), HasSubstr("at least one class"));
}

}  // namespace
}  // namespace graphrun
