// Shape functions for array ops, except the slicing and gathering ones
// (slice_shapes.cc).
#include "graph/ops/array_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace array_shapes {

using op_shapes::CanonicalAxis;
using op_shapes::ConstantInts;
using op_shapes::ShapeError;
using op_shapes::ShapeFromShapeTensor;
using op_shapes::UnknownDims;
using op_shapes::UnknownDimsLike;

absl::Status ConstShape(InferenceContext* c) {
  const AttrValue* value = c->attrs().Find("value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return absl::InvalidArgumentError("Const needs a tensor attr 'value'");
  }
  DataType dtype;
  GR_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (value->tensor().dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Type mismatch between value (", DataTypeString(value->tensor().dtype()),
        ") and dtype (", DataTypeString(dtype), ")"));
  }
  GR_ASSIGN_OR_RETURN(PartialShape shape,
                      PartialShape::FromProto(value->tensor().tensor_shape()));
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Const value must have a fully defined shape, but has ",
        shape.DebugString()));
  }
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

absl::Status ReshapeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::optional<std::vector<int64_t>> target = ConstantInts(*c, 1);
  if (!target.has_value()) {
    GR_ASSIGN_OR_RETURN(PartialShape out, ShapeFromShapeTensor(*c, 1));
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  }
  int unknown_index = -1;
  int64_t known = 1;
  for (int i = 0; i < static_cast<int>(target->size()); ++i) {
    const int64_t v = (*target)[i];
    if (v == -1) {
      if (unknown_index >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Only one input size may be -1, not both ", unknown_index,
            " and ", i));
      }
      unknown_index = i;
    } else if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Size ", i, " must be non-negative, not ", v));
    } else {
      if (v > 0 && known > kMaxElements / v) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Reshape target shape [", absl::StrJoin(*target, ","),
            "] is too large (more than 2^48 elements)"));
      }
      known *= v;
    }
  }
  std::vector<int64_t> dims = *target;
  const int64_t n = in.num_elements();
  if (n >= 0) {
    const std::string target_str = PartialShape(dims).DebugString();
    if (unknown_index < 0 && n != known) {
      return ShapeError(*c, "Reshape",
                        absl::StrCat("Cannot reshape a tensor with ", n,
                                     " elements to shape ", target_str, " (",
                                     known, " elements)"));
    }
    if (unknown_index >= 0) {
      if (known == 0) {
        if (n != 0) {
          return ShapeError(*c, "Reshape",
                            absl::StrCat("Cannot reshape a tensor with ", n,
                                         " elements to shape ", target_str,
                                         " (0 elements)"));
        }
      } else if (n % known != 0) {
        return ShapeError(
            *c, "Reshape",
            absl::StrCat("Cannot reshape a tensor with ", n,
                         " elements to shape ", target_str,
                         ": the number of elements is not a multiple of ",
                         known));
      } else {
        dims[unknown_index] = n / known;
      }
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::optional<std::vector<int64_t>> perm = ConstantInts(*c, 1);
  if (!perm.has_value()) {
    int rank = in.rank();
    const PartialShape& ps = c->input(1);
    if (rank < 0 && ps.rank() == 1) {
      GR_ASSIGN_OR_RETURN(rank, op_shapes::RankFromLength(ps.dim(0), "perm"));
    }
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  const int n = static_cast<int>(perm->size());
  if (!in.unknown_rank() && in.rank() != n) {
    return ShapeError(*c, "Transpose",
                      absl::StrCat("perm has ", n,
                                   " entries but the input has rank ",
                                   in.rank()));
  }
  std::vector<bool> seen(n, false);
  std::vector<int64_t> dims(n, -1);
  for (int i = 0; i < n; ++i) {
    GR_ASSIGN_OR_RETURN(int p, CanonicalAxis((*perm)[i], n, "perm entry"));
    if (seen[p]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "perm [", absl::StrJoin(*perm, ","), "] is not a permutation"));
    }
    seen[p] = true;
    if (!in.unknown_rank()) dims[i] = in.dim(p);
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status FillShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "Fill value").status());
  if (std::optional<std::vector<int64_t>> dims = ConstantInts(*c, 0)) {
    for (int64_t d : *dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Fill dimensions must be >= 0, got [", absl::StrJoin(*dims, ","),
            "]"));
      }
    }
  }
  GR_ASSIGN_OR_RETURN(PartialShape out, ShapeFromShapeTensor(*c, 0));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status PackShape(InferenceContext* c) {
  int64_t axis = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  PartialShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    auto m = InferenceContext::Merge(merged, c->input(i));
    if (!m.ok()) {
      return ShapeError(
          *c, "Pack",
          absl::StrCat("Shapes of all inputs must match: values[0].shape = ",
                       c->input(0).DebugString(), " != values[", i,
                       "].shape = ", c->input(i).DebugString()));
    }
    merged = *std::move(m);
  }
  if (merged.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int rank = merged.rank();
  GR_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, rank + 1, "Pack axis"));
  std::vector<int64_t> dims = merged.dims();
  dims.insert(dims.begin() + a, c->num_inputs());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  int64_t axis = 0;
  GR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  PartialShape out;
  if (!in.unknown_rank()) {
    GR_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, in.rank(), "Unpack axis"));
    const int64_t d = in.dim(a);
    if (d >= 0 && d != c->num_outputs()) {
      return ShapeError(*c, "Unpack",
                        absl::StrCat("Dimension must be ", c->num_outputs(),
                                     " but is ", d));
    }
    std::vector<int64_t> dims = in.dims();
    dims.erase(dims.begin() + a);
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  int rank = -1, first = -1;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c->input(i);
    if (s.unknown_rank()) continue;
    if (rank < 0) {
      rank = s.rank();
      first = i;
    } else if (s.rank() != rank) {
      return ShapeError(
          *c, "ConcatV2",
          absl::StrCat("Ranks of all input tensors should match: shape[",
                       first, "] = ", c->input(first).DebugString(),
                       " vs. shape[", i, "] = ", s.DebugString()));
    }
  }
  std::optional<std::vector<int64_t>> axis = ConstantInts(*c, n);
  if (rank < 0 || !axis.has_value() || axis->size() != 1) {
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  if (rank == 0) {
    return absl::InvalidArgumentError(
        "Can't concatenate scalars (use tf.stack instead)");
  }
  const int64_t a = (*axis)[0];
  if (a < -rank || a >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ConcatOp : Expected concatenating dimensions in the range [", -rank,
        ", ", rank, "), but got ", a));
  }
  const int ax = static_cast<int>(a < 0 ? a + rank : a);
  std::vector<int64_t> dims(rank, -1);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c->input(i);
    if (s.unknown_rank()) {
      total = -1;
      continue;
    }
    for (int j = 0; j < rank; ++j) {
      if (j == ax) continue;
      if (dims[j] >= 0 && s.dim(j) >= 0 && dims[j] != s.dim(j)) {
        return ShapeError(
            *c, "ConcatV2",
            absl::StrCat("Dimension ", j, " in both shapes must be equal, "
                         "but are ", dims[j], " and ", s.dim(j)));
      }
      if (dims[j] < 0) dims[j] = s.dim(j);
    }
    if (total >= 0) {
      GR_ASSIGN_OR_RETURN(
          total, op_shapes::AddDims(
                     total, s.dim(ax),
                     absl::StrCat("ConcatV2 output dimension ", ax)));
    }
  }
  dims[ax] = total;
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status SplitShape(InferenceContext* c) {
  const PartialShape& value = c->input(1);
  const int num_split = c->num_outputs();
  std::optional<std::vector<int64_t>> split_dim = ConstantInts(*c, 0);
  PartialShape out = UnknownDimsLike(value);
  if (!value.unknown_rank() && split_dim.has_value() &&
      split_dim->size() == 1) {
    GR_ASSIGN_OR_RETURN(
        int a, CanonicalAxis((*split_dim)[0], value.rank(), "Split dimension"));
    std::vector<int64_t> dims = value.dims();
    const int64_t d = dims[a];
    if (d >= 0 && d % num_split != 0) {
      return ShapeError(*c, "Split",
                        absl::StrCat("Dimension size must be evenly divisible "
                                     "by ", num_split, " but is ", d));
    }
    dims[a] = d < 0 ? -1 : d / num_split;
    out = PartialShape(std::move(dims));
  }
  for (int i = 0; i < num_split; ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::vector<int64_t> squeeze_dims;
  GR_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &squeeze_dims));
  if (in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  std::vector<bool> listed(rank, false);
  for (int64_t d : squeeze_dims) {
    GR_ASSIGN_OR_RETURN(int a, CanonicalAxis(d, rank, "Squeeze dimension"));
    listed[a] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dim(i);
    if (!squeeze_dims.empty()) {
      if (!listed[i]) {
        dims.push_back(d);
      } else if (d >= 0 && d != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Can not squeeze dim[", i,
                         "], expected a dimension of 1, got ", d));
      }
    } else if (d < 0) {
      // Whether it is 1 is only known at run time: the rank is unknown.
      c->set_output(0, PartialShape());
      return absl::OkStatus();
    } else if (d != 1) {
      dims.push_back(d);
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::optional<std::vector<int64_t>> dim = ConstantInts(*c, 1);
  if (dim.has_value() && dim->size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'dim' must be a tensor with a single value, but has ", dim->size()));
  }
  if (in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  if (!dim.has_value()) {
    c->set_output(0, UnknownDims(rank + 1));
    return absl::OkStatus();
  }
  const int64_t d = (*dim)[0];
  if (d < -rank - 1 || d > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tried to expand dim index ", d, " for tensor with ",
                     rank, " dimensions."));
  }
  std::vector<int64_t> dims = in.dims();
  dims.insert(dims.begin() + (d < 0 ? d + rank + 1 : d), 1);
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status TileShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  std::optional<std::vector<int64_t>> multiples = ConstantInts(*c, 1);
  if (!multiples.has_value()) {
    int rank = in.rank();
    const PartialShape& ms = c->input(1);
    if (rank < 0 && ms.rank() == 1) {
      GR_ASSIGN_OR_RETURN(rank,
                          op_shapes::RankFromLength(ms.dim(0), "multiples"));
    }
    c->set_output(0, UnknownDims(rank));
    return absl::OkStatus();
  }
  const int n = static_cast<int>(multiples->size());
  if (!in.unknown_rank() && in.rank() != n) {
    return ShapeError(*c, "Tile",
                      absl::StrCat("Expected multiples argument to be a "
                                   "vector of length ", in.rank(),
                                   " but got length ", n));
  }
  std::vector<int64_t> dims(n, -1);
  for (int i = 0; i < n; ++i) {
    const int64_t m = (*multiples)[i];
    if (m < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected multiples[", i, "] >= 0, but got ", m));
    }
    const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
    if (m == 0) {
      dims[i] = 0;
      continue;
    }
    GR_ASSIGN_OR_RETURN(dims[i],
                        op_shapes::MultiplyDims(
                            d, m, absl::StrCat("Tile output dimension ", i)));
  }
  PartialShape out(std::move(dims));
  GR_RETURN_IF_ERROR(op_shapes::CheckShapeSize(out, "Tile output shape"));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status OneHotShape(InferenceContext* c) {
  int64_t axis = -1;
  GR_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis must be >= -1, but is ", axis));
  }
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "depth").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "on_value").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, "off_value").status());
  int64_t depth = -1;
  if (c->ConstantScalar(1, &depth) && depth < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("depth must be non-negative, got: ", depth));
  }
  const PartialShape& indices = c->input(0);
  if (indices.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int rank = indices.rank();
  if (axis > rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected axis to be -1 or between [0, ", rank, "], but got ", axis));
  }
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + (axis == -1 ? rank : axis), depth);
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

