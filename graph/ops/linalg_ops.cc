// Dense linear algebra on batches of square matrices (TensorFlow's
// core/ops/linalg_ops.cc): MatrixInverse (with adjoint), MatrixDeterminant,
// LogMatrixDeterminant. Names, inputs, outputs, attrs and defaults are
// TensorFlow's.
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// input [..., n, n]; output the batch dims (+ [n, n] when `square_out`).
ShapeFn SquareBatchShape(const char* op, bool square_out) {
  return [op, square_out](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape in, op_shapes::InputWithRankAtLeast(*c, op, 0, 2));
    if (in.unknown_rank()) return absl::OkStatus();
    const int r = in.rank();
    GR_RETURN_IF_ERROR(op_shapes::MergeDims(*c, op, in.dim(r - 2), in.dim(r - 1)).status());
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end() - (square_out ? 0 : 2));
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape(dims));
    return absl::OkStatus();
  };
}

}  // namespace

REGISTER_OP("MatrixInverse")
    .Input("input: T")
    .Output("output: T")
    .Attr("adjoint: bool = False")
    .Attr("T: {double, float, half, complex64, complex128}")
    .SetShapeFn(SquareBatchShape("MatrixInverse", true));

REGISTER_OP("MatrixDeterminant")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {half, float, double, complex64, complex128}")
    .SetShapeFn(SquareBatchShape("MatrixDeterminant", false));

REGISTER_OP("LogMatrixDeterminant")
    .Input("input: T")
    .Output("sign: T")
    .Output("log_abs_determinant: T")
    .Attr("T: {half, float, double, complex64, complex128}")
    .SetShapeFn(SquareBatchShape("LogMatrixDeterminant", false));

}  // namespace graphrun
