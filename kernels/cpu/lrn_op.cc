// LRN (local response normalization) on CPU, as TensorFlow's LRNOp: over
// the depth of a 4-D NHWC input,
//   sqr_sum[d] = sum of input[k]^2 for k in [d - depth_radius, d + depth_radius]
//   output[d] = input[d] / (bias + alpha * sqr_sum[d]) ^ beta,
// in float (half and bfloat16 are widened). Pixels are spread over the
// intra-op pool when big.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {


template <typename T>
class LrnOp : public OpKernel {
 public:
  explicit LrnOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t depth_radius = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("depth_radius", &depth_radius));
    OP_REQUIRES(ctx,
                depth_radius >= 0 &&
                    depth_radius <= std::numeric_limits<int32_t>::max(),
                absl::InvalidArgumentError(absl::StrCat(
                    "depth_radius = ", depth_radius,
                    " is negative or larger than int max")));
    depth_radius_ = depth_radius;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("bias", &bias_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("alpha", &alpha_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("beta", &beta_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "in must be 4-dimensional, got ", in.shape().DebugString())));
    OP_REQUIRES(ctx, in.NumElements() <= std::numeric_limits<int32_t>::max(),
                absl::InvalidArgumentError("argument to LRN too large"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const int64_t depth = in.dim_size(3);
    if (in.NumElements() == 0) return;
    const int64_t pixels = in.NumElements() / depth;
    const T* x = in.flat<T>().data();
    T* y = out->flat<T>().data();
    const int64_t radius = depth_radius_;
    auto run = [&](int64_t begin, int64_t end) {
      std::vector<float> sq(depth);
      for (int64_t p = begin; p < end; ++p) {
        const T* px = x + p * depth;
        T* py = y + p * depth;
        for (int64_t d = 0; d < depth; ++d) {
          const float v = static_cast<float>(px[d]);
          sq[d] = v * v;
        }
        for (int64_t d = 0; d < depth; ++d) {
          const int64_t lo = std::max<int64_t>(0, d - radius);
          const int64_t hi = std::min<int64_t>(depth - 1, d + radius);
          float sum = 0;
          for (int64_t k = lo; k <= hi; ++k) sum += sq[k];
          const float norm = bias_ + alpha_ * sum;
          float scale;
          if (beta_ == 1.0f) {
            scale = 1.0f / norm;
          } else if (beta_ == 0.5f) {
            scale = 1.0f / std::sqrt(norm);
          } else {
            scale = std::exp(std::log(norm) * -beta_);
          }
          py[d] = static_cast<T>(static_cast<float>(px[d]) * scale);
        }
      }
    };
    const double per_pixel =
        static_cast<double>(depth) * static_cast<double>(2 * radius + 1);
    if (pixels > 1 && per_pixel * pixels > kParallelElements) {
      ctx->eigen_cpu_device().parallelFor(
          pixels,
          Eigen::TensorOpCost(depth * sizeof(T), depth * sizeof(T),
                              per_pixel + 10 * depth),
          [&](Eigen::Index begin, Eigen::Index end) { run(begin, end); });
    } else {
      run(0, pixels);
    }
  }

 private:
  int64_t depth_radius_ = 5;
  float bias_ = 1, alpha_ = 1, beta_ = 0.5f;
};

#define GR_REGISTER_LRN(T)                                               \
  REGISTER_KERNEL(                                                       \
      KernelDefBuilder("LRN").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      LrnOp<T>)
GR_REGISTER_LRN(float);
GR_REGISTER_LRN(half);
GR_REGISTER_LRN(bfloat16);
#undef GR_REGISTER_LRN

}  // namespace
}  // namespace graphrun
