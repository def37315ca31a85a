// RunTrainLoop (runtime/train_loop.h), the C++ API of `graphrun train`,
// on TensorFlow's v1 MLP with SGD (tests/fixtures/training/mlp_sgd): its
// 20 losses and final variables are TensorFlow's even when sessions lose a
// task in the middle of a step or of a periodic save, and the loop goes on
// from the newest checkpoint in a new session. Failures that are not a
// lost task end the loop naming the step.
#include "runtime/train_loop.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "graph/status_macros.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "tests/fixture_tensors.h"
#include "gtest/gtest.h"
#include "runtime/saver.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/training/";

Tensor Npy(const std::string& name) { return FixtureNpy(absl::StrCat(kDir, name)); }

Tensor Row(const Tensor& t, int64_t step) { return StepRow(t, step); }

// A session over a real one that fails as a task that went away would:
// the `fail_step`-th train step (counting from 0), or the `fail_save`-th
// save (a Run that only fetches), with `code`.
class FailingSession : public Session {
 public:
  FailingSession(std::unique_ptr<Session> inner, int fail_step, int fail_save,
                 absl::StatusCode code)
      : inner_(std::move(inner)), fail_step_(fail_step), fail_save_(fail_save), code_(code) {}

  absl::Status Extend(const GraphDef& graph) override { return inner_->Extend(graph); }
  absl::Status Run(const RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                   RunMetadata* metadata) override {
    const bool train = !targets.empty() && targets[0] == "train";
    const bool save = targets.empty() && !fetches.empty();
    if ((train && steps_++ == fail_step_) || (save && saves_++ == fail_save_)) {
      return absl::Status(code_, "/job:worker/replica:0/task:0 is unreachable (RunGraph)");
    }
    return inner_->Run(options, feeds, fetches, targets, outputs, metadata);
  }
  std::vector<Device*> devices() const override { return inner_->devices(); }
  absl::Status CancelRunningSteps(const std::string& reason) override {
    return inner_->CancelRunningSteps(reason);
  }

 private:
  std::unique_ptr<Session> inner_;
  int steps_ = 0, saves_ = 0;
  const int fail_step_, fail_save_;
  const absl::StatusCode code_;
};

struct Fault {
  int step = -1;
  int save = -1;
  absl::StatusCode code = absl::StatusCode::kUnavailable;
};

class TrainLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<GraphDef> g = ReadGraphDefFile(absl::StrCat(kDir, "mlp_sgd.pbtxt"));
    ASSERT_TRUE(g.ok()) << g.status();
    graph_ = *g;
    x_ = Npy("mlp_sgd_x.npy");
    y_ = Npy("mlp_sgd_y.npy");
    dir_ = absl::StrCat(::testing::TempDir(), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.train_op = "train";
    options_.fetches = {"loss"};
    options_.steps = 20;
    options_.feeds = [this](int step) -> absl::StatusOr<TrainFeeds> {
      return TrainFeeds{{"x", Row(x_, step)}, {"y", Row(y_, step)}};
    };
    options_.initialize = [](Session* s, const GraphDef& graph) -> absl::Status {
      return RestoreVariables(graph, s, absl::StrCat(kDir, "mlp_sgd_init.ckpt")).status();
    };
    options_.save = absl::StrCat(dir_, "/model.ckpt");
    options_.save_every = 3;
    options_.recover = true;
    options_.keep_fetches = true;
    options_.on_recover = [this](const absl::Status& failure, const std::string& prefix,
                                 int step) {
      recovered_from_.push_back(step);
      // Step 0: no checkpoint yet, the variables set anew.
      EXPECT_EQ(prefix, step == 0 ? "" : absl::StrCat(options_.save, "-", step));
      EXPECT_TRUE(absl::StrContains(failure.message(), "task:0 is unreachable"))
          << failure.message();
    };
  }

  // Sessions that fail as `faults` say, one per session made, then sound.
  TrainSessionFactory Factory(std::vector<Fault> faults) {
    return [this, faults](const absl::Status& failure) -> absl::StatusOr<TrainSession> {
      EXPECT_EQ(failure.ok(), made_ == 0);
      const Fault f = made_ < static_cast<int>(faults.size()) ? faults[made_] : Fault{};
      ++made_;
      absl::StatusOr<std::unique_ptr<Session>> inner = Session::Create(graph_);
      if (!inner.ok()) return inner.status();
      TrainSession ts;
      ts.session = std::make_unique<FailingSession>(*std::move(inner), f.step, f.save, f.code);
      ts.graph = graph_;
      return ts;
    };
  }

  void ExpectTensorFlowsRun(const TrainLoopResult& r) {
    ASSERT_EQ(r.steps_done, 20);
    ASSERT_EQ(r.fetched.size(), 1u);
    ASSERT_EQ(r.fetched[0].size(), 20u);
    const Tensor want = Npy("mlp_sgd_loss.npy");
    for (int i = 0; i < 20; ++i) {
      const double g = r.fetched[0][i].flat<float>()[0], w = want.flat<float>()[i];
      EXPECT_LE(std::abs(g - w), 1e-5 * std::abs(w) + 1e-7) << "loss of step " << i;
    }
    // The final checkpoint holds TensorFlow's final variables.
    absl::StatusOr<std::unique_ptr<Session>> fresh = Session::Create(graph_);
    ASSERT_TRUE(fresh.ok());
    ASSERT_TRUE(RestoreVariables(graph_, fresh->get(), options_.save).ok());
    for (const char* v : {"mlp/w1", "mlp/b1", "mlp/w2", "mlp/b2"}) {
      std::vector<Tensor> out;
      ASSERT_TRUE((*fresh)->Run({}, {v}, {}, &out).ok());
      const Tensor want_v = Npy(absl::StrCat("mlp_sgd_final__", absl::StrReplaceAll(v, {{"/", "__"}}), ".npy"));
      ASSERT_EQ(out[0].NumElements(), want_v.NumElements()) << v;
      for (int64_t i = 0; i < want_v.NumElements(); ++i) {
        const double g = out[0].flat<float>()[i], w = want_v.flat<float>()[i];
        ASSERT_LE(std::abs(g - w), 1e-5 * std::abs(w) + 1e-6) << v << " element " << i;
      }
    }
  }

  GraphDef graph_;
  Tensor x_, y_;
  std::string dir_;
  TrainLoopOptions options_;
  int made_ = 0;
  std::vector<int> recovered_from_;
};

