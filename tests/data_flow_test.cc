// Queues and conditional accumulators where they wait: a dequeue or a take
// in one Run is met by an enqueue or gradients from other Runs of the same
// session (other threads), a close wakes a waiting dequeue with OutOfRange,
// and a step whose deadline passes while it waits ends with
// DeadlineExceeded instead of hanging. (What TensorFlow gives without
// waiting is checked against its values by //tests:conformance_test.)
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// q: a float queue (shared name "q", capacity 1) with x -> enqueue, dequeue,
// n -> dequeue_many, a dequeue of the wrong type, close and size; acc: a mean accumulator of [2] floats with g -> apply
// (local step 0) and take(num_required n).
constexpr char kGraph[] = R"pb(
  node { name: "q" op: "FIFOQueueV2"
         attr { key: "component_types" value { list { type: DT_FLOAT } } }
         attr { key: "shapes" value { list { shape { } } } }
         attr { key: "capacity" value { i: 1 } }
         attr { key: "shared_name" value { s: "q" } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "enqueue" op: "QueueEnqueueV2" input: "q" input: "x"
         attr { key: "Tcomponents" value { list { type: DT_FLOAT } } } }
  node { name: "dequeue" op: "QueueDequeueV2" input: "q"
         attr { key: "component_types" value { list { type: DT_FLOAT } } } }
  node { name: "dequeue_many" op: "QueueDequeueManyV2" input: "q" input: "n"
         attr { key: "component_types" value { list { type: DT_FLOAT } } } }
  node { name: "dequeue_int" op: "QueueDequeueV2" input: "q"
         attr { key: "component_types" value { list { type: DT_INT32 } } } }
  node { name: "close" op: "QueueCloseV2" input: "q" }
  node { name: "size" op: "QueueSizeV2" input: "q" }
  node { name: "acc" op: "ResourceConditionalAccumulator"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } }
         attr { key: "shared_name" value { s: "acc" } } }
  node { name: "step" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
  node { name: "g" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "apply" op: "ResourceAccumulatorApplyGradient" input: "acc" input: "step"
         input: "g" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "take" op: "ResourceAccumulatorTakeGradient" input: "acc" input: "n"
         attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

std::unique_ptr<Session> NewSession() {
  absl::StatusOr<GraphDef> g = ParseGraphDef(kGraph, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  SessionOptions options;
  options.inter_op_threads = 4;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(*g, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

absl::Status Enqueue(Session* s, float v) {
  std::vector<Tensor> out;
  return s->Run({{"x", Tensor::Scalar<float>(v)}}, {}, {"enqueue"}, &out);
}

TEST(DataFlowTest, WaitingDequeueGetsALaterEnqueue) {
  std::unique_ptr<Session> s = NewSession();
  absl::Status dequeued;
  std::vector<Tensor> got;
  std::thread waiter([&] { dequeued = s->Run({}, {"dequeue:0"}, {}, &got); });
  ASSERT_TRUE(Enqueue(s.get(), 4.5f).ok());
  waiter.join();
  ASSERT_TRUE(dequeued.ok()) << dequeued;
  EXPECT_EQ(got[0].scalar<float>(), 4.5f);
}

TEST(DataFlowTest, FullQueueMakesTheEnqueueWaitForADequeue) {
  std::unique_ptr<Session> s = NewSession();
  ASSERT_TRUE(Enqueue(s.get(), 1.0f).ok());  // capacity 1: now full
  absl::Status second;
  std::thread producer([&] { second = Enqueue(s.get(), 2.0f); });
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"dequeue:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.0f);
  producer.join();
  ASSERT_TRUE(second.ok()) << second;
  ASSERT_TRUE(s->Run({}, {"dequeue:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.0f);  // first in, first out
}

TEST(DataFlowTest, CloseWakesAWaitingDequeueWithOutOfRange) {
  std::unique_ptr<Session> s = NewSession();
  absl::Status dequeued;
  std::thread waiter([&] {
    std::vector<Tensor> got;
    dequeued = s->Run({}, {"dequeue:0"}, {}, &got);
  });
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"close"}, &out).ok());
  waiter.join();
  EXPECT_EQ(dequeued.code(), absl::StatusCode::kOutOfRange) << dequeued;
  EXPECT_NE(dequeued.message().find("FIFOQueue 'q' is closed"), std::string::npos) << dequeued;
  EXPECT_EQ(Enqueue(s.get(), 1.0f).code(), absl::StatusCode::kCancelled);
  std::vector<Tensor> again;
  EXPECT_EQ(s->Run({}, {}, {"close"}, &again).code(), absl::StatusCode::kCancelled);
}

TEST(DataFlowTest, ABatchLargerThanTheCapacityFills) {
  // Capacity 1, a batch of 2: the dequeue takes elements as they come, so
  // the producer's second enqueue finds room.
  std::unique_ptr<Session> s = NewSession();
  absl::Status produced;
  std::thread producer([&] {
    produced = Enqueue(s.get(), 1.0f);
    if (produced.ok()) produced = Enqueue(s.get(), 2.0f);
  });
  RunOptions options;
  options.set_timeout_in_ms(60000);  // a failure, not a hang, if it never fills
  std::vector<Tensor> out;
  absl::Status st = s->Run(options, {{"n", Tensor::Scalar<int32_t>(2)}}, {"dequeue_many:0"}, {},
                           &out, nullptr);
  producer.join();
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_TRUE(produced.ok()) << produced;
  ASSERT_EQ(out[0].NumElements(), 2);
  EXPECT_EQ(out[0].flat<float>()[0], 1.0f);
  EXPECT_EQ(out[0].flat<float>()[1], 2.0f);
}

TEST(DataFlowTest, TheCapacityHoldsAndTypesAreChecked) {
  std::unique_ptr<Session> s = NewSession();
  ASSERT_TRUE(Enqueue(s.get(), 1.0f).ok());
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  absl::Status st =
      s->Run(options, {{"x", Tensor::Scalar<float>(2.0f)}}, {}, {"enqueue"}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;  // full: it waited
  st = s->Run({}, {"dequeue_int:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  ASSERT_TRUE(s->Run({}, {"dequeue:0", "size:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.0f);
}

TEST(DataFlowTest, AStepPastItsDeadlineStopsWaiting) {
  std::unique_ptr<Session> s = NewSession();
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> out;
  absl::Status st = s->Run(options, {}, {"dequeue:0"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  st = s->Run(options, {{"n", Tensor::Scalar<int32_t>(1)}}, {"take:0"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  // The queue still works: the cancelled dequeue took nothing.
  ASSERT_TRUE(Enqueue(s.get(), 3.0f).ok());
  ASSERT_TRUE(s->Run({}, {"size:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  // And so does the accumulator: the cancelled take left nothing behind.
  ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<float>({1.0f, 3.0f})}}, {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<float>({2.0f, 5.0f})}}, {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run({{"n", Tensor::Scalar<int32_t>(2)}}, {"take:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 1.5f);
  EXPECT_EQ(out[0].flat<float>()[1], 4.0f);
}

TEST(DataFlowTest, WaitingTakeGetsTheMeanOfLaterGradients) {
  std::unique_ptr<Session> s = NewSession();
  absl::Status taken;
  std::vector<Tensor> got;
  std::thread waiter(
      [&] { taken = s->Run({{"n", Tensor::Scalar<int32_t>(2)}}, {"take:0"}, {}, &got); });
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<float>({1.0f, 2.0f})}}, {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<float>({2.0f, 6.0f})}}, {}, {"apply"}, &out).ok());
  waiter.join();
  ASSERT_TRUE(taken.ok()) << taken;
  EXPECT_EQ(got[0].flat<float>()[0], 1.5f);
  EXPECT_EQ(got[0].flat<float>()[1], 4.0f);
}

}  // namespace
}  // namespace graphrun
