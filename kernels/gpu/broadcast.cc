#include "kernels/gpu/broadcast.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace gpu {

namespace {

// `shapes` (2 or 3: x, y[, cond]) broadcast together.
absl::StatusOr<Broadcast> BroadcastOf(absl::Span<const TensorShape* const> shapes) {
  // The CPU kernels' plan: dims right-aligned, all-1 dims dropped, runs of
  // dims that the same inputs broadcast merged into one.
  const cwise::BroadcastPlan plan = cwise::MakeBroadcastPlan(shapes);
  std::string names;
  for (const TensorShape* s : shapes) {
    absl::StrAppend(&names, names.empty() ? "" : " vs. ", s->DebugString());
  }
  if (!plan.valid) return absl::InvalidArgumentError(absl::StrCat("Incompatible shapes: ", names));
  if (plan.rank() > kMaxBroadcastDims) {
    return absl::InvalidArgumentError(absl::StrCat("broadcasting ", names, " needs ", plan.rank(),
                                                   " dims on GPU, at most ", kMaxBroadcastDims));
  }
  Broadcast b;
  for (int64_t d : plan.output_dims) b.output.AddDim(d);
  b.shape.rank = plan.rank();
  // Element strides, 0 where an input is broadcast.
  int64_t* strides[3] = {b.shape.x_strides, b.shape.y_strides, b.shape.c_strides};
  for (size_t k = 0; k < shapes.size(); ++k) {
    int64_t stride = 1;
    for (int i = b.shape.rank - 1; i >= 0; --i) {
      strides[k][i] = plan.in_bcast[k][i] > 1 ? 0 : stride;
      stride *= plan.in_dims[k][i];
    }
  }
  for (int i = 0; i < b.shape.rank; ++i) b.shape.dims[i] = plan.out_dims[i];
  return b;
}

}  // namespace

absl::StatusOr<Broadcast> MakeBroadcast(const TensorShape& x, const TensorShape& y) {
  const TensorShape* shapes[] = {&x, &y};
  return BroadcastOf(shapes);
}

absl::StatusOr<Broadcast> MakeBroadcast3(const TensorShape& cond, const TensorShape& x,
                                         const TensorShape& y) {
  const TensorShape* shapes[] = {&x, &y, &cond};
  return BroadcastOf(shapes);
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
