// CPU kernels that permute or repeat a tensor's elements: Transpose (Eigen
// shuffle), Tile and BroadcastTo (Eigen broadcast). Dimensions are
// collapsed first (size-1 dims dropped, runs that move together merged), so
// Eigen sees the smallest equivalent rank; elements move as same-size
// unsigned integers (strings element-wise). Big outputs use the intra-op
// pool. Semantics and messages follow TensorFlow's transpose_op.cc,
// tile_ops.cc and broadcast_to_op.cc.
#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// A permutation of collapsed input dims: out dim k is input dim perm[k].
struct CollapsedTranspose {
  std::vector<int64_t> in_dims;
  std::vector<int> perm;
};

// Drops size-1 dims and merges input dims that stay adjacent and in order.
CollapsedTranspose CollapseTranspose(const TensorShape& shape,
                                     const std::vector<int>& perm) {
  const int rank = shape.dims();
  std::vector<int> new_index(rank, -1);
  std::vector<int64_t> kept_dims;
  for (int i = 0; i < rank; ++i) {
    if (shape.dim_size(i) != 1) {
      new_index[i] = static_cast<int>(kept_dims.size());
      kept_dims.push_back(shape.dim_size(i));
    }
  }
  std::vector<int> p;  // perm over the kept dims
  for (int d : perm) {
    if (new_index[d] >= 0) p.push_back(new_index[d]);
  }
  // Groups of consecutive input dims, in output order.
  std::vector<std::pair<int, int>> groups;  // [first, last] input dim
  for (int d : p) {
    if (!groups.empty() && groups.back().second + 1 == d) {
      groups.back().second = d;
    } else {
      groups.push_back({d, d});
    }
  }
  std::vector<int> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(),
            [&](int a, int b) { return groups[a].first < groups[b].first; });
  CollapsedTranspose out;
  out.perm.resize(groups.size());
  for (size_t j = 0; j < by_input.size(); ++j) {
    const auto& g = groups[by_input[j]];
    int64_t size = 1;
    for (int d = g.first; d <= g.second; ++d) size *= kept_dims[d];
    out.in_dims.push_back(size);
    out.perm[by_input[j]] = static_cast<int>(j);
  }
  return out;
}

// Rank beyond kMaxEigenRank after collapsing: an index walk over the output.
template <typename P>
void TransposeAnyRank(const CollapsedTranspose& c, const P* in, P* out) {
  const int rank = static_cast<int>(c.perm.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * c.in_dims[i + 1];
  std::vector<int64_t> out_dims(rank), strides(rank);
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) {
    out_dims[k] = c.in_dims[c.perm[k]];
    strides[k] = in_strides[c.perm[k]];
    n *= out_dims[k];
  }
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = in[offset];
    for (int k = rank - 1; k >= 0; --k) {
      offset += strides[k];
      if (++index[k] < out_dims[k]) break;
      offset -= strides[k] * out_dims[k];
      index[k] = 0;
    }
  }
}

