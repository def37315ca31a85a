// The C++ graph-building API in one include: Scope / Output / Operation,
// NodeBuilder, Const and the generated op builders (graph/cc/ops.h).
//
//   #include "graph/cc/cc.h"
//   using namespace graphrun::cc;
//   Scope root = Scope::NewRootScope();
//   Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
//   Output y = Relu(root, MatMul(root, x, Const(root, {1.f}, TensorShape({784, 10}))));
//   absl::StatusOr<GraphDef> def = root.ToGraphDef();
#ifndef GRAPHRUN_GRAPH_CC_CC_H_
#define GRAPHRUN_GRAPH_CC_CC_H_

#include "graph/cc/const.h"
#include "graph/cc/node_builder.h"
#include "graph/cc/ops.h"
#include "graph/cc/scope.h"

#endif  // GRAPHRUN_GRAPH_CC_CC_H_
