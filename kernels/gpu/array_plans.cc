#include "kernels/gpu/array_plans.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/ops/einsum_equation.h"
#include "graph/status_macros.h"
#include "kernels/window.h"

namespace graphrun {
namespace gpu {
namespace {

using op_shapes::Padding;

absl::StatusOr<TensorShape> ShapeOf(absl::Span<const int64_t> dims) {
  return TensorShape::FromDims(std::vector<int64_t>(dims.begin(), dims.end()));
}

std::vector<int64_t> DimsOf(const TensorShape& s) {
  std::vector<int64_t> dims(static_cast<size_t>(s.dims()));
  for (int i = 0; i < s.dims(); ++i) dims[i] = s.dim_size(i);
  return dims;
}

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// One spatial dim of a windowed op: its output size and TensorFlow's
// padding (explicit pads given, others computed).
absl::StatusOr<windowed::Window> WindowOf(int64_t input, int64_t size, int64_t dilation,
                                          int64_t stride, Padding padding, int64_t explicit_before,
                                          int64_t explicit_after) {
  windowed::Window w;
  if (padding == Padding::kExplicit) {
    w.pad_before = explicit_before;
    w.pad_after = explicit_after;
  }
  GR_RETURN_IF_ERROR(windowed::ComputeWindow(input, size, dilation, stride, padding, &w));
  return w;
}

}  // namespace

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

absl::StatusOr<StridedCopyPlan> MakeCopyPlan(absl::Span<const int64_t> dims,
                                             absl::Span<const int64_t> src_strides,
                                             absl::Span<const int64_t> dst_strides,
                                             int64_t src_offset, int64_t dst_offset) {
  StridedCopyPlan plan;
  plan.src_offset = src_offset;
  plan.dst_offset = dst_offset;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    plan.rank = 1;  // nothing to copy
    plan.dims[0] = 0;
    return plan;
  }
  struct Dim {
    int64_t size, src, dst;
  };
  std::vector<Dim> kept;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    const Dim next{dims[d], src_strides[d], dst_strides[d]};
    if (!kept.empty()) {
      Dim& outer = kept.back();
      if (outer.src == next.src * next.size && outer.dst == next.dst * next.size) {
        outer = {outer.size * next.size, next.src, next.dst};
        continue;
      }
    }
    kept.push_back(next);
  }
  if (kept.size() > static_cast<size_t>(kMaxCopyDims)) {
    return absl::UnimplementedError(absl::StrCat("a GPU copy over ", kept.size(),
                                                 " dimensions that cannot be merged (at most ",
                                                 kMaxCopyDims, ")"));
  }
  plan.rank = static_cast<int>(kept.size());
  for (int d = 0; d < plan.rank; ++d) {
    plan.dims[d] = kept[d].size;
    plan.src_strides[d] = kept[d].src;
    plan.dst_strides[d] = kept[d].dst;
  }
  return plan;
}

absl::StatusOr<StridedCopyPlan> TransposePlan(const TensorShape& in, absl::Span<const int64_t> perm,
                                              TensorShape* out) {
  const int rank = in.dims();
  if (static_cast<int>(perm.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("transpose expects a vector of size ", rank,
                                                   ". But input(1) is a vector of size ",
                                                   perm.size()));
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) {
      return absl::InvalidArgumentError(absl::StrCat(p, " is out of range [0 .. ", rank, ")"));
    }
    seen[p] = true;
  }
  for (int i = 0; i < rank; ++i) {
    if (!seen[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat(i, " is missing from {", absl::StrJoin(perm, ","), "}."));
    }
  }
  const std::vector<int64_t> in_dims = DimsOf(in);
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  std::vector<int64_t> out_dims(rank), src(rank);
  for (int k = 0; k < rank; ++k) {
    out_dims[k] = in_dims[perm[k]];
    src[k] = in_strides[perm[k]];
  }
  GR_ASSIGN_OR_RETURN(*out, ShapeOf(out_dims));
  return MakeCopyPlan(out_dims, src, RowMajorStrides(out_dims));
}

