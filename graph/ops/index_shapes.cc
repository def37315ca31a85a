// Shape functions for the ops that make or use indices, and the banded and
// diagonal matrix ops: EnsureShape, Where, GatherNd, ScatterNd,
// BroadcastArgs, Unique, InvertPermutation, MatrixBandPart, MatrixDiag,
// MatrixDiagV3, MatrixDiagPartV3, Cumsum/Cumprod, TopKV2 and LinSpace
// (declared in array_shapes.h). Each follows TensorFlow's function for the
// op of the same name.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/array_shapes.h"
#include "graph/ops/shape_helpers.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace array_shapes {
namespace {

using op_shapes::ConstantInts;
using op_shapes::ShapeError;
using op_shapes::UnknownDims;

// dims [begin, end) of a known-rank shape.
std::vector<int64_t> DimRange(const PartialShape& s, int begin, int end) {
  return std::vector<int64_t>(s.dims().begin() + begin, s.dims().begin() + end);
}

std::vector<int64_t> Concat(std::vector<int64_t> a,
                            const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The [lower, upper] diagonal range of a constant `k` (one or two values);
// nullopt when `k` is not constant.
absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> DiagRange(
    const InferenceContext& c, absl::string_view op, int input) {
  const PartialShape& ks = c.input(input);
  if (!ks.unknown_rank() && ks.rank() > 1) {
    return ShapeError(c, op, "k must be a scalar or a vector");
  }
  std::optional<std::vector<int64_t>> k = ConstantInts(c, input);
  if (!k.has_value()) return std::nullopt;
  if (k->empty() || k->size() > 2) {
    return ShapeError(
        c, op, absl::StrCat("k must have 1 or 2 values, but has ", k->size()));
  }
  const int64_t lower = (*k)[0], upper = k->back();
  if (lower > upper) {
    return ShapeError(c, op,
                      absl::StrCat("lower_diag_index (", lower,
                                   ") must not be greater than "
                                   "upper_diag_index (",
                                   upper, ")"));
  }
  return std::make_optional(std::make_pair(lower, upper));
}

// Scalar inputs of an op, by index and name.
absl::Status ScalarInputs(
    const InferenceContext& c,
    std::initializer_list<std::pair<int, const char*>> inputs) {
  for (const auto& [i, name] : inputs) {
    GR_RETURN_IF_ERROR(c.WithRank(c.input(i), 0, name).status());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EnsureShapeShape(InferenceContext* c) {
  PartialShape expected;
  GR_RETURN_IF_ERROR(c->GetAttr("shape", &expected));
  absl::StatusOr<PartialShape> merged =
      InferenceContext::Merge(c->input(0), expected);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EnsureShape: the input's shape ", c->input(0).DebugString(),
        " is not compatible with the expected shape ", expected.DebugString()));
  }
  c->set_output(0, *std::move(merged));
  return absl::OkStatus();
}

absl::Status WhereShape(InferenceContext* c) {
  const int rank = c->input(0).rank();
  c->set_output(0, PartialShape(std::vector<int64_t>{-1, rank}));
  return absl::OkStatus();
}

absl::Status GatherNdShape(InferenceContext* c) {
  const PartialShape& params = c->input(0);
  const PartialShape& indices = c->input(1);
  if (!indices.unknown_rank() && indices.rank() < 1) {
    return ShapeError(*c, "GatherNd", "indices must be at least a vector");
  }
  if (params.unknown_rank() || indices.unknown_rank() ||
      indices.dim(indices.rank() - 1) < 0) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int64_t n = indices.dim(indices.rank() - 1);
  if (n > params.rank()) {
    return ShapeError(*c, "GatherNd",
                      absl::StrCat("indices.shape[-1] must be <= params.rank, "
                                   "but saw indices shape: ",
                                   indices.DebugString(), " and params shape: ",
                                   params.DebugString()));
  }
  c->set_output(0, PartialShape(Concat(
                       DimRange(indices, 0, indices.rank() - 1),
                       DimRange(params, static_cast<int>(n), params.rank()))));
  return absl::OkStatus();
}

absl::Status ScatterNdShape(InferenceContext* c) {
  const PartialShape& indices = c->input(0);
  const PartialShape& updates = c->input(1);
  if (!indices.unknown_rank() && indices.rank() < 1) {
    return ShapeError(*c, "ScatterNd", "indices must be at least a vector");
  }
  GR_ASSIGN_OR_RETURN(PartialShape out, op_shapes::ShapeFromShapeTensor(*c, 2));
  if (!indices.unknown_rank() && !out.unknown_rank() &&
      indices.dim(indices.rank() - 1) >= 0) {
    const int outer = indices.rank() - 1;
    const int64_t n = indices.dim(outer);
    if (n > out.rank()) {
      return ShapeError(
          *c, "ScatterNd",
          absl::StrCat("indices.shape[-1] (", n,
                       ") must be <= the rank of shape (", out.rank(), ")"));
    }
    const PartialShape expected(
        Concat(DimRange(indices, 0, outer),
               DimRange(out, static_cast<int>(n), out.rank())));
    if (!InferenceContext::Merge(updates, expected).ok()) {
      return ShapeError(
          *c, "ScatterNd",
          absl::StrCat("updates must have shape indices.shape[:-1] + "
                       "shape[indices.shape[-1]:] = ",
                       expected.DebugString(), ", but have shape ",
                       updates.DebugString()));
    }
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BroadcastArgsShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape s0, c->WithRank(c->input(0), 1, "s0"));
  GR_ASSIGN_OR_RETURN(PartialShape s1, c->WithRank(c->input(1), 1, "s1"));
  const int64_t n =
      s0.dim(0) < 0 || s1.dim(0) < 0 ? -1 : std::max(s0.dim(0), s1.dim(0));
  c->set_output(0, PartialShape(std::vector<int64_t>{n}));
  return absl::OkStatus();
}

absl::Status UniqueShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape x, c->WithRank(c->input(0), 1, "x"));
  c->set_output(0, UnknownDims(1));
  c->set_output(1, std::move(x));
  return absl::OkStatus();
}

