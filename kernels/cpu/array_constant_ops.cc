// CPU kernels that make or forward tensors without computing on them:
// Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN,
// StopGradient, PreventGradient, Snapshot, NoOp, Shape, Size, Rank, Fill,
// ZerosLike, OnesLike, Range.
// Forwarding kernels share their input's buffer; all but Fill, ZerosLike,
// OnesLike and Range are inexpensive. Semantics and messages follow
// TensorFlow's constant_op.cc, identity_op.cc, shape_ops.h and
// sequence_ops.cc.
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {
using ::graphrun::ConstValue;
using ::graphrun::ForwardableTypes;

// Decodes `value` once; every step outputs the same buffer.
class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    absl::StatusOr<Tensor> t = ConstValue(ctx);
    if (!t.ok()) {
      ctx->SetStatus(t.status());
      return;
    }
    tensor_ = *std::move(t);
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, tensor_); }

 private:
  Tensor tensor_;
};

// Runs only when the session was not fed this node's value.
class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    if (!ctx->GetAttr("shape", &shape_).ok()) shape_ = PartialShape();
  }
  void Compute(OpKernelContext* ctx) override {
    std::string message =
        absl::StrCat("You must feed a value for placeholder tensor '", name(),
                     "' with dtype ", DataTypeString(output_type(0)));
    if (!shape_.unknown_rank()) {
      absl::StrAppend(&message, " and shape ", shape_.DebugString());
    }
    ctx->SetStatus(absl::InvalidArgumentError(message));
  }

 private:
  PartialShape shape_;
};

// Identity, IdentityN, StopGradient, PreventGradient, Snapshot,
// PlaceholderWithDefault: output i is input i, sharing its buffer.
class ForwardInputsOp : public OpKernel {
 public:
  explicit ForwardInputsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs() && i < ctx->num_outputs(); ++i) {
      ctx->set_output(i, ctx->input(i));
    }
  }
};

class NoOp : public OpKernel {
 public:
  explicit NoOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext*) override {}
};

template <typename OutT>
class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& shape = ctx->input(0).shape();
    const int rank = shape.dims();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rank}), &out));
    auto v = out->flat<OutT>();
    for (int i = 0; i < rank; ++i) {
      const int64_t d = shape.dim_size(i);
      OP_REQUIRES(ctx, d <= std::numeric_limits<OutT>::max(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Shape output type is 32-bit  but dim ", i, " is ", d)));
      v[i] = static_cast<OutT>(d);
    }
  }
};

template <typename OutT>
class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->input(0).NumElements();
    OP_REQUIRES(ctx, n <= std::numeric_limits<OutT>::max(),
                absl::InvalidArgumentError(
                    "Number of elements was larger than representable by "
                    "32-bit output type"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->flat<OutT>()[0] = static_cast<OutT>(n);
  }
};

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->flat<int32_t>()[0] = ctx->input(0).dims();
  }
};

// Sets every element of `out` to element 0 of `value` (same dtype).
void FillWith(OpKernelContext* ctx, const Tensor& value, Tensor* out) {
  const int64_t n = out->NumElements();
  if (n == 0) return;
  VisitCopyType(out->dtype(), [&](auto zero) {
    using P = decltype(zero);
    EigenMap<P, 1> flat(MutableDataAs<P>(out), n);
    const P v = DataAs<P>(value)[0];
    RunOnEigenDevice(ctx, n,
                     [&](const auto& device) { flat.device(device) = flat.constant(v); });
  });
}

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, dims.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "dims must be a vector, got shape ",
                    dims.shape().DebugString())));
    OP_REQUIRES(ctx, value.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "value must be a scalar, got shape ",
                    value.shape().DebugString())));
    absl::StatusOr<TensorShape> shape = ShapeFromTensor(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    FillWith(ctx, value, out);
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    // All-zero bits are zero for every POD type; strings become empty.
    const Tensor zero(x.dtype(), TensorShape());
    Tensor* out = nullptr;
    // May take x's buffer (and empty x).
    OP_REQUIRES_OK(ctx,
                   ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    FillWith(ctx, zero, out);
  }
};

class OnesLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor one(x.dtype(), TensorShape());
    VisitDataType(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, std::string>) {
        one.flat<T>()[0] = static_cast<T>(1);
      }
    });
    Tensor* out = nullptr;
    // May take x's buffer (and empty x).
    OP_REQUIRES_OK(ctx,
                   ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    FillWith(ctx, one, out);
  }
};

template <typename T>
class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    static constexpr const char* kNames[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() == 0 || (t.dims() == 1 && t.dim_size(0) == 1),
                  absl::InvalidArgumentError(
                      absl::StrCat(kNames[i], " must be a scalar, not shape ",
                                   t.shape().DebugString())));
    }
    const T start = ctx->input(0).flat<T>()[0];
    const T limit = ctx->input(1).flat<T>()[0];
    const T delta = ctx->input(2).flat<T>()[0];
    OP_REQUIRES(ctx, delta != T(0),
                absl::InvalidArgumentError(
                    absl::StrCat("Requires delta != 0: ", delta)));
    if (delta > T(0)) {
      OP_REQUIRES(ctx, start <= limit,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Requires start <= limit when delta > 0: ", start, "/",
                      limit)));
    } else {
      OP_REQUIRES(ctx, start >= limit,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Requires start >= limit when delta < 0: ", start, "/",
                      limit)));
    }
    // The element count, refused past kMaxElements before it is narrowed to
    // int64_t (INT64_MIN..INT64_MAX by 1 has 2^64 - 1 elements).
    int64_t size = 0;
    if constexpr (std::is_integral_v<T>) {
      // |limit - start| and |delta| without overflow, in uint64_t.
      const uint64_t span = start <= limit
                                ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
      const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta)
                                      : uint64_t{0} - static_cast<uint64_t>(delta);
      const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
      OP_REQUIRES(ctx, count <= static_cast<uint64_t>(kMaxElements),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Range from ", start, " to ", limit, " by ", delta,
                      " is too large: ", count, " elements (more than 2^48)")));
      size = static_cast<int64_t>(count);
    } else {
      const T size_auto = std::ceil(std::abs((limit - start) / delta));
      // Also false for NaN.
      OP_REQUIRES(ctx, size_auto <= static_cast<T>(kMaxElements),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Range from ", start, " to ", limit, " by ", delta,
                      " is too large: (limit - start) / delta must be at most "
                      "2^48 and a number")));
      size = static_cast<int64_t>(size_auto);
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims({size});
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    auto v = out->flat<T>();
    for (int64_t i = 0; i < size; ++i) {
      if constexpr (std::is_integral_v<T>) {
        // Wrapping arithmetic: every value lies between start and limit.
        v[i] = static_cast<T>(static_cast<uint64_t>(start) +
                              static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
      } else {
        v[i] = start + static_cast<T>(i) * delta;
      }
    }
  }
};

REGISTER_KERNEL(KernelDefBuilder("Const").Device(kDeviceCpu)
                    .TypeConstraint("dtype", AllTensorTypes()),
                ConstOp);
REGISTER_KERNEL(KernelDefBuilder("Placeholder").Device(kDeviceCpu)
                    .TypeConstraint("dtype", AllTensorTypes()),
                PlaceholderOp);
REGISTER_KERNEL(KernelDefBuilder("PlaceholderV2").Device(kDeviceCpu)
                    .TypeConstraint("dtype", AllTensorTypes()),
                PlaceholderOp);
REGISTER_KERNEL(KernelDefBuilder("PlaceholderWithDefault").Device(kDeviceCpu)
                    .TypeConstraint("dtype", AllTensorTypes()),
                ForwardInputsOp);
REGISTER_KERNEL(KernelDefBuilder("Identity").Device(kDeviceCpu)
                    .TypeConstraint("T", ForwardableTypes()),
                ForwardInputsOp);
REGISTER_KERNEL(KernelDefBuilder("IdentityN").Device(kDeviceCpu)
                    .TypeConstraint("T", ForwardableTypes()),
                ForwardInputsOp);
REGISTER_KERNEL(KernelDefBuilder("StopGradient").Device(kDeviceCpu)
                    .TypeConstraint("T", ForwardableTypes()),
                ForwardInputsOp);
