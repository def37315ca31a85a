// The GPU's convolution and pooling gradients, float, NHWC or NCHW:
// Conv2DBackpropInput and Conv2DBackpropFilter on cuDNN, MaxPoolGrad and
// AvgPoolGrad as CUDA kernels (gpu_launch.h). The sizes inputs
// (input_sizes, filter_sizes, orig_input_shape) stay in host memory.
//
// A convolution's gradient is planned as its forward convolution is
// (array_plans.h's PlanConv2D): cuDNN pads both sides alike, so where
// TensorFlow's padding is larger on one side the forward convolution runs
// on a zero-padded copy of the input. Backward, the input's gradient is
// computed for that padded input and its interior copied out; the filter's
// gradient is computed from the padded copy of the input. The filter (and
// the filter's gradient) go between TensorFlow's [kh, kw, in, out] and
// cuDNN's layout by the plan's strided copy (and its inverse).
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/gpu/array_plans.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using gpu::GpuKernel;
using gpu::Stream;
using op_shapes::Padding;

using gpu::FloatData;

// The copy back: what `plan` copied from src to dst, from dst to src.
gpu::StridedCopyPlan Inverse(gpu::StridedCopyPlan plan) {
  for (int d = 0; d < plan.rank; ++d) std::swap(plan.src_strides[d], plan.dst_strides[d]);
  std::swap(plan.src_offset, plan.dst_offset);
  return plan;
}

// The dims of an int32 sizes vector in host memory.
absl::StatusOr<std::vector<int64_t>> SizesOf(const Tensor& t, const char* name) {
  if (t.dims() != 1 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be a 1-D int32 tensor, got ",
                                                   DataTypeString(t.dtype()), " ",
                                                   t.shape().DebugString()));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    dims.push_back(static_cast<const int32_t*>(t.raw_data())[i]);
  }
  return dims;
}

absl::Status SameShape(const Tensor& t, const char* name, const TensorShape& want) {
  if (t.shape() == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " has shape ", t.shape().DebugString(),
                                                 " where the window's geometry gives ",
                                                 want.DebugString()));
}

// Device scratch for cuDNN, kept alive in `scratch` for the kernel's run.
gpu::WorkspaceFn WorkspaceIn(OpKernelContext* ctx, std::vector<Tensor>* scratch) {
  return [ctx, scratch](int64_t bytes) -> absl::StatusOr<void*> {
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims({bytes});
    if (!shape.ok()) return shape.status();
    Tensor t;
    absl::Status s = ctx->allocate_temp(DT_UINT8, *shape, &t);
    if (!s.ok()) return s;
    scratch->push_back(t);
    return scratch->back().raw_data();
  };
}

class ConvGradOp : public GpuKernel {
 public:
  explicit ConvGradOp(OpKernelConstruction* c) : GpuKernel(c) {
    absl::Status s = c->GetAttr("strides", &attrs_.strides);
    if (s.ok() && c->attrs().Find("dilations") != nullptr) {
      s = c->GetAttr("dilations", &attrs_.dilations);
    }
    if (s.ok()) s = gpu::ReadPadding(c, &attrs_.padding, &attrs_.explicit_paddings);
    if (s.ok()) s = gpu::ReadDataFormat(c, &attrs_.nchw);
    if (!s.ok()) c->SetStatus(s);
  }

 protected:
  gpu::ConvAttrs attrs_;
};

// Conv2DBackpropInput(input_sizes, filter, out_backprop): input_sizes of 4
// dims, or of the 2 spatial ones (batch from out_backprop, depth from the
// filter).
class ConvBackpropInputOp : public ConvGradOp {
 public:
  using ConvGradOp::ConvGradOp;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    absl::StatusOr<std::vector<int64_t>> dims = SizesOf(ctx->input(0), "input_sizes");
    OP_REQUIRES_OK(ctx, dims.status());
    OP_REQUIRES(ctx, filter.dims() == 4 && grad.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter and out_backprop must be 4-dimensional: ",
                    filter.shape().DebugString(), " ", grad.shape().DebugString())));
    const int c = attrs_.nchw ? 1 : 3, h = attrs_.nchw ? 2 : 1;
    if (dims->size() == 2) {
      std::vector<int64_t> full(4);
      full[0] = grad.dim_size(0);
      full[c] = filter.dim_size(2);
      full[h] = (*dims)[0];
      full[h + 1] = (*dims)[1];
      *dims = full;
    }
    OP_REQUIRES(ctx, dims->size() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "Conv2DBackpropInput: input_sizes must have 4 or 2 elements, got ",
                    dims->size())));
    absl::StatusOr<TensorShape> in_shape = TensorShape::FromDims(*dims);
    OP_REQUIRES_OK(ctx, in_shape.status());
    absl::StatusOr<gpu::ConvPlan> plan = gpu::PlanConv2D(*in_shape, filter.shape(), attrs_, false);
    OP_REQUIRES_OK(ctx, plan.status());
    OP_REQUIRES_OK(ctx, SameShape(grad, "out_backprop", plan->output));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *in_shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (grad.NumElements() == 0 || filter.NumElements() == 0) {  // sums of nothing
      OP_REQUIRES_OK(ctx,
                     gpu::Zero(*stream, out->raw_data(), static_cast<int64_t>(out->TotalBytes())));
      return;
    }
    Tensor filter_layout;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->filter_layout, &filter_layout));
    OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, filter.raw_data(), filter_layout.raw_data(),
                                         plan->filter_copy));
    Tensor padded;
    float* dx = FloatData(out);
    if (plan->pad_input) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->padded_input, &padded));
      dx = FloatData(&padded);
    }
    std::vector<Tensor> scratch;
    OP_REQUIRES_OK(ctx, gpu::Conv2DBackpropInput(*stream, plan->geometry,
                                                 FloatData(filter_layout), FloatData(grad), dx,
                                                 WorkspaceIn(ctx, &scratch)));
    if (plan->pad_input) {
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, padded.raw_data(), out->raw_data(),
                                           Inverse(plan->input_copy)));
    }
  }
};

