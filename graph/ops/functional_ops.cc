// TensorFlow 2's functional control flow and function calls: While/If/Case
// (and their Stateless forms) run functions from the graph's library as loop
// condition and body or as branches; PartitionedCall and
// StatefulPartitionedCall call one. Names, attrs and signatures are
// TensorFlow's (core/ops/functional_ops.cc). graphrun has no kernels for
// them: ImportGraphDef rewrites every such node into v1 control flow and
// inlined function bodies (graph/lower_functional.h) before anything runs.
// The definitions here type those nodes and give `graphrun inspect` (which
// imports without lowering) their output shapes.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {
namespace {

// Outputs take the shapes in `output_shapes` when the attr lists one per
// output; otherwise they are unknown.
absl::Status DeclaredShapes(InferenceContext* c) {
  const AttrValue* shapes = c->attrs().Find("output_shapes");
  const int n = shapes == nullptr ? 0 : shapes->list().shape_size();
  for (int i = 0; i < c->num_outputs(); ++i) {
    PartialShape s;
    if (n == c->num_outputs()) {
      auto parsed = PartialShape::FromProto(shapes->list().shape(i));
      if (!parsed.ok()) return parsed.status();
      s = *std::move(parsed);
    }
    c->set_output(i, std::move(s));
  }
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("While")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 0")
    .Attr("cond: func")
    .Attr("body: func")
    .Attr("output_shapes: list(shape) = []")
    .Attr("parallel_iterations: int = 10")
    .SetIsStateful()
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("StatelessWhile")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 0")
    .Attr("cond: func")
    .Attr("body: func")
    .Attr("output_shapes: list(shape) = []")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("If")
    .Input("cond: Tcond")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tcond: type")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("then_branch: func")
    .Attr("else_branch: func")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("StatelessIf")
    .Input("cond: Tcond")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tcond: type")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("then_branch: func")
    .Attr("else_branch: func")
    .Attr("output_shapes: list(shape) = []")
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("Case")
    .Input("branch_index: int32")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("branches: list(func) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("StatelessCase")
    .Input("branch_index: int32")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("branches: list(func) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .SetShapeFn(DeclaredShapes);

REGISTER_OP("PartitionedCall")
    .Input("args: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("f: func")
    .Attr("config: string = ''")
    .Attr("config_proto: string = ''")
    .Attr("executor_type: string = ''")
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("StatefulPartitionedCall")
    .Input("args: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("f: func")
    .Attr("config: string = ''")
    .Attr("config_proto: string = ''")
    .Attr("executor_type: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace graphrun
