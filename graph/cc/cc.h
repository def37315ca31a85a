// The C++ graph-building API in one include: Scope / Output / Operation,
// NodeBuilder, Const and the generated op builders (graph/cc/ops.h).
//
//   using namespace graphrun::cc;
//   Scope root = Scope::NewRootScope();
//   Output x = Placeholder(root.WithOpName("x"), DT_FLOAT,
//                          PlaceholderAttrs().Shape(PartialShape({-1, 4})));
//   Output w = Const(root, {0.5f}, TensorShape({4, 2}));
//   Output y = Softmax(root.WithOpName("y"), MatMul(root, x, w));
//   absl::StatusOr<GraphDef> def = root.ToGraphDef();  // first error, if any
#ifndef GRAPHRUN_GRAPH_CC_CC_H_
#define GRAPHRUN_GRAPH_CC_CC_H_

#include "graph/cc/const.h"
#include "graph/cc/control_flow.h"
#include "graph/cc/node_builder.h"
#include "graph/cc/ops.h"
#include "graph/cc/scope.h"

#endif  // GRAPHRUN_GRAPH_CC_CC_H_
