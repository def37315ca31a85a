// Shape functions for the ops that pad or rearrange elements: Pad, PadV2,
// MirrorPad, Roll, SpaceToBatchND, BatchToSpaceND, DepthToSpace and
// SpaceToDepth (declared in array_shapes.h). Constant paddings, block
// shapes and crops give exact output dims; what TensorFlow's kernels would
// refuse at run time (negative paddings, a REFLECT padding as large as its
// dim, sizes not divisible by a block) is refused here when already known.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/ops/array_shapes.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace array_shapes {
namespace {

using op_shapes::ShapeError;
using op_shapes::UnknownDims;

// The values of a constant int32/int64 input of any rank, row-major.
std::optional<std::vector<int64_t>> ConstantValues(const InferenceContext& c,
                                                   int input) {
  const Tensor* t = c.input_tensor(input);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  if (t->dtype() == DT_INT32) {
    for (int32_t v : t->flat<int32_t>()) out.push_back(v);
  } else if (t->dtype() == DT_INT64) {
    for (int64_t v : t->flat<int64_t>()) out.push_back(v);
  } else {
    return std::nullopt;
  }
  return out;
}

// Checks that input `input` (paddings or crops) is an [n, 2] matrix; returns
// n, or -1 when unknown.
absl::StatusOr<int64_t> PairsRows(const InferenceContext& c,
                                  absl::string_view op, int input,
                                  absl::string_view what) {
  const PartialShape& s = c.input(input);
  if (s.unknown_rank()) return -1;
  if (s.rank() != 2 || (s.dim(1) >= 0 && s.dim(1) != 2)) {
    return ShapeError(c, op,
                      absl::StrCat(what,
                                   " must be a matrix with 2 columns, "
                                   "but has shape ",
                                   s.DebugString()));
  }
  return s.dim(0);
}

}  // namespace

// Pad, PadV2 (a scalar constant_values) and MirrorPad (a `mode` attr).
absl::Status PadShape(InferenceContext* c) {
  const std::string op = c->num_inputs() == 3                 ? "PadV2"
                         : c->attrs().Find("mode") != nullptr ? "MirrorPad"
                                                              : "Pad";
  if (c->num_inputs() == 3) {
    GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "constant_values").status());
  }
  GR_ASSIGN_OR_RETURN(int64_t n, PairsRows(*c, op, 1, "paddings"));
  const PartialShape& in = c->input(0);
  if (n >= 0 && !in.unknown_rank() && in.rank() != n) {
    return ShapeError(
        *c, op,
        absl::StrCat("The first dimension of paddings (", n,
                     ") must be the rank of the input (", in.rank(), ")"));
  }
  int rank = in.rank();
  if (rank < 0 && n >= 0) {
    GR_ASSIGN_OR_RETURN(rank, op_shapes::RankFromLength(n, "paddings"));
  }
  std::optional<std::vector<int64_t>> pads = ConstantValues(*c, 1);
  if (!pads.has_value()) {
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  rank = static_cast<int>(pads->size() / 2);
  // 0 for Pad, 1 for REFLECT (the edge is not repeated), 0 for SYMMETRIC.
  int64_t reflect = 0;
  if (op == "MirrorPad") {
    std::string mode;
    GR_RETURN_IF_ERROR(c->GetAttr("mode", &mode));
    reflect = mode == "REFLECT" ? 1 : 0;
  }
  std::vector<int64_t> dims(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    if (before < 0 || after < 0) {
      return ShapeError(*c, op,
                        absl::StrCat("Paddings must be non-negative, but "
                                     "paddings[",
                                     i, "] = [", before, ", ", after, "]"));
    }
    const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
    if (op == "MirrorPad" && d >= 0 &&
        (before > d - reflect || after > d - reflect)) {
      return ShapeError(
          *c, op,
          absl::StrCat("paddings[", i, "] = [", before, ", ", after, "] ",
                       reflect ? "must be less than" : "must not exceed",
                       " the dimension size ", d));
    }
    GR_ASSIGN_OR_RETURN(int64_t sum,
                        op_shapes::AddDims(before, after, "padding"));
    GR_ASSIGN_OR_RETURN(
        dims[i],
        op_shapes::AddDims(d, sum, absl::StrCat(op, " output dimension ", i)));
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status RollShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.unknown_rank() && in.rank() < 1) {
    return ShapeError(*c, "Roll", "input must be 1-D or higher");
  }
  const PartialShape& shift = c->input(1);
  const PartialShape& axis = c->input(2);
  for (const PartialShape* s : {&shift, &axis}) {
    if (!s->unknown_rank() && s->rank() > 1) {
      return ShapeError(*c, "Roll",
                        "shift and axis must be scalars or 1-D vectors");
    }
  }
  if (!InferenceContext::Merge(shift, axis).ok()) {
    return ShapeError(*c, "Roll", "shift and axis must have the same size");
  }
  std::optional<std::vector<int64_t>> axes = op_shapes::ConstantInts(*c, 2);
  if (axes.has_value() && !in.unknown_rank()) {
    for (int64_t a : *axes) {
      GR_RETURN_IF_ERROR(
          op_shapes::CanonicalAxis(a, in.rank(), "Roll axis").status());
    }
  }
  c->ForwardInput(0, 0);
  return absl::OkStatus();
}

