// ExtractImagePatches on CPU, TensorFlow's extract_image_patches_op.cc:
// for each output pixel, the ksize_rows x ksize_cols window (taps `rates`
// apart) at that pixel's stride, flattened rows, columns, channels; taps
// outside the image (SAME padding) are zeros.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/window.h"

namespace graphrun {
namespace {

class ExtractImagePatchesOp : public OpKernel {
 public:
  explicit ExtractImagePatchesOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string padding;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ksizes", &ksizes_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("rates", &rates_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("padding", &padding));
    absl::StatusOr<op_shapes::Padding> p = op_shapes::ParsePadding(padding);
    OP_REQUIRES_OK(ctx, p.status());
    padding_ = *p;
    for (const auto* v : {&ksizes_, &strides_, &rates_}) {
      OP_REQUIRES(ctx, v->size() == 4 && (*v)[0] == 1 && (*v)[3] == 1,
                  absl::UnimplementedError(
                      "Only support ksizes, strides and rates across rows and columns: "
                      "[1, rows, cols, 1]"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional", in.shape().DebugString())));
    const int64_t batch = in.dim_size(0), rows = in.dim_size(1), cols = in.dim_size(2);
    const int64_t depth = in.dim_size(3);
    windowed::Window wr, wc;
    OP_REQUIRES_OK(ctx, windowed::ComputeWindow(rows, ksizes_[1], rates_[1], strides_[1],
                                                padding_, &wr));
    OP_REQUIRES_OK(ctx, windowed::ComputeWindow(cols, ksizes_[2], rates_[2], strides_[2],
                                                padding_, &wc));
    const int64_t kr = ksizes_[1], kc = ksizes_[2];
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({batch, wr.out, wc.out, kr * kc * depth}), &out));
    if (out->NumElements() == 0) return;
    const size_t elem = static_cast<size_t>(DataTypeSize(in.dtype()));
    const size_t pixel = elem * static_cast<size_t>(depth);
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t orow = 0; orow < wr.out; ++orow) {
        for (int64_t ocol = 0; ocol < wc.out; ++ocol) {
          for (int64_t i = 0; i < kr; ++i) {
            const int64_t r = orow * strides_[1] + i * rates_[1] - wr.pad_before;
            for (int64_t j = 0; j < kc; ++j) {
              const int64_t c = ocol * strides_[2] + j * rates_[2] - wc.pad_before;
              if (r < 0 || r >= rows || c < 0 || c >= cols) {
                std::memset(dst, 0, pixel);
              } else {
                std::memcpy(dst, src + ((b * rows + r) * cols + c) * pixel, pixel);
              }
              dst += pixel;
            }
          }
        }
      }
    }
  }

 private:
  std::vector<int64_t> ksizes_, strides_, rates_;
  op_shapes::Padding padding_ = op_shapes::Padding::kValid;
};

REGISTER_KERNEL(KernelDefBuilder("ExtractImagePatches")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT8,
                                          DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16,
                                          DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128,
                                          DT_BOOL}),
                ExtractImagePatchesOp);

}  // namespace
}  // namespace graphrun
