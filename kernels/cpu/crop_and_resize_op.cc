// CropAndResize on CPU, TensorFlow's crop_and_resize_op.cc: each box
// [y1, x1, y2, x2] (normalized; y2 < y1 flips the crop) of image
// box_ind[i] is sampled on a crop_height x crop_width grid, bilinearly or
// at the nearest pixel; samples outside the image take extrapolation_value.
// Output float whatever the image's type.
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
class CropAndResizeOp : public OpKernel {
 public:
  explicit CropAndResizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string method;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("method", &method));
    OP_REQUIRES(ctx, method == "bilinear" || method == "nearest",
                absl::InvalidArgumentError("method must be 'bilinear' or 'nearest'"));
    nearest_ = method == "nearest";
    OP_REQUIRES_OK(ctx, ctx->GetAttr("extrapolation_value", &extrapolation_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& image = ctx->input(0);
    const Tensor& boxes = ctx->input(1);
    const Tensor& box_ind = ctx->input(2);
    const Tensor& crop_size = ctx->input(3);
    OP_REQUIRES(ctx, image.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input image must be 4-D", image.shape().DebugString())));
    const int64_t batch = image.dim_size(0), height = image.dim_size(1);
    const int64_t width = image.dim_size(2), depth = image.dim_size(3);
    OP_REQUIRES(ctx, height > 0 && width > 0,
                absl::InvalidArgumentError("image dimensions must be positive"));
    OP_REQUIRES(ctx, boxes.dims() == 2 && boxes.dim_size(1) == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "boxes must be 2-D [num_boxes, 4]", boxes.shape().DebugString())));
    const int64_t n = boxes.dim_size(0);
    OP_REQUIRES(ctx, box_ind.dims() == 1 && box_ind.dim_size(0) == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "box_index has incompatible shape", box_ind.shape().DebugString())));
    OP_REQUIRES(ctx, crop_size.dims() == 1 && crop_size.NumElements() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "crop_size must be a length-2 vector, got ",
                    crop_size.shape().DebugString())));
    const int64_t ch = crop_size.flat<int32_t>()[0], cw = crop_size.flat<int32_t>()[1];
    OP_REQUIRES(ctx, ch > 0 && cw > 0,
                absl::InvalidArgumentError("crop dimensions must be positive"));
    const int32_t* ind = box_ind.flat<int32_t>().data();
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, ind[i] >= 0 && ind[i] < batch,
                  absl::OutOfRangeError(absl::StrCat(
                      "box_index has values outside [0, batch_size): box_ind[", i, "] = ",
                      ind[i])));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n, ch, cw, depth}), &out));
    const float* b = boxes.flat<float>().data();
    const T* img = image.flat<T>().data();
    float* o = out->flat<float>().data();
    auto pixel = [&](int64_t bi, int64_t y, int64_t x, int64_t c) {
      return static_cast<float>(img[((bi * height + y) * width + x) * depth + c]);
    };
    for (int64_t i = 0; i < n; ++i) {
      const float y1 = b[i * 4], x1 = b[i * 4 + 1], y2 = b[i * 4 + 2], x2 = b[i * 4 + 3];
      const float hs = ch > 1 ? (y2 - y1) * (height - 1) / (ch - 1) : 0;
      const float ws = cw > 1 ? (x2 - x1) * (width - 1) / (cw - 1) : 0;
      for (int64_t y = 0; y < ch; ++y) {
        const float in_y = ch > 1 ? y1 * (height - 1) + y * hs : 0.5f * (y1 + y2) * (height - 1);
        float* row = o + ((i * ch + y) * cw) * depth;
        if (in_y < 0 || in_y > height - 1) {
          for (int64_t k = 0; k < cw * depth; ++k) row[k] = extrapolation_;
          continue;
        }
        for (int64_t x = 0; x < cw; ++x) {
          const float in_x = cw > 1 ? x1 * (width - 1) + x * ws : 0.5f * (x1 + x2) * (width - 1);
          float* px = row + x * depth;
          if (in_x < 0 || in_x > width - 1) {
            for (int64_t c = 0; c < depth; ++c) px[c] = extrapolation_;
            continue;
          }
          if (nearest_) {
            const int64_t ny = std::lround(in_y), nx = std::lround(in_x);
            for (int64_t c = 0; c < depth; ++c) px[c] = pixel(ind[i], ny, nx, c);
            continue;
          }
          const int64_t top = std::floor(in_y), bottom = std::ceil(in_y);
          const int64_t left = std::floor(in_x), right = std::ceil(in_x);
          const float y_lerp = in_y - top, x_lerp = in_x - left;
          for (int64_t c = 0; c < depth; ++c) {
            const float tl = pixel(ind[i], top, left, c), tr = pixel(ind[i], top, right, c);
            const float bl = pixel(ind[i], bottom, left, c);
            const float br = pixel(ind[i], bottom, right, c);
            const float t = tl + (tr - tl) * x_lerp;
            const float bo = bl + (br - bl) * x_lerp;
            px[c] = t + (bo - t) * y_lerp;
          }
        }
      }
    }
  }

 private:
  bool nearest_ = false;
  float extrapolation_ = 0;
};

#define GR_REGISTER_CROP_AND_RESIZE(T)                                               \
  REGISTER_KERNEL(KernelDefBuilder("CropAndResize").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  CropAndResizeOp<T>)
GR_REGISTER_CROP_AND_RESIZE(float);
GR_REGISTER_CROP_AND_RESIZE(double);
GR_REGISTER_CROP_AND_RESIZE(half);
GR_REGISTER_CROP_AND_RESIZE(bfloat16);
GR_REGISTER_CROP_AND_RESIZE(uint8_t);
GR_REGISTER_CROP_AND_RESIZE(uint16_t);
GR_REGISTER_CROP_AND_RESIZE(int8_t);
GR_REGISTER_CROP_AND_RESIZE(int16_t);
GR_REGISTER_CROP_AND_RESIZE(int32_t);
GR_REGISTER_CROP_AND_RESIZE(int64_t);
#undef GR_REGISTER_CROP_AND_RESIZE

}  // namespace
}  // namespace graphrun