// Conv2DBackpropFilter(input, filter_sizes, out_backprop).
class ConvBackpropFilterOp : public ConvGradOp {
 public:
  using ConvGradOp::ConvGradOp;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    absl::StatusOr<std::vector<int64_t>> dims = SizesOf(ctx->input(1), "filter_sizes");
    OP_REQUIRES_OK(ctx, dims.status());
    OP_REQUIRES(ctx, dims->size() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "Conv2DBackpropFilter: filter_sizes must have 4 elements, got ",
                    dims->size())));
    absl::StatusOr<TensorShape> filter_shape = TensorShape::FromDims(*dims);
    OP_REQUIRES_OK(ctx, filter_shape.status());
    absl::StatusOr<gpu::ConvPlan> plan =
        gpu::PlanConv2D(input.shape(), *filter_shape, attrs_, false);
    OP_REQUIRES_OK(ctx, plan.status());
    OP_REQUIRES_OK(ctx, SameShape(grad, "out_backprop", plan->output));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *filter_shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (grad.NumElements() == 0 || input.NumElements() == 0) {  // sums of nothing
      OP_REQUIRES_OK(ctx,
                     gpu::Zero(*stream, out->raw_data(), static_cast<int64_t>(out->TotalBytes())));
      return;
    }
    const float* in = FloatData(input);
    Tensor padded;
    if (plan->pad_input) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->padded_input, &padded));
      OP_REQUIRES_OK(
          ctx, gpu::Zero(*stream, padded.raw_data(), static_cast<int64_t>(padded.TotalBytes())));
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, input.raw_data(), padded.raw_data(),
                                           plan->input_copy));
      in = FloatData(padded);
    }
    Tensor dw_layout;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->filter_layout, &dw_layout));
    std::vector<Tensor> scratch;
    OP_REQUIRES_OK(ctx, gpu::Conv2DBackpropFilter(*stream, plan->geometry, in, FloatData(grad),
                                                  FloatData(&dw_layout),
                                                  WorkspaceIn(ctx, &scratch)));
    OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, 4, dw_layout.raw_data(), out->raw_data(),
                                         Inverse(plan->filter_copy)));
  }
};

// MaxPoolGrad(orig_input, orig_output, grad) and AvgPoolGrad(
// orig_input_shape, grad).
class PoolGradOp : public GpuKernel {
 public:
  explicit PoolGradOp(OpKernelConstruction* c)
      : GpuKernel(c), max_(c->def().op() == "MaxPoolGrad") {
    absl::Status s = c->GetAttr("ksize", &ksize_);
    if (s.ok()) s = c->GetAttr("strides", &strides_);
    if (s.ok()) s = gpu::ReadPadding(c, &padding_, &explicit_paddings_);
    if (s.ok()) s = gpu::ReadDataFormat(c, &nchw_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    TensorShape in_shape;
    if (max_) {
      in_shape = ctx->input(0).shape();
    } else {
      absl::StatusOr<std::vector<int64_t>> dims = SizesOf(ctx->input(0), "orig_input_shape");
      OP_REQUIRES_OK(ctx, dims.status());
      OP_REQUIRES(ctx, dims->size() == 4,
                  absl::InvalidArgumentError("orig_input_shape must have 4 elements"));
      absl::StatusOr<TensorShape> shape = TensorShape::FromDims(*dims);
      OP_REQUIRES_OK(ctx, shape.status());
      in_shape = *shape;
    }
    const Tensor& grad = ctx->input(max_ ? 2 : 1);
    TensorShape out_shape;
    absl::StatusOr<gpu::PoolGeometry> g = gpu::PoolPlan(in_shape, ksize_, strides_, padding_,
                                                        explicit_paddings_, nchw_, &out_shape);
    OP_REQUIRES_OK(ctx, g.status());
    OP_REQUIRES_OK(ctx, SameShape(grad, "grad", out_shape));
    if (max_) OP_REQUIRES_OK(ctx, SameShape(ctx->input(1), "orig_output", out_shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    const float* dy = grad.NumElements() == 0 ? nullptr : FloatData(grad);
    if (max_) {
      OP_REQUIRES_OK(ctx, gpu::MaxPoolGrad(*stream, FloatData(ctx->input(0)), dy, FloatData(out),
                                           *g));
    } else {
      OP_REQUIRES_OK(ctx, gpu::AvgPoolGrad(*stream, dy, FloatData(out), *g));
    }
  }

 private:
  const bool max_;
  std::vector<int64_t> ksize_, strides_, explicit_paddings_;
  Padding padding_ = Padding::kValid;
  bool nchw_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .HostMemory("input_sizes"),
                ConvBackpropInputOp);
REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropFilter")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .HostMemory("filter_sizes"),
                ConvBackpropFilterOp);
REGISTER_KERNEL(KernelDefBuilder("MaxPoolGrad").Device(kDeviceGpu).TypeConstraint<float>("T"),
                PoolGradOp);
REGISTER_KERNEL(KernelDefBuilder("AvgPoolGrad")
                    .Device(kDeviceGpu)
                    .TypeConstraint<float>("T")
                    .HostMemory("orig_input_shape"),
                PoolGradOp);

}  // namespace
}  // namespace graphrun
