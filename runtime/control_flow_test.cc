// v1 control flow through a Session: while loops (counting, carrying
// tensors, nested, with a cond inside), conds in the root frame,
// ControlTrigger, parallel_iterations, errors inside an iteration, loops
// that never end, and a million iterations in constant memory. Expected
// values are computed here by plain C++ loops.
#include <malloc.h>

#include <atomic>
#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "runtime/session.h"
#include "runtime/testing/loop_graphs.h"

namespace graphrun {
namespace {

// Fails on the value 3, to test errors inside an iteration.
REGISTER_OP("CfTestFailOn3").Input("x: int32").Output("y: int32").SetShapeFn(
    shape_fns::UnchangedShape);
class FailOn3 : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->input(0).scalar<int32_t>() != 3,
                absl::InvalidArgumentError("the value is 3"));
    ctx->set_output(0, ctx->input(0));
  }
};
REGISTER_KERNEL(KernelDefBuilder("CfTestFailOn3").Device(kDeviceCpu), FailOn3);

// Records the heap in use when it sees iteration 1,000 and 999,000.
std::atomic<int64_t> g_heap_early{-1};
std::atomic<int64_t> g_heap_late{-1};
REGISTER_OP("CfTestHeapProbe").Input("x: int32").Output("y: int32").SetShapeFn(
    shape_fns::UnchangedShape);
class HeapProbe : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int32_t i = ctx->input(0).scalar<int32_t>();
    if (i == 1000) g_heap_early = static_cast<int64_t>(mallinfo2().uordblks);
    if (i == 999000) g_heap_late = static_cast<int64_t>(mallinfo2().uordblks);
    ctx->set_output(0, ctx->input(0));
  }
};
REGISTER_KERNEL(KernelDefBuilder("CfTestHeapProbe").Device(kDeviceCpu), HeapProbe);

using testing::CountingLoop;
using testing::Enter;
using testing::IntConst;
using testing::Op;
using testing::Placeholder;

absl::StatusOr<std::vector<Tensor>> RunGraph(const std::string& text,
                                             const std::vector<std::pair<std::string, Tensor>>& feeds,
                                             const std::vector<std::string>& fetches,
                                             const SessionOptions& options = {},
                                             const RunOptions& run_options = {}) {
  auto def = testing::LoopGraphDef(text);
  if (!def.ok()) return def.status();
  auto session = Session::Create(*def, options);
  if (!session.ok()) return session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(run_options, feeds, fetches, {}, &out, nullptr);
  if (!s.ok()) return s;
  return out;
}

class CountingLoopTest : public ::testing::TestWithParam<int> {};

TEST_P(CountingLoopTest, CountsToN) {
  const std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                        CountingLoop("L", "zero", "n", GetParam());
  for (int n : {0, 1, 7, 100}) {
    auto out = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(n)}}, {"L/exit_i"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), n);
  }
}

INSTANTIATE_TEST_SUITE_P(ParallelIterations, CountingLoopTest, ::testing::Values(1, 2, 32));

// acc = acc * 0.5 + x each iteration, x a loop invariant vector; the loop
// count and the accumulator leave through two Exits.
TEST(ControlFlowTest, LoopCarriesTensorsWithInvariants) {
  std::string g = Placeholder("n", "DT_INT32") + Placeholder("x", "DT_FLOAT") +
                  Placeholder("acc0", "DT_FLOAT") + IntConst("zero", 0) +
                  CountingLoop("L", "zero", "n", 32);
  g += Enter("L/enter_acc", "acc0", "L", "DT_FLOAT", false, 32);
  g += Enter("L/enter_x", "x", "L", "DT_FLOAT", true, 32);
  g += Op("L/merge_acc", "Merge", {"L/enter_acc", "L/next_acc"}, "DT_FLOAT");
  g += Op("L/switch_acc", "Switch", {"L/merge_acc", "L/cond"}, "DT_FLOAT");
  g += Op("L/id_acc", "Identity", {"L/switch_acc:1"}, "DT_FLOAT");
  g += absl::StrCat("node { name: 'L/half' op: 'Const' input: '^L/id_acc' attr { key: 'dtype' "
                    "value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: "
                    "DT_FLOAT tensor_shape {} float_val: 0.5 } } } }\n");
  g += Op("L/mul", "Mul", {"L/id_acc", "L/half"}, "DT_FLOAT");
  g += Op("L/add_acc", "AddV2", {"L/mul", "L/enter_x"}, "DT_FLOAT");
  g += Op("L/next_acc", "NextIteration", {"L/add_acc"}, "DT_FLOAT");
  g += Op("L/exit_acc", "Exit", {"L/switch_acc"}, "DT_FLOAT");
  const std::vector<float> x = {1.0f, -2.0f, 0.25f};
  const std::vector<float> acc0 = {4.0f, 0.0f, 8.0f};
  for (int n : {0, 3, 20}) {
    auto out = RunGraph(g,
                        {{"n", Tensor::Scalar<int32_t>(n)},
                         {"x", Tensor::FromVector<float>(x)},
                         {"acc0", Tensor::FromVector<float>(acc0)}},
                        {"L/exit_i", "L/exit_acc"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), n);
    std::vector<float> want = acc0;
    for (int k = 0; k < n; ++k) {
      for (size_t j = 0; j < want.size(); ++j) want[j] = want[j] * 0.5f + x[j];
    }
    ASSERT_EQ((*out)[1].NumElements(), 3);
    for (int j = 0; j < 3; ++j) EXPECT_FLOAT_EQ((*out)[1].flat<float>()[j], want[j]) << n;
  }
}

