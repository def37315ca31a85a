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

}  // namespace gpu
}  // namespace graphrun