absl::Status InvertPermutationShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape x, c->WithRank(c->input(0), 1, "x"));
  c->set_output(0, std::move(x));
  return absl::OkStatus();
}

absl::Status MatrixBandPartShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(
      c->WithRankAtLeast(c->input(0), 2, "MatrixBandPart input").status());
  GR_RETURN_IF_ERROR(ScalarInputs(*c, {{1, "num_lower"}, {2, "num_upper"}}));
  c->ForwardInput(0, 0);
  return absl::OkStatus();
}

absl::Status MatrixDiagShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(in, 1, "diagonal").status());
  if (in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = in.dims();
  dims.push_back(dims.back());
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status MatrixDiagV3Shape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(in, 1, "diagonal").status());
  GR_RETURN_IF_ERROR(ScalarInputs(
      *c, {{2, "num_rows"}, {3, "num_cols"}, {4, "padding_value"}}));
  GR_ASSIGN_OR_RETURN(auto range, DiagRange(*c, "MatrixDiagV3", 1));
  if (!range.has_value() || in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const auto [lower, upper] = *range;
  const int rank = in.rank();
  if (lower != upper && rank < 2) {
    return ShapeError(*c, "MatrixDiagV3",
                      "diagonal must be at least 2-D when k has two "
                      "different values");
  }
  if (lower != upper && in.dim(rank - 2) >= 0 &&
      in.dim(rank - 2) != upper - lower + 1) {
    return ShapeError(*c, "MatrixDiagV3",
                      absl::StrCat("diagonal.shape[-2] (", in.dim(rank - 2),
                                   ") must equal the number of diagonals (",
                                   upper - lower + 1, ")"));
  }
  int64_t num_rows = -1, num_cols = -1;
  if (!c->ConstantScalar(2, &num_rows)) num_rows = -2;  // not constant
  if (!c->ConstantScalar(3, &num_cols)) num_cols = -2;
  const int64_t max_len = in.dim(rank - 1);
  int64_t rows = -1, cols = -1;
  if (max_len >= 0 && num_rows != -2 && num_cols != -2) {
    const int64_t min_rows = max_len - std::min<int64_t>(upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(lower, 0);
    rows = num_rows, cols = num_cols;
    if (rows == -1 && cols == -1) {
      rows = cols = std::max(min_rows, min_cols);
    } else if (rows == -1) {
      rows = min_rows;
    } else if (cols == -1) {
      cols = min_cols;
    }
    if (rows < min_rows || cols < min_cols ||
        (rows != min_rows && cols != min_cols)) {
      return ShapeError(*c, "MatrixDiagV3",
                        absl::StrCat("num_rows ", rows, " and num_cols ", cols,
                                     " do not fit diagonals ", lower, "..",
                                     upper, " of length ", max_len));
    }
  }
  std::vector<int64_t> dims =
      DimRange(in, 0, lower == upper ? rank - 1 : rank - 2);
  dims.push_back(rows);
  dims.push_back(cols);
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status MatrixDiagPartV3Shape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(in, 2, "input").status());
  GR_RETURN_IF_ERROR(ScalarInputs(*c, {{2, "padding_value"}}));
  GR_ASSIGN_OR_RETURN(auto range, DiagRange(*c, "MatrixDiagPartV3", 1));
  if (!range.has_value() || in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const auto [lower, upper] = *range;
  const int rank = in.rank();
  const int64_t rows = in.dim(rank - 2), cols = in.dim(rank - 1);
  int64_t max_len = -1;
  if (rows >= 0 && cols >= 0) {
    for (int64_t k : {lower, upper}) {
      if (k != 0 && (k <= -rows || k >= cols)) {
        return ShapeError(
            *c, "MatrixDiagPartV3",
            absl::StrCat("diagonal index ", k, " is out of bounds for a ", rows,
                         "x", cols, " matrix"));
      }
    }
    max_len = std::min(rows + std::min<int64_t>(upper, 0),
                       cols - std::max<int64_t>(lower, 0));
    max_len = std::max<int64_t>(max_len, 0);
  }
  std::vector<int64_t> dims = DimRange(in, 0, rank - 2);
  if (lower != upper) dims.push_back(upper - lower + 1);
  dims.push_back(max_len);
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status CumulativeShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "axis").status());
  const PartialShape& in = c->input(0);
  int64_t axis = 0;
  if (!in.unknown_rank() && c->ConstantScalar(1, &axis) &&
      (axis < -in.rank() || axis >= in.rank())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected scan axis in the range [", -in.rank(), ", ",
                     in.rank(), "), but got ", axis));
  }
  c->ForwardInput(0, 0);
  return absl::OkStatus();
}