namespace {

// The value of a constant scalar input as a double, if it has a real type.
std::optional<double> ConstantReal(const InferenceContext& c, int input) {
  const Tensor* t = c.input_tensor(input);
  if (t == nullptr || t->NumElements() != 1) return std::nullopt;
  std::optional<double> out;
  VisitDataType(t->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T>) {
      out = static_cast<double>(t->flat<T>()[0]);
    }
  });
  return out;
}

}  // namespace

absl::Status RangeShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, "start").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "limit").status());
  GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "delta").status());
  std::optional<double> start = ConstantReal(*c, 0);
  std::optional<double> limit = ConstantReal(*c, 1);
  std::optional<double> delta = ConstantReal(*c, 2);
  if (delta.has_value() && *delta == 0) {
    return absl::InvalidArgumentError("Requires delta != 0");
  }
  if (!start || !limit || !delta) {
    c->set_output(0, UnknownDims(1));
    return absl::OkStatus();
  }
  if (*delta > 0 && *start > *limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Requires start <= limit when delta > 0: ", *start, "/", *limit));
  }
  if (*delta < 0 && *start < *limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Requires start >= limit when delta < 0: ", *start, "/", *limit));
  }
  const DataType t = c->input_type(2) == DT_INVALID
                         ? c->input_tensor(2)->dtype()
                         : c->input_type(2);
  int64_t s = 0, l = 0, d = 0;
  int64_t size;
  if (IsIntegerType(t) && c->ConstantScalar(0, &s) && c->ConstantScalar(1, &l) &&
      c->ConstantScalar(2, &d)) {
    // Exact, in uint64_t: |limit - start| reaches 2^64 - 1 for int64 and
    // |INT64_MIN| does not fit an int64_t. (The doubles above lose precision
    // past 2^53: the order checks are redone exactly.)
    if ((d > 0 && s > l) || (d < 0 && s < l)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Requires start ", d > 0 ? "<=" : ">=", " limit when delta ",
          d > 0 ? ">" : "<", " 0: ", s, "/", l));
    }
    const uint64_t span = s <= l ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                                 : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
    const uint64_t step = d > 0 ? static_cast<uint64_t>(d)
                                : uint64_t{0} - static_cast<uint64_t>(d);
    const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
    if (count > static_cast<uint64_t>(kMaxElements)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Range from ", s, " to ", l, " by ", d, " is too large: ", count,
          " elements (more than 2^48)"));
    }
    size = static_cast<int64_t>(count);
  } else {
    const double n = std::ceil(std::abs((*limit - *start) / *delta));
    // Also refuses NaN (a NaN or infinite start or limit).
    if (!(n <= static_cast<double>(kMaxElements))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Range from ", *start, " to ", *limit, " by ", *delta,
          " is too large: (limit - start) / delta = ", n,
          " (must be a number at most 2^48)"));
    }
    size = static_cast<int64_t>(n);
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{size}));
  return absl::OkStatus();
}