TEST_F(TrainLoopTest, UninterruptedGivesTensorFlowsLossesAndVariables) {
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->recoveries, 0);
  EXPECT_EQ(made_, 1);
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, GoesOnFromTheNewestCheckpointAfterLostTasks) {
  // The first session loses its task in step 7 (saves at 3 and 6 done): the
  // loop goes on from step 6. The second loses it in its second save (step
  // 12; step 9's done): on from step 9. The third runs to the end.
  absl::StatusOr<TrainLoopResult> r =
      RunTrainLoop(Factory({Fault{7, -1}, Fault{-1, 1}}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->recoveries, 2);
  EXPECT_EQ(made_, 3);
  EXPECT_EQ(recovered_from_, (std::vector<int>{6, 9}));
  // Every step ran once, and steps 6, 9, 10 and 11 once more, the failed
  // step 7 and the save of 12 included in the timings.
  EXPECT_EQ(r->step_ms.size(), 20u + 2 + 3);
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, BeforeTheFirstCheckpointItStartsAgainFromTheInitialVariables) {
  // A checkpoint another run left in the directory (its `checkpoint` file
  // names step 100) is not this run's: the loss in step 1, before the first
  // save, starts again from `initialize`.
  ASSERT_TRUE(RunTrainLoop(Factory({}), [this] {
                TrainLoopOptions other = options_;
                other.steps = 1;
                other.save = absl::StrCat(dir_, "/model.ckpt-100");
                other.save_every = 0;
                other.recover = false;
                return other;
              }())
                  .ok());
  ASSERT_EQ(*ResolveCheckpointPrefix(dir_), absl::StrCat(dir_, "/model.ckpt-100"));
  made_ = 0;
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({Fault{1, -1}}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(recovered_from_, (std::vector<int>{0}));
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, AGoodRunBetweenTwoFailuresIsProgress) {
  // Both failures go back to step 3's checkpoint, but the second comes
  // later (step 5 after step 4): the loop goes on.
  absl::StatusOr<TrainLoopResult> r =
      RunTrainLoop(Factory({Fault{4, -1}, Fault{2, -1}}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(recovered_from_, (std::vector<int>{3, 3}));
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, AbortedCountsAsALostTaskToo) {
  absl::StatusOr<TrainLoopResult> r =
      RunTrainLoop(Factory({Fault{4, -1, absl::StatusCode::kAborted}}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(recovered_from_, (std::vector<int>{3}));
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, OtherFailuresEndTheLoopNamingTheStep) {
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(
      Factory({Fault{2, -1, absl::StatusCode::kInvalidArgument}}), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(r.status().message(), "step 2: ")) << r.status();
  EXPECT_EQ(made_, 1);
}

TEST_F(TrainLoopTest, WithoutRecoverALostTaskEndsTheLoop) {
  options_.recover = false;
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({Fault{5, -1}}), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StartsWith(r.status().message(), "step 5: ")) << r.status();
  EXPECT_EQ(made_, 1);
}

TEST_F(TrainLoopTest, GivesUpWhenARecoveryMakesNoProgress) {
  // Every session loses its task in its fifth step: from step 3 each time.
  std::vector<Fault> faults(5, Fault{4, -1});
  faults[1] = Fault{1, -1};  // the second fails at step 3 + 1 = 4 as well
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory(faults), options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(r.status().message(),
                                "gave up after 1 recoveries: it failed at step 4 again after "
                                "going back to "))
      << r.status();
  EXPECT_EQ(recovered_from_, (std::vector<int>{3}));
}

TEST_F(TrainLoopTest, StopEndsTheLoopAndStillSaves) {
  int steps = 0;
  options_.stop = [&steps] { return steps == 5; };
  options_.on_step = [&steps](int, const std::vector<Tensor>&) { ++steps; };
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->steps_done, 5);
  absl::StatusOr<std::string> newest = ResolveCheckpointPrefix(dir_);
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_EQ(*newest, options_.save);
}

// Nodes beside the MLP for queue runners: a dequeue from a queue nothing
// fills (it waits until cancelled) and a check that always fails.
void AddRunnerNodes(GraphDef* graph) {
  GraphDef more;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    node { name: "q" op: "FIFOQueueV2"
           attr { key: "component_types" value { list { type: DT_FLOAT } } } }
    node { name: "wait" op: "QueueDequeueV2" input: "q"
           attr { key: "component_types" value { list { type: DT_FLOAT } } } }
    node { name: "nan" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: nan } } } }
    node { name: "bad" op: "CheckNumerics" input: "nan"
           attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "message" value { s: "the runner's value" } } }
  )pb", &more));
  for (const NodeDef& n : more.node()) *graph->add_node() = n;
}

TEST_F(TrainLoopTest, AWaitingQueueRunnerIsStoppedWhenTheStepsEnd) {
  // The runner waits the whole run in a dequeue nothing meets; the loop
  // cancels it after the last step, saves and returns.
  AddRunnerNodes(&graph_);
  options_.queue_runners = {"wait"};
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({Fault{7, -1}}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(recovered_from_, (std::vector<int>{6}));  // stopped and started again
  ExpectTensorFlowsRun(*r);
}

TEST_F(TrainLoopTest, AFailingQueueRunnerEndsTheLoopNamingIt) {
  AddRunnerNodes(&graph_);
  options_.queue_runners = {"bad"};
  // Steps without end, so that the loop cannot finish before the runner
  // fails however the threads are scheduled; a runner error dropped would
  // run into the backstop and end OK.
  options_.steps = 1000000;
  options_.save_every = 50000;
  options_.keep_fetches = false;
  int steps = 0;
  options_.stop = [&steps] { return steps >= 100000; };
  options_.on_step = [&steps](int, const std::vector<Tensor>&) { ++steps; };
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  ASSERT_FALSE(r.ok()) << "after " << steps << " steps";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "queue runner bad: "))
      << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "the runner's value")) << r.status();
}

