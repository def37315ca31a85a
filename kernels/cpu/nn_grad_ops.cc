// Gradient helpers on CPU, as TensorFlow's kernels: BiasAddGrad (bias_op.cc:
// the sum over all but the channel dim, in float for half and bfloat16),
// BroadcastGradientArgs (bcast_ops.cc, the axes BCast reduces each operand's
// gradient over) and ShapeN (shape_ops.cc). UnsortedSegmentSum is in
// segment_ops.cc.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/channel_sums.h"
#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using cpu::AccumulatorOf;

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string format = "NHWC";
    OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &format));
    OP_REQUIRES(ctx, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError("Invalid data format"));
    nchw_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ", in.shape().DebugString())));
    const int channel_dim = nchw_ ? 1 : in.dims() - 1;
    const int64_t channels = in.dim_size(channel_dim);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({channels}), &out));
    TensorMap<T> sum(out->flat<T>().data(), channels);
    const int64_t n = in.NumElements();
    if (n == 0) {
      sum.setZero();
      return;
    }
    using Acc = AccumulatorOf<T>;
    const T* x = in.flat<T>().data();
    const int64_t outer = in.dim_size(0);
    const int64_t inner = nchw_ ? n / (outer * channels) : 1;
    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    const bool threaded = pool != nullptr && n > kParallelElements;
    if (nchw_ && inner > 1) {
      const Eigen::array<Eigen::Index, 2> axes = {0, 2};
      auto expr = ConstTensorMap<T, 3>(x, outer, channels, inner)
                      .template cast<Acc>()
                      .sum(axes)
                      .template cast<T>();
      if (threaded) {
        sum.device(*pool) = expr;
      } else {
        sum = expr;
      }
    } else {
      SumRows(x, n / channels, channels, threaded ? pool : nullptr, out->flat<T>().data());
    }
  }

  // The sum of `rows` rows of `channels` (channels last): blocks of
  // kBlockRows rows summed each into its own partial (the channel loop
  // vectorizes, where a reduction over the outer dim of a few channels
  // does not), the partials then added in block order, so the result does
  // not depend on the threads.
  static void SumRows(const T* x, int64_t rows, int64_t channels,
                      const Eigen::ThreadPoolDevice* pool, T* out) {
    using Acc = AccumulatorOf<T>;
    constexpr int64_t kBlockRows = 2048;
    const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
    std::vector<Acc> partial(static_cast<size_t>(blocks * channels), Acc(0));
    auto sum_blocks = [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        cpu::AddChannelSums(x + b * kBlockRows * channels,
                            std::min(kBlockRows, rows - b * kBlockRows), channels,
                            partial.data() + b * channels);
      }
    };
    if (pool != nullptr && blocks > 1) {
      // Pieces: no wake-up a call (pieces.h); the gradient of a bias is on
      // the backward pass's critical path, its convolution's gradients wait
      // on it.
      cpu::RunPieces(*pool, static_cast<int>(blocks), [&](int b) { sum_blocks(b, b + 1); });
    } else {
      sum_blocks(0, blocks);
    }
    for (int64_t c = 0; c < channels; ++c) {
      Acc total = 0;
      for (int64_t b = 0; b < blocks; ++b) total += partial[b * channels + c];
      out[c] = static_cast<T>(total);
    }
  }

 private:
  bool nchw_ = false;
};

// r0, r1: the output dims (NumPy broadcasting of s0 and s1, left-padded
// with 1s) where s0, s1 are 1, which their gradients sum over; none when
// the shapes are equal.
template <typename T>
class BroadcastGradientArgsOp : public OpKernel {
 public:
  explicit BroadcastGradientArgsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& in = ctx->input(i);
      OP_REQUIRES(ctx, in.dims() == 1,
                  absl::InvalidArgumentError(
                      absl::StrCat("In[", i, "] must be a vector.", in.shape().DebugString())));
      for (T d : in.flat<T>()) shapes[i].push_back(static_cast<int64_t>(d));
    }
    std::vector<T> reduce[2];
    if (shapes[0] != shapes[1]) {
      const size_t rank = std::max(shapes[0].size(), shapes[1].size());
      for (size_t d = 0; d < rank; ++d) {
        int64_t dim[2];
        for (int i = 0; i < 2; ++i) {
          const size_t pad = rank - shapes[i].size();
          dim[i] = d < pad ? 1 : shapes[i][d - pad];
        }
        OP_REQUIRES(ctx, dim[0] == dim[1] || dim[0] == 1 || dim[1] == 1,
                    absl::InvalidArgumentError(
                        absl::StrCat("Incompatible shapes: [", absl::StrJoin(shapes[0], ","),
                                     "] vs. [", absl::StrJoin(shapes[1], ","), "]")));
        for (int i = 0; i < 2; ++i) {
          if (dim[i] == 1) reduce[i].push_back(static_cast<T>(d));
        }
      }
    }
    for (int i = 0; i < 2; ++i) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(
                              i, TensorShape({static_cast<int64_t>(reduce[i].size())}), &out));
      std::copy(reduce[i].begin(), reduce[i].end(), out->flat<T>().data());
    }
  }
};

// Output i: input i's shape as a vector of OutType.
template <typename OutType>
class ShapeNOp : public OpKernel {
 public:
  explicit ShapeNOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const TensorShape shape = ctx->input(i).shape();
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({shape.dims()}), &out));
      for (int d = 0; d < shape.dims(); ++d) {
        const int64_t size = shape.dim_size(d);
        const bool fits =
            std::is_same_v<OutType, int64_t> || size <= std::numeric_limits<int32_t>::max();
        OP_REQUIRES(ctx, fits,
                    absl::InvalidArgumentError(absl::StrCat(
                        "ShapeN output type is 32-bit but shape ", i, " dim ", d, " is ", size)));
        out->flat<OutType>()[d] = static_cast<OutType>(size);
      }
    }
  }
};

#define REGISTER_BIAS_GRAD(T)                                                                \
  REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  BiasAddGradOp<T>)
REGISTER_BIAS_GRAD(float);
REGISTER_BIAS_GRAD(double);
REGISTER_BIAS_GRAD(half);
REGISTER_BIAS_GRAD(bfloat16);
REGISTER_BIAS_GRAD(int32_t);
REGISTER_BIAS_GRAD(int64_t);
#undef REGISTER_BIAS_GRAD

REGISTER_KERNEL(
    KernelDefBuilder("BroadcastGradientArgs").Device(kDeviceCpu).TypeConstraint<int32_t>("T"),
    BroadcastGradientArgsOp<int32_t>);
REGISTER_KERNEL(
    KernelDefBuilder("BroadcastGradientArgs").Device(kDeviceCpu).TypeConstraint<int64_t>("T"),
    BroadcastGradientArgsOp<int64_t>);

REGISTER_KERNEL(KernelDefBuilder("ShapeN").Device(kDeviceCpu).TypeConstraint<int32_t>("out_type"),
                ShapeNOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("ShapeN").Device(kDeviceCpu).TypeConstraint<int64_t>("out_type"),
                ShapeNOp<int64_t>);

}  // namespace
}  // namespace graphrun