absl::Status TopKV2Shape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  GR_RETURN_IF_ERROR(c->WithRankAtLeast(in, 1, "input").status());
  GR_RETURN_IF_ERROR(ScalarInputs(*c, {{1, "k"}}));
  int64_t k = -1;
  if (c->ConstantScalar(1, &k) && k < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TopKV2: k must be non-negative, but is ", k));
  }
  PartialShape out;
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims = in.dims();
    const int64_t last = dims.back();
    if (last >= 0 && k >= 0 && last < k) {
      return ShapeError(*c, "TopKV2",
                        absl::StrCat("input must have last dimension >= k = ",
                                     k, " but is ", last));
    }
    dims.back() = k;
    out = PartialShape(std::move(dims));
  }
  c->set_output(0, out);
  c->set_output(1, out);
  return absl::OkStatus();
}

absl::Status LinSpaceShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarInputs(*c, {{0, "start"}, {1, "stop"}, {2, "num"}}));
  int64_t num = -1;
  if (c->ConstantScalar(2, &num)) {
    if (num <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("LinSpace requires num > 0, but num is ", num));
    }
    if (num > kMaxElements) {
      return absl::InvalidArgumentError(
          absl::StrCat("LinSpace num ", num, " is too large (more than 2^48)"));
    }
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{num}));
  return absl::OkStatus();
}

}  // namespace array_shapes
}  // namespace graphrun