absl::StatusOr<StridedCopyPlan> SlicePlan(const TensorShape& in, absl::Span<const int64_t> begin,
                                          absl::Span<const int64_t> size, TensorShape* out) {
  const int rank = in.dims();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected begin and size arguments to be 1-D tensors of size ", rank,
                     ", but got ", begin.size(), " and ", size.size(), " values"));
  }
  const std::vector<int64_t> in_dims = DimsOf(in);
  std::vector<int64_t> out_dims(rank);
  int64_t offset = 0;
  const std::vector<int64_t> strides = RowMajorStrides(in_dims);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in_dims[i], b = begin[i];
    const int64_t s = size[i] == -1 ? d - b : size[i];
    if (b < 0 || b > d) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected begin[", i, "] in [0, ", d, "], but got ", b));
    }
    if (s < 0 || s > d - b) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected size[", i, "] in [0, ", d - b, "], but got ", s));
    }
    out_dims[i] = s;
    if (s > 0) offset += b * strides[i];
  }
  GR_ASSIGN_OR_RETURN(*out, ShapeOf(out_dims));
  return MakeCopyPlan(out_dims, strides, RowMajorStrides(out_dims), offset, 0);
}

absl::StatusOr<StridedCopyPlan> StridedSlicePlan(const TensorShape& in,
                                                 absl::Span<const int64_t> begin,
                                                 absl::Span<const int64_t> strides,
                                                 absl::Span<const int64_t> processing_dims) {
  const int rank = in.dims();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(strides.size()) != rank ||
      static_cast<int>(processing_dims.size()) != rank) {
    return absl::InternalError("a strided slice spec of another rank than its input");
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(DimsOf(in));
  std::vector<int64_t> src(rank);
  int64_t offset = 0;
  for (int i = 0; i < rank; ++i) {
    src[i] = in_strides[i] * strides[i];
    offset += begin[i] * in_strides[i];
  }
  if (Product(processing_dims) == 0) offset = 0;
  return MakeCopyPlan(processing_dims, src, RowMajorStrides(processing_dims), offset, 0);
}

absl::StatusOr<std::vector<StridedCopyPlan>> ConcatPlans(const std::vector<TensorShape>& inputs,
                                                         int64_t axis, TensorShape* out) {
  if (inputs.empty()) return absl::InvalidArgumentError("ConcatOp : no inputs");
  const TensorShape& first = inputs[0];
  const int rank = first.dims();
  if (rank == 0) {
    return absl::InvalidArgumentError(
        "ConcatOp : Can't concatenate scalars (use tf.stack instead)");
  }
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConcatOp : Expected concatenating dimensions in the range [", -rank, ", ",
                     rank, "), but got ", axis));
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> out_dims = DimsOf(first);
  out_dims[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorShape& s = inputs[i];
    if (s.dims() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConcatOp : Ranks of all input tensors should match: shape[0] = ", first.DebugString(),
          " vs. shape[", i, "] = ", s.DebugString()));
    }
    for (int d = 0; d < rank; ++d) {
      if (d != axis && s.dim_size(d) != first.dim_size(d)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ConcatOp : Dimensions of inputs should match: shape[0] = ", first.DebugString(),
            " vs. shape[", i, "] = ", s.DebugString()));
      }
    }
    out_dims[axis] += s.dim_size(axis);
  }
  GR_ASSIGN_OR_RETURN(*out, ShapeOf(out_dims));
  const int64_t outer = Product(absl::MakeConstSpan(out_dims).subspan(0, axis));
  const int64_t out_inner = Product(absl::MakeConstSpan(out_dims).subspan(axis));
  std::vector<StridedCopyPlan> plans;
  int64_t column = 0;
  for (const TensorShape& s : inputs) {
    const int64_t inner = s.num_elements() / std::max<int64_t>(outer, 1);
    if (s.num_elements() > 0) {
      GR_ASSIGN_OR_RETURN(StridedCopyPlan p,
                          MakeCopyPlan({outer, inner}, {inner, 1}, {out_inner, 1}, 0, column));
      plans.push_back(p);
    }
    column += outer > 0 ? inner : 0;
  }
  return plans;
}

absl::StatusOr<StridedCopyPlan> PadPlan(const TensorShape& in, const TensorShape& paddings_shape,
                                        absl::Span<const int64_t> paddings, TensorShape* out) {
  const int rank = in.dims();
  if (paddings_shape.dims() != 2 || paddings_shape.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "paddings must be a matrix with 2 columns, but has shape ", paddings_shape.DebugString()));
  }
  if (paddings_shape.dim_size(0) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("The first dimension of paddings must be the rank of the input: "
                     "paddings have shape ",
                     paddings_shape.DebugString(), ", the input ", in.DebugString()));
  }
  const std::vector<int64_t> in_dims = DimsOf(in);
  std::vector<int64_t> out_dims(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Paddings must be non-negative, but paddings[",
                                                     d, "] = [", before, ", ", after, "]"));
    }
    out_dims[d] = in_dims[d] + before + after;
  }
  GR_ASSIGN_OR_RETURN(*out, ShapeOf(out_dims));
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += paddings[2 * d] * out_strides[d];
  return MakeCopyPlan(in_dims, RowMajorStrides(in_dims), out_strides, 0, offset);
}