REGISTER_KERNEL(KernelDefBuilder("PreventGradient").Device(kDeviceCpu)
                    .TypeConstraint("T", ForwardableTypes()),
                ForwardInputsOp);
// Tensors are immutable once made (a kernel writes in place only into a
// buffer it alone holds), so sharing the buffer is a snapshot.
REGISTER_KERNEL(KernelDefBuilder("Snapshot").Device(kDeviceCpu)
                    .TypeConstraint("T", ForwardableTypes()),
                ForwardInputsOp);
REGISTER_KERNEL(KernelDefBuilder("NoOp").Device(kDeviceCpu), NoOp);

REGISTER_KERNEL(KernelDefBuilder("Shape").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint<int32_t>("out_type"),
                ShapeOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("Shape").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint<int64_t>("out_type"),
                ShapeOp<int64_t>);
REGISTER_KERNEL(KernelDefBuilder("Size").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint<int32_t>("out_type"),
                SizeOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("Size").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint<int64_t>("out_type"),
                SizeOp<int64_t>);
REGISTER_KERNEL(KernelDefBuilder("Rank").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                RankOp);

REGISTER_KERNEL(KernelDefBuilder("Fill").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("index_type", {DT_INT32, DT_INT64}),
                FillOp);
REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                ZerosLikeOp);
REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(kDeviceCpu)
                    .TypeConstraint("T", PodTensorTypes()),
                OnesLikeOp);

REGISTER_KERNEL(KernelDefBuilder("Range").Device(kDeviceCpu)
                    .TypeConstraint<int32_t>("Tidx"),
                RangeOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("Range").Device(kDeviceCpu)
                    .TypeConstraint<int64_t>("Tidx"),
                RangeOp<int64_t>);
REGISTER_KERNEL(KernelDefBuilder("Range").Device(kDeviceCpu)
                    .TypeConstraint<float>("Tidx"),
                RangeOp<float>);
REGISTER_KERNEL(KernelDefBuilder("Range").Device(kDeviceCpu)
                    .TypeConstraint<double>("Tidx"),
                RangeOp<double>);

}  // namespace
}  // namespace array_kernels

// Kernels that only pass tensors on also pass list handles (DT_VARIANT) and
// TensorArray handles (DT_RESOURCE), which loops carry.
const std::vector<DataType>& ForwardableTypes() {
  static const std::vector<DataType>* const types = [] {
    auto* v = new std::vector<DataType>(array_kernels::AllTensorTypes());
    v->push_back(DT_VARIANT);
    v->push_back(DT_RESOURCE);
    return v;
  }();
  return *types;
}

absl::StatusOr<Tensor> ConstValue(OpKernelConstruction* ctx) {
  const AttrValue* value = ctx->attrs().Find("value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return absl::InvalidArgumentError("Const needs a tensor attr 'value'");
  }
  absl::StatusOr<Tensor> t = Tensor::FromProto(value->tensor());
  if (!t.ok()) return t.status();
  if (t->dtype() != ctx->output_types()[0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Type mismatch between value (", DataTypeString(t->dtype()), ") and dtype (",
        DataTypeString(ctx->output_types()[0]), ")"));
  }
  return t;
}

OpKernel* NewForwardInputsOp(OpKernelConstruction* c) {
  return new array_kernels::ForwardInputsOp(c);
}
OpKernel* NewNoOp(OpKernelConstruction* c) { return new array_kernels::NoOp(c); }
OpKernel* NewHostConstOp(OpKernelConstruction* c) { return new array_kernels::ConstOp(c); }
OpKernel* NewShapeOp(OpKernelConstruction* c) {
  if (c->output_types()[0] == DT_INT64) return new array_kernels::ShapeOp<int64_t>(c);
  return new array_kernels::ShapeOp<int32_t>(c);
}
OpKernel* NewSizeOp(OpKernelConstruction* c) {
  if (c->output_types()[0] == DT_INT64) return new array_kernels::SizeOp<int64_t>(c);
  return new array_kernels::SizeOp<int32_t>(c);
}
OpKernel* NewRankOp(OpKernelConstruction* c) { return new array_kernels::RankOp(c); }

}  // namespace graphrun