namespace {

// The common part of SpaceToBatchND and BatchToSpaceND: input
// [batch] + spatial (M dims) + remaining, block_shape [M], pairs [M, 2]
// (paddings or crops). `to_batch` picks the direction.
absl::Status SpaceBatchShape(InferenceContext* c, bool to_batch) {
  const char* op = to_batch ? "SpaceToBatchND" : "BatchToSpaceND";
  const char* pairs_name = to_batch ? "paddings" : "crops";
  const PartialShape& in = c->input(0);
  const PartialShape& block_shape = c->input(1);
  if (!block_shape.unknown_rank() && block_shape.rank() != 1) {
    return ShapeError(*c, op,
                      absl::StrCat("block_shape must be a vector, but has "
                                   "shape ",
                                   block_shape.DebugString()));
  }
  GR_ASSIGN_OR_RETURN(int64_t m, PairsRows(*c, op, 2, pairs_name));
  if (m < 0 && !block_shape.unknown_rank()) m = block_shape.dim(0);
  if (m >= 0 && !block_shape.unknown_rank() && block_shape.dim(0) >= 0 &&
      block_shape.dim(0) != m) {
    return ShapeError(
        *c, op,
        absl::StrCat("block_shape has ", block_shape.dim(0), " entries but ",
                     pairs_name, " has ", m, " rows"));
  }
  if (m >= 0 && !in.unknown_rank() && in.rank() < m + 1) {
    return ShapeError(*c, op,
                      absl::StrCat("input must have rank at least ", m + 1,
                                   " (batch and ", m, " block dims)"));
  }
  if (in.unknown_rank() || m < 0) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::optional<std::vector<int64_t>> block = ConstantValues(*c, 1);
  std::optional<std::vector<int64_t>> pairs = ConstantValues(*c, 2);
  std::vector<int64_t> dims = in.dims();
  int64_t block_product = 1;
  if (block.has_value()) {
    for (int64_t b : *block) {
      if (b < 1) {
        return ShapeError(*c, op,
                          absl::StrCat("block_shape must be positive, but is [",
                                       absl::StrJoin(*block, ","), "]"));
      }
      GR_ASSIGN_OR_RETURN(
          block_product,
          op_shapes::MultiplyDims(block_product, b, "the block_shape product"));
    }
  }
  if (pairs.has_value()) {
    for (int64_t p : *pairs) {
      if (p < 0) {
        return ShapeError(
            *c, op,
            absl::StrCat(pairs_name, " must be non-negative, but are [",
                         absl::StrJoin(*pairs, ","), "]"));
      }
    }
  }
  // Batch.
  if (!block.has_value()) {
    dims[0] = -1;
  } else if (to_batch) {
    GR_ASSIGN_OR_RETURN(dims[0],
                        op_shapes::MultiplyDims(dims[0], block_product,
                                                "SpaceToBatchND output batch"));
  } else if (dims[0] >= 0) {
    if (dims[0] % block_product != 0) {
      return ShapeError(
          *c, op,
          absl::StrCat("The input batch ", dims[0],
                       " is not divisible by the product of block_shape (",
                       block_product, ")"));
    }
    dims[0] /= block_product;
  }
  // Spatial dims.
  for (int64_t i = 0; i < m; ++i) {
    int64_t& d = dims[1 + i];
    if (!block.has_value() || !pairs.has_value() || d < 0) {
      d = -1;
      continue;
    }
    const int64_t b = (*block)[i];
    const int64_t first = (*pairs)[2 * i], second = (*pairs)[2 * i + 1];
    if (to_batch) {
      GR_ASSIGN_OR_RETURN(int64_t padded,
                          op_shapes::AddDims(d, first, "padded size"));
      GR_ASSIGN_OR_RETURN(padded,
                          op_shapes::AddDims(padded, second, "padded size"));
      if (padded % b != 0) {
        return ShapeError(
            *c, op,
            absl::StrCat("padded_shape[", i, "] = ", padded,
                         " is not divisible by block_shape[", i, "] = ", b));
      }
      d = padded / b;
    } else {
      GR_ASSIGN_OR_RETURN(int64_t full,
                          op_shapes::MultiplyDims(d, b, "uncropped size"));
      if (first > full || second > full - first) {
        return ShapeError(
            *c, op,
            absl::StrCat("crops[", i, "] = [", first, ", ", second,
                         "] exceed the uncropped size ", full));
      }
      d = full - first - second;
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// Reads block_size and data_format; input 0 must be rank 4 (NHWC, NCHW).
// NCHW_VECT_C (int8 vectors in the innermost dim) is refused: no kernel
// handles it.
absl::Status DepthLayout(InferenceContext* c, absl::string_view op,
                         int64_t* block_size, bool* nchw) {
  GR_RETURN_IF_ERROR(c->GetAttr("block_size", block_size));
  if (*block_size < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": block_size must be greater than 1, but is ", *block_size));
  }
  std::string data_format;
  GR_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  if (data_format != "NHWC" && data_format != "NCHW") {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": data_format '", data_format,
                     "' is not supported (only NHWC and NCHW)"));
  }
  *nchw = data_format == "NCHW";
  const PartialShape& in = c->input(0);
  if (!in.unknown_rank() && in.rank() != 4) {
    return ShapeError(*c, op,
                      absl::StrCat("input must be 4-dimensional (", data_format,
                                   "), but has shape ", in.DebugString()));
  }
  return absl::OkStatus();
}

