// Expected values: TensorFlow 2.21, checked by make_einsum_op_test_values.py beside this file.
// Einsum against values from TensorFlow 2.21 (tf.einsum, equal to
// numpy.einsum in float64) for the equations of Keras' EinsumDense and
// MultiHeadAttention and the general forms (diagonals, sums, transposes,
// broadcast ellipses); bigger random inputs against a direct sum over every
// label assignment; and the errors, at the kernel and at import.
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AllClose;
using ::graphrun::testing::AttrS;
using ::graphrun::testing::ExpectTensorNear;
using ::graphrun::testing::FirstTestInput;
using ::graphrun::testing::MakeTensor;
using ::graphrun::testing::NumElementsOf;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::SecondTestInput;
using ::testing::HasSubstr;

struct Case {
  std::string equation;
  int num_inputs;
  std::vector<int64_t> a, b, out;
  std::vector<double> expected;
};

const std::vector<Case>& Cases() {
  static const auto* const cases = new std::vector<Case>{
    {"abc,cd->abd", 2, {2, 3, 4}, {4, 5}, {2, 3, 5},
     {-1.8125, 0.125, 0.4375, -0.0625, 0.25, -1.8125, -0.0625, 0.875, -0.625, 0.3125, 2.3125, 0.4375, -1.4375, 1.5625, -0.3125, -1.8125, -0.4375, 1.75, -1.75, 0.4375, 2.3125, 0.0625, -0.5625, 0.4375, -0.1875, 1.625, -0.8125, -0.8125, -0.8125, -0.8125}},
    {"abc,cde->abde", 2, {2, 3, 4}, {4, 2, 3}, {2, 3, 2, 3},
     {1.625, 1.125, -2.625, 1.75, 1.25, -0.875, -3.125, 1.0625, 2.0, -2.75, 1.4375, -0.875, 1.75, -1.75, 0.4375, 1.0, -2.5, 0.5, -3.6875, 0.9375, 2.3125, -2.8125, 1.8125, -0.875, 1.1875, -1.875, 0.75, 0.9375, -2.125, 0.5, -0.8125, 0.8125, -0.8125, -0.8125, 0.8125, 3.25}},
    {"abcd,cde->abe", 2, {2, 3, 2, 2}, {2, 2, 3}, {2, 3, 3},
     {-0.5625, -0.25, -2.375, -0.8125, 0.125, 1.875, 1.0, -0.875, 1.3125, -1.3125, 0.875, 1.4375, 0.5, -0.125, 0.875, 1.625, 1.625, -2.4375}},
    {"aecd,abcd->acbe", 2, {2, 3, 2, 4}, {2, 5, 2, 4}, {2, 2, 5, 3},
     {1.5, 1.3125, 1.125, 1.5625, 0.9375, 1.0, 0.8125, -1.0625, -1.5625, 0.875, -1.4375, -1.6875, 0.9375, -1.8125, -1.8125, 1.5, 1.4375, 0.0, 1.6875, 1.875, 0.0, 1.875, 2.3125, 0.0, -0.375, -0.5, -4.0625, -0.1875, -0.0625, -4.0625, -1.6875, -1.4375, 0.875, -1.5625, -1.0625, 0.8125, 1.0, 0.9375, 1.5625, 1.125, 1.3125, 1.5, 1.25, 1.6875, 1.4375, 2.3125, 1.875, 1.4375, 1.875, 1.6875, 1.5, 1.4375, 1.5, 1.5625, 1.8125, 1.3125, 0.8125, 1.375, 1.125, 0.875}},
    {"acbe,aecd->abcd", 2, {2, 2, 5, 3}, {2, 3, 2, 4}, {2, 5, 2, 4},
     {-0.8125, 0.4375, 0.875, -0.3125, -0.5, -0.5, -0.5, -0.5, -0.0625, 0.25, 0.5625, 0.0625, -1.0625, 0.4375, -0.5, -1.4375, 0.6875, 0.0625, 0.25, 0.4375, 1.125, -1.375, 0.1875, 1.75, 1.4375, -0.125, -0.0625, 0.8125, 0.5625, -0.4375, 0.1875, 0.8125, -1.25, -0.3125, 3.0625, -0.875, 0.0, 0.5, 0.1875, -0.125, 0.4375, -0.8125, 1.1875, -0.0625, 3.0625, -0.875, 0.0625, -1.4375, -0.0625, 1.1875, -0.8125, 0.4375, 2.75, -0.5, -0.5, -0.5, 0.125, 0.4375, -0.0625, 0.25, 2.4375, -0.125, -1.0625, 0.4375, 0.3125, -0.3125, 0.6875, 0.0625, -2.0, -0.4375, 1.125, -1.375, 0.5, -1.0625, 1.4375, -0.125, -2.3125, -0.0625, 0.5625, -0.4375}},
    {"ab,bc->ac", 2, {3, 4}, {4, 2}, {3, 2},
     {2.5, -2.0625, -1.9375, 2.25, -0.875, -0.3125}},
    {"...ij,...jk->...ik", 2, {2, 1, 2, 3}, {3, 3, 2}, {2, 3, 2, 2},
     {2.3125, -1.3125, 2.1875, -0.75, -0.75, -0.3125, -0.8125, -0.5, -0.5625, 2.3125, -0.5625, 2.1875, 2.0625, -0.1875, 1.9375, 0.375, -0.875, -0.6875, -0.9375, -0.875, -0.5625, 2.0625, -0.5625, 1.9375}},
    {"...ij,jk->...ik", 2, {2, 3, 2, 3}, {3, 2}, {2, 3, 2, 2},
     {2.3125, -1.3125, 2.1875, -0.75, 2.0625, -0.1875, 1.9375, 0.375, -1.625, 0.9375, -1.75, 1.5, -1.875, 2.0625, -0.625, -1.5, -0.75, -0.9375, -0.875, -0.375, -1.0, 0.1875, 2.3125, -1.3125}},
    {"bij,bjk->bik", 2, {2, 2, 3}, {2, 3, 2}, {2, 2, 2},
     {2.3125, -1.3125, 2.1875, -0.75, -0.875, -0.6875, -0.9375, -0.875}},
    {"ab,cd->abcd", 2, {2, 3}, {2, 2}, {2, 3, 2, 2},
     {0.625, 0.0, -0.625, 0.375, -1.5625, 0.0, 1.5625, -0.9375, -0.3125, 0.0, 0.3125, -0.1875, 0.9375, 0.0, -0.9375, 0.5625, -1.25, 0.0, 1.25, -0.75, 0.0, 0.0, 0.0, 0.0}},
    {"ab,b->a", 2, {3, 4}, {4}, {3},
     {1.5, -3.0625, 1.3125}},
    {"ab,ab->", 2, {2, 3}, {2, 3}, {},
     {2.0}},
    {"ab,ab->ab", 2, {2, 3}, {2, 3}, {2, 3},
     {0.625, 0.0, 0.3125, 0.5625, 0.5, 0.0}},
    {"abc,bd->ad", 2, {2, 3, 4}, {3, 2}, {2, 2},
     {-0.125, 1.6875, -2.8125, 0.375}},
    {"bii,bi->b", 2, {2, 3, 3}, {2, 3}, {2},
     {0.3125, 2.5625}},
    {"ij->ji", 1, {2, 3}, {}, {3, 2},
     {-0.5, -0.75, 1.25, 1.0, 0.25, 0.0}},
    {"ij->i", 1, {2, 3}, {}, {2},
     {1.0, 0.25}},
    {"ii->i", 1, {3, 3}, {}, {3},
     {-0.5, 1.0, -0.25}},
    {"ii->", 1, {3, 3}, {}, {},
     {0.25}},
    {"iij->j", 1, {2, 2, 3}, {}, {3},
     {-1.75, 1.75, -0.25}},
    {"abc->cba", 1, {2, 3, 4}, {}, {4, 3, 2},
     {-0.5, 1.25, 1.0, 0.0, -0.25, -1.25, 1.25, 0.25, 0.0, -1.0, -1.25, 0.5, 0.25, -0.75, -1.0, 0.75, 0.5, -0.5, -0.75, 1.0, 0.75, -0.25, -0.5, 1.25}},
    {"...ij->...ji", 1, {2, 2, 3}, {}, {2, 3, 2},
     {-0.5, -0.75, 1.25, 1.0, 0.25, 0.0, -1.0, -1.25, 0.75, 0.5, -0.25, -0.5}},
    {"ij->", 1, {2, 3}, {}, {},
     {1.25}},
    {"ab,bc->a", 2, {2, 3}, {3, 4}, {2},
     {0.125, 0.3125}},
    {"abc,cd->", 2, {2, 3, 4}, {4, 2}, {},
     {1.4375}},
    {"ab,cb->ac", 2, {2, 3}, {4, 3}, {2, 4},
     {0.9375, 0.625, 1.125, 1.625, 0.9375, 1.0625, 1.1875, 1.3125}},
    {"ba,bc->ac", 2, {3, 2}, {3, 4}, {2, 4},
     {-0.25, -0.125, 0.8125, 0.125, -1.9375, 1.125, 1.75, -1.6875}},
    {"ba,cb->ca", 2, {3, 2}, {4, 3}, {4, 2},
     {1.875, -1.5625, -1.0, -1.3125, -0.625, -1.0625, -0.25, -0.8125}},
    {"ij,ij->i", 2, {3, 4}, {3, 4}, {3},
     {1.5, 1.5, 0.9375}},
    {"a,b->ab", 2, {3}, {4}, {3, 4},
     {0.625, 0.0, -0.625, 0.375, -1.5625, 0.0, 1.5625, -0.9375, -0.3125, 0.0, 0.3125, -0.1875}},
    {"a,a->", 2, {5}, {5}, {},
     {2.0}},
    {"abc,bad->cdb", 2, {2, 3, 4}, {3, 2, 5}, {4, 5, 3},
     {-1.25, 1.5, -1.1875, -0.3125, -0.5, 1.8125, 0.625, 0.75, -0.0625, -0.875, -1.25, -1.9375, 0.0625, 0.0, 1.0625, -1.9375, -1.25, -0.875, -0.0625, 0.75, 0.625, 1.8125, -0.5, -0.3125, -1.1875, 1.5, -1.25, 0.6875, 0.25, 0.25, 0.8125, -0.5625, 0.125, 0.1875, -0.0625, 0.125, -0.4375, -0.375, 0.125, 0.5625, 0.125, 0.125, -0.0625, -0.1875, 0.125, -0.5625, 0.8125, 0.4375, -0.25, -0.1875, -1.0625, 0.0625, 0.4375, -0.125, -0.4375, -0.5625, 0.8125, -0.125, 0.0625, -0.6875}},
    {"...a,b...->...ab", 2, {2, 3}, {4, 2}, {2, 3, 4},
     {0.625, -0.625, -0.25, 0.125, -1.5625, 1.5625, 0.625, -0.3125, -0.3125, 0.3125, 0.125, -0.0625, 0.0, 0.5625, 1.125, -0.75, 0.0, -0.75, -1.5, 1.0, 0.0, 0.0, 0.0, 0.0}},
  };
  return *cases;
}

