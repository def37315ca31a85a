#include "kernels/gpu/broadcast.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graphrun {
namespace gpu {

absl::StatusOr<Broadcast> MakeBroadcast(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.dims(), y.dims());
  // Right-aligned dims, 1 where a shape has fewer.
  std::vector<int64_t> xd(rank, 1), yd(rank, 1), od(rank, 1);
  for (int i = 0; i < x.dims(); ++i) xd[rank - x.dims() + i] = x.dim_size(i);
  for (int i = 0; i < y.dims(); ++i) yd[rank - y.dims() + i] = y.dim_size(i);
  for (int i = 0; i < rank; ++i) {
    if (xd[i] != yd[i] && xd[i] != 1 && yd[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: ", x.DebugString(),
                                                     " vs. ", y.DebugString()));
    }
    od[i] = xd[i] == 1 ? yd[i] : xd[i];
  }
  Broadcast b;
  for (int64_t d : od) b.output.AddDim(d);
  // Merge neighbouring dims where each input is either whole or broadcast
  // in both (x1 y1 / x1 y1, or xB yW / xB yW, ...): the merged dim indexes
  // the same elements.
  struct Dim {
    int64_t size;
    bool x_broadcast, y_broadcast;
  };
  std::vector<Dim> merged;
  for (int i = 0; i < rank; ++i) {
    if (od[i] == 1) continue;  // size-1 output dims index nothing
    const Dim d{od[i], xd[i] == 1, yd[i] == 1};
    if (!merged.empty() && merged.back().x_broadcast == d.x_broadcast &&
        merged.back().y_broadcast == d.y_broadcast) {
      merged.back().size *= d.size;
    } else {
      merged.push_back(d);
    }
  }
  if (merged.empty()) merged.push_back({1, false, false});
  if (static_cast<int>(merged.size()) > kMaxBroadcastDims) {
    return absl::InvalidArgumentError(absl::StrCat(
        "broadcasting ", x.DebugString(), " with ", y.DebugString(), " needs ", merged.size(),
        " dims on GPU, at most ", kMaxBroadcastDims));
  }
  b.shape.rank = static_cast<int>(merged.size());
  int64_t xs = 1, ys = 1;
  for (int i = b.shape.rank - 1; i >= 0; --i) {
    const Dim& d = merged[static_cast<size_t>(i)];
    b.shape.dims[i] = d.size;
    b.shape.x_strides[i] = d.x_broadcast ? 0 : xs;
    b.shape.y_strides[i] = d.y_broadcast ? 0 : ys;
    if (!d.x_broadcast) xs *= d.size;
    if (!d.y_broadcast) ys *= d.size;
  }
  return b;
}

absl::StatusOr<MatMulShape> MatMulShapes(const TensorShape& a, const TensorShape& b,
                                         bool transpose_a, bool transpose_b, bool batched) {
  const int ra = a.dims(), rb = b.dims();
  if (ra < 2 || rb < 2 || (!batched && (ra != 2 || rb != 2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        batched ? "In[0] and In[1] must have rank >= 2" : "In[0] and In[1] must be matrices",
        ", got ", a.DebugString(), " and ", b.DebugString()));
  }
  MatMulShape s;
  s.m = a.dim_size(ra - (transpose_a ? 1 : 2));
  s.k = a.dim_size(ra - (transpose_a ? 2 : 1));
  const int64_t kb = b.dim_size(rb - (transpose_b ? 1 : 2));
  s.n = b.dim_size(rb - (transpose_b ? 2 : 1));
  if (s.k != kb) {
    return absl::InvalidArgumentError(absl::StrCat("Matrix size-incompatible: In[0]: ",
                                                   a.DebugString(), ", In[1]: ", b.DebugString()));
  }
  // Batch dims, right-aligned.
  const int rank = std::max(ra, rb) - 2;
  std::vector<int64_t> ad(rank, 1), bd(rank, 1);
  for (int i = 0; i < ra - 2; ++i) ad[rank - (ra - 2) + i] = a.dim_size(i);
  for (int i = 0; i < rb - 2; ++i) bd[rank - (rb - 2) + i] = b.dim_size(i);
  int64_t batch_a = 1, batch_b = 1;
  for (int i = 0; i < rank; ++i) {
    batch_a *= ad[i];
    batch_b *= bd[i];
  }
  bool equal = true;
  for (int i = 0; i < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "In[0] and In[1] must have compatible batch dimensions: ", a.DebugString(), " vs. ",
          b.DebugString()));
    }
    equal = equal && ad[i] == bd[i];
  }
  if (!equal && batch_a != 1 && batch_b != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the GPU's batched matrix product broadcasts equal batches or a single matrix, not ",
        a.DebugString(), " with ", b.DebugString()));
  }
  for (int i = 0; i < rank; ++i) s.output.AddDim(ad[i] == 1 ? bd[i] : ad[i]);
  s.output.AddDim(s.m);
  s.output.AddDim(s.n);
  s.batch = 1;
  for (int i = 0; i < rank; ++i) s.batch *= s.output.dim_size(i);
  s.stride_a = batch_a == 1 ? 0 : s.m * s.k;
  s.stride_b = batch_b == 1 ? 0 : s.k * s.n;
  s.stride_c = s.m * s.n;
  return s;
}

}  // namespace gpu
}  // namespace graphrun
