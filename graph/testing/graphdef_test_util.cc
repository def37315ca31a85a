#include "graph/testing/graphdef_test_util.h"

#include <algorithm>

#include "graph/graph_io.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace testing {

GraphDef ParseTextGraph(const std::string& text) {
  auto g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : GraphDef();
}

const NodeDef* FindNode(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> NodeInputs(const GraphDef& g, const std::string& name) {
  const NodeDef* n = FindNode(g, name);
  if (n == nullptr) {
    ADD_FAILURE() << "no node " << name;
    return {"<no node " + name + ">"};
  }
  return {n->input().begin(), n->input().end()};
}

int CountOp(const GraphDef& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.node().begin(), g.node().end(),
                                        [&](const NodeDef& n) { return n.op() == op; }));
}

Tensor ConstValue(const GraphDef& g, const std::string& name) {
  const NodeDef* n = FindNode(g, name);
  EXPECT_NE(n, nullptr) << name;
  if (n == nullptr) return Tensor();
  EXPECT_EQ(n->op(), "Const") << name;
  if (n->op() != "Const") return Tensor();
  auto t = Tensor::FromProto(n->attr().at("value").tensor());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

}  // namespace testing
}  // namespace graphrun