template <typename T>
void CheckCases(double tolerance) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.equation);
    std::vector<Tensor> inputs = {MakeTensor<T>(FirstTestInput(NumElementsOf(c.a)), c.a)};
    if (c.num_inputs == 2) {
      inputs.push_back(MakeTensor<T>(SecondTestInput(NumElementsOf(c.b)), c.b));
    }
    auto out = RunOp("Einsum", {{"equation", AttrS(c.equation)}}, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.shape(), *TensorShape::FromDims(c.out));
    ExpectTensorNear<T>(y, c.expected, tolerance);
  }
}

TEST(EinsumTest, MatchesTensorFlowFloat) { CheckCases<float>(1e-6); }
TEST(EinsumTest, MatchesTensorFlowDouble) { CheckCases<double>(1e-12); }
TEST(EinsumTest, MatchesTensorFlowHalf) { CheckCases<half>(1e-3); }
TEST(EinsumTest, MatchesTensorFlowBfloat16) { CheckCases<bfloat16>(2e-2); }

// Direct einsum for letter-only equations: every assignment of the labels.
std::vector<double> NaiveEinsum(const std::string& equation,
                                const std::vector<std::vector<int64_t>>& dims,
                                const std::vector<std::vector<double>>& data,
                                std::vector<int64_t>* out_dims) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> subs;
  std::string lhs = equation.substr(0, arrow);
  for (size_t p = 0;;) {
    const size_t comma = lhs.find(',', p);
    subs.push_back(lhs.substr(p, comma == std::string::npos ? comma : comma - p));
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < subs.size(); ++i) {
    for (size_t k = 0; k < subs[i].size(); ++k) size[subs[i][k]] = dims[i][k];
  }
  std::vector<char> labels;
  for (const auto& [l, n] : size) labels.push_back(l);
  out_dims->clear();
  for (char l : out) out_dims->push_back(size[l]);
  std::vector<double> result(NumElementsOf(*out_dims), 0.0);
  std::map<char, int64_t> at;
  for (char l : labels) at[l] = 0;
  while (true) {
    double prod = 1;
    for (size_t i = 0; i < subs.size(); ++i) {
      int64_t offset = 0;
      for (size_t k = 0; k < subs[i].size(); ++k) {
        offset = offset * dims[i][k] + at[subs[i][k]];
      }
      prod *= data[i][offset];
    }
    int64_t o = 0;
    for (char l : out) o = o * size[l] + at[l];
    result[o] += prod;
    int k = static_cast<int>(labels.size()) - 1;
    for (; k >= 0; --k) {
      if (++at[labels[k]] < size[labels[k]]) break;
      at[labels[k]] = 0;
    }
    if (k < 0) break;
  }
  return result;
}

