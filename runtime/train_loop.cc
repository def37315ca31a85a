#include "runtime/train_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "runtime/saver.h"

namespace graphrun {

int CheckpointStep(const std::string& prefix) {
  const size_t dash = prefix.rfind('-');
  int step = 0;
  if (dash == std::string::npos || !absl::SimpleAtoi(prefix.substr(dash + 1), &step) ||
      step < 0) {
    return -1;
  }
  return step;
}

namespace {

// Queue runners: each op run over and over on its own thread in one session
// until stopped or failed.
class QueueRunners {
 public:
  ~QueueRunners() { Stop(); }

  // FailedPrecondition when the session cannot cancel its steps (its
  // runners could not be stopped).
  absl::Status Start(Session* session, const std::vector<std::string>& ops) {
    Stop();
    if (ops.empty()) return absl::OkStatus();
    // Nothing runs in the session now: this only asks whether it can.
    absl::Status can = session->CancelRunningSteps("starting the queue runners");
    if (!can.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "queue runners need a session that can cancel its running steps: ", can.message()));
    }
    session_ = session;
    stopping_.store(false);
    {
      absl::MutexLock lock(&mu_);
      error_ = absl::OkStatus();
      stop_requested_ = false;
      live_ = static_cast<int>(ops.size());
    }
    for (const std::string& op : ops) {
      threads_.emplace_back([this, op] {
        std::vector<Tensor> unused;
        while (!stopping_.load()) {
          absl::Status s = session_->Run({}, {}, {op}, &unused);
          if (s.ok() || stopping_.load()) continue;
          if (s.code() != absl::StatusCode::kOutOfRange) {
            const absl::Status failed(s.code(), absl::StrCat("queue runner ", op, ": ",
                                                             s.message()));
            {
              absl::MutexLock lock(&mu_);
              if (error_.ok()) error_ = failed;
            }
            // The step waiting for this one's work would wait for ever: it
            // is cancelled, and so is any step started until the loop stops
            // the runners (one may just be starting).
            auto stop_requested = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
              return stop_requested_;
            };
            while (true) {
              session_->CancelRunningSteps(std::string(failed.message())).IgnoreError();
              absl::MutexLock lock(&mu_);
              if (mu_.AwaitWithTimeout(absl::Condition(&stop_requested),
                                       absl::Milliseconds(50))) {
                break;
              }
            }
          }
          break;
        }
        absl::MutexLock lock(&mu_);
        --live_;
      });
    }
    return absl::OkStatus();
  }

  // Cancels what the runners are running, until each has seen that it
  // must stop (one may start another step just as the first is cancelled),
  // and joins them.
  void Stop() {
    if (threads_.empty()) return;
    {
      absl::MutexLock lock(&mu_);
      stop_requested_ = true;
    }
    stopping_.store(true);
    auto none_live = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return live_ == 0; };
    while (true) {
      session_->CancelRunningSteps("the training steps ended").IgnoreError();
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&none_live), absl::Milliseconds(50))) break;
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  absl::Status error() {
    absl::MutexLock lock(&mu_);
    return error_;
  }

 private:
  Session* session_ = nullptr;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
};

class Loop {
 public:
  Loop(const TrainSessionFactory& make, const TrainLoopOptions& o) : make_(make), o_(o) {}

  // The steps, then the queues closed however they ended.
  absl::StatusOr<TrainLoopResult> Run() {
    absl::StatusOr<TrainLoopResult> r = RunSteps();
    CloseQueues();
    return r;
  }

