// Helpers for tests that build GraphDefs from text and inspect the result:
//
//   GraphDef g = ParseTextGraph("node { name: 'x' op: 'Placeholder' ... }");
//   EXPECT_EQ(NodeInputs(g, "y"), (std::vector<std::string>{"x", "c"}));
#ifndef GRAPHRUN_GRAPH_TESTING_GRAPHDEF_TEST_UTIL_H_
#define GRAPHRUN_GRAPH_TESTING_GRAPHDEF_TEST_UTIL_H_

#include <string>
#include <vector>

#include "graph/protos/graph.pb.h"
#include "graph/tensor.h"

namespace graphrun {
namespace testing {

// The GraphDef in TensorFlow's text format; a test failure (and an empty
// GraphDef) when it does not parse.
GraphDef ParseTextGraph(const std::string& text);

// The node named `name`, or nullptr.
const NodeDef* FindNode(const GraphDef& g, const std::string& name);

// The node's inputs; a test failure and {"<no node NAME>"} when there is
// no such node.
std::vector<std::string> NodeInputs(const GraphDef& g, const std::string& name);

// How many nodes run `op`.
int CountOp(const GraphDef& g, const std::string& op);

// The value of the Const named `name`; a test failure (and an empty Tensor)
// when there is no such Const or its value does not parse.
Tensor ConstValue(const GraphDef& g, const std::string& name);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_TESTING_GRAPHDEF_TEST_UTIL_H_