TEST(EinsumTest, AttentionSizedInputsMatchDirectSum) {
  struct Big {
    std::string equation;
    std::vector<std::vector<int64_t>> dims;
  };
  const std::vector<Big> bigs = {
      {"abc,cde->abde", {{2, 48, 32}, {32, 4, 8}}},     // query projection
      {"aecd,abcd->acbe", {{2, 40, 4, 8}, {2, 48, 4, 8}}},  // scores
      {"acbe,aecd->abcd", {{2, 4, 48, 40}, {2, 40, 4, 8}}},  // context
      {"abcd,cde->abe", {{2, 48, 4, 8}, {4, 8, 32}}},   // output projection
      {"abc,cd->abd", {{3, 50, 40}, {40, 60}}},
      {"bij,bjk->bik", {{6, 20, 30}, {6, 30, 25}}},
      {"abc,abd->cd", {{4, 30, 20}, {4, 30, 10}}},
      {"ab->ba", {{300, 200}}},
      {"abc->b", {{40, 50, 30}}},
  };
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const Big& big : bigs) {
    SCOPED_TRACE(big.equation);
    std::vector<Tensor> inputs;
    std::vector<std::vector<double>> data;
    for (const auto& dims : big.dims) {
      std::vector<double> v(NumElementsOf(dims));
      for (double& x : v) x = dist(gen);
      for (double& x : v) x = static_cast<float>(x);  // the values fed
      data.push_back(v);
      inputs.push_back(MakeTensor<float>(v, dims));
    }
    std::vector<int64_t> out_dims;
    const std::vector<double> want =
        NaiveEinsum(big.equation, big.dims, data, &out_dims);
    auto out = RunOp("Einsum", {{"equation", AttrS(big.equation)}}, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), *TensorShape::FromDims(out_dims));
    std::string why;
    EXPECT_TRUE(AllClose((*out)[0], MakeTensor<float>(want, out_dims), 1e-4, 1e-4,
                         &why))
        << why;
  }
}