absl::StatusOr<GatherExtent> GatherPlan(const TensorShape& params, const TensorShape& indices,
                                        int64_t axis, int64_t batch_dims) {
  const int rank = params.dims();
  if (rank < 1) return absl::InvalidArgumentError("params must be at least 1 dimensional");
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected axis in the range [", -rank, ", ", rank, "), but got ", axis));
  }
  if (axis < 0) axis += rank;
  if (batch_dims < 0) batch_dims += indices.dims();
  if (batch_dims < 0 || batch_dims > indices.dims()) {
    return absl::InvalidArgumentError(absl::StrCat("Expected batch_dims in the range [",
                                                   -indices.dims(), ", ", indices.dims(),
                                                   "], but got ", batch_dims));
  }
  if (batch_dims > axis) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims (", batch_dims, ") must be less than or equal to axis (", axis, ")."));
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (params.dim_size(d) != indices.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat("params.shape[", d, "]: ", params.dim_size(d),
                                                     " should be equal to indices.shape[", d,
                                                     "]: ", indices.dim_size(d)));
    }
  }
  const std::vector<int64_t> p = DimsOf(params);
  const std::vector<int64_t> idx = DimsOf(indices);
  GatherExtent e;
  e.batch = Product(absl::MakeConstSpan(p).subspan(0, batch_dims));
  e.outer = Product(absl::MakeConstSpan(p).subspan(batch_dims, axis - batch_dims));
  e.limit = p[axis];
  e.inner = Product(absl::MakeConstSpan(p).subspan(axis + 1));
  e.num_indices = Product(absl::MakeConstSpan(idx).subspan(batch_dims));
  std::vector<int64_t> out_dims(p.begin(), p.begin() + axis);
  out_dims.insert(out_dims.end(), idx.begin() + batch_dims, idx.end());
  out_dims.insert(out_dims.end(), p.begin() + axis + 1, p.end());
  GR_ASSIGN_OR_RETURN(e.output, ShapeOf(out_dims));
  return e;
}

absl::StatusOr<ReducePlan> PlanReduce(const TensorShape& in, absl::Span<const int64_t> axes,
                                      bool keep_dims) {
  const int rank = in.dims();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension (", a,
                                                     " for input with ", rank, " dimension(s)"));
    }
    const int64_t axis = a < 0 ? a + rank : a;
    if (reduced[axis]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction arguments: Axes contains duplicate dimension: ", axis));
    }
    reduced[axis] = true;
  }
  ReducePlan plan;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out_dims.push_back(in.dim_size(d));
    } else if (keep_dims) {
      out_dims.push_back(1);
    }
  }
  GR_ASSIGN_OR_RETURN(plan.output, ShapeOf(out_dims));
  // Runs of dims reduced alike (size-1 dims dropped), outermost first.
  struct Run {
    int64_t size;
    bool reduced;
  };
  std::vector<Run> runs;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = in.dim_size(d);
    if (size == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[d]) {
      runs.back().size *= size;
    } else {
      runs.push_back({size, reduced[d]});
    }
  }
  int reduced_runs = 0, last_reduced = -1;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].reduced) {
      ++reduced_runs;
      last_reduced = static_cast<int>(i);
    }
  }
  if (reduced_runs <= 1) {
    plan.outer = plan.inner = 1;
    plan.r = 1;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (static_cast<int>(i) < last_reduced || last_reduced < 0) {
        plan.outer *= runs[i].size;
      } else if (static_cast<int>(i) == last_reduced) {
        plan.r = runs[i].size;
      } else {
        plan.inner *= runs[i].size;
      }
    }
    return plan;
  }
  // Kept runs first, then the reduced ones: [outer, r] with inner 1.
  std::vector<int64_t> run_dims;
  for (const Run& r : runs) run_dims.push_back(r.size);
  const std::vector<int64_t> run_strides = RowMajorStrides(run_dims);
  std::vector<int64_t> order_dims, order_src;
  plan.outer = plan.r = plan.inner = 1;
  for (bool want_reduced : {false, true}) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].reduced != want_reduced) continue;
      order_dims.push_back(runs[i].size);
      order_src.push_back(run_strides[i]);
      (want_reduced ? plan.r : plan.outer) *= runs[i].size;
    }
  }
  plan.needs_transpose = true;
  GR_ASSIGN_OR_RETURN(plan.transposed, ShapeOf({plan.outer, plan.r}));
  GR_ASSIGN_OR_RETURN(plan.transpose,
                      MakeCopyPlan(order_dims, order_src, RowMajorStrides(order_dims)));
  return plan;
}