// for j in 0..n-1: for k in 0..j-1: c += 1  ->  c = n(n-1)/2.
TEST(ControlFlowTest, NestedLoops) {
  for (int parallel : {1, 10}) {
    std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                    CountingLoop("O", "zero", "n", parallel);
    g += IntConst("c0", 0);
    g += Enter("O/enter_c", "c0", "O", "DT_INT32", false, parallel);
    g += Op("O/merge_c", "Merge", {"O/enter_c", "O/next_c"});
    g += Op("O/switch_c", "Switch", {"O/merge_c", "O/cond"});
    g += Op("O/id_c", "Identity", {"O/switch_c:1"});
    // Inner loop over k < j, carrying c.
    g += IntConst("O/k0", 0, "O/id_i");
    g += CountingLoop("O/I", "O/k0", "O/id_i", parallel);
    g += Enter("O/I/enter_c", "O/id_c", "O/I", "DT_INT32", false, parallel);
    g += Op("O/I/merge_c", "Merge", {"O/I/enter_c", "O/I/next_c"});
    g += Op("O/I/switch_c", "Switch", {"O/I/merge_c", "O/I/cond"});
    g += Op("O/I/id_c", "Identity", {"O/I/switch_c:1"});
    g += Op("O/I/add_c", "AddV2", {"O/I/id_c", "O/I/one"});
    g += Op("O/I/next_c", "NextIteration", {"O/I/add_c"});
    g += Op("O/I/exit_c", "Exit", {"O/I/switch_c"});
    g += Op("O/next_c", "NextIteration", {"O/I/exit_c"});
    g += Op("O/exit_c", "Exit", {"O/switch_c"});
    for (int n : {0, 1, 4, 12}) {
      auto out = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(n)}}, {"O/exit_i", "O/exit_c"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].scalar<int32_t>(), n);
      EXPECT_EQ((*out)[1].scalar<int32_t>(), n * (n - 1) / 2) << "n=" << n;
    }
  }
}

// for i in 0..n-1: acc += i < 3 ? i : 10 * i.
TEST(ControlFlowTest, CondInsideLoop) {
  std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                  CountingLoop("L", "zero", "n", 10);
  g += IntConst("acc0", 0);
  g += Enter("L/enter_acc", "acc0", "L", "DT_INT32", false);
  g += Op("L/merge_acc", "Merge", {"L/enter_acc", "L/next_acc"});
  g += Op("L/switch_acc", "Switch", {"L/merge_acc", "L/cond"});
  g += Op("L/id_acc", "Identity", {"L/switch_acc:1"});
  g += IntConst("L/three", 3, "L/id_i");
  g += Op("L/pred", "Less", {"L/id_i", "L/three"});
  g += Op("L/c/switch", "Switch", {"L/id_i", "L/pred"});
  g += Op("L/c/t", "Identity", {"L/c/switch:1"});
  g += Op("L/c/f", "Identity", {"L/c/switch:0"});
  g += IntConst("L/c/ten", 10, "L/c/f");
  g += Op("L/c/f10", "Mul", {"L/c/f", "L/c/ten"});
  g += Op("L/c/merge", "Merge", {"L/c/t", "L/c/f10"});
  g += Op("L/add_acc", "AddV2", {"L/id_acc", "L/c/merge"});
  g += Op("L/next_acc", "NextIteration", {"L/add_acc"});
  g += Op("L/exit_acc", "Exit", {"L/switch_acc"});
  for (int n : {0, 2, 6, 50}) {
    auto out = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(n)}}, {"L/exit_acc"});
    ASSERT_TRUE(out.ok()) << out.status();
    int want = 0;
    for (int i = 0; i < n; ++i) want += i < 3 ? i : 10 * i;
    EXPECT_EQ((*out)[0].scalar<int32_t>(), want) << n;
  }
}

