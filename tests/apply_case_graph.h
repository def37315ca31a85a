// The graph an optimizer-update test runs for one case of
// fixtures/training/apply_ops_data.h (training_ops_test on the CPU,
// gpu_training_fake_test on the fake GPU): slot k's variable "s<k>", its
// initializer "init<k>" (fed "x<k>") and its reader "read<k>"; the update
// "apply" with the gradient fed to "grad", Adam's beta powers to "b1p" and
// "b2p", the sparse forms' row indices the Const "indices". Text-format
// GraphDef; every node on `device` when one is given.
#ifndef GRAPHRUN_TESTS_APPLY_CASE_GRAPH_H_
#define GRAPHRUN_TESTS_APPLY_CASE_GRAPH_H_

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/fixtures/training/apply_ops_data.h"

namespace graphrun {
namespace apply_case_graph {

using apply_ops_data::ApplyCase;

inline bool Sparse(const ApplyCase& c) { return absl::StartsWith(c.op, "Sparse"); }

inline std::string FloatAttr(const char* key) {
  return absl::StrCat("attr { key: '", key, "' value { type: DT_FLOAT } }");
}

class GraphText {
 public:
  explicit GraphText(std::string device) : device_(std::move(device)) {}

  void Node(const std::string& name, const std::string& op, const std::string& rest) {
    absl::StrAppend(&text_, "node { name: '", name, "' op: '", op, "' ",
                    device_.empty() ? "" : absl::StrCat("device: '", device_, "' "), rest,
                    " }\n");
  }
  void ScalarConst(const std::string& name, float v) {
    Node(name, "Const",
         absl::StrCat(FloatAttr("dtype"), " attr { key: 'value' value { tensor { dtype: "
                                          "DT_FLOAT tensor_shape { } float_val: ",
                      absl::StrFormat("%.9g", v), " } } }"));
  }
  // The text, with TensorFlow's double quotes.
  std::string Text() const {
    std::string t = text_;
    for (char& ch : t) {
      if (ch == '\'') ch = '"';
    }
    return t;
  }

 private:
  std::string device_;
  std::string text_;
};

inline std::string ApplyGraph(const ApplyCase& c, bool resource, const std::string& device = "") {
  using namespace apply_ops_data;  // NOLINT: the fixture's constants
  const std::string shape =
      Sparse(c) ? absl::StrCat("attr { key: 'shape' value { shape { dim { size: ", kRows,
                               " } dim { size: ", kCols, " } } } }")
                : absl::StrCat("attr { key: 'shape' value { shape { dim { size: ", kN,
                               " } } } }");
  GraphText g(device);
  for (size_t k = 0; k < c.init.size(); ++k) {
    const std::string s = absl::StrCat("s", k);
    g.Node(absl::StrCat("x", k), "Placeholder", FloatAttr("dtype"));
    if (resource) {
      g.Node(s, "VarHandleOp", FloatAttr("dtype") + " " + shape);
      g.Node(absl::StrCat("init", k), "AssignVariableOp",
             absl::StrCat("input: '", s, "' input: 'x", k, "' ", FloatAttr("dtype")));
      g.Node(absl::StrCat("read", k), "ReadVariableOp",
             absl::StrCat("input: '", s, "' ", FloatAttr("dtype")));
    } else {
      g.Node(s, "VariableV2", FloatAttr("dtype") + " " + shape);
      g.Node(absl::StrCat("init", k), "Assign",
             absl::StrCat("input: '", s, "' input: 'x", k, "' ", FloatAttr("T")));
      g.Node(absl::StrCat("read", k), "Identity",
             absl::StrCat("input: '", s, "' ", FloatAttr("T")));
    }
  }
  g.Node("grad", "Placeholder", FloatAttr("dtype"));
  g.Node("b1p", "Placeholder", FloatAttr("dtype"));
  g.Node("b2p", "Placeholder", FloatAttr("dtype"));
  g.ScalarConst("lr", kLr);
  g.ScalarConst("momentum", kMomentum);
  g.ScalarConst("beta1", kBeta1);
  g.ScalarConst("beta2", kBeta2);
  g.ScalarConst("epsilon", kEpsilon);
  g.ScalarConst("rho", kRho);
  std::string rest;
  for (const char* in : c.inputs) absl::StrAppend(&rest, "input: '", in, "' ");
  if (Sparse(c)) {
    std::string indices = "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
                          "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } ";
    for (int i : kIndices) absl::StrAppend(&indices, "int_val: ", i, " ");
    g.Node("indices", "Const", indices + "} } }");
    rest += "attr { key: 'Tindices' value { type: DT_INT32 } } ";
  }
  g.Node("apply", resource ? absl::StrCat("Resource", c.op) : std::string(c.op),
         absl::StrCat(rest, FloatAttr("T"), " ", c.attrs));
  return g.Text();
}

}  // namespace apply_case_graph
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_APPLY_CASE_GRAPH_H_
