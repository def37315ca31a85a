// The training launchers of kernels/gpu/gpu_launch.h (the
// optimizer updates) over FakeGpuPlatform: each checks that the n
// elements of each array (one float of each hyperparameter) are inside one
// block of the fake GPU's device memory and queues host code on the fake
// stream it is given. The arithmetic is the launchers' contract in plain float,
// built without contraction into fused multiply-adds (BUILD), so a session
// on the fake GPU gives the CPU kernels' values bit for bit; the
// hyperparameters are read from device memory when the work runs, as a CUDA
// kernel reads them.
#include <cmath>
#include <functional>
#include <initializer_list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/gpu_launch.h"
#include "runtime/gpu/testing/fake_launch_util.h"

namespace graphrun {
namespace gpu {
namespace {

using fake::OnDevice;
using fake::Queue;
using fake::SpanOf;

}  // namespace

absl::Status ApplyGradientDescent(void* stream, float* var, const float* alpha,
                                  const float* grad, int64_t n) {
  absl::Status s = OnDevice(stream, n, "ApplyGradientDescent",
                            {SpanOf(var, n), SpanOf(alpha, 1), SpanOf(grad, n)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    const float a = *alpha;
    for (int64_t i = 0; i < n; ++i) var[i] -= grad[i] * a;
  });
}

absl::Status ApplyMomentum(void* stream, float* var, float* accum, const float* lr,
                           const float* grad, const float* momentum, bool nesterov, int64_t n) {
  absl::Status s = OnDevice(stream, n, "ApplyMomentum",
                            {SpanOf(var, n), SpanOf(accum, n), SpanOf(lr, 1), SpanOf(grad, n),
                             SpanOf(momentum, 1)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    const float rate = *lr, mu = *momentum;
    for (int64_t i = 0; i < n; ++i) {
      const float g = grad[i];
      accum[i] = accum[i] * mu + g;
      if (nesterov) {
        var[i] -= g * rate + accum[i] * mu * rate;
      } else {
        var[i] -= accum[i] * rate;
      }
    }
  });
}

absl::Status ApplyAdam(void* stream, float* var, float* m, float* v, const AdamHyper& h,
                       const float* grad, bool nesterov, int64_t n) {
  absl::Status s = OnDevice(stream, n, "ApplyAdam",
                            {SpanOf(var, n), SpanOf(m, n), SpanOf(v, n), SpanOf(h.beta1_power, 1),
                             SpanOf(h.beta2_power, 1), SpanOf(h.lr, 1), SpanOf(h.beta1, 1),
                             SpanOf(h.beta2, 1), SpanOf(h.epsilon, 1), SpanOf(grad, n)});
  if (!s.ok() || n == 0) return s;
  return Queue(stream, [=] {
    const float alpha = *h.lr * std::sqrt(1.0f - *h.beta2_power) / (1.0f - *h.beta1_power);
    const float beta1 = *h.beta1;
    const float one_minus_beta1 = 1.0f - beta1;
    const float one_minus_beta2 = 1.0f - *h.beta2;
    const float epsilon = *h.epsilon;
    for (int64_t i = 0; i < n; ++i) {
      const float g = grad[i];
      m[i] += (g - m[i]) * one_minus_beta1;
      v[i] += (g * g - v[i]) * one_minus_beta2;
      const float step = nesterov ? (g * one_minus_beta1 + beta1 * m[i]) * alpha : m[i] * alpha;
      var[i] -= step / (std::sqrt(v[i]) + epsilon);
    }
  });
}

}  // namespace gpu
}  // namespace graphrun
