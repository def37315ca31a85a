// CPU kernels that pad a tensor: Pad and PadV2 (a constant around the
// input) and MirrorPad (the input reflected at its edges, REFLECT without
// and SYMMETRIC with the edge element). Trailing dims without padding are
// merged into one contiguous unit, so the output is written row by row:
// whole runs are memcpy'd (strings element-wise), only mirrored edges go
// unit by unit. Every dtype; big outputs use the intra-op pool. Semantics
// follow TensorFlow's pad_op.cc and mirror_pad_op.cc.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

enum class PadMode { kConstant, kReflect, kSymmetric };

// The padded tensor with trailing unpadded dims folded into `unit`
// elements: the input is [in[0], ..., in[r-1], unit], the output
// [in[d] + before[d] + after[d] ..., unit]. r >= 1.
struct PadGeometry {
  std::vector<int64_t> in, out, before, after;
  int64_t unit = 1;
};

PadGeometry Collapse(const TensorShape& shape,
                     const std::vector<int64_t>& pads) {
  PadGeometry g;
  int r = shape.dims();
  while (r > 0 && pads[2 * (r - 1)] == 0 && pads[2 * (r - 1) + 1] == 0) {
    g.unit *= shape.dim_size(r - 1);
    --r;
  }
  for (int d = 0; d < r; ++d) {
    g.in.push_back(shape.dim_size(d));
    g.before.push_back(pads[2 * d]);
    g.after.push_back(pads[2 * d + 1]);
    g.out.push_back(shape.dim_size(d) + pads[2 * d] + pads[2 * d + 1]);
  }
  return g;
}

// Where output index `i` (counted from the start of the padding) reads in a
// dim of `n` input elements: -1 for the constant, else an input index.
int64_t SourceIndex(PadMode mode, int64_t i, int64_t before, int64_t n) {
  const int64_t j = i - before;
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kReflect:
      return j < 0 ? -j : 2 * n - 2 - j;
    case PadMode::kSymmetric:
      return j < 0 ? -j - 1 : 2 * n - 1 - j;
  }
  return -1;
}

// Writes output rows [begin, end) (a row is the last collapsed dim, in
// units). P is char (units counted in bytes) or std::string. `fill` holds a
// whole output row of the constant (kConstant only).
template <typename P>
void PadRows(PadMode mode, const PadGeometry& g, const P* in, const P* fill,
             P* out, int64_t begin, int64_t end) {
  const int r = static_cast<int>(g.in.size());
  const int64_t unit = g.unit;
  const int64_t in_row = g.in[r - 1] * unit, out_row = g.out[r - 1] * unit;
  for (int64_t row = begin; row < end; ++row) {
    // The input row this output row reads, -1 for a padding row.
    int64_t src = 0, stride = 1, rest = row;
    for (int d = r - 2; d >= 0 && src >= 0; --d) {
      const int64_t i =
          SourceIndex(mode, rest % g.out[d], g.before[d], g.in[d]);
      rest /= g.out[d];
      src = i < 0 ? -1 : src + i * stride;
      stride *= g.in[d];
    }
    P* dst = out + row * out_row;
    if (src < 0) {
      CopyN(fill, out_row, dst);
      continue;
    }
    const P* from = in + src * in_row;
    const int64_t before = g.before[r - 1], after = g.after[r - 1];
    const int64_t n = g.in[r - 1];
    if (mode == PadMode::kConstant) {
      CopyN(fill, before * unit, dst);
      CopyN(from, in_row, dst + before * unit);
      CopyN(fill, after * unit, dst + before * unit + in_row);
      continue;
    }
    for (int64_t i = 0; i < before; ++i) {
      CopyN(from + SourceIndex(mode, i, before, n) * unit, unit,
            dst + i * unit);
    }
    CopyN(from, in_row, dst + before * unit);
    for (int64_t i = before + n; i < before + n + after; ++i) {
      CopyN(from + SourceIndex(mode, i, before, n) * unit, unit,
            dst + i * unit);
    }
  }
}

