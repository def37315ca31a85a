// The GPU's data movement and reduction kernels: Transpose, ConcatV2, Pack,
// Slice, StridedSlice, Pad/PadV2, Gather/GatherV2, and Sum, Mean, Max, Min,
// Prod over float. Shapes, axes and sizes come in host memory (HostMemory
// args); array_plans.h turns them into strided copies, gathers and
// [outer, r, inner] reductions, queued on the compute stream. Also the
// kernels that change only a shape (Reshape, ExpandDims, Squeeze) or read
// only a shape (Shape, Size, Rank, into host memory): the CPU's kernels,
// which never touch the bytes.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/array_strided_slice.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/gpu/array_plans.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using array_kernels::IntScalar;
using array_kernels::IntValues;
using gpu::CopyableDeviceTypes;
using gpu::GpuKernel;
using gpu::Stream;

int ElementBytes(const Tensor& t) { return static_cast<int>(DataTypeSize(t.dtype())); }

// Allocates output 0 of `shape` and copies `in` into it by `plan`.
void CopyInto(OpKernelContext* ctx, const Tensor& in, const TensorShape& shape,
              const gpu::StridedCopyPlan& plan) {
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
  if (out->NumElements() == 0) return;
  absl::StatusOr<void*> stream = Stream(ctx);
  OP_REQUIRES_OK(ctx, stream.status());
  OP_REQUIRES_OK(ctx,
                 gpu::StridedCopy(*stream, ElementBytes(in), in.raw_data(), out->raw_data(), plan));
}

class TransposeOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& perm = ctx->input(1);
    OP_REQUIRES(ctx, perm.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("perm must be rank 1, got shape ", perm.shape().DebugString())));
    TensorShape shape;
    absl::StatusOr<gpu::StridedCopyPlan> plan =
        gpu::TransposePlan(x.shape(), IntValues(perm), &shape);
    OP_REQUIRES_OK(ctx, plan.status());
    CopyInto(ctx, x, shape, *plan);
  }
};

class SliceOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TensorShape shape;
    absl::StatusOr<gpu::StridedCopyPlan> plan =
        gpu::SlicePlan(x.shape(), IntValues(ctx->input(1)), IntValues(ctx->input(2)), &shape);
    OP_REQUIRES_OK(ctx, plan.status());
    if (shape == x.shape()) {  // the whole input
      ctx->set_output(0, x);
      return;
    }
    CopyInto(ctx, x, shape, *plan);
  }
};

class StridedSliceOp : public GpuKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : GpuKernel(c) {
    for (auto [name, field] : {std::pair<const char*, int64_t*>{"begin_mask", &masks_.begin},
                               {"end_mask", &masks_.end},
                               {"ellipsis_mask", &masks_.ellipsis},
                               {"new_axis_mask", &masks_.new_axis},
                               {"shrink_axis_mask", &masks_.shrink_axis}}) {
      absl::Status s = c->GetAttr(name, field);
      if (!s.ok()) {
        c->SetStatus(s);
        return;
      }
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    absl::StatusOr<array_kernels::StridedSliceSpec> spec = array_kernels::ValidateStridedSlice(
        x.shape(), ctx->input(1), ctx->input(2), ctx->input(3), masks_);
    OP_REQUIRES_OK(ctx, spec.status());
    if (spec->is_identity) {
      absl::StatusOr<Tensor> same = x.Reshaped(spec->final_shape);
      OP_REQUIRES_OK(ctx, same.status());
      ctx->set_output(0, *std::move(same));
      return;
    }
    absl::StatusOr<gpu::StridedCopyPlan> plan =
        gpu::StridedSlicePlan(x.shape(), spec->begin, spec->strides, spec->processing_dims);
    OP_REQUIRES_OK(ctx, plan.status());
    CopyInto(ctx, x, spec->final_shape, *plan);
  }

 private:
  array_kernels::StridedSliceMasks masks_;
};

