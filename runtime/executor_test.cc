#include "runtime/executor.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace {

// Test ops on int64 scalars, so the executor is tested without real kernels.
REGISTER_OP("XConst").Output("y: int64").Attr("value: int");
REGISTER_OP("XAdd").Input("a: int64").Input("b: int64").Output("y: int64");
REGISTER_OP("XInc").Input("a: int64").Output("y: int64");
REGISTER_OP("XFail").Input("a: int64").Output("y: int64");
REGISTER_OP("XAsyncInc").Input("a: int64").Output("y: int64");
REGISTER_OP("XCheapAsyncInc").Input("a: int64").Output("y: int64");
REGISTER_OP("XWaitForCancel").Input("a: int64").Output("y: int64");
REGISTER_OP("XSink").Input("a: int64").Attr("index: int");
REGISTER_OP("XCheapSink").Input("a: int64").Attr("index: int");
REGISTER_OP("XRecord").Attr("tag: int");
REGISTER_OP("XCheapRecord").Attr("tag: int");
REGISTER_OP("XNoKernel").Output("y: int64");

std::atomic<int> g_order_counter{0};
std::atomic<int> g_record[16];

class XConst : public OpKernel {
 public:
  explicit XConst(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    c->SetStatus(c->GetAttr("value", &v_));
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, Tensor::Scalar<int64_t>(v_)); }
  int64_t v_ = 0;
};
class XAdd : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, Tensor::Scalar<int64_t>(ctx->input(0).scalar<int64_t>() +
                                               ctx->input(1).scalar<int64_t>()));
  }
};
// Counts the runs that wrote into their input's buffer (forwarded in place).
std::atomic<int64_t> g_in_place{0};
class XInc : public OpKernel {
 public:
  explicit XInc(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const int64_t v = ctx->input(0).scalar<int64_t>();
    const void* in_buffer = &ctx->input(0).scalar<int64_t>();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, TensorShape(), &out));
    if (&out->scalar<int64_t>() == in_buffer) ++g_in_place;
    out->scalar<int64_t>() = v + 1;
  }
};
class XFail : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(absl::InvalidArgumentError("XFail always fails"));
  }
};
class XAsyncInc : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    int64_t v = ctx->input(0).scalar<int64_t>();
    std::thread([ctx, v, done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ctx->set_output(0, Tensor::Scalar<int64_t>(v + 1));
      done();
    }).detach();
  }
};
// Posted cheaply, as a Recv is; completes on a thread of its own.
class XCheapAsyncInc : public XAsyncInc {
 public:
  explicit XCheapAsyncInc(OpKernelConstruction* c) : XAsyncInc(c) { set_expensive(false); }
};
// Set when an XWaitForCancel has registered and is waiting.
absl::Notification* g_waiting = nullptr;
class XWaitForCancel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CancellationManager* cm = ctx->cancellation();
    const int64_t token = cm->NewToken();
    if (!cm->Register(token, [ctx, done] {
          ctx->SetStatus(absl::CancelledError("waited until cancelled"));
          done();
        })) {
      ctx->SetStatus(absl::CancelledError("already cancelled"));
      done();
      return;
    }
    if (g_waiting != nullptr && !g_waiting->HasBeenNotified()) g_waiting->Notify();
  }
};
class XSink : public OpKernel {
 public:
  explicit XSink(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("index", &index_)); }
  void Compute(OpKernelContext* ctx) override {
    ctx->params().call_frame->retvals[index_] = ctx->input(0);
  }
  int64_t index_ = 0;
};
class XCheapSink : public XSink {
 public:
  explicit XCheapSink(OpKernelConstruction* c) : XSink(c) { set_expensive(false); }
};
class XRecord : public OpKernel {
 public:
  explicit XRecord(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("tag", &tag_)); }
  void Compute(OpKernelContext*) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    g_record[tag_].store(g_order_counter.fetch_add(1));
  }
  int64_t tag_ = 0;
};

// Records its turn without sleeping, and is cheap: runs inline.
class XCheapRecord : public OpKernel {
 public:
  explicit XCheapRecord(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    c->SetStatus(c->GetAttr("tag", &tag_));
  }
  void Compute(OpKernelContext*) override { g_record[tag_].store(g_order_counter.fetch_add(1)); }
  int64_t tag_ = 0;
};