template <typename P>
void Pad(OpKernelContext* ctx, PadMode mode, const PadGeometry& g,
         const Tensor& input, const Tensor* constant, int64_t elem_bytes,
         Tensor* output) {
  const int r = static_cast<int>(g.in.size());
  std::vector<P> fill;
  if (mode == PadMode::kConstant) {
    // One output row of the constant: elem_bytes bytes repeated, or copies
    // of the string.
    const int64_t n = g.out[r - 1] * g.unit;
    if constexpr (std::is_same_v<P, std::string>) {
      fill.assign(static_cast<size_t>(n),
                  constant != nullptr ? DataAs<std::string>(*constant)[0]
                                      : std::string());
    } else {
      fill.assign(static_cast<size_t>(n), 0);
      if (constant != nullptr) {
        for (int64_t i = 0; i < n; i += elem_bytes) {
          std::memcpy(fill.data() + i, constant->raw_data(),
                      static_cast<size_t>(elem_bytes));
        }
      }
    }
  }
  int64_t rows = 1;
  for (int d = 0; d + 1 < r; ++d) rows *= g.out[d];
  const int64_t row_units = g.out[r - 1] * g.unit;
  const int64_t unit_bytes = std::is_same_v<P, std::string> ? 32 : 1;
  const P* in = DataAs<P>(input);
  P* out = MutableDataAs<P>(output);
  ParallelForRange(ctx, rows, row_units * unit_bytes,
                   [&](int64_t begin, int64_t end) {
                     PadRows<P>(mode, g, in, fill.data(), out, begin, end);
                   });
}

// Pad (2 inputs), PadV2 (3: a constant_values scalar) and MirrorPad (a
// `mode` attr).
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->attrs().Find("mode") == nullptr) return;
    std::string mode;
    absl::Status s = ctx->GetAttr("mode", &mode);
    if (s.ok() && mode == "REFLECT") {
      mode_ = PadMode::kReflect;
    } else if (s.ok() && mode == "SYMMETRIC") {
      mode_ = PadMode::kSymmetric;
    } else {
      ctx->SetStatus(
          s.ok() ? absl::InvalidArgumentError(absl::StrCat(
                       "mode must be REFLECT or SYMMETRIC, not '", mode, "'"))
                 : s);
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& paddings = ctx->input(1);
    const int rank = input.dims();
    OP_REQUIRES(ctx, paddings.dims() == 2 && paddings.dim_size(1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "paddings must be a matrix with 2 columns, but has shape ",
                    paddings.shape().DebugString())));
    OP_REQUIRES(ctx, paddings.dim_size(0) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "The first dimension of paddings must be the rank of the "
                    "input: paddings have shape ",
                    paddings.shape().DebugString(), ", the input ",
                    input.shape().DebugString())));
    const Tensor* constant = nullptr;
    if (ctx->num_inputs() == 3) {
      constant = &ctx->input(2);
      OP_REQUIRES(ctx, constant->dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "constant_values must be a scalar, but has shape ",
                      constant->shape().DebugString())));
    }
    const std::vector<int64_t> pads = IntValues(paddings);
    const int64_t reflect = mode_ == PadMode::kReflect ? 1 : 0;
    std::vector<int64_t> dims(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t before = pads[2 * d], after = pads[2 * d + 1];
      const int64_t n = input.dim_size(d);
      OP_REQUIRES(ctx, before >= 0 && after >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Paddings must be non-negative, but paddings[", d,
                      "] = [", before, ", ", after, "]")));
      if (mode_ != PadMode::kConstant) {
        OP_REQUIRES(ctx, before <= n - reflect && after <= n - reflect,
                    absl::InvalidArgumentError(absl::StrCat(
                        "paddings[", d, "] = [", before, ", ", after, "] ",
                        reflect ? "must be less than" : "must not exceed",
                        " the dimension size ", n, " in ",
                        reflect ? "REFLECT" : "SYMMETRIC", " mode")));
      }
      OP_REQUIRES(ctx, before <= kMaxElements && after <= kMaxElements - before,
                  absl::InvalidArgumentError(
                      absl::StrCat("paddings[", d, "] = [", before, ", ", after,
                                   "] are too large")));
      dims[d] = n + before + after;
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    if (*shape == input.shape()) {  // no padding at all
      ctx->set_output(0, input);
      return;
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (output->NumElements() == 0) return;
    const PadGeometry g = Collapse(input.shape(), pads);
    if (input.dtype() == DT_STRING) {
      Pad<std::string>(ctx, mode_, g, input, constant, 1, output);
    } else {
      PadGeometry bytes = g;
      const int64_t elem = DataTypeSize(input.dtype());
      bytes.unit *= elem;
      Pad<char>(ctx, mode_, bytes, input, constant, elem, output);
    }
  }

 private:
  PadMode mode_ = PadMode::kConstant;
};

REGISTER_KERNEL(KernelDefBuilder("Pad")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tpaddings", {DT_INT32, DT_INT64}),
                PadOp);
REGISTER_KERNEL(KernelDefBuilder("PadV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tpaddings", {DT_INT32, DT_INT64}),
                PadOp);
REGISTER_KERNEL(KernelDefBuilder("MirrorPad")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tpaddings", {DT_INT32, DT_INT64}),
                PadOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