// Each step also takes a token from a queue that holds five and is closed,
// as a synchronous worker's step takes one from its chief's token queue.
TEST_F(TrainLoopTest, AStepThatFindsItsQueueClosedEndsTheStepsWithoutAnError) {
  GraphDef more;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    node { name: "tokens" op: "FIFOQueueV2"
           attr { key: "component_types" value { list { type: DT_FLOAT } } } }
    node { name: "five" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT
                  tensor_shape { dim { size: 5 } } float_val: [1, 2, 3, 4, 5] } } } }
    node { name: "fill" op: "QueueEnqueueManyV2" input: "tokens" input: "five"
           attr { key: "Tcomponents" value { list { type: DT_FLOAT } } } }
    node { name: "seal" op: "QueueCloseV2" input: "tokens" }
    node { name: "take" op: "QueueDequeueV2" input: "tokens"
           attr { key: "component_types" value { list { type: DT_FLOAT } } } }
    node { name: "gated_train" op: "NoOp" input: "^train" input: "^take" }
  )pb", &more));
  for (const NodeDef& n : more.node()) *graph_.add_node() = n;
  auto restore = options_.initialize;
  options_.initialize = [restore](Session* s, const GraphDef& graph) -> absl::Status {
    GR_RETURN_IF_ERROR(restore(s, graph));
    std::vector<Tensor> unused;
    GR_RETURN_IF_ERROR(s->Run({}, {}, {"fill"}, &unused));
    return s->Run({}, {}, {"seal"}, &unused);
  };
  options_.train_op = "gated_train";
  options_.recover = false;
  options_.save_every = 0;
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_done, 5);
  EXPECT_TRUE(absl::StartsWith(r->end_of_input, "step 5: ")) << r->end_of_input;
  EXPECT_TRUE(absl::StrContains(r->end_of_input, "'tokens' is closed")) << r->end_of_input;
  ASSERT_EQ(r->fetched[0].size(), 5u);
  const Tensor want = Npy("mlp_sgd_loss.npy");
  for (int i = 0; i < 5; ++i) {
    const double g = r->fetched[0][i].flat<float>()[0], w = want.flat<float>()[i];
    EXPECT_LE(std::abs(g - w), 1e-5 * std::abs(w) + 1e-7) << "loss of step " << i;
  }
  EXPECT_TRUE(std::ifstream(options_.save + ".index").good()) << "the final save ran";
}

// close_at_end runs when the loop ends; one that fails is told to `log` and
// leaves the result alone (a ps task holding the queue may be gone).
TEST_F(TrainLoopTest, ACloseAtTheEndThatFailsIsLoggedOnly) {
  std::vector<std::string> lines;
  options_.log = [&lines](const std::string& line) { lines.push_back(line); };
  options_.close_at_end = {"no_such_close"};
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->end_of_input.empty());
  ExpectTensorFlowsRun(*r);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return absl::StrContains(l, "closing the queue with no_such_close: ");
  })) << absl::StrJoin(lines, "\n");
}

TEST_F(TrainLoopTest, RefusesRecoveryWithoutPeriodicCheckpoints) {
  options_.save_every = 0;
  absl::StatusOr<TrainLoopResult> r = RunTrainLoop(Factory({}), options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "periodic checkpoints")) << r.status();
  EXPECT_EQ(made_, 0);
}

}  // namespace
}  // namespace graphrun