// `d` divided by `by`; -1 stays -1; InvalidArgument when not divisible.
absl::StatusOr<int64_t> DivideExactly(const InferenceContext& c,
                                      absl::string_view op, int64_t d,
                                      int64_t by, absl::string_view what) {
  if (d < 0) return -1;
  if (d % by != 0) {
    return ShapeError(c, op,
                      absl::StrCat(what, " ", d, " must be divisible by ", by));
  }
  return d / by;
}

}  // namespace

absl::Status SpaceToBatchNDShape(InferenceContext* c) {
  return SpaceBatchShape(c, /*to_batch=*/true);
}

absl::Status BatchToSpaceNDShape(InferenceContext* c) {
  return SpaceBatchShape(c, /*to_batch=*/false);
}

absl::Status DepthToSpaceShape(InferenceContext* c) {
  int64_t bs = 0;
  bool nchw = false;
  GR_RETURN_IF_ERROR(DepthLayout(c, "DepthToSpace", &bs, &nchw));
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, UnknownDims(4));
    return absl::OkStatus();
  }
  const int h = nchw ? 2 : 1, w = h + 1, ch = nchw ? 1 : 3;
  std::vector<int64_t> dims = in.dims();
  GR_ASSIGN_OR_RETURN(const int64_t bs2,
                      op_shapes::MultiplyDims(bs, bs, "block_size squared"));
  GR_ASSIGN_OR_RETURN(dims[ch], DivideExactly(*c, "DepthToSpace", in.dim(ch),
                                              bs2, "Input depth"));
  GR_ASSIGN_OR_RETURN(dims[h],
                      op_shapes::MultiplyDims(in.dim(h), bs, "output height"));
  GR_ASSIGN_OR_RETURN(dims[w],
                      op_shapes::MultiplyDims(in.dim(w), bs, "output width"));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status SpaceToDepthShape(InferenceContext* c) {
  int64_t bs = 0;
  bool nchw = false;
  GR_RETURN_IF_ERROR(DepthLayout(c, "SpaceToDepth", &bs, &nchw));
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, UnknownDims(4));
    return absl::OkStatus();
  }
  const int h = nchw ? 2 : 1, w = h + 1, ch = nchw ? 1 : 3;
  std::vector<int64_t> dims = in.dims();
  GR_ASSIGN_OR_RETURN(const int64_t bs2,
                      op_shapes::MultiplyDims(bs, bs, "block_size squared"));
  GR_ASSIGN_OR_RETURN(dims[h], DivideExactly(*c, "SpaceToDepth", in.dim(h), bs,
                                             "Input height"));
  GR_ASSIGN_OR_RETURN(
      dims[w], DivideExactly(*c, "SpaceToDepth", in.dim(w), bs, "Input width"));
  GR_ASSIGN_OR_RETURN(dims[ch],
                      op_shapes::MultiplyDims(in.dim(ch), bs2, "output depth"));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace graphrun