absl::Status SelectShape(InferenceContext* c) {
  const PartialShape& cond = c->input(0);
  auto data = InferenceContext::Merge(c->input(1), c->input(2));
  if (!data.ok()) {
    return ShapeError(*c, "Select",
                      "Inputs t and e to Select must have the same shape");
  }
  PartialShape out = *std::move(data);
  if (cond.unknown_rank() || out.unknown_rank() || cond.rank() == 0) {
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  }
  if (cond.rank() == out.rank()) {
    auto merged = InferenceContext::Merge(cond, out);
    if (!merged.ok()) {
      return ShapeError(*c, "Select",
                        "condition must have the same shape as t and e");
    }
    out = *std::move(merged);
  } else if (cond.rank() == 1 && out.rank() > 1) {
    GR_ASSIGN_OR_RETURN(int64_t d0,
                        op_shapes::MergeDims(*c, "Select", cond.dim(0),
                                             out.dim(0)));
    std::vector<int64_t> dims = out.dims();
    dims[0] = d0;
    out = PartialShape(std::move(dims));
  } else {
    return ShapeError(*c, "Select",
                      "condition must be a scalar, a vector matching the "
                      "first dimension of t and e, or have their shape");
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SelectV2Shape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape te,
                      InferenceContext::Broadcast(c->input(1), c->input(2)));
  GR_ASSIGN_OR_RETURN(PartialShape out,
                      InferenceContext::Broadcast(c->input(0), te));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BroadcastToShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  GR_ASSIGN_OR_RETURN(PartialShape target, ShapeFromShapeTensor(*c, 1));
  if (in.unknown_rank() || target.unknown_rank()) {
    c->set_output(0, std::move(target));
    return absl::OkStatus();
  }
  const int rank = target.rank();
  if (in.rank() > rank) {
    return ShapeError(*c, "BroadcastTo",
                      absl::StrCat("Unable to broadcast tensor of shape ",
                                   in.DebugString(), " to tensor of shape ",
                                   target.DebugString()));
  }
  std::vector<int64_t> dims = target.dims();
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t d = in.dim(i);
    int64_t& t = dims[rank - in.rank() + i];
    if (d < 0 || d == 1) continue;
    if (t >= 0 && t != d) {
      return ShapeError(*c, "BroadcastTo",
                        absl::StrCat("Unable to broadcast tensor of shape ",
                                     in.DebugString(), " to tensor of shape ",
                                     target.DebugString()));
    }
    t = d;
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace graphrun
