// Math ops: MatMul, BatchMatMulV2, reductions and ArgMax/ArgMin. Names,
// inputs, outputs and attrs are TensorFlow's (core/ops/math_ops.cc); type
// lists follow TensorFlow 2.x, which accepts everything 1.15 does. The
// element-wise ops (and AddN) are in cwise_ops.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::InputWithRank;
using op_shapes::InputWithRankAtLeast;
using op_shapes::MergeDims;

// TensorFlow's "numbertype" expanded.
using op_shapes::kNumberTypes;

// "T: {<types>}".
std::string TypeAttr(const char* types) {
  return absl::StrCat("T: {", types, "}");
}

absl::Status MatMulShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape a, InputWithRank(*c, "MatMul", 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape b, InputWithRank(*c, "MatMul", 1, 2));
  bool transpose_a = false, transpose_b = false;
  GR_RETURN_IF_ERROR(c->GetAttr("transpose_a", &transpose_a));
  GR_RETURN_IF_ERROR(c->GetAttr("transpose_b", &transpose_b));
  const int64_t rows = a.dim(transpose_a ? 1 : 0);
  const int64_t inner_a = a.dim(transpose_a ? 0 : 1);
  const int64_t inner_b = b.dim(transpose_b ? 1 : 0);
  const int64_t cols = b.dim(transpose_b ? 0 : 1);
  GR_RETURN_IF_ERROR(MergeDims(*c, "MatMul", inner_a, inner_b).status());
  c->set_output(0, PartialShape(std::vector<int64_t>{rows, cols}));
  return absl::OkStatus();
}

absl::Status BatchMatMulV2Shape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape x,
                      InputWithRankAtLeast(*c, "BatchMatMulV2", 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape y,
                      InputWithRankAtLeast(*c, "BatchMatMulV2", 1, 2));
  bool adj_x = false, adj_y = false;
  GR_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  GR_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int xr = x.rank(), yr = y.rank();
  const int64_t rows = x.dim(adj_x ? xr - 1 : xr - 2);
  const int64_t inner_x = x.dim(adj_x ? xr - 2 : xr - 1);
  const int64_t inner_y = y.dim(adj_y ? yr - 1 : yr - 2);
  const int64_t cols = y.dim(adj_y ? yr - 2 : yr - 1);
  GR_RETURN_IF_ERROR(MergeDims(*c, "BatchMatMulV2", inner_x, inner_y).status());
  PartialShape x_batch(
      std::vector<int64_t>(x.dims().begin(), x.dims().end() - 2));
  PartialShape y_batch(
      std::vector<int64_t>(y.dims().begin(), y.dims().end() - 2));
  GR_ASSIGN_OR_RETURN(
      PartialShape batch,
      op_shapes::BroadcastShapes(*c, "BatchMatMulV2", x_batch, y_batch));
  std::vector<int64_t> dims = batch.dims();
  dims.push_back(rows);
  dims.push_back(cols);
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ArgMax/ArgMin: the input without the reduced dimension.
absl::Status ArgOpShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "dimension").status());
  const PartialShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  const int rank = in.rank();
  if (rank <= 1) {
    c->set_output(0, PartialShape::Scalar());
    return absl::OkStatus();
  }
  int64_t dim = 0;
  if (!c->ConstantScalar(1, &dim)) {
    c->set_output(0, op_shapes::UnknownDims(rank - 1));
    return absl::OkStatus();
  }
  if (dim < -rank || dim >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected dimension in the range [", -rank, ", ", rank,
                     "), but got ", dim));
  }
  std::vector<int64_t> dims = in.dims();
  dims.erase(dims.begin() + (dim < 0 ? dim + rank : dim));
  c->set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

}  // namespace

// --- Matrix products. ---

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(TypeAttr("bfloat16, half, float, double, int32, int64, complex64, "
                   "complex128"))
    .Attr("grad_a: bool = false")
    .Attr("grad_b: bool = false")
    .SetShapeFn(MatMulShape);

// TensorFlow's fused inference MatMul (what its remapper and graphrun's
// optimizer make of MatMul + BiasAdd [+ activation]): args are the bias
// (one input, num_args = 1); fused_ops ["BiasAdd"] or ["BiasAdd", act].
REGISTER_OP("_FusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("args: num_args * T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(TypeAttr("bfloat16, half, float"))
    .Attr("num_args: int >= 0")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(MatMulShape);

REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr(TypeAttr("bfloat16, half, float, double, int16, int32, int64, "
                   "uint8, int8, uint16, uint32, uint64, complex64, "
                   "complex128"))
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape);

// BatchMatMulV2 with the operand and output types apart (graphrun's kernels
// take them equal).
REGISTER_OP("BatchMatMulV3")
    .Input("x: Ta")
    .Input("y: Tb")
    .Output("output: Tout")
    .Attr("Ta: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
          "complex128}")
    .Attr("Tb: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
          "complex128}")
    .Attr("Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape);

// --- Reductions. ---

// The reductions: `input` reduced over `reduction_indices`, TensorFlow's
// signature for each (numeric T, or bool for All/Any).
OpDefBuilder Reduction(const char* name, bool logical) {
  OpDefBuilder b(name);
  b.Input(logical ? "input: bool" : "input: T")
      .Input("reduction_indices: Tidx")
      .Output(logical ? "output: bool" : "output: T")
      .Attr("keep_dims: bool = false");
  if (!logical) b.Attr(TypeAttr(kNumberTypes));
  b.Attr("Tidx: {int32, int64} = DT_INT32").SetShapeFn(op_shapes::ReductionShape);
  return b;
}

const internal::OpRegistrar kReductions[] = {
    Reduction("Sum", false), Reduction("Mean", false), Reduction("Prod", false),
    Reduction("Max", false), Reduction("Min", false),  Reduction("All", true),
    Reduction("Any", true),
};

REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr(absl::StrCat("T: {", kNumberTypes, ", bool}"))
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")
    .SetShapeFn(ArgOpShape);

REGISTER_OP("ArgMin")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr(absl::StrCat("T: {", kNumberTypes, ", bool}"))
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")
    .SetShapeFn(ArgOpShape);

}  // namespace graphrun
