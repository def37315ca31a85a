#include "kernels/cpu/bias_activation.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {

absl::StatusOr<BiasActivation> BiasActivation::FromAttrs(OpKernelConstruction* ctx) {
  std::vector<std::string> ops;
  int64_t num_args = 0;
  BiasActivation e;
  absl::Status s = ctx->GetAttr("fused_ops", &ops);
  if (s.ok()) s = ctx->GetAttr("num_args", &num_args);
  if (s.ok()) s = ctx->GetAttr("leakyrelu_alpha", &e.leakyrelu_alpha);
  if (!s.ok()) return s;
  const bool bias = !ops.empty() && ops[0] == "BiasAdd" && num_args == 1;
  if (bias && ops.size() == 2) {
    static const std::pair<const char*, FusedActivation> kActivations[] = {
        {"Relu", FusedActivation::kRelu},   {"Relu6", FusedActivation::kRelu6},
        {"Elu", FusedActivation::kElu},     {"LeakyRelu", FusedActivation::kLeakyRelu},
        {"Tanh", FusedActivation::kTanh},   {"Sigmoid", FusedActivation::kSigmoid}};
    for (const auto& [name, act] : kActivations) {
      if (ops[1] == name) e.activation = act;
    }
  }
  if (!bias || (ops.size() != 1 && e.activation == FusedActivation::kNone)) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx->def().op(), ": unsupported fused_ops [", absl::StrJoin(ops, ", "),
        "] with num_args=", num_args,
        " (supported: BiasAdd, optionally followed by Relu, Relu6, Elu, LeakyRelu, Tanh or "
        "Sigmoid)"));
  }
  return e;
}

namespace {

// row[j] = f(row[j] + bias[j]) for j in [0, n). The blocks of 16 have a
// trip count the compiler knows, and `row` and `bias` never overlap, so it
// vectorizes them at -O2 without runtime checks or a cost model's leave.
template <typename F>
void EachOfRow(const float* __restrict bias, int64_t n, float* __restrict row, F f) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (int k = 0; k < 16; ++k) row[j + k] = f(row[j + k] + bias[j + k]);
  }
  for (; j < n; ++j) row[j] = f(row[j] + bias[j]);
}

void ApplyToRow(const BiasActivation& e, const float* bias, int64_t n, float* row) {
  switch (e.activation) {
    case FusedActivation::kNone:
      EachOfRow(bias, n, row, [](float x) { return x; });
      break;
    case FusedActivation::kRelu:
      // std::max(NaN, 0) is NaN, as TensorFlow's Relu.
      EachOfRow(bias, n, row, [](float x) { return std::max(x, 0.f); });
      break;
    case FusedActivation::kRelu6:
      EachOfRow(bias, n, row, [](float x) { return std::min(std::max(x, 0.f), 6.f); });
      break;
    case FusedActivation::kElu:
      for (int64_t j = 0; j < n; ++j) {
        const float x = row[j] + bias[j];
        row[j] = x < 0 ? std::expm1(x) : x;
      }
      break;
    case FusedActivation::kLeakyRelu: {
      const float alpha = e.leakyrelu_alpha;
      EachOfRow(bias, n, row, [alpha](float x) { return x < 0 ? x * alpha : x; });
      break;
    }
    case FusedActivation::kTanh:
    case FusedActivation::kSigmoid: {
      // Eigen's vectorized functors, the ones the Tanh/Sigmoid kernels use.
      Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> x(row, n);
      Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor>> b(bias, n);
      if (e.activation == FusedActivation::kTanh) {
        x = (x + b).tanh();
      } else {
        x = (x + b).sigmoid();
      }
      break;
    }
  }
}

}  // namespace

void BiasActivation::Apply(const Eigen::ThreadPoolDevice* device, const float* bias,
                           int64_t channels, float* rows, int64_t num_rows) const {
  auto apply = [this, bias, channels, rows](int64_t begin, int64_t end) {
    ApplyBlock(bias, channels, rows, begin, end - begin, 0, channels);
  };
  if (device != nullptr && num_rows > 1 && num_rows * channels >= kParallelElements) {
    const double bytes = 4.0 * static_cast<double>(channels);
    device->parallelFor(num_rows, Eigen::TensorOpCost(bytes, bytes, bytes), apply);
  } else {
    apply(0, num_rows);
  }
}

void BiasActivation::ApplyBlock(const float* bias, int64_t channels, float* rows,
                                int64_t row0, int64_t num_rows, int64_t channel0,
                                int64_t count) const {
  for (int64_t r = row0; r < row0 + num_rows; ++r) {
    ApplyToRow(*this, bias + channel0, count, rows + r * channels + channel0);
  }
}

}  // namespace cpu
}  // namespace graphrun