absl::StatusOr<PoolGeometry> PoolPlan(const TensorShape& in, absl::Span<const int64_t> ksize,
                                      absl::Span<const int64_t> strides, Padding padding,
                                      absl::Span<const int64_t> explicit_paddings, bool nchw,
                                      TensorShape* out) {
  if (in.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional", in.DebugString()));
  }
  if (ksize.size() != 4) {
    return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
  }
  if (strides.size() != 4) {
    return absl::InvalidArgumentError("Sliding window stride field must specify 4 dimensions");
  }
  const int c = nchw ? 1 : 3, h = nchw ? 2 : 1, w = nchw ? 3 : 2;
  if (ksize[0] != 1 || strides[0] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[c] != 1 || strides[c] != 1) {
    return absl::UnimplementedError("Depthwise pooling has no GPU kernel");
  }
  GR_RETURN_IF_ERROR(windowed::CheckExplicitPaddings(padding, explicit_paddings, c));
  const auto pad = [&](int dim, int side) -> int64_t {
    return padding == Padding::kExplicit ? explicit_paddings[2 * dim + side] : 0;
  };
  PoolGeometry g;
  g.nchw = nchw;
  g.n = in.dim_size(0);
  g.c = in.dim_size(c);
  g.h = in.dim_size(h);
  g.w = in.dim_size(w);
  g.window_h = ksize[h];
  g.window_w = ksize[w];
  g.stride_h = strides[h];
  g.stride_w = strides[w];
  GR_ASSIGN_OR_RETURN(windowed::Window rows,
                      WindowOf(g.h, g.window_h, 1, g.stride_h, padding, pad(h, 0), pad(h, 1)));
  GR_ASSIGN_OR_RETURN(windowed::Window cols,
                      WindowOf(g.w, g.window_w, 1, g.stride_w, padding, pad(w, 0), pad(w, 1)));
  g.out_h = rows.out;
  g.out_w = cols.out;
  g.pad_top = rows.pad_before;
  g.pad_left = cols.pad_before;
  GR_ASSIGN_OR_RETURN(
      *out, nchw ? ShapeOf({g.n, g.c, g.out_h, g.out_w}) : ShapeOf({g.n, g.out_h, g.out_w, g.c}));
  return g;
}

