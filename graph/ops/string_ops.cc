// String ops a Saver's graph uses (TensorFlow's core/ops/string_ops.cc):
// StringJoin builds the temporary and final checkpoint paths,
// StaticRegexFullMatch (and RegexFullMatch) tells an object-store prefix
// from a local one. Names, inputs, attrs and shape functions are
// TensorFlow's.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

// Elementwise join: scalar inputs broadcast against the others, which all
// have one shape.
REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int >= 0")
    .Attr("separator: string = ''")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      PartialShape out = PartialShape::Scalar();
      bool all_scalars = true;
      for (int i = 0; i < c->num_inputs(); ++i) {
        const PartialShape& in = c->input(i);
        if (in.rank() == 0) continue;
        if (all_scalars) {
          out = in;
          all_scalars = false;
        } else {
          GR_ASSIGN_OR_RETURN(out, InferenceContext::Merge(out, in));
        }
      }
      c->set_output(0, out);
      return absl::OkStatus();
    });

// Whether each string matches `pattern` (RE2 syntax) in full.
REGISTER_OP("StaticRegexFullMatch")
    .Input("input: string")
    .Output("output: bool")
    .Attr("pattern: string")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("RegexFullMatch")
    .Input("input: string")
    .Input("pattern: string")
    .Output("output: bool")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "pattern").status());
      return shape_fns::UnchangedShape(c);
    });

}  // namespace graphrun