// A cond in the root frame: Merge forwards the taken branch and its index;
// a ControlTrigger runs even though one of its inputs is dead; a node fed
// only by the untaken branch is dead, so fetching it is an error.
TEST(ControlFlowTest, CondInRootFrame) {
  std::string g = Placeholder("pred", "DT_BOOL") + Placeholder("x", "DT_INT32");
  g += Op("sw", "Switch", {"x", "pred"});
  g += Op("t", "Identity", {"sw:1"});
  g += Op("f", "Identity", {"sw:0"});
  g += IntConst("hundred", 100, "f");
  g += Op("f100", "Mul", {"f", "hundred"});
  g += Op("m", "Merge", {"f100", "t"});
  g += "node { name: 'trigger' op: 'ControlTrigger' input: '^t' input: '^f' }\n";
  g += IntConst("after_trigger", 5, "trigger");
  for (bool pred : {true, false}) {
    auto out = RunGraph(g, {{"pred", Tensor::Scalar<bool>(pred)}, {"x", Tensor::Scalar<int32_t>(7)}},
                        {"m:0", "m:1", "after_trigger"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), pred ? 7 : 700);
    EXPECT_EQ((*out)[1].scalar<int32_t>(), pred ? 1 : 0);
    EXPECT_EQ((*out)[2].scalar<int32_t>(), 5);
  }
  auto dead = RunGraph(g, {{"pred", Tensor::Scalar<bool>(true)}, {"x", Tensor::Scalar<int32_t>(7)}},
                       {"f100"});
  ASSERT_FALSE(dead.ok());
  EXPECT_TRUE(absl::StrContains(dead.status().message(), "f100")) << dead.status();
}

TEST(ControlFlowTest, ErrorInsideAnIterationNamesFrameAndIteration) {
  const std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                        CountingLoop("L", "zero", "n", 4, "CfTestFailOn3");
  auto ok = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(3)}}, {"L/exit_i"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto out = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(10)}}, {"L/exit_i"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "node 'L/body' (CfTestFailOn3) on "
                                "/job:localhost/replica:0/task:0/device:CPU:0 in frame 'L' "
                                "iteration 3: the value is 3"))
      << out.status();
}

// A loop whose condition never turns false is ended by the step timeout,
// and the session runs the next step normally.
TEST(ControlFlowTest, EndlessLoopEndsAtTimeout) {
  const std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                        CountingLoop("L", "zero", "n", 10);
  auto def = testing::LoopGraphDef(g);
  ASSERT_TRUE(def.ok());
  auto session = Session::Create(*def);
  ASSERT_TRUE(session.ok());
  RunOptions timeout;
  timeout.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  // i < INT_MAX with i += 1 runs for billions of iterations.
  absl::Status s = (*session)->Run(timeout, {{"n", Tensor::Scalar<int32_t>(2147483647)}},
                                   {"L/exit_i"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  ASSERT_TRUE((*session)->Run({{"n", Tensor::Scalar<int32_t>(5)}}, {"L/exit_i"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
}

// Iterations are freed as they finish: the heap in use at iteration 999,000
// is within 1 MB of that at iteration 1,000.
TEST(ControlFlowTest, MillionIterationsInConstantMemory) {
  const std::string g = Placeholder("n", "DT_INT32") + IntConst("zero", 0) +
                        CountingLoop("L", "zero", "n", 32, "CfTestHeapProbe");
  auto out = RunGraph(g, {{"n", Tensor::Scalar<int32_t>(1000000)}}, {"L/exit_i"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 1000000);
  ASSERT_GE(g_heap_early.load(), 0);
  ASSERT_GE(g_heap_late.load(), 0);
  EXPECT_LT(g_heap_late.load() - g_heap_early.load(), 1 << 20)
      << "early " << g_heap_early.load() << " late " << g_heap_late.load();
}

}  // namespace
}  // namespace graphrun