void TransposeTensor(OpKernelContext* ctx, const Tensor& input,
                     const std::vector<int>& perm, Tensor* out) {
  const CollapsedTranspose c = CollapseTranspose(input.shape(), perm);
  const int64_t n = input.NumElements();
  VisitCopyType(input.dtype(), [&](auto zero) {
    using P = decltype(zero);
    const P* in_data = DataAs<P>(input);
    P* out_data = MutableDataAs<P>(out);
    const int rank = static_cast<int>(c.perm.size());
    if (rank <= 1) {  // nothing moves: a plain copy
      std::copy(in_data, in_data + n, out_data);
      return;
    }
    const bool handled = VisitEigenRank(rank, [&](auto rank_constant) {
      constexpr int N = decltype(rank_constant)::value;
      EigenConstMap<P, N> in_map(in_data, ToDSizes<N>(c.in_dims));
      Eigen::array<int, N> shuffle;
      std::vector<int64_t> out_dims(N);
      for (int k = 0; k < N; ++k) {
        shuffle[k] = c.perm[k];
        out_dims[k] = c.in_dims[c.perm[k]];
      }
      EigenMap<P, N> out_map(out_data, ToDSizes<N>(out_dims));
      RunOnEigenDevice(ctx, n, [&](const auto& device) {
        out_map.device(device) = in_map.shuffle(shuffle);
      });
    });
    if (!handled) TransposeAnyRank(c, in_data, out_data);
  });
}

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& perm_t = ctx->input(1);
    OP_REQUIRES(ctx, perm_t.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("perm must be rank 1, got shape ",
                                 perm_t.shape().DebugString())));
    const int rank = input.dims();
    const std::vector<int64_t> perm64 = IntValues(perm_t);
    OP_REQUIRES(ctx, static_cast<int64_t>(perm64.size()) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "transpose expects a vector of size ", rank,
                    ". But input(1) is a vector of size ", perm64.size())));
    std::vector<int> perm(rank);
    std::vector<bool> seen(rank, false);
    std::vector<int64_t> out_dims(rank);
    for (int i = 0; i < rank; ++i) {
      const int64_t d = perm64[i];
      OP_REQUIRES(ctx, 0 <= d && d < rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      d, " is out of range [0 .. ", rank, ")")));
      perm[i] = static_cast<int>(d);
      seen[d] = true;
      out_dims[i] = input.dim_size(perm[i]);
    }
    for (int i = 0; i < rank; ++i) {
      OP_REQUIRES(ctx, seen[i],
                  absl::InvalidArgumentError(absl::StrCat(
                      i, " is missing from {", absl::StrJoin(perm64, ","),
                      "}.")));
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    // Dims of size > 1 keep their order: only the shape changes.
    int last = -1;
    bool in_order = true;
    for (int d : perm) {
      if (input.dim_size(d) == 1) continue;
      in_order &= d > last;
      last = d;
    }
    if (in_order) {
      absl::StatusOr<Tensor> out = input.Reshaped(*shape);
      OP_REQUIRES_OK(ctx, out.status());
      ctx->set_output(0, *std::move(out));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    TransposeTensor(ctx, input, perm, out);
  }
};

