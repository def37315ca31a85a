// CPU kernels that move blocks of elements between dims: SpaceToBatchND,
// BatchToSpaceND, DepthToSpace, SpaceToDepth (NHWC and NCHW) and Roll.
// Each output is a sequence of contiguous units (the dims that move
// together), each copied from one input unit or zero-filled; elements move
// as bytes (strings element-wise), so one instantiation serves every dtype.
// Big outputs use the intra-op pool. Semantics follow TensorFlow's
// spacetobatch_op.cc, batchtospace_op.cc, depthtospace_op.cc,
// spacetodepth_op.cc and roll_op.cc.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// Output unit k (`unit` elements of P) is input unit src_of(k), or zeros
// (empty strings) when src_of(k) < 0. P is char (units in bytes) or
// std::string.
template <typename P, typename SrcFn>
void GatherUnits(OpKernelContext* ctx, const Tensor& in, int64_t unit,
                 Tensor* out, const SrcFn& src_of) {
  if (unit == 0) return;
  const int64_t units =
      (std::is_same_v<P, std::string>
           ? out->NumElements()
           : out->NumElements() * DataTypeSize(out->dtype())) /
      unit;
  const P* from = DataAs<P>(in);
  P* to = MutableDataAs<P>(out);
  const int64_t unit_cost = std::is_same_v<P, std::string> ? 32 * unit : unit;
  ParallelForRange(ctx, units, unit_cost, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t src = src_of(k);
      P* dst = to + k * unit;
      if (src >= 0) {
        CopyN(from + src * unit, unit, dst);
      } else if constexpr (std::is_same_v<P, std::string>) {
        std::fill(dst, dst + unit, std::string());
      } else {
        std::memset(dst, 0, static_cast<size_t>(unit));
      }
    }
  });
}

// GatherUnits with `unit_elements` counted in elements of in's dtype.
template <typename SrcFn>
void GatherUnitsAnyType(OpKernelContext* ctx, const Tensor& in,
                        int64_t unit_elements, Tensor* out,
                        const SrcFn& src_of) {
  if (out->NumElements() == 0) return;
  if (in.dtype() == DT_STRING) {
    GatherUnits<std::string>(ctx, in, unit_elements, out, src_of);
  } else {
    GatherUnits<char>(ctx, in, unit_elements * DataTypeSize(in.dtype()), out,
                      src_of);
  }
}

