// The training launchers of gpu_launch.h: the optimizer
// updates (plain SGD, momentum, Adam), float. Every operation goes through
// an intrinsic that rounds it on its own (__fadd_rn, __fsub_rn, __fmul_rn,
// __fdiv_rn, __fsqrt_rn), which nvcc never fuses into a multiply-add, in
// the order the CPU kernels evaluate them: each element's new values are
// the CPU's bit for bit. The hyperparameters stay in device memory (as
// their producers left them) and every thread reads them.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/cuda_util.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {
namespace {

using cuda_util::Blocks;
using cuda_util::Launched;
using cuda_util::UseStreamDevice;

constexpr int kThreads = 256;

#define GR_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

__global__ void GradientDescentKernel(float* var, const float* alpha_ptr, const float* grad,
                                      int64_t n) {
  const float alpha = *alpha_ptr;
  GR_GRID_STRIDE(i, n) { var[i] = __fsub_rn(var[i], __fmul_rn(grad[i], alpha)); }
}

template <bool kNesterov>
__global__ void MomentumKernel(float* var, float* accum, const float* lr_ptr, const float* grad,
                               const float* momentum_ptr, int64_t n) {
  const float lr = *lr_ptr;
  const float momentum = *momentum_ptr;
  GR_GRID_STRIDE(i, n) {
    const float g = grad[i];
    const float a = __fadd_rn(__fmul_rn(accum[i], momentum), g);
    accum[i] = a;
    if constexpr (kNesterov) {
      var[i] = __fsub_rn(var[i], __fadd_rn(__fmul_rn(g, lr), __fmul_rn(__fmul_rn(a, momentum), lr)));
    } else {
      var[i] = __fsub_rn(var[i], __fmul_rn(a, lr));
    }
  }
}

template <bool kNesterov>
__global__ void AdamKernel(float* var, float* m_slot, float* v_slot, AdamHyper h,
                           const float* grad, int64_t n) {
  // As the CPU computes them once per update.
  const float beta1_power = *h.beta1_power, beta2_power = *h.beta2_power;
  const float alpha = __fdiv_rn(__fmul_rn(*h.lr, __fsqrt_rn(__fsub_rn(1.0f, beta2_power))),
                                __fsub_rn(1.0f, beta1_power));
  const float beta1 = *h.beta1;
  const float one_minus_beta1 = __fsub_rn(1.0f, beta1);
  const float one_minus_beta2 = __fsub_rn(1.0f, *h.beta2);
  const float epsilon = *h.epsilon;
  GR_GRID_STRIDE(i, n) {
    const float g = grad[i];
    float m = m_slot[i];
    float v = v_slot[i];
    m = __fadd_rn(m, __fmul_rn(__fsub_rn(g, m), one_minus_beta1));
    v = __fadd_rn(v, __fmul_rn(__fsub_rn(__fmul_rn(g, g), v), one_minus_beta2));
    m_slot[i] = m;
    v_slot[i] = v;
    const float denominator = __fadd_rn(__fsqrt_rn(v), epsilon);
    float step;
    if constexpr (kNesterov) {
      step = __fmul_rn(__fadd_rn(__fmul_rn(g, one_minus_beta1), __fmul_rn(beta1, m)), alpha);
    } else {
      step = __fmul_rn(m, alpha);
    }
    var[i] = __fsub_rn(var[i], __fdiv_rn(step, denominator));
  }
}

#undef GR_GRID_STRIDE

}  // namespace

absl::Status ApplyGradientDescent(void* stream, float* var, const float* alpha,
                                  const float* grad, int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  GradientDescentKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(var, alpha, grad, n);
  return Launched("ApplyGradientDescent");
}

absl::Status ApplyMomentum(void* stream, float* var, float* accum, const float* lr,
                           const float* grad, const float* momentum, bool nesterov, int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  if (nesterov) {
    MomentumKernel<true><<<Blocks(n, kThreads), kThreads, 0, s>>>(var, accum, lr, grad, momentum,
                                                                   n);
  } else {
    MomentumKernel<false><<<Blocks(n, kThreads), kThreads, 0, s>>>(var, accum, lr, grad,
                                                                    momentum, n);
  }
  return Launched("ApplyMomentum");
}

absl::Status ApplyAdam(void* stream, float* var, float* m, float* v, const AdamHyper& hyper,
                       const float* grad, bool nesterov, int64_t n) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = UseStreamDevice(s);
  if (!status.ok()) return status;
  if (n == 0) return absl::OkStatus();
  if (nesterov) {
    AdamKernel<true><<<Blocks(n, kThreads), kThreads, 0, s>>>(var, m, v, hyper, grad, n);
  } else {
    AdamKernel<false><<<Blocks(n, kThreads), kThreads, 0, s>>>(var, m, v, hyper, grad, n);
  }
  return Launched("ApplyAdam");
}

}  // namespace gpu
}  // namespace graphrun
