// The optimizer updates against TensorFlow: two steps of plain SGD,
// momentum and Adam (each also with Nesterov), in the ref form (VariableV2
// + Apply*) and the resource form (VarHandleOp + ResourceApply*), give
// TensorFlow's variables and accumulators bit for bit
// (fixtures/training/apply_ops_data.h, written by TensorFlow).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/fixtures/training/apply_ops_data.h"

namespace graphrun {
namespace {

using namespace apply_ops_data;  // NOLINT: the fixture's arrays

struct Case {
  const char* name;
  const char* op;  // the ref form; the resource form is "Resource" + op
  int slots;       // var and accumulators
  const char* attrs;
  std::vector<const float*> want;  // per slot, after two steps
};

std::vector<Case> Cases() {
  return {
      {"sgd", "ApplyGradientDescent", 1, "", {kSgd0}},
      {"momentum", "ApplyMomentum", 2, "", {kMomentum0, kMomentum1}},
      {"momentum_nesterov", "ApplyMomentum", 2,
       "attr { key: 'use_nesterov' value { b: true } }",
       {kMomentumNesterov0, kMomentumNesterov1}},
      {"adam", "ApplyAdam", 3, "", {kAdam0, kAdam1, kAdam2}},
      {"adam_nesterov", "ApplyAdam", 3, "attr { key: 'use_nesterov' value { b: true } }",
       {kAdamNesterov0, kAdamNesterov1, kAdamNesterov2}},
  };
}

std::string Node(const std::string& name, const std::string& op, const std::string& rest) {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' ", rest, " }\n");
}
std::string FloatAttr(const char* key) {
  return absl::StrCat("attr { key: '", key, "' value { type: DT_FLOAT } }");
}
std::string ScalarConst(const std::string& name, float v) {
  return Node(name, "Const",
              absl::StrCat(FloatAttr("dtype"), " attr { key: 'value' value { tensor { dtype: "
                                               "DT_FLOAT tensor_shape { } float_val: ",
                           absl::StrFormat("%.9g", v), " } } }"));
}

// slot k's variable "s<k>", its initializer "init<k>" (fed "x<k>"), its
// reader "read<k>"; the update "apply" with the gradient fed to "grad" and
// Adam's beta powers to "b1p" and "b2p".
std::string Graph(const Case& c, bool resource) {
  const std::string shape = absl::StrCat("attr { key: 'shape' value { shape { dim { size: ", kN,
                                         " } } } }");
  std::string t;
  for (int k = 0; k < c.slots; ++k) {
    const std::string s = absl::StrCat("s", k);
    t += Node(absl::StrCat("x", k), "Placeholder", FloatAttr("dtype"));
    if (resource) {
      t += Node(s, "VarHandleOp", FloatAttr("dtype") + " " + shape);
      t += Node(absl::StrCat("init", k), "AssignVariableOp",
                absl::StrCat("input: '", s, "' input: 'x", k, "' ", FloatAttr("dtype")));
      t += Node(absl::StrCat("read", k), "ReadVariableOp",
                absl::StrCat("input: '", s, "' ", FloatAttr("dtype")));
    } else {
      t += Node(s, "VariableV2", FloatAttr("dtype") + " " + shape);
      t += Node(absl::StrCat("init", k), "Assign",
                absl::StrCat("input: '", s, "' input: 'x", k, "' ", FloatAttr("T")));
      t += Node(absl::StrCat("read", k), "Identity",
                absl::StrCat("input: '", s, "' ", FloatAttr("T")));
    }
  }
  t += Node("grad", "Placeholder", FloatAttr("dtype"));
  t += Node("b1p", "Placeholder", FloatAttr("dtype"));
  t += Node("b2p", "Placeholder", FloatAttr("dtype"));
  t += ScalarConst("lr", kLr);
  t += ScalarConst("momentum", 0.9f);
  t += ScalarConst("beta1", 0.9f);
  t += ScalarConst("beta2", 0.999f);
  t += ScalarConst("eps", 1e-7f);
  std::vector<std::string> inputs;
  const std::string op = c.op;
  if (op == "ApplyGradientDescent") {
    inputs = {"s0", "lr", "grad"};
  } else if (op == "ApplyMomentum") {
    inputs = {"s0", "s1", "lr", "grad", "momentum"};
  } else {
    inputs = {"s0", "s1", "s2", "b1p", "b2p", "lr", "beta1", "beta2", "eps", "grad"};
  }
  std::string rest;
  for (const std::string& in : inputs) absl::StrAppend(&rest, "input: '", in, "' ");
  t += Node("apply", resource ? "Resource" + op : op,
            absl::StrCat(rest, FloatAttr("T"), " ", c.attrs));
  for (char& ch : t) {
    if (ch == '\'') ch = '"';
  }
  return t;
}

Tensor Vector(const float* values) {
  return Tensor::FromVector<float>(std::vector<float>(values, values + kN));
}

TEST(TrainingOpsTest, TwoStepsGiveTensorFlowsValuesBitForBit) {
  const float* init[] = {kVar, kAcc1, kAcc2};
  const float beta1 = 0.9f, beta2 = 0.999f;
  const float powers[2][2] = {{beta1, beta2}, {beta1 * beta1, beta2 * beta2}};
  for (const Case& c : Cases()) {
    for (bool resource : {false, true}) {
      SCOPED_TRACE(absl::StrCat(c.name, resource ? " (resource)" : " (ref)"));
      absl::StatusOr<GraphDef> graph = ParseGraphDef(Graph(c, resource), GraphFormat::kText);
      ASSERT_TRUE(graph.ok()) << graph.status();
      auto session = Session::Create(*graph);
      ASSERT_TRUE(session.ok()) << session.status();
      std::vector<std::pair<std::string, Tensor>> feeds;
      std::vector<std::string> inits, reads;
      for (int k = 0; k < c.slots; ++k) {
        feeds.push_back({absl::StrCat("x", k), Vector(init[k])});
        inits.push_back(absl::StrCat("init", k));
        reads.push_back(absl::StrCat("read", k));
      }
      std::vector<Tensor> out;
      ASSERT_TRUE((*session)->Run(feeds, {}, inits, &out).ok());
      const float* grads[] = {kGrad0, kGrad1};
      for (int step = 0; step < 2; ++step) {
        const absl::Status s = (*session)->Run(
            {{"grad", Vector(grads[step])},
             {"b1p", Tensor::Scalar<float>(powers[step][0])},
             {"b2p", Tensor::Scalar<float>(powers[step][1])}},
            {}, {"apply"}, &out);
        ASSERT_TRUE(s.ok()) << s;
      }
      ASSERT_TRUE((*session)->Run({}, reads, {}, &out).ok());
      for (int k = 0; k < c.slots; ++k) {
        ASSERT_EQ(out[k].NumElements(), kN);
        for (int i = 0; i < kN; ++i) {
          uint32_t got, want;
          std::memcpy(&got, &out[k].flat<float>()[i], 4);
          std::memcpy(&want, &c.want[k][i], 4);
          EXPECT_EQ(got, want) << "slot " << k << " element " << i << ": "
                               << out[k].flat<float>()[i] << " vs " << c.want[k][i];
        }
      }
    }
  }
}

TEST(TrainingOpsTest, UpdatesRefuseUninitializedVariablesAndOtherShapes) {
  const Case c = Cases()[3];  // Adam
  for (bool resource : {false, true}) {
    absl::StatusOr<GraphDef> graph = ParseGraphDef(Graph(c, resource), GraphFormat::kText);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto session = Session::Create(*graph);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    const std::vector<std::pair<std::string, Tensor>> step = {
        {"grad", Vector(kGrad0)},
        {"b1p", Tensor::Scalar<float>(0.9f)},
        {"b2p", Tensor::Scalar<float>(0.999f)}};
    absl::Status s = (*session)->Run(step, {}, {"apply"}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("s0"), std::string::npos) << s;
    ASSERT_TRUE((*session)
                    ->Run({{"x0", Vector(kVar)}, {"x1", Vector(kAcc1)}, {"x2", Vector(kAcc2)}},
                          {}, {"init0", "init1", "init2"}, &out)
                    .ok());
    s = (*session)->Run({{"grad", Tensor::FromVector<float>({1, 2})}, step[1], step[2]}, {},
                        {"apply"}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("grad"), std::string::npos) << s;
    // The refused update changed nothing.
    ASSERT_TRUE((*session)->Run({}, {"read0"}, {}, &out).ok());
    EXPECT_EQ(std::memcmp(out[0].raw_data(), kVar, sizeof(float) * kN), 0);
  }
}

// With check_numerics, the first node that outputs NaN or an infinity
// fails the step, named; without it the step runs.
TEST(TrainingOpsTest, CheckNumericsNamesTheNode) {
  const std::string text =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'log' op: 'Log' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'out' op: 'Neg' input: 'log' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  std::string quoted = text;
  for (char& ch : quoted) {
    if (ch == '\'') ch = '"';
  }
  absl::StatusOr<GraphDef> graph = ParseGraphDef(quoted, GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.check_numerics = true;
  options.optimize = SessionOptions::Optimize::kNone;
  auto checked = Session::Create(*graph, options);
  ASSERT_TRUE(checked.ok()) << checked.status();
  std::vector<Tensor> out;
  ASSERT_TRUE((*checked)->Run({{"x", Tensor::FromVector<float>({1, 2})}}, {"out"}, {}, &out).ok());
  for (float bad : {0.0f, -1.0f}) {
    const absl::Status s =
        (*checked)->Run({{"x", Tensor::FromVector<float>({1, bad})}}, {"out"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("'log'"), std::string::npos) << s;
    EXPECT_NE(s.message().find(bad == 0 ? "infinity" : "NaN"), std::string::npos) << s;
  }
  options.check_numerics = false;
  auto unchecked = Session::Create(*graph, options);
  ASSERT_TRUE(unchecked.ok());
  EXPECT_TRUE((*unchecked)->Run({{"x", Tensor::FromVector<float>({0})}}, {"out"}, {}, &out).ok());
}

}  // namespace
}  // namespace graphrun