REGISTER_KERNEL(KernelDefBuilder("XCheapRecord").Device(kDeviceCpu), XCheapRecord);
REGISTER_KERNEL(KernelDefBuilder("XConst").Device(kDeviceCpu), XConst);
REGISTER_KERNEL(KernelDefBuilder("XAdd").Device(kDeviceCpu), XAdd);
REGISTER_KERNEL(KernelDefBuilder("XInc").Device(kDeviceCpu), XInc);
REGISTER_KERNEL(KernelDefBuilder("XFail").Device(kDeviceCpu), XFail);
REGISTER_KERNEL(KernelDefBuilder("XAsyncInc").Device(kDeviceCpu), XAsyncInc);
REGISTER_KERNEL(KernelDefBuilder("XCheapAsyncInc").Device(kDeviceCpu), XCheapAsyncInc);
REGISTER_KERNEL(KernelDefBuilder("XWaitForCancel").Device(kDeviceCpu), XWaitForCancel);
REGISTER_KERNEL(KernelDefBuilder("XSink").Device(kDeviceCpu), XSink);
REGISTER_KERNEL(KernelDefBuilder("XCheapSink").Device(kDeviceCpu), XCheapSink);
REGISTER_KERNEL(KernelDefBuilder("XRecord").Device(kDeviceCpu), XRecord);

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest()
      : device_(NewCpuDevice("/job:localhost/replica:0/task:0", 0, {})), pool_(4) {}

  std::unique_ptr<Graph> Import(const std::string& text) {
    auto def = ParseGraphDef(text, GraphFormat::kText);
    EXPECT_TRUE(def.ok()) << def.status();
    auto g = ImportGraphDef(*def);
    EXPECT_TRUE(g.ok()) << g.status();
    return std::move(g).value();
  }

  absl::Status Run(const Executor& ex, CallFrame* frame, CancellationManager* cm = nullptr,
                   StepStatsCollector* stats = nullptr) {
    CancellationManager local;
    Executor::Args args;
    args.call_frame = frame;
    args.cancellation = cm ? cm : &local;
    args.stats = stats;
    args.runner = [this](std::function<void()> fn) { pool_.Schedule(std::move(fn)); };
    return ex.Run(args);
  }

  std::unique_ptr<Device> device_;
  Eigen::ThreadPool pool_;
};

std::string Sink(const std::string& input, int index) {
  return absl::StrCat("node { name: \"sink", index, "\" op: \"XSink\" input: \"", input,
                      "\" attr { key: \"index\" value { i: ", index, " } } }\n");
}

TEST_F(ExecutorTest, DiamondComputesAndReturns) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 3 } } }
    node { name: "b" op: "XInc" input: "a" }
    node { name: "c" op: "XInc" input: "a" }
    node { name: "d" op: "XAdd" input: "b" input: "c" }
  )pb" + Sink("d", 0) + Sink("a", 1));
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok()) << ex.status();
  CallFrame frame;
  frame.retvals.resize(2);
  ASSERT_TRUE(Run(**ex, &frame).ok());
  EXPECT_EQ(frame.retvals[0].scalar<int64_t>(), 8);
  EXPECT_EQ(frame.retvals[1].scalar<int64_t>(), 3);  // 'a' was not modified in place
}

TEST_F(ExecutorTest, LongChainInPlaceAndManyConcurrentSteps) {
  std::string text = R"pb(node { name: "n0" op: "XConst" attr { key: "value" value { i: 0 } } })pb";
  const int kLen = 2000;
  for (int i = 1; i <= kLen; ++i) {
    absl::StrAppend(&text, "node { name: \"n", i, "\" op: \"XInc\" input: \"n", i - 1, "\" }\n");
  }
  text += Sink(absl::StrCat("n", kLen), 0);
  auto g = Import(text);
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  g_in_place = 0;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        CallFrame frame;
        frame.retvals.resize(1);
        if (Run(**ex, &frame).ok() && frame.retvals[0].scalar<int64_t>() == kLen) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 160);
  // Every XInc after the first (which reads XConst's output) held the only
  // reference to its input and wrote into it.
  EXPECT_GE(g_in_place.load(), int64_t{160} * (kLen - 1));
}

TEST_F(ExecutorTest, WideFanOutFanIn) {
  std::string text = R"pb(node { name: "src" op: "XConst" attr { key: "value" value { i: 1 } } })pb";
  std::string prev = "src";
  const int kWidth = 300;
  for (int i = 0; i < kWidth; ++i) {
    absl::StrAppend(&text, "node { name: \"f", i, "\" op: \"XAsyncInc\" input: \"src\" }\n");
  }
  absl::StrAppend(&text, "node { name: \"acc0\" op: \"XAdd\" input: \"f0\" input: \"f1\" }\n");
  for (int i = 2; i < kWidth; ++i) {
    absl::StrAppend(&text, "node { name: \"acc", i - 1, "\" op: \"XAdd\" input: \"acc", i - 2,
                    "\" input: \"f", i, "\" }\n");
  }
  text += Sink(absl::StrCat("acc", kWidth - 2), 0);
  auto g = Import(text);
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  CallFrame frame;
  frame.retvals.resize(1);
  ASSERT_TRUE(Run(**ex, &frame).ok());
  EXPECT_EQ(frame.retvals[0].scalar<int64_t>(), 2 * kWidth);
}

