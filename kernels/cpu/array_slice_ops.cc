// CPU kernels that take a rectangular, possibly strided, part of a tensor:
// Slice and StridedSlice (index arithmetic in array_strided_slice.h). A
// slice of the whole input, or of a contiguous aligned range of dim 0,
// shares the input's buffer; otherwise Eigen's slice / stridedSlice copies
// it, after merging trailing whole dims into the dim before them.
// Semantics and messages follow TensorFlow's slice_op.cc and
// strided_slice_op.cc.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/array_strided_slice.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// A strided slice in Eigen's terms, per (collapsed) input dim.
struct SliceGeometry {
  std::vector<int64_t> in_dims, begin, end, strides, out_dims;
};

// Merges each whole, stride-1 dim into the stride-1 dim before it:
// x[1:3, :, :] on [4, 5, 6] is x'[30:90] on [120].
SliceGeometry Collapse(const TensorShape& shape, const StridedSliceSpec& spec) {
  SliceGeometry g;
  bool prev_stride1 = false;
  for (int i = 0; i < shape.dims(); ++i) {
    const int64_t d = shape.dim_size(i);
    const int64_t b = spec.begin[i], e = spec.end[i], s = spec.strides[i];
    const bool whole = s == 1 && b == 0 && e == d;
    if (whole && prev_stride1) {
      g.in_dims.back() *= d;
      g.begin.back() *= d;
      g.end.back() *= d;
      g.out_dims.back() *= d;
      continue;
    }
    g.in_dims.push_back(d);
    g.begin.push_back(b);
    g.end.push_back(e);
    g.strides.push_back(s);
    g.out_dims.push_back(spec.processing_dims[i]);
    prev_stride1 = s == 1;
  }
  return g;
}

// Copies the slice into `out` (which has the slice's element count).
// Returns false if the collapsed rank is beyond kMaxEigenRank.
bool CopySlice(OpKernelContext* ctx, const Tensor& input,
               const StridedSliceSpec& spec, Tensor* out) {
  const SliceGeometry g = Collapse(input.shape(), spec);
  const int64_t n = out->NumElements();
  bool handled = false;
  VisitCopyType(input.dtype(), [&](auto zero) {
    using P = decltype(zero);
    handled = VisitEigenRank(static_cast<int>(g.in_dims.size()), [&](auto rank_constant) {
      constexpr int N = decltype(rank_constant)::value;
      EigenConstMap<P, N> in_map(DataAs<P>(input), ToDSizes<N>(g.in_dims));
      EigenMap<P, N> out_map(MutableDataAs<P>(out), ToDSizes<N>(g.out_dims));
      if (spec.is_simple_slice) {
        const auto offsets = ToDSizes<N>(g.begin);
        const auto extents = ToDSizes<N>(g.out_dims);
        RunOnEigenDevice(ctx, n, [&](const auto& device) {
          out_map.device(device) = in_map.slice(offsets, extents);
        });
      } else {
        const auto begin = ToDSizes<N>(g.begin);
        const auto end = ToDSizes<N>(g.end);
        const auto strides = ToDSizes<N>(g.strides);
        RunOnEigenDevice(ctx, n, [&](const auto& device) {
          out_map.device(device) = in_map.stridedSlice(begin, end, strides);
        });
      }
    });
  });
  return handled;
}

// Shares or copies the slice described by `spec` into output 0.
void OutputSlice(OpKernelContext* ctx, const Tensor& input,
                 const StridedSliceSpec& spec) {
  if (spec.is_identity) {
    absl::StatusOr<Tensor> out = input.Reshaped(spec.final_shape);
    OP_REQUIRES_OK(ctx, out.status());
    ctx->set_output(0, *std::move(out));
    return;
  }
  if (spec.slice_dim0 && input.dims() >= 1) {
    // begin > end is an empty slice.
    const int64_t b = std::min(spec.begin[0], spec.end[0]);
    absl::StatusOr<Tensor> out =
        input.Slice(b, spec.end[0]).Reshaped(spec.final_shape);
    if (out.ok() && (input.dtype() == DT_STRING || IsAligned(*out))) {
      ctx->set_output(0, *std::move(out));
      return;
    }
  }
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, spec.final_shape, &out));
  if (out->NumElements() == 0) return;
  OP_REQUIRES(ctx, CopySlice(ctx, input, spec, out),
              absl::UnimplementedError(absl::StrCat(
                  "Unhandled input dimensions ", input.dims())));
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_t_ = ctx->input(2);
    const int rank = input.dims();
    OP_REQUIRES(ctx,
                begin_t.dims() == 1 && size_t_.dims() == 1 &&
                    begin_t.NumElements() == rank &&
                    size_t_.NumElements() == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected begin and size arguments to be 1-D tensors of "
                    "size ", rank, ", but got shapes ",
                    begin_t.shape().DebugString(), " and ",
                    size_t_.shape().DebugString(), " instead.")));
    const std::vector<int64_t> begin = IntValues(begin_t);
    std::vector<int64_t> size = IntValues(size_t_);
    StridedSliceSpec spec;
    spec.is_identity = true;
    spec.is_simple_slice = true;
    spec.slice_dim0 = true;
    for (int i = 0; i < rank; ++i) {
      const int64_t d = input.dim_size(i);
      const int64_t b = begin[i];
      // size -1 means "everything from begin on" (wrapping, never UB, when
      // begin is out of range and about to be rejected).
      const int64_t s =
          size[i] == -1
              ? static_cast<int64_t>(static_cast<uint64_t>(d) - static_cast<uint64_t>(b))
              : size[i];
      if (d == 0) {
        OP_REQUIRES(ctx, b == 0 && s == 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Expected begin[", i, "] == 0 (got ", b, ") and size[",
                        i, "] == 0 (got ", s, ") when input.dim_size(", i,
                        ") == 0")));
      } else {
        OP_REQUIRES(ctx, 0 <= b && b <= d,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Expected begin[", i, "] in [0, ", d, "], but got ",
                        b)));
        OP_REQUIRES(ctx, 0 <= s && s <= d - b,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Expected size[", i, "] in [0, ", d - b, "], but got ",
                        s)));
      }
      const bool take_all = b == 0 && s == d;
      spec.is_identity &= take_all;
      spec.slice_dim0 &= i == 0 || take_all;
      spec.begin.push_back(b);
      spec.end.push_back(b + s);
      spec.strides.push_back(1);
      spec.processing_dims.push_back(s);
    }
    absl::StatusOr<TensorShape> shape =
        TensorShape::FromDims(spec.processing_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    spec.final_shape = *std::move(shape);
    OutputSlice(ctx, input, spec);
  }
};

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("begin_mask", &masks_.begin));
    ctx->SetStatus(ctx->GetAttr("end_mask", &masks_.end));
    ctx->SetStatus(ctx->GetAttr("ellipsis_mask", &masks_.ellipsis));
    ctx->SetStatus(ctx->GetAttr("new_axis_mask", &masks_.new_axis));
    ctx->SetStatus(ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    absl::StatusOr<StridedSliceSpec> spec =
        ValidateStridedSlice(input.shape(), ctx->input(1), ctx->input(2),
                             ctx->input(3), masks_);
    OP_REQUIRES_OK(ctx, spec.status());
    OutputSlice(ctx, input, *spec);
  }

 private:
  StridedSliceMasks masks_;
};

REGISTER_KERNEL(KernelDefBuilder("Slice").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Index", {DT_INT32, DT_INT64}),
                SliceOp);
REGISTER_KERNEL(KernelDefBuilder("StridedSlice").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Index", {DT_INT32, DT_INT64}),
                StridedSliceOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
