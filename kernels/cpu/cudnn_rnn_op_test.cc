// CudnnRNN's attrs on CPU: dropout in training is refused (the forward pass
// here never drops), not silently left out; the same node in inference
// runs, its one step checked against tanh(W x + bW + R h + bR) by hand.
// The values of every mode come from Keras in tests/conformance.
#include <cmath>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrF;
using testing::AttrS;
using testing::RunOp;

absl::StatusOr<std::vector<Tensor>> OneStep(bool is_training, float dropout) {
  const TensorShape one({1, 1, 1});
  // W = 2, R = -1, bW = 0.1, bR = 0.2 in cuDNN's canonical order.
  return RunOp("CudnnRNN",
               {{"rnn_mode", AttrS("rnn_tanh")}, {"is_training", AttrB(is_training)},
                {"dropout", AttrF(dropout)}},
               {Tensor::FromVector<float>({0.5f}, one), Tensor::FromVector<float>({0.25f}, one),
                Tensor::FromVector<float>({0.0f}, one),
                Tensor::FromVector<float>({2.0f, -1.0f, 0.1f, 0.2f})});
}

TEST(CudnnRnnOpTest, DropoutInTrainingIsRefused) {
  testing::ExpectError(OneStep(/*is_training=*/true, 0.5f), absl::StatusCode::kUnimplemented,
                       "dropout 0.5 in training");
}

TEST(CudnnRnnOpTest, DropoutInInferenceRuns) {
  for (bool is_training : {false, true}) {
    absl::StatusOr<std::vector<Tensor>> out = OneStep(is_training, is_training ? 0.0f : 0.5f);
    ASSERT_TRUE(out.ok()) << out.status();
    const float want = std::tanh(2.0f * 0.5f + 0.1f - 1.0f * 0.25f + 0.2f);
    EXPECT_NEAR((*out)[0].flat<float>()[0], want, 1e-6f);
    EXPECT_NEAR((*out)[1].flat<float>()[0], want, 1e-6f);
  }
}

}  // namespace
}  // namespace graphrun