absl::StatusOr<ConvPlan> PlanConv2D(const TensorShape& input, const TensorShape& filter,
                                    const ConvAttrs& attrs, bool depthwise) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional", input.DebugString()));
  }
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter must be 4-dimensional: ", filter.DebugString()));
  }
  if (attrs.strides.size() != 4 || attrs.dilations.size() != 4) {
    return absl::InvalidArgumentError(
        "Sliding window strides and dilations fields must specify 4 "
        "dimensions");
  }
  const bool nchw = attrs.nchw;
  const int c_dim = nchw ? 1 : 3, h_dim = nchw ? 2 : 1, w_dim = nchw ? 3 : 2;
  if (attrs.strides[0] != 1 || attrs.strides[c_dim] != 1 || attrs.dilations[0] != 1 ||
      attrs.dilations[c_dim] != 1) {
    return absl::InvalidArgumentError(
        "Current implementation does not yet support strides or dilations in "
        "the batch and "
        "depth dimensions.");
  }
  GR_RETURN_IF_ERROR(
      windowed::CheckExplicitPaddings(attrs.padding, attrs.explicit_paddings, c_dim));
  ConvPlan plan;
  ConvGeometry& g = plan.geometry;
  g.nchw = nchw;
  g.n = input.dim_size(0);
  g.c = input.dim_size(c_dim);
  const int64_t h = input.dim_size(h_dim), w = input.dim_size(w_dim);
  g.kh = filter.dim_size(0);
  g.kw = filter.dim_size(1);
  const int64_t filter_depth = filter.dim_size(2);
  if (depthwise) {
    if (filter_depth != g.c) {
      return absl::InvalidArgumentError(
          absl::StrCat("input and filter must have the same depth: ", g.c, " vs ", filter_depth));
    }
    g.groups = std::max<int64_t>(g.c, 1);  // no channels: an empty output
    g.out_c = g.c * filter.dim_size(3);
  } else {
    if (filter_depth <= 0 || g.c % filter_depth != 0 || g.c == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input depth must be evenly divisible by filter depth: ", g.c, " vs ", filter_depth));
    }
    g.groups = g.c / filter_depth;
    g.out_c = filter.dim_size(3);
    if (g.out_c % g.groups != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output depth must be evenly divisible by number of groups: ", g.out_c,
                       " vs ", g.groups));
    }
  }
  g.stride_h = attrs.strides[h_dim];
  g.stride_w = attrs.strides[w_dim];
  g.dilation_h = attrs.dilations[h_dim];
  g.dilation_w = attrs.dilations[w_dim];
  const auto pad = [&](int dim, int side) -> int64_t {
    return attrs.padding == Padding::kExplicit ? attrs.explicit_paddings[2 * dim + side] : 0;
  };
  GR_ASSIGN_OR_RETURN(windowed::Window rows, WindowOf(h, g.kh, g.dilation_h, g.stride_h,
                                                      attrs.padding, pad(h_dim, 0), pad(h_dim, 1)));
  GR_ASSIGN_OR_RETURN(windowed::Window cols, WindowOf(w, g.kw, g.dilation_w, g.stride_w,
                                                      attrs.padding, pad(w_dim, 0), pad(w_dim, 1)));
  g.out_h = rows.out;
  g.out_w = cols.out;
  // cuDNN pads both sides by the smaller amount; the rest is copied in.
  g.pad_h = std::min(rows.pad_before, rows.pad_after);
  g.pad_w = std::min(cols.pad_before, cols.pad_after);
  const int64_t top = rows.pad_before - g.pad_h, bottom = rows.pad_after - g.pad_h;
  const int64_t left = cols.pad_before - g.pad_w, right = cols.pad_after - g.pad_w;
  g.h = h + top + bottom;
  g.w = w + left + right;
  plan.pad_input = top + bottom + left + right > 0;
  const std::vector<int64_t> in_dims = DimsOf(input);
  std::vector<int64_t> padded = in_dims;
  padded[h_dim] = g.h;
  padded[w_dim] = g.w;
  GR_ASSIGN_OR_RETURN(plan.padded_input, ShapeOf(padded));
  if (plan.pad_input) {
    const std::vector<int64_t> padded_strides = RowMajorStrides(padded);
    GR_ASSIGN_OR_RETURN(plan.input_copy,
                        MakeCopyPlan(in_dims, RowMajorStrides(in_dims), padded_strides, 0,
                                     top * padded_strides[h_dim] + left * padded_strides[w_dim]));
  }
  // The filter in cuDNN's layout: [out_c, kh, kw, c/groups] for NHWC,
  // [out_c, c/groups, kh, kw] for NCHW, out_c innermost in TensorFlow's.
  const int64_t cg = g.c / g.groups;
  const int64_t oc = g.out_c;
  std::vector<int64_t> layout, src;
  if (depthwise) {  // [kh, kw, c, m]: (c, m) flatten to the output channel
    layout =
        nchw ? std::vector<int64_t>{oc, 1, g.kh, g.kw} : std::vector<int64_t>{oc, g.kh, g.kw, 1};
    src = nchw ? std::vector<int64_t>{1, 0, g.kw * oc, oc}
               : std::vector<int64_t>{1, g.kw * oc, oc, 0};
  } else if (nchw) {
    layout = {oc, cg, g.kh, g.kw};
    src = {1, oc, g.kw * cg * oc, cg * oc};
  } else {
    layout = {oc, g.kh, g.kw, cg};
    src = {1, g.kw * cg * oc, cg * oc, oc};
  }
  GR_ASSIGN_OR_RETURN(plan.filter_layout, ShapeOf(layout));
  GR_ASSIGN_OR_RETURN(plan.filter_copy, MakeCopyPlan(layout, src, RowMajorStrides(layout)));
  GR_ASSIGN_OR_RETURN(plan.output, nchw ? ShapeOf({g.n, g.out_c, g.out_h, g.out_w})
                                        : ShapeOf({g.n, g.out_h, g.out_w, g.out_c}));
  return plan;
}