TEST(EinsumTest, OneKernelFollowsItsInputsShapesFromRunToRun) {
  // A node's kernel keeps the arrangement it chose for the last shapes: new
  // shapes (through the ellipsis, new ranks; a dim of 1 that an arrangement
  // could skip copying for) must choose again.
  struct Run {
    std::vector<std::vector<int64_t>> dims;
    std::string naive_equation;  // the same product, ellipsis spelled out
  };
  struct Group {
    std::string equation;
    std::vector<Run> runs;
  };
  const std::vector<Group> groups = {
      {"...ij,jk->...ik",
       {{{{2, 3, 4}, {4, 5}}, "aij,jk->aik"},
        {{{2, 3, 4}, {4, 5}}, "aij,jk->aik"},
        {{{7, 1}, {1, 9}}, "ij,jk->ik"},
        {{{2, 2, 3, 6}, {6, 2}}, "abij,jk->abik"},
        {{{2, 3, 4}, {4, 5}}, "aij,jk->aik"}}},
      {"ji,jk->ik",
       {{{{3, 1}, {3, 4}}, "ji,jk->ik"},
        {{{3, 5}, {3, 4}}, "ji,jk->ik"},
        {{{1, 5}, {1, 4}}, "ji,jk->ik"}}},
      {"bij,bkj->bki",
       {{{{1, 3, 4}, {1, 2, 4}}, "bij,bkj->bki"},
        {{{3, 1, 4}, {3, 2, 4}}, "bij,bkj->bki"},
        {{{3, 5, 4}, {3, 2, 4}}, "bij,bkj->bki"},
        {{{3, 5, 1}, {3, 2, 1}}, "bij,bkj->bki"}}},
  };
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const Group& group : groups) {
    SCOPED_TRACE(group.equation);
    std::vector<std::vector<Tensor>> steps;
    std::vector<std::vector<double>> wants;
    std::vector<std::vector<int64_t>> want_dims;
    for (const Run& run : group.runs) {
      std::vector<Tensor> inputs;
      std::vector<std::vector<double>> data;
      for (const auto& dims : run.dims) {
        std::vector<double> v(NumElementsOf(dims));
        for (double& x : v) x = static_cast<float>(dist(gen));
        data.push_back(v);
        inputs.push_back(MakeTensor<float>(v, dims));
      }
      std::vector<int64_t> out_dims;
      wants.push_back(NaiveEinsum(run.naive_equation, run.dims, data, &out_dims));
      want_dims.push_back(out_dims);
      steps.push_back(std::move(inputs));
    }
    auto out =
        ::graphrun::testing::RunOpSteps("Einsum", {{"equation", AttrS(group.equation)}}, steps);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), group.runs.size());
    for (size_t i = 0; i < group.runs.size(); ++i) {
      SCOPED_TRACE(i);
      ASSERT_EQ((*out)[i][0].shape(), *TensorShape::FromDims(want_dims[i]));
      std::string why;
      EXPECT_TRUE(AllClose((*out)[i][0], MakeTensor<float>(wants[i], want_dims[i]), 1e-5, 1e-5,
                           &why))
          << why;
    }
  }
}

