// _FusedMatMul against MatMul, bias and activation computed here directly.
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrF;
using testing::AttrI;
using testing::RunOp;

AttrValue Ops(const std::vector<std::string>& ops) {
  AttrValue a;
  for (const auto& s : ops) a.mutable_list()->add_s(s);
  return a;
}

double Act(const std::string& act, double x, double alpha) {
  if (act == "Relu") return std::max(x, 0.0);
  if (act == "Relu6") return std::min(std::max(x, 0.0), 6.0);
  if (act == "Elu") return x < 0 ? std::exp(x) - 1 : x;
  if (act == "LeakyRelu") return x < 0 ? alpha * x : x;
  if (act == "Tanh") return std::tanh(x);
  if (act == "Sigmoid") return 1 / (1 + std::exp(-x));
  return x;
}

TEST(FusedMatMulTest, MatchesProductPlusBiasThenActivation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2, 2);
  // Small and large outputs, both transposes. On two threads the large
  // products are cut into blocks, each finished by the thread that
  // multiplied it: by columns (300x130), by rows (256x40); 2 rows against
  // 512 KB of weights take the skinny product.
  for (auto [m, k, n] : {std::array<int64_t, 3>{3, 5, 4}, std::array<int64_t, 3>{300, 64, 130},
                         std::array<int64_t, 3>{256, 48, 40}, std::array<int64_t, 3>{2, 256, 512}}) {
    for (bool tb : {false, true}) {
      std::vector<float> a(m * k), b(k * n), bias(n);
      for (float& v : a) v = u(rng);
      for (float& v : b) v = u(rng);
      for (float& v : bias) v = u(rng);
      Tensor ta = Tensor::FromVector<float>(a, TensorShape({m, k}));
      Tensor tb_t = Tensor::FromVector<float>(b, tb ? TensorShape({n, k}) : TensorShape({k, n}));
      Tensor tbias = Tensor::FromVector<float>(bias, TensorShape({n}));
      for (std::string act : {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"}) {
        std::vector<std::string> ops = {"BiasAdd"};
        if (!act.empty()) ops.push_back(act);
        auto out = RunOp("_FusedMatMul",
                         {{"transpose_b", AttrB(tb)}, {"num_args", AttrI(1)},
                          {"fused_ops", Ops(ops)}, {"leakyrelu_alpha", AttrF(0.3f)}},
                         {ta, tb_t, tbias});
        ASSERT_TRUE(out.ok()) << out.status();
        const Tensor& y = (*out)[0];
        ASSERT_EQ(y.shape(), TensorShape({m, n}));
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double dot = 0;
            for (int64_t p = 0; p < k; ++p) {
              dot += static_cast<double>(a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            }
            const double want = Act(act, dot + bias[j], 0.3);
            ASSERT_NEAR(y.flat<float>()[i * n + j], want, 1e-4 * (1 + std::abs(want)))
                << act << " m=" << m << " tb=" << tb << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(FusedMatMulTest, RefusesWhatItCannotFuseAndBadBiases) {
  Tensor a = Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}));
  Tensor b = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  auto s = RunOp("_FusedMatMul",
                 {{"num_args", AttrI(1)}, {"fused_ops", Ops({"BiasAdd", "Gelu"})}},
                 {a, b, Tensor::FromVector<float>({1, 1})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unsupported fused_ops [BiasAdd, Gelu]"), std::string::npos)
      << s.status();
  s = RunOp("_FusedMatMul", {{"num_args", AttrI(1)}, {"fused_ops", Ops({"BiasAdd"})}},
            {a, b, Tensor::FromVector<float>({1, 1, 1})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("as many biases"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace graphrun