namespace {

// One einsum operand with its dims of size 1 dropped: label -> (size,
// element stride in the operand as laid out).
struct EinsumOperand {
  std::vector<int> labels;
  std::vector<int64_t> sizes, strides;
  int64_t elements = 1;
  int Find(int label) const {
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == label) return static_cast<int>(i);
    }
    return -1;
  }
};

absl::StatusOr<EinsumOperand> OperandOf(const std::vector<int>& labels, const TensorShape& shape,
                                        const std::string& equation) {
  EinsumOperand op;
  const std::vector<int64_t> dims = DimsOf(shape);
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  for (size_t i = 0; i < labels.size(); ++i) {
    op.elements *= dims[i];
    if (dims[i] == 1) continue;
    if (op.Find(labels[i]) >= 0) {
      return absl::UnimplementedError(
          absl::StrCat("Einsum '", equation, "' takes a diagonal: no GPU kernel for it"));
    }
    op.labels.push_back(labels[i]);
    op.sizes.push_back(dims[i]);
    op.strides.push_back(strides[i]);
  }
  return op;
}

// A copy of `op` into the order `labels` (each of op's labels once);
// `*copy` false when op is already laid out so.
absl::StatusOr<StridedCopyPlan> ArrangeAs(const EinsumOperand& op, const std::vector<int>& labels,
                                          bool* copy, TensorShape* layout) {
  std::vector<int64_t> dims, src;
  for (int l : labels) {
    const int i = op.Find(l);
    dims.push_back(op.sizes[i]);
    src.push_back(op.strides[i]);
  }
  GR_ASSIGN_OR_RETURN(*layout, ShapeOf(dims));
  GR_ASSIGN_OR_RETURN(StridedCopyPlan plan, MakeCopyPlan(dims, src, RowMajorStrides(dims)));
  *copy =
      !(plan.rank == 0 || (plan.rank == 1 && plan.src_strides[0] == 1 && plan.dst_strides[0] == 1));
  return plan;
}

std::vector<int> Concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const std::vector<int>* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

}  // namespace

absl::StatusOr<EinsumPlan> PlanEinsum(const EinsumEquation& eq, const TensorShape& x,
                                      const TensorShape& y) {
  const std::string& equation = eq.equation;
  GR_ASSIGN_OR_RETURN(EinsumDims dims, ResolveEinsum(eq, {DimsOf(x), DimsOf(y)}));
  GR_ASSIGN_OR_RETURN(const TensorShape output, ShapeOf(dims.OutputDims()));
  const TensorShape* shapes[2] = {&x, &y};
  EinsumOperand ops[2];
  for (int i = 0; i < 2; ++i) {
    GR_ASSIGN_OR_RETURN(ops[i], OperandOf(dims.inputs[i], *shapes[i], equation));
  }
  // The output's labels of size > 1, in its order.
  std::vector<int> out_labels;
  const std::vector<int64_t> out_dims = DimsOf(output);
  for (size_t i = 0; i < dims.output.size(); ++i) {
    if (out_dims[i] != 1) out_labels.push_back(dims.output[i]);
  }
  const auto in_out = [&](int l) {
    return std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end();
  };
  std::vector<int> batch, free[2], contracted;
  for (int l : out_labels) {
    const bool a = ops[0].Find(l) >= 0, b = ops[1].Find(l) >= 0;
    (a && b ? batch : a ? free[0] : free[1]).push_back(l);
  }
  for (int i = 0; i < 2; ++i) {
    for (int l : ops[i].labels) {
      if (in_out(l)) continue;
      if (ops[1 - i].Find(l) < 0) {
        return absl::UnimplementedError(absl::StrCat("Einsum '", equation, "' sums label ",
                                                     EinsumLabelName(l),
                                                     " within one input: no GPU kernel for it"));
      }
      if (i == 0) contracted.push_back(l);
    }
  }
  const auto size_of = [&](const std::vector<int>& labels, const EinsumOperand& op) {
    int64_t p = 1;
    for (int l : labels) p *= op.sizes[op.Find(l)];
    return p;
  };
  // Every pairing and transposition; the fewest elements copied wins.
  EinsumPlan best;
  int64_t best_cost = -1;
  for (bool swap : {false, true}) {
    const int a = swap ? 1 : 0, b = 1 - a;
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        EinsumPlan p;
        p.swap = swap;
        p.transpose_a = ta;
        p.transpose_b = tb;
        p.output = output;
        p.batch = size_of(batch, ops[a]);
        p.m = size_of(free[a], ops[a]);
        p.k = size_of(contracted, ops[a]);
        p.n = size_of(free[b], ops[b]);
        const std::vector<int> a_order =
            ta ? Concat({&batch, &contracted, &free[a]}) : Concat({&batch, &free[a], &contracted});
        const std::vector<int> b_order =
            tb ? Concat({&batch, &free[b], &contracted}) : Concat({&batch, &contracted, &free[b]});
        GR_ASSIGN_OR_RETURN(p.a_copy, ArrangeAs(ops[a], a_order, &p.copy_a, &p.a_layout));
        GR_ASSIGN_OR_RETURN(p.b_copy, ArrangeAs(ops[b], b_order, &p.copy_b, &p.b_layout));
        // C as [batch, free[a], free[b]] into the output's order.
        const std::vector<int> c_order = Concat({&batch, &free[a], &free[b]});
        std::vector<int64_t> c_dims, src;
        for (int l : c_order) {
          const int in_a = ops[a].Find(l);
          c_dims.push_back(in_a >= 0 ? ops[a].sizes[in_a] : ops[b].sizes[ops[b].Find(l)]);
        }
        const std::vector<int64_t> c_strides = RowMajorStrides(c_dims);
        std::vector<int64_t> copy_dims;
        for (int l : out_labels) {
          const int at =
              static_cast<int>(std::find(c_order.begin(), c_order.end(), l) - c_order.begin());
          copy_dims.push_back(c_dims[at]);
          src.push_back(c_strides[at]);
        }
        GR_ASSIGN_OR_RETURN(p.product, ShapeOf({p.batch, p.m, p.n}));
        GR_ASSIGN_OR_RETURN(p.out_copy, MakeCopyPlan(copy_dims, src, RowMajorStrides(copy_dims)));
        p.copy_out =
            !(p.out_copy.rank == 0 || (p.out_copy.rank == 1 && p.out_copy.src_strides[0] == 1 &&
                                       p.out_copy.dst_strides[0] == 1));
        const int64_t cost = (p.copy_a ? ops[a].elements : 0) + (p.copy_b ? ops[b].elements : 0) +
                             (p.copy_out ? output.num_elements() : 0);
        if (best_cost < 0 || cost < best_cost) {
          best = p;
          best_cost = cost;
        }
      }
    }
  }
  return best;
}

