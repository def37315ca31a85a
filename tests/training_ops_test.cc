// The optimizer updates against TensorFlow: two steps of every update op
// (SGD, momentum and Keras's momentum, Adam, AMSGrad, AdaMax, Adagrad,
// Adadelta, RMSProp and centered RMSProp, with their Nesterov and sparse
// forms), in the ref form (VariableV2 + Apply*) and the resource form
// (VarHandleOp + ResourceApply*), give TensorFlow's variables and
// accumulators (fixtures/training/apply_ops_data.h, written by
// TensorFlow): bit for bit, except where TensorFlow's vectorized
// reciprocal square root is an approximation (a few ulps there).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/apply_case_graph.h"
#include "tests/fixtures/training/apply_ops_data.h"

namespace graphrun {
namespace {

using namespace apply_ops_data;  // NOLINT: the fixture's arrays
using apply_case_graph::ApplyGraph;
using apply_case_graph::Sparse;

int64_t Elements(const ApplyCase& c) { return Sparse(c) ? kRows * kCols : kN; }

// Differences in ulps TensorFlow's approximate reciprocal square root
// leaves (Adagrad's and Adadelta's rsqrt, the sparse RMSProps' rsqrt).
int MaxUlps(const ApplyCase& c) {
  const std::string name = c.name;
  for (const char* approximate : {"adagrad", "adadelta", "sparse_rmsprop",
                                  "sparse_centered_rmsprop"}) {
    if (name == approximate) return 4;
  }
  if (name == "adagrad_no_slots" || name == "sparse_adagrad") return 4;
  return 0;
}

Tensor Values(const ApplyCase& c, const float* values) {
  std::vector<float> v(values, values + Elements(c));
  Tensor t = Tensor::FromVector<float>(v);
  return Sparse(c) ? *t.Reshaped(TensorShape({kRows, kCols})) : t;
}

Tensor Gradient(const ApplyCase& c, int step) {
  if (!Sparse(c)) return Tensor::FromVector<float>(
      std::vector<float>(step == 0 ? kGrad0 : kGrad1, (step == 0 ? kGrad0 : kGrad1) + kN));
  const float* g = step == 0 ? kSparseGrad0 : kSparseGrad1;
  const int rows = static_cast<int>(std::size(kIndices));
  return *Tensor::FromVector<float>(std::vector<float>(g, g + rows * kCols))
              .Reshaped(TensorShape({rows, kCols}));
}

int64_t UlpsApart(float a, float b) {
  int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  if (x < 0) x = INT32_MIN - x;
  if (y < 0) y = INT32_MIN - y;
  return std::llabs(static_cast<int64_t>(x) - y);
}

TEST(TrainingOpsTest, TwoStepsGiveTensorFlowsValues) {
  const float powers[2][2] = {{kBeta1, kBeta2}, {kBeta1 * kBeta1, kBeta2 * kBeta2}};
  for (const ApplyCase& c : Cases()) {
    for (bool resource : {false, true}) {
      if (c.resource_only && !resource) continue;
      SCOPED_TRACE(absl::StrCat(c.name, resource ? " (resource)" : " (ref)"));
      absl::StatusOr<GraphDef> graph = ParseGraphDef(ApplyGraph(c, resource), GraphFormat::kText);
      ASSERT_TRUE(graph.ok()) << graph.status();
      auto session = Session::Create(*graph);
      ASSERT_TRUE(session.ok()) << session.status();
      std::vector<std::pair<std::string, Tensor>> feeds;
      std::vector<std::string> inits, reads;
      for (size_t k = 0; k < c.init.size(); ++k) {
        feeds.push_back({absl::StrCat("x", k), Values(c, c.init[k])});
        inits.push_back(absl::StrCat("init", k));
        reads.push_back(absl::StrCat("read", k));
      }
      std::vector<Tensor> out;
      ASSERT_TRUE((*session)->Run(feeds, {}, inits, &out).ok());
      for (int step = 0; step < 2; ++step) {
        const absl::Status s = (*session)->Run(
            {{"grad", Gradient(c, step)},
             {"b1p", Tensor::Scalar<float>(powers[step][0])},
             {"b2p", Tensor::Scalar<float>(powers[step][1])}},
            {}, {"apply"}, &out);
        ASSERT_TRUE(s.ok()) << s;
      }
      ASSERT_TRUE((*session)->Run({}, reads, {}, &out).ok());
      const int max_ulps = MaxUlps(c);
      for (size_t k = 0; k < c.init.size(); ++k) {
        ASSERT_EQ(out[k].NumElements(), Elements(c));
        for (int64_t i = 0; i < Elements(c); ++i) {
          const float got = out[k].flat<float>()[i], want = c.want[k][i];
          EXPECT_LE(UlpsApart(got, want), max_ulps)
              << "slot " << k << " element " << i << ": " << absl::StrFormat("%.9g", got)
              << " vs TensorFlow's " << absl::StrFormat("%.9g", want);
        }
      }
    }
  }
}

TEST(TrainingOpsTest, UpdatesRefuseUninitializedVariablesAndOtherShapes) {
  const ApplyCase c = Cases()[5];  // Adam
  ASSERT_STREQ(c.name, "adam");
  for (bool resource : {false, true}) {
    absl::StatusOr<GraphDef> graph = ParseGraphDef(ApplyGraph(c, resource), GraphFormat::kText);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto session = Session::Create(*graph);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    const std::vector<std::pair<std::string, Tensor>> step = {
        {"grad", Values(c, kGrad0)},
        {"b1p", Tensor::Scalar<float>(0.9f)},
        {"b2p", Tensor::Scalar<float>(0.999f)}};
    absl::Status s = (*session)->Run(step, {}, {"apply"}, &out);
    // TensorFlow's codes: an uninitialized value, an invalid reference.
    EXPECT_EQ(s.code(), resource ? absl::StatusCode::kInternal
                                 : absl::StatusCode::kFailedPrecondition)
        << s;
    EXPECT_NE(s.message().find("s0"), std::string::npos) << s;
    ASSERT_TRUE((*session)
                    ->Run({{"x0", Values(c, kVar)}, {"x1", Values(c, kAcc1)}, {"x2", Values(c, kAcc2)}},
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

// A sparse update whose index is past the variable's rows is refused
// naming the index, and changes no row.
TEST(TrainingOpsTest, SparseUpdateRefusesIndexOutOfRange) {
  ApplyCase c;
  for (const ApplyCase& k : Cases()) {
    if (std::string(k.name) == "sparse_adagrad") c = k;
  }
  ASSERT_STREQ(c.name, "sparse_adagrad");
  for (bool resource : {false, true}) {
    std::string text = ApplyGraph(c, resource);
    const size_t at = text.find("int_val: 4 ");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 11, "int_val: 9 ");
    absl::StatusOr<GraphDef> graph = ParseGraphDef(text, GraphFormat::kText);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto session = Session::Create(*graph);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)
                    ->Run({{"x0", Values(c, kVar)}, {"x1", Values(c, kAcc2)}}, {},
                          {"init0", "init1"}, &out)
                    .ok());
    const absl::Status s = (*session)->Run({{"grad", Gradient(c, 0)}}, {}, {"apply"}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("Index 9 at offset 0 in indices is out of range"),
              std::string::npos)
        << s;
    ASSERT_TRUE((*session)->Run({}, {"read0"}, {}, &out).ok());
    EXPECT_EQ(std::memcmp(out[0].raw_data(), kVar, sizeof(float) * kRows * kCols), 0);
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
