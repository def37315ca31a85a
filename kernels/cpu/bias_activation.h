// BiasActivation: the epilogue of TensorFlow's fused float kernels
// (_FusedMatMul, _FusedConv2D) — a bias per output channel, then an optional
// activation — read from the node's fused_ops / num_args / leakyrelu_alpha
// and applied in place to a row-major [rows, channels] output. Stateless
// after construction; Apply may run concurrently on disjoint rows.
#ifndef GRAPHRUN_KERNELS_CPU_BIAS_ACTIVATION_H_
#define GRAPHRUN_KERNELS_CPU_BIAS_ACTIVATION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/op_kernel.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

enum class FusedActivation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

struct BiasActivation {
  FusedActivation activation = FusedActivation::kNone;
  float leakyrelu_alpha = 0.2f;

  // fused_ops ["BiasAdd"] or ["BiasAdd", <Relu|Relu6|Elu|LeakyRelu|Tanh|
  // Sigmoid>] with num_args 1; anything else is InvalidArgument naming the
  // op and the list (the kernel registry adds the node's name).
  static absl::StatusOr<BiasActivation> FromAttrs(OpKernelConstruction* ctx);

  // rows[r * channels + c] = act(rows[r * channels + c] + bias[c]) for r in
  // [0, num_rows), on `device`'s pool when the work is large (on this
  // thread when `device` is null).
  void Apply(const Eigen::ThreadPoolDevice* device, const float* bias,
             int64_t channels, float* rows, int64_t num_rows) const;

  // The same on one block of a [*, channels] output, on this thread: rows
  // [row0, row0 + num_rows), channels [channel0, channel0 + count).
  void ApplyBlock(const float* bias, int64_t channels, float* rows, int64_t row0,
                  int64_t num_rows, int64_t channel0, int64_t count) const;
};

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_BIAS_ACTIVATION_H_