// SpaceToBatchND (to_batch) and BatchToSpaceND: input [batch] + M block
// dims + remaining dims; block_shape [M]; paddings or crops [M, 2].
class SpaceBatchOp : public OpKernel {
 public:
  SpaceBatchOp(OpKernelConstruction* ctx, bool to_batch)
      : OpKernel(ctx), to_batch_(to_batch) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& block_t = ctx->input(1);
    const Tensor& pairs_t = ctx->input(2);
    const char* pairs_name = to_batch_ ? "paddings" : "crops";
    OP_REQUIRES(ctx, block_t.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("block_shape must be a vector, but has shape ",
                                 block_t.shape().DebugString())));
    const int m = static_cast<int>(block_t.dim_size(0));
    OP_REQUIRES(ctx,
                pairs_t.dims() == 2 && pairs_t.dim_size(0) == m &&
                    pairs_t.dim_size(1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    pairs_name, " must have shape [", m, ", 2], but has ",
                    pairs_t.shape().DebugString())));
    OP_REQUIRES(ctx, input.dims() >= 1 + m,
                absl::InvalidArgumentError(absl::StrCat(
                    "input rank must be at least 1 + the number of block "
                    "dims (",
                    1 + m, "), but the input has shape ",
                    input.shape().DebugString())));
    const std::vector<int64_t> block = IntValues(block_t);
    const std::vector<int64_t> pairs = IntValues(pairs_t);
    int64_t block_product = 1;
    for (int i = 0; i < m; ++i) {
      OP_REQUIRES(ctx, block[i] >= 1 && block[i] <= kMaxElements,
                  absl::InvalidArgumentError(
                      absl::StrCat("block_shape must be positive, but is [",
                                   absl::StrJoin(block, ","), "]")));
      OP_REQUIRES(ctx, pairs[2 * i] >= 0 && pairs[2 * i + 1] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      pairs_name, " must be non-negative, but are [",
                      absl::StrJoin(pairs, ","), "]")));
      OP_REQUIRES(ctx, block_product <= kMaxElements / block[i],
                  absl::InvalidArgumentError(absl::StrCat(
                      "the product of block_shape [", absl::StrJoin(block, ","),
                      "] is too large")));
      block_product *= block[i];
    }
    const int64_t batch = input.dim_size(0);
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().end());
    if (to_batch_) {
      OP_REQUIRES(ctx, batch <= kMaxElements / block_product,
                  absl::InvalidArgumentError("the output batch is too large"));
      dims[0] = batch * block_product;
    } else {
      OP_REQUIRES(ctx, batch % block_product == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "The input batch ", batch,
                      " is not divisible by the product of block_shape (",
                      block_product, ")")));
      dims[0] = batch / block_product;
    }
    for (int i = 0; i < m; ++i) {
      const int64_t d = input.dim_size(1 + i), b = block[i];
      const int64_t first = pairs[2 * i], second = pairs[2 * i + 1];
      if (to_batch_) {
        OP_REQUIRES(ctx, first <= kMaxElements && second <= kMaxElements,
                    absl::InvalidArgumentError("paddings are too large"));
        const int64_t padded = d + first + second;
        OP_REQUIRES(ctx, padded % b == 0,
                    absl::InvalidArgumentError(absl::StrCat(
                        "padded_shape[", i, "] = ", padded,
                        " is not divisible by block_shape[", i, "] = ", b)));
        dims[1 + i] = padded / b;
      } else {
        const int64_t full = d * b;  // both at most 2^48: see above
        OP_REQUIRES(ctx, first <= full && second <= full - first,
                    absl::InvalidArgumentError(
                        absl::StrCat("crops[", i, "] = [", first, ", ", second,
                                     "] exceed the uncropped size ", full)));
        dims[1 + i] = full - first - second;
      }
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    const int64_t unit = DimProduct(input.shape(), 1 + m, input.dims());
    // The side with the smaller batch ("plain") and its spatial dims; the
    // output's spatial dims; block_suffix[i] = product of block[i+1:].
    const TensorShape& plain = to_batch_ ? input.shape() : output->shape();
    const TensorShape& out_shape = output->shape();
    const int64_t plain_batch = plain.dim_size(0);
    const int64_t spatial_units =
        DimProduct(out_shape, 1, 1 + m);  // output units per batch entry
    std::vector<int64_t> block_suffix(m, 1);
    for (int i = m - 2; i >= 0; --i) {
      block_suffix[i] = block_suffix[i + 1] * block[i + 1];
    }
    // The blocked batch index is offset * plain_batch + plain batch index,
    // where offset enumerates the block positions row-major; plain spatial
    // index = blocked spatial index * block + block position - padding.
    auto src_of = [&](int64_t k) -> int64_t {
      const int64_t out_b = k / spatial_units;
      int64_t rest = k % spatial_units;
      int64_t src = 0, stride = 1, offset = 0;
      const int64_t plain_b = to_batch_ ? out_b % plain_batch : out_b;
      const int64_t blocked_offset = to_batch_ ? out_b / plain_batch : 0;
      for (int i = m - 1; i >= 0; --i) {
        const int64_t pos = rest % out_shape.dim_size(1 + i);
        rest /= out_shape.dim_size(1 + i);
        if (to_batch_) {
          const int64_t o = (blocked_offset / block_suffix[i]) % block[i];
          const int64_t p = pos * block[i] + o - pairs[2 * i];
          if (p < 0 || p >= plain.dim_size(1 + i)) return -1;
          src += p * stride;
          stride *= plain.dim_size(1 + i);
        } else {
          const int64_t q = pos + pairs[2 * i];
          offset += (q % block[i]) * block_suffix[i];
          src += (q / block[i]) * stride;
          stride *= input.dim_size(1 + i);
        }
      }
      return to_batch_ ? plain_b * stride + src
                       : (offset * plain_batch + plain_b) * stride + src;
    };
    GatherUnitsAnyType(ctx, input, unit, output, src_of);
  }

 private:
  const bool to_batch_;
};

class SpaceToBatchNDOp : public SpaceBatchOp {
 public:
  explicit SpaceToBatchNDOp(OpKernelConstruction* ctx)
      : SpaceBatchOp(ctx, /*to_batch=*/true) {}
};
class BatchToSpaceNDOp : public SpaceBatchOp {
 public:
  explicit BatchToSpaceNDOp(OpKernelConstruction* ctx)
      : SpaceBatchOp(ctx, /*to_batch=*/false) {}
};