// ---------------------------------------------------- host references

void StridedCopyOnHost(const StridedCopyPlan& p, int element_bytes, const void* src, void* dst) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d) n *= p.dims[d];
  const char* s = static_cast<const char*>(src);
  char* t = static_cast<char*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, from = p.src_offset, to = p.dst_offset;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.dims[d];
      rest /= p.dims[d];
      from += coord * p.src_strides[d];
      to += coord * p.dst_strides[d];
    }
    std::memcpy(t + to * element_bytes, s + from * element_bytes, element_bytes);
  }
}

void GatherOnHost(const GatherExtent& e, int element_bytes, const void* params,
                  const int64_t* indices, void* out) {
  const char* p = static_cast<const char*>(params);
  char* o = static_cast<char*>(out);
  const int64_t row = e.inner * element_bytes;
  for (int64_t b = 0; b < e.batch; ++b) {
    for (int64_t a = 0; a < e.outer; ++a) {
      for (int64_t j = 0; j < e.num_indices; ++j, o += row) {
        const int64_t index = indices[b * e.num_indices + j];
        if (index >= 0 && index < e.limit) {
          std::memcpy(o, p + ((b * e.outer + a) * e.limit + index) * row, static_cast<size_t>(row));
        } else {
          std::memset(o, 0, static_cast<size_t>(row));
        }
      }
    }
  }
}

void ReduceOnHost(ReduceOp op, const float* in, float* out, int64_t outer, int64_t r,
                  int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      float acc = op == ReduceOp::kProd  ? 1.0f
                  : op == ReduceOp::kMax ? -std::numeric_limits<float>::infinity()
                  : op == ReduceOp::kMin ? std::numeric_limits<float>::infinity()
                                         : 0.0f;
      for (int64_t j = 0; j < r; ++j) {
        const float v = in[(o * r + j) * inner + k];
        switch (op) {
          case ReduceOp::kSum:
          case ReduceOp::kMean:
            acc += v;
            break;
          case ReduceOp::kProd:
            acc *= v;
            break;
          case ReduceOp::kMax:
            acc = (std::isnan(v) || v > acc) ? v : acc;
            break;
          case ReduceOp::kMin:
            acc = (std::isnan(v) || v < acc) ? v : acc;
            break;
        }
      }
      if (op == ReduceOp::kMean) acc /= static_cast<float>(r);
      out[o * inner + k] = acc;
    }
  }
}