// out = input tiled `multiples[i]` times along dim i (same ranks).
// Returns false if the collapsed rank is beyond kMaxEigenRank.
bool TileTensor(OpKernelContext* ctx, const Tensor& input,
                const std::vector<int64_t>& in_dims,
                const std::vector<int64_t>& multiples, Tensor* out) {
  // Collapse: [a, b] tiled by [m, 1] is [a*b] tiled by [m]; [1, b] tiled
  // by [m, k] is [b] tiled by [m*k]; [1] tiled by [1] vanishes.
  std::vector<int64_t> dims, mults;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    const int64_t d = in_dims[i], m = multiples[i];
    if (d == 1 && m == 1) continue;
    if (!dims.empty() && m == 1) {
      dims.back() *= d;
    } else if (!dims.empty() && dims.back() == 1) {
      dims.back() = d;
      mults.back() *= m;
    } else {
      dims.push_back(d);
      mults.push_back(m);
    }
  }
  const int64_t n = out->NumElements();
  bool handled = true;
  VisitCopyType(input.dtype(), [&](auto zero) {
    using P = decltype(zero);
    const P* in_data = DataAs<P>(input);
    P* out_data = MutableDataAs<P>(out);
    if (dims.empty()) {  // a single element, tiled once
      std::copy(in_data, in_data + n, out_data);
      return;
    }
    handled = VisitEigenRank(static_cast<int>(dims.size()), [&](auto rank_constant) {
      constexpr int N = decltype(rank_constant)::value;
      EigenConstMap<P, N> in_map(in_data, ToDSizes<N>(dims));
      Eigen::array<Eigen::DenseIndex, N> bcast;
      std::vector<int64_t> out_dims(N);
      for (int k = 0; k < N; ++k) {
        bcast[k] = mults[k];
        out_dims[k] = dims[k] * mults[k];
      }
      EigenMap<P, N> out_map(out_data, ToDSizes<N>(out_dims));
      RunOnEigenDevice(ctx, n, [&](const auto& device) {
        out_map.device(device) = in_map.broadcast(bcast);
      });
    });
  });
  return handled;
}

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& multiples_t = ctx->input(1);
    const int rank = input.dims();
    OP_REQUIRES(ctx, multiples_t.dims() == 1 && multiples_t.dim_size(0) == rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected multiples argument to be a vector of length ",
                    rank, " but got length ",
                    multiples_t.dims() == 1 ? multiples_t.dim_size(0) : 0)));
    const std::vector<int64_t> multiples = IntValues(multiples_t);
    std::vector<int64_t> in_dims(input.shape().dim_sizes().begin(),
                                 input.shape().dim_sizes().end());
    std::vector<int64_t> out_dims(rank);
    bool identity = true;
    for (int i = 0; i < rank; ++i) {
      OP_REQUIRES(ctx, multiples[i] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Expected multiples[", i, "] >= 0, but got ",
                      multiples[i])));
      identity &= multiples[i] == 1;
      if (multiples[i] != 0 && in_dims[i] > kMaxElements / multiples[i]) {
        OP_REQUIRES(ctx, false,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Tile: output dimension ", i, " (", in_dims[i], " * ",
                        multiples[i], ") is too large")));
      }
      out_dims[i] = in_dims[i] * multiples[i];
    }
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    if (identity) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES(ctx, TileTensor(ctx, input, in_dims, multiples, out),
                absl::UnimplementedError(absl::StrCat(
                    "TileOp : The input data type or dimension is not "
                    "supported. DataType : ",
                    DataTypeString(input.dtype()), ", Dimension : ", rank)));
  }
};

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    absl::StatusOr<TensorShape> shape = ShapeFromTensor(ctx->input(1));
    OP_REQUIRES_OK(ctx, shape.status());
    const TensorShape& in_shape = input.shape();
    if (*shape == in_shape) {
      ctx->set_output(0, input);
      return;
    }
    const int out_rank = shape->dims();
    const int in_rank = in_shape.dims();
    OP_REQUIRES(ctx, in_rank <= out_rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "Rank of input (", in_rank,
                    ") must be no greater than rank of output shape (",
                    out_rank, ").")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    // Input dims aligned to the right of the output's, padded with 1s.
    std::vector<int64_t> in_dims(out_rank, 1), multiples(out_rank, 1);
    bool compatible = true, same = true;
    for (int i = 0; i < in_rank; ++i) {
      const int64_t d = in_shape.dim_size(i);
      const int64_t t = shape->dim_size(out_rank - in_rank + i);
      in_dims[out_rank - in_rank + i] = d;
      if (d != t && d != 1 && t != 1) compatible = false;
      if (d != t && d != 1) same = false;
    }
    OP_REQUIRES(ctx, compatible,
                absl::InvalidArgumentError(absl::StrCat(
                    "Incompatible shapes: ", in_shape.DebugString(), " vs. ",
                    shape->DebugString())));
    OP_REQUIRES(ctx, same,
                absl::InvalidArgumentError(absl::StrCat(
                    "Unable to broadcast tensor of shape ",
                    in_shape.DebugString(), " to tensor of shape ",
                    shape->DebugString())));
    for (int i = 0; i < out_rank; ++i) {
      if (in_dims[i] == 1) multiples[i] = shape->dim_size(i);
    }
    OP_REQUIRES(ctx, TileTensor(ctx, input, in_dims, multiples, out),
                absl::UnimplementedError(absl::StrCat(
                    "Broadcast between ", in_shape.DebugString(), " and ",
                    shape->DebugString(), " is not supported yet.")));
  }
};

REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tperm", {DT_INT32, DT_INT64}),
                TransposeOp);
REGISTER_KERNEL(KernelDefBuilder("Tile").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tmultiples", {DT_INT32, DT_INT64}),
                TileOp);
REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tidx", {DT_INT32, DT_INT64}),
                BroadcastToOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