// ConcatV2 (values..., axis) and Pack (values..., attr axis): Pack is the
// concatenation of its inputs with a 1 inserted at the axis.
class ConcatOp : public GpuKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : GpuKernel(c), pack_(c->def().op() == "Pack") {
    if (pack_) c->SetStatus(c->GetAttr("axis", &pack_axis_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int n = pack_ ? ctx->num_inputs() : ctx->num_inputs() - 1;
    std::vector<TensorShape> shapes;
    int64_t axis = 0;
    if (pack_) {
      const int rank = n > 0 ? ctx->input(0).dims() + 1 : 1;
      OP_REQUIRES(ctx, pack_axis_ >= -rank && pack_axis_ < rank,
                  absl::InvalidArgumentError(
                      absl::StrCat("axis = ", pack_axis_, " not in [", -rank, ", ", rank, ")")));
      axis = pack_axis_ < 0 ? pack_axis_ + rank : pack_axis_;
      for (int i = 0; i < n; ++i) {
        OP_REQUIRES(ctx, ctx->input(i).shape() == ctx->input(0).shape(),
                    absl::InvalidArgumentError(
                        absl::StrCat("Shapes of all inputs must match: values[0].shape = ",
                                     ctx->input(0).shape().DebugString(), " != values[", i,
                                     "].shape = ", ctx->input(i).shape().DebugString())));
        absl::StatusOr<TensorShape> s = TensorShape::FromDims(
            array_kernels::InsertDim(ctx->input(i).shape(), static_cast<int>(axis), 1));
        OP_REQUIRES_OK(ctx, s.status());
        shapes.push_back(*s);
      }
    } else {
      const Tensor& axis_t = ctx->input(n);
      OP_REQUIRES(ctx, axis_t.dims() == 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("axis tensor should be a scalar integer, but got shape ",
                                   axis_t.shape().DebugString())));
      axis = IntScalar(axis_t);
      for (int i = 0; i < n; ++i) shapes.push_back(ctx->input(i).shape());
    }
    TensorShape shape;
    absl::StatusOr<std::vector<gpu::StridedCopyPlan>> plans =
        gpu::ConcatPlans(shapes, axis, &shape);
    OP_REQUIRES_OK(ctx, plans.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    // The plans are of the non-empty inputs, in order.
    size_t next = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      if (in.NumElements() == 0) continue;
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, ElementBytes(in), in.raw_data(),
                                           out->raw_data(), (*plans)[next++]));
    }
  }

 private:
  const bool pack_;
  int64_t pack_axis_ = 0;
};

// Pad and PadV2 (constant mode): the output filled with the constant, then
// the input copied into its interior.
class PadOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& paddings = ctx->input(1);
    uint64_t bits = 0;
    if (ctx->num_inputs() > 2) {
      const Tensor& constant = ctx->input(2);
      OP_REQUIRES(
          ctx, constant.dims() == 0,
          absl::InvalidArgumentError(absl::StrCat(
              "constant_values must be a scalar, but has shape ", constant.shape().DebugString())));
      std::memcpy(&bits, constant.raw_data(), DataTypeSize(constant.dtype()));
    }
    TensorShape shape;
    absl::StatusOr<gpu::StridedCopyPlan> plan =
        gpu::PadPlan(x.shape(), paddings.shape(), IntValues(paddings), &shape);
    OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (bits == 0) {
      OP_REQUIRES_OK(ctx,
                     gpu::Zero(*stream, out->raw_data(), static_cast<int64_t>(out->TotalBytes())));
    } else {
      OP_REQUIRES_OK(
          ctx, gpu::Fill(*stream, ElementBytes(x), bits, out->raw_data(), out->NumElements()));
    }
    if (x.NumElements() == 0) return;
    OP_REQUIRES_OK(
        ctx, gpu::StridedCopy(*stream, ElementBytes(x), x.raw_data(), out->raw_data(), *plan));
  }
};

// Gather (axis 0) and GatherV2 (axis in host memory, any batch_dims). An
// index out of range gives zeros, as TensorFlow's GPU kernel (checking
// would need the indices on the host).
class GatherOp : public GpuKernel {
 public:
  explicit GatherOp(OpKernelConstruction* c) : GpuKernel(c), v2_(c->def().op() == "GatherV2") {
    if (c->attrs().Find("batch_dims") != nullptr)
      c->SetStatus(c->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis = 0;
    if (v2_) {
      const Tensor& axis_t = ctx->input(2);
      OP_REQUIRES(ctx, axis_t.dims() == 0, absl::InvalidArgumentError("axis must be scalar"));
      axis = IntScalar(axis_t);
    }
    absl::StatusOr<gpu::GatherExtent> e =
        gpu::GatherPlan(params.shape(), indices.shape(), axis, batch_dims_);
    OP_REQUIRES_OK(ctx, e.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, e->output, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES(ctx, e->limit > 0,
                absl::InvalidArgumentError("Gather: indices into an empty dimension"));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::Gather(*stream, ElementBytes(params), params.raw_data(),
                                    indices.dtype() == DT_INT64 ? gpu::IndexType::kInt64
                                                                : gpu::IndexType::kInt32,
                                    indices.raw_data(), out->raw_data(), e->batch, e->outer,
                                    e->limit, e->num_indices, e->inner));
  }

 private:
  const bool v2_;
  int64_t batch_dims_ = 0;
};

template <gpu::ReduceOp kOp>
class ReduceOp : public GpuKernel {
 public:
  explicit ReduceOp(OpKernelConstruction* c) : GpuKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axes = ctx->input(1);
    OP_REQUIRES(ctx, axes.dims() <= 1,
                absl::InvalidArgumentError(
                    absl::StrCat("reduction_indices must be a scalar or a vector, got shape ",
                                 axes.shape().DebugString())));
    absl::StatusOr<gpu::ReducePlan> plan = gpu::PlanReduce(x.shape(), IntValues(axes), keep_dims_);
    OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    const float* in = static_cast<const float*>(x.raw_data());
    Tensor transposed;
    if (plan->needs_transpose) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, plan->transposed, &transposed));
      OP_REQUIRES_OK(
          ctx, gpu::StridedCopy(*stream, 4, x.raw_data(), transposed.raw_data(), plan->transpose));
      in = static_cast<const float*>(transposed.raw_data());
    }
    OP_REQUIRES_OK(ctx, gpu::Reduce(*stream, kOp, in, static_cast<float*>(out->raw_data()),
                                    plan->outer, plan->r, plan->inner));
  }

 private:
  bool keep_dims_ = false;
};