 private:
  absl::StatusOr<TrainLoopResult> RunSteps() {
    if (!o_.initialize) return absl::InvalidArgumentError("the training loop needs `initialize`");
    if (o_.steps < 0) return absl::InvalidArgumentError("steps must be >= 0");
    if (o_.save_every < 0) return absl::InvalidArgumentError("save_every must be >= 0");
    if (o_.save_every > 0 && o_.save.empty()) {
      return absl::InvalidArgumentError("periodic saves need a checkpoint prefix to save to");
    }
    if (o_.recover && o_.save_every < 1) {
      return absl::InvalidArgumentError(
          "recovery needs periodic checkpoints to recover from (save and save_every)");
    }
    GR_ASSIGN_OR_RETURN(ts_, make_(absl::OkStatus()));
    GR_RETURN_IF_ERROR(o_.initialize(ts_.session.get(), ts_.graph));
    GR_RETURN_IF_ERROR(runners_.Start(ts_.session.get(), o_.queue_runners));
    if (o_.keep_fetches) r_.fetched.resize(o_.fetches.size());
    std::vector<Tensor> outputs;
    for (int step = 0; step < o_.steps; ++step) {
      if (o_.stop && o_.stop()) {
        r_.stopped = true;
        break;
      }
      TrainFeeds feeds;
      if (o_.feeds) {
        GR_ASSIGN_OR_RETURN(feeds, o_.feeds(step));
      }
      RunOptions run_options;
      run_options.set_timeout_in_ms(o_.timeout_ms);
      const bool trace = o_.trace_last_step && step + 1 == o_.steps;
      if (trace) run_options.set_trace_level(RunOptions::FULL_TRACE);
      std::vector<std::string> targets;
      if (!o_.train_op.empty()) targets.push_back(o_.train_op);
      // A queue runner that failed between steps: its failure is this
      // step's (which would wait for its work).
      absl::Status s = runners_.error();
      if (s.ok()) {
        const auto t0 = std::chrono::steady_clock::now();
        s = ts_.session->Run(run_options, feeds, o_.fetches, targets, &outputs,
                             trace ? &r_.trace : nullptr);
        r_.step_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      if (absl::Status runner = runners_.error(); !runner.ok()) {
        // A queue runner's failure is the cause of the step's (which it
        // cancelled), and ends the loop even when the step got through.
        s = runner;
      }
      if (s.ok() && o_.after_step) s = o_.after_step(ts_.session.get(), step);
      if (s.code() == absl::StatusCode::kOutOfRange && runners_.error().ok()) {
        r_.end_of_input = absl::StrCat("step ", step, ": ", s.message());
        break;
      }
      if (!s.ok()) {
        s = absl::Status(s.code(), absl::StrCat("step ", step, ": ", s.message()));
        GR_ASSIGN_OR_RETURN(const int resume, Recover(s, step));
        step = resume - 1;
        continue;
      }
      if (o_.keep_fetches) {
        for (size_t k = 0; k < outputs.size(); ++k) r_.fetched[k].push_back(outputs[k]);
      }
      r_.last = outputs;
      r_.steps_done = step + 1;
      if (o_.on_step) o_.on_step(step, outputs);
      if (o_.save_every > 0 && r_.steps_done % o_.save_every == 0 &&
          r_.steps_done != o_.steps) {
        absl::Status saved = Save(r_.steps_done, /*periodic=*/true);
        if (!saved.ok()) {
          GR_ASSIGN_OR_RETURN(const int resume, Recover(saved, r_.steps_done));
          step = resume - 1;
        }
      }
    }
    CloseQueues();
    GR_RETURN_IF_ERROR(runners_.error());
    if (!o_.save.empty()) GR_RETURN_IF_ERROR(Save(r_.steps_done, /*periodic=*/false));
    return std::move(r_);
  }

  // Stops the queue runners, then runs close_at_end, once, in the session
  // the loop ended in.
  void CloseQueues() {
    runners_.Stop();
    if (closed_ || ts_.session == nullptr) return;
    closed_ = true;
    for (const std::string& op : o_.close_at_end) {
      RunOptions run_options;
      run_options.set_timeout_in_ms(o_.timeout_ms);
      std::vector<Tensor> unused;
      absl::Status s = ts_.session->Run(run_options, {}, {}, {op}, &unused, nullptr);
      if (!s.ok()) Log(absl::StrCat("closing the queue with ", op, ": ", s.message()));
    }
  }

  void Log(const std::string& line) {
    if (o_.log) o_.log(line);
  }

  absl::Status Save(int step, bool periodic) {
    const std::string prefix = periodic ? absl::StrCat(o_.save, "-", step) : o_.save;
    int saved = 0;
    if (o_.saver.has_value()) {
      std::vector<Tensor> unused;
      absl::Status s = ts_.session->Run(
          {{o_.saver->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}},
          {o_.saver->save_tensor_name()}, {}, &unused);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("saving ", prefix, ": ", s.message()));
      }
    } else {
      GR_ASSIGN_OR_RETURN(saved, SaveVariables(ts_.graph, ts_.session.get(), prefix));
    }
    // Published first, then counted among this run's checkpoints (the
    // ones recovery goes back to); the oldest beyond keep_periodic goes.
    std::vector<std::string> dropped;
    const size_t keep = static_cast<size_t>(std::max(1, o_.keep_periodic));
    if (periodic && periodic_saves_.size() + 1 > keep) {
      dropped.push_back(periodic_saves_.front());
    }
    GR_RETURN_IF_ERROR(UpdateCheckpointState(prefix, dropped));
    if (periodic) {
      if (!dropped.empty()) periodic_saves_.erase(periodic_saves_.begin());
      periodic_saves_.push_back(prefix);
    }
    for (const std::string& d : dropped) RemoveCheckpoint(d);
    if (periodic) {
      Log(absl::StrCat("step ", step, ": saved ",
                       o_.saver.has_value() ? "" : absl::StrCat(saved, " variable(s) "), "to ",
                       prefix));
    }
    return absl::OkStatus();
  }

  absl::Status Restore(const std::string& prefix) {
    if (o_.saver.has_value()) {
      std::vector<Tensor> unused;
      absl::Status s = ts_.session->Run(
          {{o_.saver->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}}, {},
          {o_.saver->restore_op_name()}, &unused);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("restoring ", prefix, ": ", s.message()));
      }
    } else {
      GR_RETURN_IF_ERROR(RestoreVariables(ts_.graph, ts_.session.get(), prefix).status());
    }
    return o_.after_restore ? o_.after_restore(ts_.session.get()) : absl::OkStatus();
  }

  // A failure of a task that went away, at step `at`: a new session with
  // the variables of the newest checkpoint this run saved (or set anew by
  // `initialize` when it saved none yet). Returns the step to run next;
  // other failures come back as they are.
  absl::StatusOr<int> Recover(const absl::Status& failure, int at) {
    const bool task_gone = failure.code() == absl::StatusCode::kUnavailable ||
                           failure.code() == absl::StatusCode::kAborted;
    if (!o_.recover || !task_gone) return failure;
    // Only this run's own checkpoints: one left in the directory by another
    // run may hold other steps.
    const std::string prefix = periodic_saves_.empty() ? "" : periodic_saves_.back();
    const int resume = prefix.empty() ? 0 : CheckpointStep(prefix);
    if (r_.recoveries >= o_.max_recoveries) {
      return absl::Status(failure.code(),
                          absl::StrCat(failure.message(), "; gave up after ", r_.recoveries,
                                       " recoveries (at most ", o_.max_recoveries, ")"));
    }
    if (r_.recoveries > 0 && prefix == last_recovered_from_ && at <= last_failed_at_) {
      return absl::Status(
          failure.code(),
          absl::StrCat(failure.message(), "; gave up after ", r_.recoveries,
                       " recoveries: it failed at step ", at, " again after going back to ",
                       prefix.empty() ? "the initial variables" : prefix));
    }
    ++r_.recoveries;
    last_recovered_from_ = prefix;
    last_failed_at_ = at;
    if (o_.on_recover) o_.on_recover(failure, prefix, resume);
    // The old session goes before what it needed (its worker processes),
    // and its queue runners before it.
    runners_.Stop();
    ts_.session.reset();
    ts_.keep.reset();
    absl::StatusOr<TrainSession> made = make_(failure);
    const std::string from = prefix.empty() ? "the initial variables" : prefix;
    if (!made.ok()) {
      return absl::Status(made.status().code(),
                          absl::StrCat("recovering from ", from, ": ", made.status().message()));
    }
    ts_ = *std::move(made);
    if (prefix.empty()) {
      GR_RETURN_IF_ERROR(o_.initialize(ts_.session.get(), ts_.graph));
    } else {
      GR_RETURN_IF_ERROR(Restore(prefix));
    }
    GR_RETURN_IF_ERROR(runners_.Start(ts_.session.get(), o_.queue_runners));
    for (auto& f : r_.fetched) f.resize(std::min<size_t>(f.size(), resume));
    r_.steps_done = resume;
    return resume;
  }

  const TrainSessionFactory& make_;
  const TrainLoopOptions& o_;
  TrainSession ts_;
  QueueRunners runners_;  // declared after ts_: stopped before it goes
  bool closed_ = false;   // close_at_end has run
  TrainLoopResult r_;
  std::vector<std::string> periodic_saves_;
  std::string last_recovered_from_;
  int last_failed_at_ = -1;
};

}  // namespace

absl::StatusOr<TrainLoopResult> RunTrainLoop(const TrainSessionFactory& make,
                                             const TrainLoopOptions& options) {
  return Loop(make, options).Run();
}

}  // namespace graphrun
