// How a step's work is spread over threads: the partitions of a step start
// together (their expensive nodes overlap), and a long chain of
// cross-device hops does not nest on one thread's stack.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// Two expensive nodes that can only both finish if they run at the same
// time: each says it has started and waits (up to 60 s) for the other.
absl::Notification* g_started[2];
REGISTER_OP("SchedTestMeet").Output("y: int32").Attr("me: int").SetIsStateful().SetShapeFn(
    shape_fns::ScalarShape);
class Meet : public OpKernel {
 public:
  explicit Meet(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("me", &me_)); }
  void Compute(OpKernelContext* ctx) override {
    g_started[me_]->Notify();
    OP_REQUIRES(ctx, g_started[1 - me_]->WaitForNotificationWithTimeout(absl::Seconds(60)),
                absl::DeadlineExceededError("the other partition's node never started"));
    ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(me_)));
  }

 private:
  int64_t me_ = 0;
};
REGISTER_KERNEL(KernelDefBuilder("SchedTestMeet").Device(kDeviceCpu), Meet);

// Forwards its input and records the deepest stack it has run at.
std::atomic<int64_t> g_max_stack_bytes{0};
REGISTER_OP("SchedTestStackProbe").Input("x: int32").Output("y: int32").SetIsStateful().SetShapeFn(
    shape_fns::UnchangedShape);
class StackProbe : public OpKernel {
 public:
  explicit StackProbe(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    pthread_attr_t attr;
    void* base = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &base, &size);
      pthread_attr_destroy(&attr);
      char here;
      const int64_t used = static_cast<char*>(base) + size - &here;
      int64_t prev = g_max_stack_bytes.load();
      while (used > prev && !g_max_stack_bytes.compare_exchange_weak(prev, used)) {
      }
    }
    ctx->set_output(0, ctx->input(0));
  }
};
REGISTER_KERNEL(KernelDefBuilder("SchedTestStackProbe").Device(kDeviceCpu), StackProbe);

std::string Dev(int d) { return absl::StrCat("/device:CPU:", d); }

TEST(SchedulingTest, PartitionsStartTogether) {
  absl::Notification a, b;
  g_started[0] = &a;
  g_started[1] = &b;
  std::string text;
  for (int d = 0; d < 2; ++d) {
    absl::StrAppend(&text, "node { name: \"meet", d, "\" op: \"SchedTestMeet\" device: \"",
                    Dev(d), "\" attr { key: \"me\" value { i: ", d, " } } }\n");
  }
  auto def = ParseGraphDef(text, GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  SessionOptions options;
  options.cpu_devices = 2;
  options.inter_op_threads = 2;
  auto session = Session::Create(*def, options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({}, {"meet0", "meet1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
  EXPECT_EQ(out[1].scalar<int32_t>(), 1);
}

// 100,000 nodes alternating between two devices: 99,999 Send/Recv hops.
// Each Recv completes on the sender's thread; its consumers must go to the
// inter-op pool, not run nested inside the Send.
TEST(SchedulingTest, ChainOfHopsDoesNotGrowTheStack) {
  constexpr int kLen = 100000;
  std::string text = absl::StrCat(
      "node { name: \"n0\" op: \"Const\" device: \"", Dev(0),
      "\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { "
      "tensor { dtype: DT_INT32 tensor_shape {} int_val: 42 } } } }\n");
  for (int i = 1; i < kLen; ++i) {
    const bool probe = i % 1000 == 0;
    absl::StrAppend(&text, "node { name: \"n", i, "\" op: \"",
                    probe ? "SchedTestStackProbe" : "Identity", "\" input: \"n", i - 1,
                    "\" device: \"", Dev(i % 2), "\"",
                    probe ? "" : " attr { key: \"T\" value { type: DT_INT32 } }", " }\n");
  }
  auto def = ParseGraphDef(text, GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  SessionOptions options;
  options.cpu_devices = 2;
  // The chain is what is measured: the optimizer would fold it away.
  options.optimize = SessionOptions::Optimize::kNone;
  auto session = Session::Create(*def, options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  RunMetadata metadata;
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  absl::Status s = (*session)->Run(run_options, {}, {absl::StrCat("n", kLen - 1)}, {}, &out,
                                   &metadata);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
  // The chain really was cut at every edge.
  int recvs = 0;
  for (const GraphDef& part : metadata.partition_graphs()) {
    for (const NodeDef& n : part.node()) recvs += n.op() == "_Recv" ? 1 : 0;
  }
  EXPECT_EQ(recvs, kLen - 1);
  EXPECT_GT(g_max_stack_bytes.load(), 0);
  EXPECT_LT(g_max_stack_bytes.load(), 256 << 10);
}

}  // namespace
}  // namespace graphrun