TEST_F(ExecutorTest, ErrorNamesNodeAndDeviceAndStopsTheStep) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 1 } } }
    node { name: "bad" op: "XFail" input: "a" }
    node { name: "after" op: "XInc" input: "bad" }
    node { name: "wait" op: "XWaitForCancel" input: "a" }
  )pb" + Sink("after", 0) + Sink("wait", 1));
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  CallFrame frame;
  frame.retvals.resize(2);
  absl::Status s;
  for (int rep = 0; rep < 50; ++rep) {  // either order of 'bad' and 'wait'
    s = Run(**ex, &frame);              // must not hang on 'wait'
    ASSERT_FALSE(s.ok());
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("node 'bad' (XFail) on /job:localhost/replica:0/task:0/device:CPU:0: "
                             "XFail always fails"),
            std::string::npos)
      << s;
  EXPECT_FALSE(frame.retvals[0].IsInitialized());
}

TEST_F(ExecutorTest, ExternalCancellationAbortsWaitingStep) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 1 } } }
    node { name: "wait" op: "XWaitForCancel" input: "a" }
  )pb" + Sink("wait", 0));
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  CancellationManager cm;
  CallFrame frame;
  frame.retvals.resize(1);
  // Cancel only once the kernel is really waiting, so this tests the
  // release of a running step, not a step cancelled before it started.
  absl::Notification waiting;
  g_waiting = &waiting;
  std::thread canceller([&] {
    waiting.WaitForNotification();
    cm.StartCancel();
  });
  absl::Status s = Run(**ex, &frame, &cm);
  canceller.join();
  g_waiting = nullptr;
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;

  CancellationManager already;
  already.StartCancel();
  EXPECT_EQ(Run(**ex, &frame, &already).code(), absl::StatusCode::kCancelled);
}

TEST_F(ExecutorTest, ControlEdgesOrderExecution) {
  auto g = Import(R"pb(
    node { name: "first" op: "XRecord" attr { key: "tag" value { i: 0 } } }
    node { name: "second" op: "XRecord" input: "^first" attr { key: "tag" value { i: 1 } } }
    node { name: "third" op: "XRecord" input: "^second" input: "^first" attr { key: "tag" value { i: 2 } } }
  )pb");
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  for (int rep = 0; rep < 5; ++rep) {
    CallFrame frame;
    ASSERT_TRUE(Run(**ex, &frame).ok());
    EXPECT_LT(g_record[0].load(), g_record[1].load());
    EXPECT_LT(g_record[1].load(), g_record[2].load());
  }
}

// Roots start with the one that has the longest chain below it, though
// it comes last in the graph (a training graph's forward pass next to the
// optimizer's slots): on one thread, the chain runs before the other roots.
TEST_F(ExecutorTest, TheDeepestRootStartsFirst) {
  // The deep root first and the shallow ones after it, and the other way
  // round: either way the chain runs first.
  const std::string deep =
      "node { name: 'deep' op: 'XCheapRecord' attr { key: 'tag' value { i: 4 } } }\n"
      "node { name: 'c1' op: 'XCheapRecord' input: '^deep' attr { key: 'tag' value { i: 5 } } }\n"
      "node { name: 'c2' op: 'XCheapRecord' input: '^c1' attr { key: 'tag' value { i: 6 } } }\n";
  std::string shallow;
  for (int i = 0; i < 4; ++i) {
    shallow += "node { name: 'shallow" + std::to_string(i) +
               "' op: 'XCheapRecord' attr { key: 'tag' value { i: " + std::to_string(i) +
               " } } }\n";
  }
  for (const std::string& text0 : {deep + shallow, shallow + deep}) {
    std::string text = text0;
    for (char& ch : text) {
      if (ch == '\'') ch = '"';
    }
    auto g = Import(text);
    auto ex = Executor::Create(g.get(), device_.get());
    ASSERT_TRUE(ex.ok()) << ex.status();
    CallFrame frame;
    ASSERT_TRUE(Run(**ex, &frame).ok());
    for (int i = 0; i < 4; ++i) {
      EXPECT_LT(g_record[4].load(), g_record[i].load()) << i;
      EXPECT_LT(g_record[6].load(), g_record[i].load()) << i;
    }
  }
}