void PoolOnHost(bool max, const float* in, float* out, const PoolGeometry& g) {
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        for (int64_t c = 0; c < g.c; ++c) {
          const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
          const int64_t hb = std::max<int64_t>(h0, 0), wb = std::max<int64_t>(w0, 0);
          const int64_t he = std::min(h0 + g.window_h, g.h), we = std::min(w0 + g.window_w, g.w);
          float acc = max ? std::numeric_limits<float>::lowest() : 0.0f;
          for (int64_t h = hb; h < he; ++h) {
            for (int64_t w = wb; w < we; ++w) {
              const float v = in[g.nchw ? ((n * g.c + c) * g.h + h) * g.w + w
                                        : ((n * g.h + h) * g.w + w) * g.c + c];
              acc = max ? (acc < v ? v : acc) : acc + v;
            }
          }
          if (!max) {
            const int64_t count = (he - hb) * (we - wb);
            acc = count > 0 ? acc / static_cast<float>(count) : 0.0f;
          }
          out[g.nchw ? ((n * g.c + c) * g.out_h + oh) * g.out_w + ow
                     : ((n * g.out_h + oh) * g.out_w + ow) * g.c + c] = acc;
        }
      }
    }
  }
}

void EinsumOnHost(const EinsumPlan& plan, const float* x, const float* y, float* out) {
  const float* a_in = plan.swap ? y : x;
  const float* b_in = plan.swap ? x : y;
  std::vector<float> a_copy, b_copy, c(static_cast<size_t>(plan.batch * plan.m * plan.n));
  if (plan.copy_a) {
    a_copy.resize(static_cast<size_t>(plan.a_layout.num_elements()));
    StridedCopyOnHost(plan.a_copy, 4, a_in, a_copy.data());
    a_in = a_copy.data();
  }
  if (plan.copy_b) {
    b_copy.resize(static_cast<size_t>(plan.b_layout.num_elements()));
    StridedCopyOnHost(plan.b_copy, 4, b_in, b_copy.data());
    b_in = b_copy.data();
  }
  float* c_out = plan.copy_out ? c.data() : out;
  for (int64_t bt = 0; bt < plan.batch; ++bt) {
    const float* a = a_in + bt * plan.m * plan.k;
    const float* b = b_in + bt * plan.k * plan.n;
    for (int64_t i = 0; i < plan.m; ++i) {
      for (int64_t j = 0; j < plan.n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < plan.k; ++l) {
          acc += static_cast<double>(plan.transpose_a ? a[l * plan.m + i] : a[i * plan.k + l]) *
                 (plan.transpose_b ? b[j * plan.k + l] : b[l * plan.n + j]);
        }
        c_out[(bt * plan.m + i) * plan.n + j] = static_cast<float>(acc);
      }
    }
  }
  if (plan.copy_out) StridedCopyOnHost(plan.out_copy, 4, c.data(), out);
}

void Conv2DOnHost(const ConvGeometry& g, const float* in, const float* filter, float* out) {
  const int64_t cg = g.c / g.groups, kg = g.out_c / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        for (int64_t k = 0; k < g.out_c; ++k) {
          const int64_t group = k / kg;
          double acc = 0;
          for (int64_t r = 0; r < g.kh; ++r) {
            const int64_t ih = oh * g.stride_h - g.pad_h + r * g.dilation_h;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t s = 0; s < g.kw; ++s) {
              const int64_t iw = ow * g.stride_w - g.pad_w + s * g.dilation_w;
              if (iw < 0 || iw >= g.w) continue;
              for (int64_t ci = 0; ci < cg; ++ci) {
                const int64_t c = group * cg + ci;
                const float x = in[g.nchw ? ((n * g.c + c) * g.h + ih) * g.w + iw
                                          : ((n * g.h + ih) * g.w + iw) * g.c + c];
                const float f = filter[g.nchw ? ((k * cg + ci) * g.kh + r) * g.kw + s
                                              : ((k * g.kh + r) * g.kw + s) * cg + ci];
                acc += static_cast<double>(x) * f;
              }
            }
          }
          out[g.nchw ? ((n * g.out_c + k) * g.out_h + oh) * g.out_w + ow
                     : ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + k] = static_cast<float>(acc);
        }
      }
    }
  }
}

}  // namespace gpu
}  // namespace graphrun
