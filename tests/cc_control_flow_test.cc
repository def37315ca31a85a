// WhileLoop and Cond from the C++ API build graphs that run: a loop summing
// 0..n-1 with a cond inside, nested loops, and a cond at the top level.
// Expected values are computed here with plain C++ loops.
#include "gtest/gtest.h"
#include "graph/cc/cc.h"
#include "graph/cc/control_flow.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

using cc::Output;
using cc::Scope;

std::vector<Tensor> RunDef(const GraphDef& def, const std::vector<std::pair<std::string, Tensor>>& feeds,
                           const std::vector<std::string>& fetches) {
  auto session = Session::Create(def);
  EXPECT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(feeds, fetches, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

cc::WhileLoopOptions FourAtATime() {
  cc::WhileLoopOptions options;
  options.parallel_iterations = 4;
  return options;
}

// i, acc = 0, 0; while i < n: acc += (i < 3 ? i : 10 * i); i += 1
TEST(CcControlFlowTest, LoopWithACondInside) {
  Scope root = Scope::NewRootScope();
  Output n = cc::Placeholder(root.WithOpName("n"), DT_INT32);
  std::vector<Output> out = cc::WhileLoop(
      root, {cc::Const(root, 0), cc::Const(root, 0)},
      [&](const Scope& s, const std::vector<Output>& v) {
        return cc::Less(s, v[0], cc::LoopInvariant(s, n));
      },
      [&](const Scope& s, const std::vector<Output>& v) {
        std::vector<Output> add = cc::Cond(
            s, cc::Less(s, v[0], cc::Const(s, 3)),
            [&](const Scope& b) { return std::vector<Output>{cc::Identity(b, v[0])}; },
            [&](const Scope& b) { return std::vector<Output>{cc::Mul(b, v[0], cc::Const(b, 10))}; });
        return std::vector<Output>{cc::AddV2(s, v[0], cc::Const(s, 1)), cc::AddV2(s, v[1], add[0])};
      },
      FourAtATime());
  ASSERT_EQ(out.size(), 2u) << root.status();
  auto def = root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  for (int limit : {0, 2, 7}) {
    std::vector<Tensor> got = RunDef(*def, {{"n", Tensor::Scalar<int32_t>(limit)}},
                                     {out[0].name(), out[1].name()});
    ASSERT_EQ(got.size(), 2u);
    int want = 0;
    for (int i = 0; i < limit; ++i) want += i < 3 ? i : 10 * i;
    EXPECT_EQ(got[0].scalar<int32_t>(), limit);
    EXPECT_EQ(got[1].scalar<int32_t>(), want) << limit;
  }
}

// for j < 4: for k < j: c += 1  ->  c = 6
TEST(CcControlFlowTest, NestedLoops) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> out = cc::WhileLoop(
      root, {cc::Const(root, 0), cc::Const(root, 0)},
      [](const Scope& s, const std::vector<Output>& v) { return cc::Less(s, v[0], cc::Const(s, 4)); },
      [](const Scope& s, const std::vector<Output>& v) {
        std::vector<Output> inner = cc::WhileLoop(
            s, {cc::Const(s, 0), v[1]},
            [&](const Scope& t, const std::vector<Output>& w) {
              return cc::Less(t, w[0], cc::LoopInvariant(t, v[0]));
            },
            [](const Scope& t, const std::vector<Output>& w) {
              return std::vector<Output>{cc::AddV2(t, w[0], cc::Const(t, 1)),
                                         cc::AddV2(t, w[1], cc::Const(t, 1))};
            });
        return std::vector<Output>{cc::AddV2(s, v[0], cc::Const(s, 1)), inner[1]};
      });
  ASSERT_EQ(out.size(), 2u) << root.status();
  auto def = root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  std::vector<Tensor> got = RunDef(*def, {}, {out[1].name()});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].scalar<int32_t>(), 6);
}

TEST(CcControlFlowTest, CondPicksABranchAndMisuseIsAnError) {
  Scope root = Scope::NewRootScope();
  Output p = cc::Placeholder(root.WithOpName("p"), DT_BOOL);
  Output x = cc::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y = cc::Cond(
      root, p, [&](const Scope& s) { return std::vector<Output>{cc::Neg(s, x)}; },
      [&](const Scope& s) { return std::vector<Output>{cc::Mul(s, x, x)}; });
  ASSERT_EQ(y.size(), 1u) << root.status();
  auto def = root.ToGraphDef();
  ASSERT_TRUE(def.ok()) << def.status();
  for (bool pred : {true, false}) {
    std::vector<Tensor> got =
        RunDef(*def, {{"p", Tensor::Scalar<bool>(pred)}, {"x", Tensor::Scalar<float>(3.f)}},
               {y[0].name()});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].scalar<float>(), pred ? -3.f : 9.f);
  }
  Scope bad = Scope::NewRootScope();
  cc::LoopInvariant(bad, cc::Const(bad, 1));
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace graphrun