// DepthToSpace (to_space) and SpaceToDepth on 4-D NHWC or NCHW tensors.
// Depth index (i * block + j) * depth + k holds spatial offset (i, j) of
// channel k.
class DepthSpaceOp : public OpKernel {
 public:
  DepthSpaceOp(OpKernelConstruction* ctx, bool to_space)
      : OpKernel(ctx), to_space_(to_space) {
    std::string format;
    ctx->SetStatus(ctx->GetAttr("block_size", &block_));
    ctx->SetStatus(ctx->GetAttr("data_format", &format));
    if (!ctx->status().ok()) return;
    if (block_ < 2) {
      ctx->SetStatus(absl::InvalidArgumentError(
          absl::StrCat("block_size must be greater than 1, but is ", block_)));
    } else if (format != "NHWC" && format != "NCHW") {
      ctx->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "data_format '", format, "' is not supported (only NHWC and NCHW)")));
    }
    nchw_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 4,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be 4-dimensional, but has shape ",
                                 input.shape().DebugString())));
    const int hd = nchw_ ? 2 : 1, wd = hd + 1, cd = nchw_ ? 1 : 3;
    const int64_t bs = block_;
    const int64_t n = input.dim_size(0), h = input.dim_size(hd),
                  w = input.dim_size(wd), c = input.dim_size(cd);
    OP_REQUIRES(ctx, bs <= (int64_t{1} << 24),
                absl::InvalidArgumentError(
                    absl::StrCat("block_size ", bs, " is too large")));
    std::vector<int64_t> dims(4);
    dims[0] = n;
    // The spatial side (sh, sw) and the depth side (dh, dw, depth) of
    // the move: sh = dh * bs, sw = dw * bs, c_space = depth.
    int64_t dh, dw, depth;
    if (to_space_) {
      OP_REQUIRES(ctx, c % (bs * bs) == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input depth ", c, " must be divisible by block_size^2 (",
                      bs * bs, ")")));
      dh = h, dw = w, depth = c / (bs * bs);
      dims[hd] = h * bs, dims[wd] = w * bs, dims[cd] = depth;
    } else {
      OP_REQUIRES(ctx, h % bs == 0 && w % bs == 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Image height ", h, " and width ", w,
                                   " must be divisible by block_size ", bs)));
      dh = h / bs, dw = w / bs, depth = c;
      dims[hd] = dh, dims[wd] = dw, dims[cd] = c * bs * bs;
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    const int64_t sh = dh * bs, sw = dw * bs;
    const int64_t dc = depth * bs * bs;
    // For a position (b, y, x, k) of the spatial side: its flat index on
    // the depth side, in units (a unit is `depth` elements in NHWC, one
    // element in NCHW).
    if (!nchw_) {
      // NHWC: unit = depth channels. Spatial-side unit (b, y, x);
      // depth-side unit (b, y / bs, x / bs, (y % bs) * bs + x % bs).
      auto depth_unit = [=](int64_t b, int64_t y, int64_t x) {
        return ((b * dh + y / bs) * dw + x / bs) * bs * bs + (y % bs) * bs +
               x % bs;
      };
      if (to_space_) {
        GatherUnitsAnyType(ctx, input, depth, output, [=](int64_t k) {
          const int64_t x = k % sw, y = (k / sw) % sh, b = k / (sw * sh);
          return depth_unit(b, y, x);
        });
      } else {
        GatherUnitsAnyType(ctx, input, depth, output, [=](int64_t k) {
          const int64_t blk = k % (bs * bs), x0 = (k / (bs * bs)) % dw;
          const int64_t y0 = (k / (bs * bs * dw)) % dh,
                        b = k / (bs * bs * dw * dh);
          const int64_t y = y0 * bs + blk / bs, x = x0 * bs + blk % bs;
          return (b * sh + y) * sw + x;
        });
      }
      return;
    }
    // NCHW, one element per unit. Spatial side [n, depth, sh, sw]; depth
    // side [n, dc, dh, dw].
    if (to_space_) {
      GatherUnitsAnyType(ctx, input, 1, output, [=](int64_t k) {
        const int64_t x = k % sw, y = (k / sw) % sh;
        const int64_t ch = (k / (sw * sh)) % depth, b = k / (sw * sh * depth);
        const int64_t dch = ((y % bs) * bs + x % bs) * depth + ch;
        return ((b * dc + dch) * dh + y / bs) * dw + x / bs;
      });
    } else {
      GatherUnitsAnyType(ctx, input, 1, output, [=](int64_t k) {
        const int64_t x0 = k % dw, y0 = (k / dw) % dh;
        const int64_t dch = (k / (dw * dh)) % dc, b = k / (dw * dh * dc);
        const int64_t blk = dch / depth, ch = dch % depth;
        const int64_t y = y0 * bs + blk / bs, x = x0 * bs + blk % bs;
        return ((b * depth + ch) * sh + y) * sw + x;
      });
    }
  }

 private:
  const bool to_space_;
  int64_t block_ = 2;
  bool nchw_ = false;
};

class DepthToSpaceOp : public DepthSpaceOp {
 public:
  explicit DepthToSpaceOp(OpKernelConstruction* ctx)
      : DepthSpaceOp(ctx, /*to_space=*/true) {}
};
class SpaceToDepthOp : public DepthSpaceOp {
 public:
  explicit SpaceToDepthOp(OpKernelConstruction* ctx)
      : DepthSpaceOp(ctx, /*to_space=*/false) {}
};

