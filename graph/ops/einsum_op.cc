// Einsum, as TensorFlow's (core/ops/linalg_ops.cc): N (1 or 2) inputs of
// type T and an equation (einsum_equation.h). The shape function rejects
// equations the kernel cannot run, so bad ones fail at import.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/einsum_equation.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status EinsumShape(InferenceContext* c) {
  std::string equation;
  GR_RETURN_IF_ERROR(c->GetAttr("equation", &equation));
  GR_ASSIGN_OR_RETURN(EinsumEquation eq,
                      ParseEinsumEquation(equation, c->num_inputs()));
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& in = c->input(i);
    if (!in.unknown_rank()) {
      dims.push_back(in.dims());
      continue;
    }
    // Unknown rank: fine when there is no ellipsis (the subscript says the
    // rank); with one, the output's rank is unknown too.
    bool ellipsis = false;
    for (int l : eq.inputs[i]) ellipsis |= l == kEllipsisLabel;
    if (ellipsis) {
      c->set_output(0, PartialShape());
      return absl::OkStatus();
    }
    dims.emplace_back(eq.inputs[i].size(), -1);
  }
  GR_ASSIGN_OR_RETURN(EinsumDims resolved, ResolveEinsum(eq, dims));
  c->set_output(0, PartialShape(resolved.OutputDims()));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Einsum")
    .Input("inputs: N * T")
    .Output("output: T")
    .Attr("equation: string")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .SetShapeFn(EinsumShape);

}  // namespace graphrun
