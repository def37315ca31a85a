// MaxPoolWithArgmax on CPU, as TensorFlow's MaxPoolingWithArgmaxOp: NHWC
// max pooling that also returns, for each output element, the flat index of
// the input element it came from, (y * width + x) * channels + c (plus
// b * height * width * channels with include_batch_in_index). Windows are
// scanned row by row with max pooling's scan (windowed::KeepMaxima): the
// first of equal maxima wins. Padding is skipped.
// int64 indices only on CPU, as in TensorFlow.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/ops/shape_helpers.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/window.h"

namespace graphrun {
namespace {

template <typename T, typename Targmax>
class MaxPoolWithArgmaxOp : public OpKernel {
 public:
  explicit MaxPoolWithArgmaxOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ksize", &ksize_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("strides", &strides_));
    OP_REQUIRES(ctx, ksize_.size() == 4 && strides_.size() == 4,
                absl::InvalidArgumentError(
                    "Sliding window ksize and stride fields must specify 4 dimensions"));
    for (size_t i = 0; i < 4; ++i) {
      OP_REQUIRES(ctx, ksize_[i] > 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Sliding window ksize for dimension ", i, " was zero.")));
    }
    OP_REQUIRES(ctx, ksize_[0] == 1 && strides_[0] == 1,
                absl::UnimplementedError("Pooling is not yet supported on the batch dimension."));
    OP_REQUIRES(ctx, ksize_[3] == 1 && strides_[3] == 1,
                absl::UnimplementedError("MaxPoolWithArgmax pools over height and width only."));
    std::string padding;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("padding", &padding));
    auto parsed = op_shapes::ParsePadding(padding);
    OP_REQUIRES_OK(ctx, parsed.status());
    padding_ = *parsed;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("include_batch_in_index", &include_batch_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 4,
                absl::InvalidArgumentError("tensor_in must be 4-dimensional"));
    const int64_t batch = input.dim_size(0), rows = input.dim_size(1);
    const int64_t cols = input.dim_size(2), depth = input.dim_size(3);
    windowed::Window wr, wc;
    OP_REQUIRES_OK(ctx, windowed::ComputeWindow(rows, ksize_[1], 1, strides_[1], padding_, &wr));
    OP_REQUIRES_OK(ctx, windowed::ComputeWindow(cols, ksize_[2], 1, strides_[2], padding_, &wc));
    const TensorShape shape({batch, wr.out, wc.out, depth});
    Tensor* output = nullptr;
    Tensor* argmax = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &output));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, shape, &argmax));
    if (shape.num_elements() == 0) return;
    const T* in = input.flat<T>().data();
    T* out = output->flat<T>().data();
    Targmax* arg = argmax->flat<Targmax>().data();
    const int64_t image = rows * cols * depth;
    auto pool_rows = [&](int64_t first, int64_t last) {
      std::vector<T> best(depth);
      std::vector<int64_t> where(depth);
      for (int64_t k = first; k < last; ++k) {
        const int64_t b = k / wr.out, oy = k % wr.out;
        const int64_t y0 = oy * strides_[1] - wr.pad_before;
        const int64_t y_lo = std::max<int64_t>(y0, 0);
        const int64_t y_hi = std::min<int64_t>(y0 + ksize_[1], rows);
        for (int64_t ox = 0; ox < wc.out; ++ox) {
          const int64_t x0 = ox * strides_[2] - wc.pad_before;
          const int64_t x_lo = std::max<int64_t>(x0, 0);
          const int64_t x_hi = std::min<int64_t>(x0 + ksize_[2], cols);
          T* o = out + (k * wc.out + ox) * depth;
          Targmax* a = arg + (k * wc.out + ox) * depth;
          // Pixel by pixel, all channels at once (the first pixel starts
          // the maxima; a window wholly in padding gives lowest and -1).
          std::fill(best.begin(), best.end(), Eigen::NumTraits<T>::lowest());
          std::fill(where.begin(), where.end(), int64_t{-1});
          bool first_pixel = true;
          for (int64_t y = y_lo; y < y_hi; ++y) {
            for (int64_t x = x_lo; x < x_hi; ++x) {
              const int64_t base = (y * cols + x) * depth;
              const T* xs = in + b * image + base;
              if (first_pixel) {
                std::copy(xs, xs + depth, best.begin());
                for (int64_t c = 0; c < depth; ++c) where[c] = base + c;
                first_pixel = false;
              } else {
                windowed::KeepMaxima(xs, best.data(), where.data(), base, depth);
              }
            }
          }
          const int64_t shift = include_batch_ ? b * image : 0;
          for (int64_t c = 0; c < depth; ++c) {
            o[c] = best[c];
            a[c] = static_cast<Targmax>(where[c] < 0 ? -1 : where[c] + shift);
          }
        }
      }
    };
    const int64_t work = batch * wr.out;
    const double per_row = static_cast<double>(wc.out) * depth * ksize_[1] * ksize_[2];
    ctx->eigen_cpu_device().parallelFor(
        work, Eigen::TensorOpCost(per_row * sizeof(T), per_row / ksize_[1], per_row * 2),
        [&](Eigen::Index first, Eigen::Index last) { pool_rows(first, last); });
  }

 private:
  std::vector<int64_t> ksize_, strides_;
  op_shapes::Padding padding_ = op_shapes::Padding::kValid;
  bool include_batch_ = false;
};

#define GR_REGISTER_ARGMAX_POOL(T)                                                   \
  REGISTER_KERNEL(KernelDefBuilder("MaxPoolWithArgmax")                              \
                      .Device(kDeviceCpu)                                            \
                      .TypeConstraint<T>("T")                                        \
                      .TypeConstraint<int64_t>("Targmax"),                           \
                  MaxPoolWithArgmaxOp<T, int64_t>)
GR_REGISTER_ARGMAX_POOL(float);
GR_REGISTER_ARGMAX_POOL(double);
GR_REGISTER_ARGMAX_POOL(half);
GR_REGISTER_ARGMAX_POOL(bfloat16);
GR_REGISTER_ARGMAX_POOL(int32_t);
GR_REGISTER_ARGMAX_POOL(int64_t);
GR_REGISTER_ARGMAX_POOL(uint8_t);
GR_REGISTER_ARGMAX_POOL(int8_t);
GR_REGISTER_ARGMAX_POOL(int16_t);
GR_REGISTER_ARGMAX_POOL(uint16_t);
#undef GR_REGISTER_ARGMAX_POOL

}  // namespace
}  // namespace graphrun