const std::vector<DataType> kIndexTypes = {DT_INT32, DT_INT64};

REGISTER_KERNEL(KernelDefBuilder("Transpose")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Tperm", kIndexTypes)
                    .HostMemory("perm"),
                TransposeOp);
REGISTER_KERNEL(KernelDefBuilder("Slice")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Index", kIndexTypes)
                    .HostMemory("begin")
                    .HostMemory("size"),
                SliceOp);
REGISTER_KERNEL(KernelDefBuilder("StridedSlice")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Index", kIndexTypes)
                    .HostMemory("begin")
                    .HostMemory("end")
                    .HostMemory("strides"),
                StridedSliceOp);
REGISTER_KERNEL(KernelDefBuilder("ConcatV2")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Tidx", kIndexTypes)
                    .HostMemory("axis"),
                ConcatOp);
REGISTER_KERNEL(
    KernelDefBuilder("Pack").Device(kDeviceGpu).TypeConstraint("T", CopyableDeviceTypes()),
    ConcatOp);
REGISTER_KERNEL(KernelDefBuilder("Pad")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Tpaddings", kIndexTypes)
                    .HostMemory("paddings"),
                PadOp);
REGISTER_KERNEL(KernelDefBuilder("PadV2")
                    .Device(kDeviceGpu)
                    .TypeConstraint("T", CopyableDeviceTypes())
                    .TypeConstraint("Tpaddings", kIndexTypes)
                    .HostMemory("paddings")
                    .HostMemory("constant_values"),
                PadOp);
REGISTER_KERNEL(KernelDefBuilder("Gather")
                    .Device(kDeviceGpu)
                    .TypeConstraint("Tparams", CopyableDeviceTypes())
                    .TypeConstraint("Tindices", kIndexTypes),
                GatherOp);
REGISTER_KERNEL(KernelDefBuilder("GatherV2")
                    .Device(kDeviceGpu)
                    .TypeConstraint("Tparams", CopyableDeviceTypes())
                    .TypeConstraint("Tindices", kIndexTypes)
                    .TypeConstraint("Taxis", kIndexTypes)
                    .HostMemory("axis"),
                GatherOp);

#define GR_GPU_REDUCE(name, op)                            \
  REGISTER_KERNEL(KernelDefBuilder(name)                   \
                      .Device(kDeviceGpu)                  \
                      .TypeConstraint<float>("T")          \
                      .TypeConstraint("Tidx", kIndexTypes) \
                      .HostMemory("reduction_indices"),    \
                  ReduceOp<gpu::ReduceOp::op>)
GR_GPU_REDUCE("Sum", kSum);
GR_GPU_REDUCE("Mean", kMean);
GR_GPU_REDUCE("Max", kMax);
GR_GPU_REDUCE("Min", kMin);
GR_GPU_REDUCE("Prod", kProd);
#undef GR_GPU_REDUCE

// Shape-only kernels: the CPU's, with their shape arguments and results in
// host memory.
const internal::KernelRegistrar kReshape(KernelDefBuilder("Reshape")
                                             .Device(kDeviceGpu)
                                             .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                             .TypeConstraint("Tshape", kIndexTypes)
                                             .HostMemory("shape")
                                             .Build(NewReshapeOp));
const internal::KernelRegistrar kExpandDims(KernelDefBuilder("ExpandDims")
                                                .Device(kDeviceGpu)
                                                .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                                .TypeConstraint("Tdim", kIndexTypes)
                                                .HostMemory("dim")
                                                .Build(NewExpandDimsOp));
const internal::KernelRegistrar kSqueeze(KernelDefBuilder("Squeeze")
                                             .Device(kDeviceGpu)
                                             .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                             .Build(NewSqueezeOp));
const internal::KernelRegistrar kShape(KernelDefBuilder("Shape")
                                           .Device(kDeviceGpu)
                                           .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                           .TypeConstraint("out_type", kIndexTypes)
                                           .HostMemory("output")
                                           .Build(NewShapeOp));
const internal::KernelRegistrar kSize(KernelDefBuilder("Size")
                                          .Device(kDeviceGpu)
                                          .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                          .TypeConstraint("out_type", kIndexTypes)
                                          .HostMemory("output")
                                          .Build(NewSizeOp));
const internal::KernelRegistrar kRank(KernelDefBuilder("Rank")
                                          .Device(kDeviceGpu)
                                          .TypeConstraint("T", gpu::DeviceMemoryTypes())
                                          .HostMemory("output")
                                          .Build(NewRankOp));

}  // namespace
}  // namespace graphrun