// Output rows [begin, end) of a roll whose collapsed dims are `dims` (the
// last one rolled, rows over the others), each unit `unit` elements of P.
template <typename P>
void RollRows(const std::vector<int64_t>& dims,
              const std::vector<int64_t>& shifts, int64_t unit, const P* in,
              P* out, int64_t begin, int64_t end) {
  const int r = static_cast<int>(dims.size());
  const int64_t n = dims[r - 1], s = shifts[r - 1];
  for (int64_t row = begin; row < end; ++row) {
    int64_t src = 0, stride = 1, rest = row;
    for (int d = r - 2; d >= 0; --d) {
      const int64_t o = rest % dims[d];
      rest /= dims[d];
      src +=
          (o >= shifts[d] ? o - shifts[d] : o - shifts[d] + dims[d]) * stride;
      stride *= dims[d];
    }
    const P* from = in + src * n * unit;
    P* to = out + row * n * unit;
    // out[s, n) = in[0, n - s); out[0, s) = in[n - s, n).
    CopyN(from, (n - s) * unit, to + s * unit);
    CopyN(from + (n - s) * unit, s * unit, to);
  }
}

class RollOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& shift_t = ctx->input(1);
    const Tensor& axis_t = ctx->input(2);
    OP_REQUIRES(ctx, input.dims() >= 1,
                absl::InvalidArgumentError("input must be 1-D or higher"));
    OP_REQUIRES(ctx, shift_t.dims() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "shift must be a scalar or a 1-D vector, but has shape ",
                    shift_t.shape().DebugString())));
    OP_REQUIRES(ctx, axis_t.dims() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "axis must be a scalar or a 1-D vector, but has shape ",
                    axis_t.shape().DebugString())));
    OP_REQUIRES(ctx, shift_t.NumElements() == axis_t.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "shift and axis must have the same size, but have ",
                    shift_t.NumElements(), " and ", axis_t.NumElements())));
    const int rank = input.dims();
    const std::vector<int64_t> shift = IntValues(shift_t);
    const std::vector<int64_t> axis = IntValues(axis_t);
    std::vector<int64_t> shifts(rank, 0);
    for (size_t i = 0; i < axis.size(); ++i) {
      OP_REQUIRES(ctx, axis[i] >= -rank && axis[i] < rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "axis ", axis[i],
                      " is out of range for a tensor of rank ", rank)));
      const int a = static_cast<int>(axis[i] < 0 ? axis[i] + rank : axis[i]);
      const int64_t n = input.dim_size(a);
      if (n == 0) continue;
      int64_t s = shift[i] % n;  // in (-n, n)
      if (s < 0) s += n;
      shifts[a] = (shifts[a] + s) % n;
    }
    // Trailing dims that do not roll become the unit.
    int r = rank;
    int64_t unit = 1;
    while (r > 0 && shifts[r - 1] == 0) unit *= input.dim_size(--r);
    if (r == 0 || input.NumElements() == 0) {
      ctx->set_output(0, input);
      return;
    }
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().begin() + r);
    shifts.resize(r);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &output));
    const int64_t rows = input.NumElements() / (dims[r - 1] * unit);
    const int64_t row_elements = dims[r - 1] * unit;
    if (input.dtype() == DT_STRING) {
      ParallelForRange(ctx, rows, 32 * row_elements, [&](int64_t b, int64_t e) {
        RollRows<std::string>(dims, shifts, unit, DataAs<std::string>(input),
                              MutableDataAs<std::string>(output), b, e);
      });
    } else {
      const int64_t bytes = unit * DataTypeSize(input.dtype());
      ParallelForRange(ctx, rows, row_elements * DataTypeSize(input.dtype()),
                       [&](int64_t b, int64_t e) {
                         RollRows<char>(dims, shifts, bytes,
                                        DataAs<char>(input),
                                        MutableDataAs<char>(output), b, e);
                       });
    }
  }
};

REGISTER_KERNEL(KernelDefBuilder("SpaceToBatchND")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tblock_shape", {DT_INT32, DT_INT64})
                    .TypeConstraint("Tpaddings", {DT_INT32, DT_INT64}),
                SpaceToBatchNDOp);
REGISTER_KERNEL(KernelDefBuilder("BatchToSpaceND")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tblock_shape", {DT_INT32, DT_INT64})
                    .TypeConstraint("Tcrops", {DT_INT32, DT_INT64}),
                BatchToSpaceNDOp);
REGISTER_KERNEL(KernelDefBuilder("DepthToSpace")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                DepthToSpaceOp);
REGISTER_KERNEL(KernelDefBuilder("SpaceToDepth")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                SpaceToDepthOp);
REGISTER_KERNEL(KernelDefBuilder("Roll")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tshift", {DT_INT32, DT_INT64})
                    .TypeConstraint("Taxis", {DT_INT32, DT_INT64}),
                RollOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