TEST_F(ExecutorTest, StepStatsCoverEveryNode) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 3 } } }
    node { name: "b" op: "XInc" input: "a" }
  )pb" + Sink("b", 0));
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok());
  DeviceStepStats dev;
  StepStatsCollector collector(&dev);
  CallFrame frame;
  frame.retvals.resize(1);
  ASSERT_TRUE(Run(**ex, &frame, nullptr, &collector).ok());
  ASSERT_EQ(dev.node_stats_size(), 3);
  for (const NodeExecStats& s : dev.node_stats()) {
    EXPECT_GT(s.all_start_nanos(), 0);
    EXPECT_GE(s.all_end_rel_nanos(), s.op_end_rel_nanos());
    if (s.node_name() == "b") {
      EXPECT_EQ(s.timeline_label(), "b = XInc(a)");
      ASSERT_EQ(s.output_size(), 1);
      EXPECT_EQ(s.output(0).tensor_description().dtype(), DT_INT64);
    }
  }
}

TEST_F(ExecutorTest, MissingKernelIsNotFound) {
  auto g = Import(R"pb(node { name: "k" op: "XNoKernel" })pb");
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(ex.status().message().find("No registered 'XNoKernel' OpKernel for 'CPU' devices "
                                       "compatible with node 'k'"),
            std::string::npos)
      << ex.status();
}

// Under inline_cheap_only the thread that starts a step runs only cheap
// nodes: an expensive one waits in the runner's queue, where without the
// option the starting thread would have run it (and finished the step).
TEST_F(ExecutorTest, InlineCheapOnlyLeavesExpensiveNodesToTheRunner) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 3 } } }
    node { name: "b" op: "XAdd" input: "a" input: "a" }
  )pb" + Sink("b", 0));
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok()) << ex.status();
  for (const bool cheap_only : {true, false}) {
    SCOPED_TRACE(cheap_only ? "inline_cheap_only" : "default");
    std::vector<std::function<void()>> queued;
    CancellationManager cm;
    CallFrame frame;
    frame.retvals.resize(1);
    Executor::Args args;
    args.call_frame = &frame;
    args.cancellation = &cm;
    args.runner = [&queued](std::function<void()> fn) { queued.push_back(std::move(fn)); };
    args.inline_cheap_only = cheap_only;
    bool done = false;
    (*ex)->RunAsync(args, [&done](const absl::Status& s) {
      EXPECT_TRUE(s.ok()) << s;
      done = true;
    });
    EXPECT_EQ(done, !cheap_only);
    EXPECT_EQ(queued.size(), cheap_only ? 1u : 0u);
    while (!queued.empty()) {
      std::function<void()> fn = std::move(queued.back());
      queued.pop_back();
      fn();
    }
    ASSERT_TRUE(done);
    EXPECT_EQ(frame.retvals[0].scalar<int64_t>(), 6);
  }
}

// Under inline_cheap_only an async kernel's cheap consumers run on the
// thread that completes it: the step ends without the runner (without the
// option they would go to the runner in one batch).
TEST_F(ExecutorTest, InlineCheapOnlyRunsCheapConsumersWhereAnAsyncNodeEnds) {
  auto g = Import(R"pb(
    node { name: "a" op: "XConst" attr { key: "value" value { i: 3 } } }
    node { name: "b" op: "XCheapAsyncInc" input: "a" }
    node { name: "c" op: "XInc" input: "b" }
    node { name: "sink" op: "XCheapSink" input: "c" attr { key: "index" value { i: 0 } } }
  )pb");
  auto ex = Executor::Create(g.get(), device_.get());
  ASSERT_TRUE(ex.ok()) << ex.status();
  std::atomic<int> queued{0};
  CancellationManager cm;
  CallFrame frame;
  frame.retvals.resize(1);
  Executor::Args args;
  args.call_frame = &frame;
  args.cancellation = &cm;
  args.runner = [this, &queued](std::function<void()> fn) {
    ++queued;
    pool_.Schedule(std::move(fn));
  };
  args.inline_cheap_only = true;
  absl::Notification done;
  (*ex)->RunAsync(args, [&done](const absl::Status& s) {
    EXPECT_TRUE(s.ok()) << s;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(queued.load(), 0);
  EXPECT_EQ(frame.retvals[0].scalar<int64_t>(), 5);
}

}  // namespace
}  // namespace graphrun