TEST(EinsumTest, EmptyContractionGivesZeros) {
  auto out = RunOp("Einsum", {{"equation", AttrS("ab,bc->ac")}},
                   {MakeTensor<float>({}, {2, 0}), MakeTensor<float>({}, {0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({2, 3}));
  for (float v : (*out)[0].flat<float>()) EXPECT_EQ(v, 0.0f);
}

absl::Status RunStatus(const std::string& equation,
                       const std::vector<Tensor>& inputs) {
  return RunOp("Einsum", {{"equation", AttrS(equation)}}, inputs).status();
}

TEST(EinsumTest, BadEquationsAreInvalidArgument) {
  const Tensor m = MakeTensor<float>(FirstTestInput(6), {2, 3});
  const Tensor v = MakeTensor<float>(FirstTestInput(3), {3});
  struct Bad {
    std::string equation;
    std::vector<Tensor> inputs;
    std::string message;
  };
  const std::vector<Bad> bads = {
      {"ij,jk", {m, m}, "exactly one '->'"},
      {"ij->j->i", {m}, "exactly one '->'"},
      {"ij,jk,kl->il", {m, m, m}, "expecting 1 or 2 input subscripts"},
      {"i1->i", {v}, "labels must be letters"},
      {"i j->ji", {m}, "labels must be letters"},
      {"i..j->ij", {m}, "not part of an ellipsis"},
      {"...i...->i", {m}, "more than one ellipsis"},
      {"ij->k", {m}, "output label 'k' appears in no input"},
      {"i->ii", {v}, "output label 'i' is repeated"},
      {"ij,jk->ik", {m}, "the node has 1 inputs"},
      {"ijk->i", {m}, "expected input 0 to have rank 3 but got 2"},
      {"ij,jk->ik", {m, m}, "label 'j' is dimension 3"},
      {"ii->i", {m}, "label 'i' is dimension 2"},
      {"...ij->ij", {MakeTensor<float>(FirstTestInput(12), {2, 2, 3})}, "no ellipsis"},
      {"...i,...i->...i",
       {MakeTensor<float>(FirstTestInput(6), {2, 3}), MakeTensor<float>(FirstTestInput(9), {3, 3})},
       "do not broadcast"},
  };
  for (const Bad& bad : bads) {
    SCOPED_TRACE(bad.equation);
    const absl::Status s = RunStatus(bad.equation, bad.inputs);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(bad.message));
  }
}

std::string Placeholder(const std::string& name,
                        const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += " dim { size: " + std::to_string(d) + " }";
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' "
         "value { type: DT_FLOAT } } attr { key: 'shape' value { shape {" +
         shape + " } } } }";
}

absl::StatusOr<std::unique_ptr<Graph>> ImportEinsum(
    const std::string& equation, const std::vector<int64_t>& a,
    const std::vector<int64_t>& b) {
  const std::string text =
      Placeholder("a", a) + Placeholder("b", b) +
      "node { name: 'e' op: 'Einsum' input: 'a' input: 'b' attr { key: 'T' "
      "value { type: DT_FLOAT } } attr { key: 'N' value { i: 2 } } attr { "
      "key: 'equation' value { s: '" + equation + "' } } }";
  auto def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def);
}

TEST(EinsumImportTest, ShapeInference) {
  struct Want {
    std::string equation;
    std::vector<int64_t> a, b;
    std::string shape;
  };
  const std::vector<Want> wants = {
      {"abc,cd->abd", {-1, 3, 4}, {4, 5}, "[?,3,5]"},
      {"abc,cde->abde", {-1, -1, 16}, {16, 4, 8}, "[?,?,4,8]"},
      {"aecd,abcd->acbe", {2, 7, 4, 8}, {2, 9, 4, 8}, "[2,4,9,7]"},
      {"...ij,...jk->...ik", {5, 1, 2, 3}, {4, 3, 6}, "[5,4,2,6]"},
      {"...ij,...jk->...ik", {-1, 2, 3}, {4, 3, 6}, "[4,2,6]"},
      {"ab,b->", {3, 4}, {4}, "[]"},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.equation);
    auto g = ImportEinsum(w.equation, w.a, w.b);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ((*g)->FindNode("e")->output_shape(0).DebugString(), w.shape);
  }
}

TEST(EinsumImportTest, ErrorsNameTheNodeAndTheAttr) {
  auto g = ImportEinsum("ab,bc", {2, 3}, {3, 4});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'e'"));
  EXPECT_THAT(g.status().message(), HasSubstr("attr 'equation'"));
  g = ImportEinsum("ab,bc->aa", {2, 3}, {3, 4});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'e'"));
  EXPECT_THAT(g.status().message(), HasSubstr("attr 'equation'"));
  g = ImportEinsum("ab,bc->ac", {2, 3}, {4, 4});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'e'"));
  EXPECT_THAT(g.status().message(), HasSubstr("label 'b'"));
}

}  // namespace
}  // namespace graphrun
