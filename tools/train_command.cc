#include "tools/train_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "graph/graph_io.h"
#include "graph/meta_graph_io.h"
#include "graph/npy.h"
#include "graph/status_macros.h"
#include "runtime/trace.h"
#include "runtime/saved_model.h"
#include "runtime/replicated_session.h"
#include "runtime/saver.h"

namespace graphrun {
namespace {

std::atomic<bool> interrupted{false};
extern "C" void OnInterrupt(int) { interrupted.store(true); }

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "graphrun train: %s\n", s.ToString().c_str());
  return 1;
}

// [N, ...] from N tensors of one dtype and shape.
absl::StatusOr<Tensor> Stack(const std::vector<Tensor>& steps, const std::string& fetch) {
  const Tensor& first = steps.front();
  TensorShape shape({static_cast<int64_t>(steps.size())});
  for (int d = 0; d < first.dims(); ++d) shape.AddDim(first.dim_size(d));
  Tensor out(first.dtype(), shape);
  const size_t bytes = first.TotalBytes();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].dtype() != first.dtype() || steps[i].shape() != first.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fetch ", fetch, " changed shape between steps: ", first.shape().DebugString(),
          " at step 0, ", steps[i].shape().DebugString(), " at step ", i,
          "; it cannot be stacked"));
    }
    if (first.dtype() == DT_STRING) {
      for (int64_t k = 0; k < first.NumElements(); ++k) {
        out.flat<std::string>()[i * first.NumElements() + k] = steps[i].flat<std::string>()[k];
      }
    } else if (bytes > 0) {
      std::memcpy(static_cast<char*>(out.raw_data()) + i * bytes, steps[i].raw_data(), bytes);
    }
  }
  return out;
}

// Slice `step` of a --feed_steps tensor, without its leading axis.
absl::StatusOr<Tensor> StepSlice(const Tensor& t, int64_t step) {
  TensorShape row = t.shape();
  row.RemoveDim(0);
  return t.Slice(step, step + 1).Reshaped(row);
}

double ScalarValue(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.flat<float>()[0];
    case DT_DOUBLE: return t.flat<double>()[0];
    case DT_INT32: return t.flat<int32_t>()[0];
    case DT_INT64: return static_cast<double>(t.flat<int64_t>()[0]);
    default: return 0;
  }
}

bool IsScalarNumber(const Tensor& t) {
  return t.NumElements() == 1 &&
         (t.dtype() == DT_FLOAT || t.dtype() == DT_DOUBLE || t.dtype() == DT_INT32 ||
          t.dtype() == DT_INT64);
}

// A line chart of `values` by step, as SVG.
std::string LossSvg(const std::string& title, const std::vector<double>& values) {
  constexpr double kW = 640, kH = 360, kLeft = 70, kRight = 20, kTop = 30, kBottom = 40;
  double lo = *std::min_element(values.begin(), values.end());
  double hi = *std::max_element(values.begin(), values.end());
  if (hi == lo) hi = lo + 1;
  const double n = std::max<double>(1, values.size() - 1);
  auto x = [&](size_t i) { return kLeft + (kW - kLeft - kRight) * i / n; };
  auto y = [&](double v) { return kTop + (kH - kTop - kBottom) * (hi - v) / (hi - lo); };
  auto num = [](double v) { return absl::StrFormat("%.1f", v); };
  const double x0 = kLeft, x1 = kW - kRight, y0 = kTop, y1 = kH - kBottom;
  std::string svg = absl::StrCat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", kW, "\" height=\"", kH,
      "\" font-family=\"sans-serif\" font-size=\"12\">\n",
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      "<text x=\"", x0, "\" y=\"18\">", title, " by step</text>\n",
      // The axes: value on the left, step along the bottom.
      "<line x1=\"", x0, "\" y1=\"", y0, "\" x2=\"", x0, "\" y2=\"", y1,
      "\" stroke=\"black\"/>\n",
      "<line x1=\"", x0, "\" y1=\"", y1, "\" x2=\"", x1, "\" y2=\"", y1,
      "\" stroke=\"black\"/>\n",
      "<text x=\"4\" y=\"", num(y0 + 4), "\">", absl::StrFormat("%.4g", hi), "</text>\n",
      "<text x=\"4\" y=\"", num(y1), "\">", absl::StrFormat("%.4g", lo), "</text>\n",
      "<text x=\"", x0, "\" y=\"", num(y1 + 16), "\">0</text>\n",
      "<text x=\"", num(x1 - 20), "\" y=\"", num(y1 + 16), "\">", values.size() - 1,
      "</text>\n");
  svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&svg, i ? " " : "", absl::StrFormat("%.1f,%.1f", x(i), y(values[i])));
  }
  svg += "\"/>\n</svg>\n";
  return svg;
}

absl::Status WriteLossCurve(const std::string& dir, const std::string& fetch,
                            const std::vector<double>& values) {
  std::string csv = absl::StrCat("step,", fetch, "\n");
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&csv, i, ",", absl::StrFormat("%.9g", values[i]), "\n");
  }
  GR_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(dir, "/loss.csv"), csv));
  return WriteFileAtomically(absl::StrCat(dir, "/loss.svg"), LossSvg(fetch, values));
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "NAME=FILE" with NAME, when it is one of `sig`'s input keys, replaced by
// the key's tensor name.
std::string FeedByKey(const SignatureDef& sig, const std::string& flag) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos) return flag;
  auto it = sig.inputs().find(flag.substr(0, eq));
  if (it == sig.inputs().end()) return flag;
  return absl::StrCat(it->second.name(), flag.substr(eq));
}

// The MetaGraphDef of --tag and signature --signature of the SavedModel
// directory run.graph: feeds given by input key become tensor names, and
// the fetches the signature's outputs (the ones --fetch names by key, or
// all of them, in sorted key order), `labels` their keys.
absl::StatusOr<std::shared_ptr<const MetaGraphDef>> SavedModelForTraining(
    TrainCommandArgs* args, std::vector<std::string>* labels) {
  RunCommandArgs& run = args->run;
  GR_ASSIGN_OR_RETURN(SavedModel saved, ReadSavedModelDir(run.graph));
  std::vector<std::string> tags = absl::StrSplit(run.tags, ',', absl::SkipWhitespace());
  GR_ASSIGN_OR_RETURN(const MetaGraphDef* found, FindMetaGraph(saved, tags, run.graph));
  auto meta = std::make_shared<const MetaGraphDef>(*found);
  GR_ASSIGN_OR_RETURN(const SignatureDef* sig, FindSignature(*meta, run.signature));
  for (std::string& f : run.feeds) f = FeedByKey(*sig, f);
  for (std::string& f : args->feed_steps) f = FeedByKey(*sig, f);
  std::vector<std::string> keys = run.fetches;
  if (keys.empty()) {
    for (const auto& [key, info] : sig->outputs()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
  }
  run.fetches.clear();
  labels->clear();
  for (const std::string& k : keys) {
    auto it = sig->outputs().find(k);
    run.fetches.push_back(it == sig->outputs().end() ? k : it->second.name());
    labels->push_back(k);
  }
  return std::shared_ptr<const MetaGraphDef>(meta);
}

}  // namespace

int TrainCommand(const TrainCommandArgs& given) {
  TrainCommandArgs args = given;
  const RunCommandArgs& run = args.run;
  // A .meta (MetaGraphDef) names its train op, its variables' initializers
  // and its Saver; a GraphDef needs --train, and --init or --restore.
  absl::StatusOr<GraphDef> graph;
  std::optional<SaverDef> saver;
  // A SavedModel directory: each step calls signature --signature, its
  // input keys fed, its output keys fetched (all of them without --fetch).
  std::shared_ptr<const MetaGraphDef> saved_model;
  std::vector<std::string> labels = run.fetches;  // how fetches are named
  if (IsDirectory(run.graph)) {
    absl::StatusOr<std::shared_ptr<const MetaGraphDef>> meta =
        SavedModelForTraining(&args, &labels);
    if (!meta.ok()) return Fail(meta.status());
    saved_model = *meta;
    graph = saved_model->graph_def();
    if (!saved_model->saver_def().restore_op_name().empty()) saver = saved_model->saver_def();
  } else if (absl::EndsWith(run.graph, ".meta")) {
    absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(run.graph);
    if (!meta.ok()) return Fail(meta.status());
    absl::StatusOr<TrainingMetaGraph> training = ExtractTrainingMetaGraph(*meta);
    if (!training.ok()) return Fail(training.status());
    graph = training->graph_def;
    if (training->has_saver_def) saver = training->saver_def;
    if (args.train_op.empty() && !training->train_op_names.empty()) {
      args.train_op = training->train_op_names.front();
    }
    if (args.init_ops.empty() && args.restore.empty()) {
      for (const MetaGraphVariable& v : training->variables) {
        args.init_ops.push_back(std::string(absl::StripSuffix(v.initializer_name, ":0")));
      }
    }
  } else {
    graph = ReadGraphDefFile(run.graph);
  }
  if (!graph.ok()) return Fail(graph.status());
  if (args.train_op.empty() && saved_model == nullptr) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "give the train op: --train OP (", run.graph, " names none in a train_op collection)")));
  }
  if (run.steps < 0) return Fail(absl::InvalidArgumentError("--steps must be >= 0"));
  if (args.save_every < 0) return Fail(absl::InvalidArgumentError("--save_every must be >= 0"));
  if (args.save_every > 0 && args.save.empty()) {
    return Fail(absl::InvalidArgumentError("--save_every needs --save PREFIX"));
  }
  if (args.recover && (args.save_every < 1 ||
                       (run.local_workers < 1 && run.cluster_file.empty()))) {
    return Fail(absl::InvalidArgumentError(
        "--recover needs workers (--local_workers or --cluster) and checkpoints to recover "
        "from (--save PREFIX --save_every K)"));
  }
  if (!args.restore.empty() && !args.init_ops.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--restore and --init both set the variables: give one"));
  }
  for (const std::string& op : [&] {
         std::vector<std::string> ops = args.init_ops;
         if (!args.train_op.empty()) ops.push_back(args.train_op);
         return ops;
       }()) {
    const bool found = std::any_of(graph->node().begin(), graph->node().end(),
                                   [&](const NodeDef& n) { return n.name() == op; });
    if (!found) {
      return Fail(absl::NotFoundError(absl::StrCat("op '", op, "' is not in ", run.graph)));
    }
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& f : run.feeds) {
    auto feed = ReadFeedFlag(f);
    if (!feed.ok()) return Fail(feed.status());
    feeds.push_back(*std::move(feed));
  }
  std::vector<std::pair<std::string, Tensor>> step_feeds;
  for (const std::string& f : args.feed_steps) {
    auto feed = ReadFeedFlag(f);
    if (!feed.ok()) return Fail(feed.status());
    if (feed->second.dims() == 0 || feed->second.dim_size(0) < run.steps) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--feed_steps ", f, ": needs a leading step axis of at least --steps=", run.steps,
          ", has shape ", feed->second.shape().DebugString())));
    }
    step_feeds.push_back(*std::move(feed));
  }
  std::vector<std::string> out_paths;
  if (!run.out_dir.empty()) {
    absl::Status s = PrepareOutDir(run.out_dir);
    if (!s.ok()) return Fail(s);
    for (const std::string& f : labels) {
      out_paths.push_back(absl::StrCat(run.out_dir, "/", FetchFileName(f)));
    }
  }

  if (!args.save.empty()) {
    // The checkpoint's directory, checked (and made) before any step runs.
    absl::Status s = PrepareOutDir(CheckpointDirectory(args.save));
    if (!s.ok()) {
      return Fail(absl::Status(s.code(), absl::StrCat("--save ", args.save, ": ", s.message())));
    }
  }
  const bool replicated = args.replicas.replicas > 1;
  auto new_session = [&]() {
    return replicated ? NewReplicatedRunSession(run, *graph, args.replicas)
                      : NewRunSession(run, *graph);
  };
  absl::StatusOr<RunSession> made = new_session();
  if (!made.ok()) return Fail(made.status());
  Session* session = made->session.get();
  // Replicas: replica 0's variables copied to the others once set, and,
  // with --check_replicas, compared after every step.
  auto broadcast = [&]() -> absl::Status {
    return replicated ? static_cast<ReplicatedSession*>(session)->Broadcast() : absl::OkStatus();
  };
  std::vector<Tensor> outputs;
  // Sets the variables from the checkpoint at `prefix`, with the graph's own
  // Saver when it has one.
  auto restore_from = [&](const std::string& given_prefix) -> absl::Status {
    if (saver.has_value()) {
      // The graph's own Saver: RestoreV2 and its Assigns.
      GR_ASSIGN_OR_RETURN(std::string prefix, ResolveCheckpointPrefix(given_prefix));
      absl::Status s = session->Run(
          {{saver->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}}, {},
          {saver->restore_op_name()}, &outputs);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("restoring ", prefix, ": ", s.message()));
      }
      if (!run.quiet) std::cout << "restored " << prefix << " with the graph's Saver\n";
      return broadcast();
    }
    GR_ASSIGN_OR_RETURN(int restored, RestoreVariables(made->graph, session, given_prefix));
    if (!run.quiet) {
      std::cout << "restored " << restored << " variable(s) from " << given_prefix << "\n";
    }
    return broadcast();
  };
  if (!args.init_ops.empty()) {
    absl::Status s = session->Run(feeds, {}, args.init_ops, &outputs);
    if (!s.ok()) return Fail(absl::Status(s.code(), absl::StrCat("--init: ", s.message())));
    s = broadcast();
    if (!s.ok()) return Fail(s);
  }
  if (!args.restore.empty()) {
    absl::Status s = restore_from(args.restore);
    if (!s.ok()) return Fail(s);
  }
  if (args.wait_for_variables_s > 0) {
    absl::Status s =
        WaitForVariables(made->graph, session, absl::Seconds(args.wait_for_variables_s));
    if (!s.ok()) return Fail(s);
  }

  if (saved_model != nullptr) {
    // The SavedModel's variables (unless --restore or --init set them),
    // then its init op, as its loader would.
    absl::Status s = RestoreAndInitialize(session, *saved_model, run.graph,
                                          args.restore.empty() && args.init_ops.empty());
    if (s.ok()) s = broadcast();
    if (!s.ok()) return Fail(s);
  }

  std::signal(SIGINT, OnInterrupt);
  const bool tty = isatty(fileno(stderr));
  std::vector<std::vector<Tensor>> fetched(run.fetches.size());
  std::vector<Tensor> last;  // the last step's fetches
  std::vector<double> curve;
  const bool has_curve = !run.fetches.empty();
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  int done = 0;
  std::vector<double> step_ms;
  RunMetadata metadata;
  // Periodic saves go to PREFIX-<step> (as TensorFlow's Saver names them
  // with a global step), the newest kKeepPeriodic kept; the last one to
  // PREFIX. Each is published in the `checkpoint` file only once complete,
  // so a kill at any moment leaves the newest complete checkpoint named
  // there.
  constexpr size_t kKeepPeriodic = 5;
  std::vector<std::string> periodic_saves;
  auto save = [&](int step, bool periodic) -> absl::Status {
    const std::string prefix = periodic ? absl::StrCat(args.save, "-", step) : args.save;
    int saved = 0;
    if (saver.has_value()) {
      // The graph's own Saver: SaveV2 over its variables.
      std::vector<Tensor> unused;
      absl::Status s = session->Run(
          {{saver->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}},
          {saver->save_tensor_name()}, {}, &unused);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("saving ", prefix, ": ", s.message()));
      }
    } else {
      GR_ASSIGN_OR_RETURN(saved, SaveVariables(made->graph, session, prefix));
    }
    std::vector<std::string> dropped;
    if (periodic) {
      periodic_saves.push_back(prefix);
      if (periodic_saves.size() > kKeepPeriodic) {
        dropped.push_back(periodic_saves.front());
        periodic_saves.erase(periodic_saves.begin());
      }
    }
    GR_RETURN_IF_ERROR(UpdateCheckpointState(prefix, dropped));
    for (const std::string& d : dropped) RemoveCheckpoint(d);
    if (periodic && !run.quiet && !tty) {
      std::cout << "step " << step << ": saved "
                << (saver.has_value() ? "" : absl::StrCat(saved, " variable(s) ")) << "to "
                << prefix << "\n";
    }
    return absl::OkStatus();
  };
  // --recover: a step or periodic save that fails because a task went away
  // (UNAVAILABLE, ABORTED) starts the session again (and the local tasks),
  // restores the newest complete checkpoint of --save and goes on from its
  // step, dropping the fetches of the steps after it. It gives up when a
  // recovery makes no progress (the same checkpoint twice in a row) or
  // after kMaxRecoveries. Returns the step to run next.
  constexpr int kMaxRecoveries = 10;
  int recoveries = 0;
  std::string last_recovered_from;
  auto recover = [&](const absl::Status& failure) -> absl::StatusOr<int> {
    const bool task_gone = failure.code() == absl::StatusCode::kUnavailable ||
                           failure.code() == absl::StatusCode::kAborted;
    if (!args.recover || !task_gone) return failure;
    absl::StatusOr<std::string> newest = ResolveCheckpointPrefix(CheckpointDirectory(args.save));
    if (!newest.ok()) {
      return absl::Status(failure.code(), absl::StrCat(failure.message(),
                                                       "; no checkpoint to recover from: ",
                                                       newest.status().message()));
    }
    const std::string prefix = *newest;
    int resume = 0;
    const size_t dash = prefix.rfind('-');
    if (dash == std::string::npos || !absl::SimpleAtoi(prefix.substr(dash + 1), &resume)) {
      return absl::Status(failure.code(), absl::StrCat(failure.message(), "; ", prefix,
                                                       " names no step to resume from"));
    }
    if (++recoveries > kMaxRecoveries || prefix == last_recovered_from) {
      return absl::Status(failure.code(),
                          absl::StrCat(failure.message(), "; gave up after ", recoveries - 1,
                                       " recoveries (the last from ", last_recovered_from, ")"));
    }
    last_recovered_from = prefix;
    std::fprintf(stderr, "graphrun train: %s\ngraphrun train: recovering from %s (step %d)\n",
                 std::string(failure.message()).c_str(), prefix.c_str(), resume);
    made->session.reset();
    made->keep.reset();  // the local tasks stop
    made = new_session();
    if (!made.ok()) return made.status();
    session = made->session.get();
    GR_RETURN_IF_ERROR(restore_from(prefix));
    for (auto& f : fetched) f.resize(std::min<size_t>(f.size(), resume));
    curve.resize(std::min<size_t>(curve.size(), resume));
    periodic_saves.erase(std::remove_if(periodic_saves.begin(), periodic_saves.end(),
                                        [&](const std::string& p) {
                                          int k = 0;
                                          return absl::SimpleAtoi(p.substr(p.rfind('-') + 1), &k) &&
                                                 k > resume;
                                        }),
                         periodic_saves.end());
    done = resume;
    return resume;
  };
  for (int step = 0; step < run.steps && !interrupted.load(); ++step) {
    std::vector<std::pair<std::string, Tensor>> step_in = feeds;
    for (const auto& [name, t] : step_feeds) {
      absl::StatusOr<Tensor> slice = StepSlice(t, step);
      if (!slice.ok()) return Fail(slice.status());
      step_in.emplace_back(name, *std::move(slice));
    }
    const auto t0 = std::chrono::steady_clock::now();
    RunOptions run_options;
    run_options.set_timeout_in_ms(run.timeout_ms);
    const bool trace = !run.trace_path.empty() && step + 1 == run.steps;
    if (trace) run_options.set_trace_level(RunOptions::FULL_TRACE);
    std::vector<std::string> targets;
    if (!args.train_op.empty()) targets.push_back(args.train_op);
    absl::Status s = session->Run(run_options, step_in, run.fetches, targets, &outputs,
                                  trace ? &metadata : nullptr);
    step_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!s.ok()) {
      if (tty) std::fputc('\n', stderr);
      s = absl::Status(s.code(), absl::StrCat("step ", step, ": ", s.message()));
      absl::StatusOr<int> resumed = recover(s);
      if (!resumed.ok()) return Fail(resumed.status());
      step = *resumed - 1;
      continue;
    }
    if (replicated && args.replicas.check_replicas) {
      s = static_cast<ReplicatedSession*>(session)->CheckReplicasEqual();
      if (!s.ok()) return Fail(absl::Status(s.code(), absl::StrCat("after step ", step, ": ", s.message())));
    }
    // Every step's fetches are kept only to be stacked into --out.
    if (!out_paths.empty()) {
      for (size_t i = 0; i < outputs.size(); ++i) fetched[i].push_back(outputs[i]);
    }
    last = outputs;
    if (has_curve && IsScalarNumber(outputs[0])) curve.push_back(ScalarValue(outputs[0]));
    done = step + 1;
    const auto now = std::chrono::steady_clock::now();
    if (tty && (done == run.steps || now - last_report > std::chrono::milliseconds(200))) {
      last_report = now;
      const double secs = std::chrono::duration<double>(now - start).count();
      std::string line = absl::StrFormat("\rstep %d/%d  %.1f steps/s", done, run.steps,
                                         done / std::max(secs, 1e-9));
      if (!curve.empty()) absl::StrAppend(&line, "  ", labels[0], " ", curve.back());
      std::fputs(line.c_str(), stderr);
      std::fflush(stderr);
    }
    if (args.save_every > 0 && done % args.save_every == 0 && done != run.steps) {
      absl::Status saved = save(done, /*periodic=*/true);
      if (!saved.ok()) {
        absl::StatusOr<int> resumed = recover(saved);
        if (!resumed.ok()) return Fail(resumed.status());
        step = *resumed - 1;
      }
    }
  }
  if (tty) std::fputc('\n', stderr);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!args.save.empty()) {
    absl::Status saved = save(done, /*periodic=*/false);
    if (!saved.ok()) return Fail(saved);
  }
  for (size_t i = 0; i < run.fetches.size() && done > 0; ++i) {
    if (!run.quiet) {
      std::cout << labels[i] << ": " << Summary(last[i]) << " (step " << done - 1 << ")\n";
    }
    if (!out_paths.empty()) {
      absl::StatusOr<Tensor> stacked = Stack(fetched[i], labels[i]);
      if (!stacked.ok()) return Fail(stacked.status());
      absl::Status s = WriteNpyFile(out_paths[i], *stacked);
      if (!s.ok()) return Fail(s);
    }
  }
  if (!run.out_dir.empty() && curve.size() == static_cast<size_t>(done) && done > 0) {
    absl::Status s = WriteLossCurve(run.out_dir, labels[0], curve);
    if (!s.ok()) return Fail(s);
  }
  if (!run.trace_path.empty() && metadata.has_step_stats()) {
    absl::Status s =
        WriteFileAtomically(run.trace_path, StepStatsToChromeTrace(metadata.step_stats()));
    if (!s.ok()) return Fail(s);
    if (!run.quiet) std::cout << "wrote trace of the last step " << run.trace_path << "\n";
  }
  if (!run.quiet) {
    std::cout << absl::StrFormat("%d steps in %.3f s: %.1f steps/s", done, total_s,
                                 done / std::max(total_s, 1e-9));
    if (!step_ms.empty()) {
      // The first step builds the plan: the median is of the others.
      std::vector<double> sorted(step_ms.begin() + (step_ms.size() > 1 ? 1 : 0), step_ms.end());
      std::sort(sorted.begin(), sorted.end());
      std::cout << absl::StrFormat(", median step %.3f ms", sorted[sorted.size() / 2]);
    }
    std::cout << "\n";
    if (!args.save.empty()) std::cout << "saved checkpoint " << args.save << "\n";
  }
  if (interrupted.load()) {
    std::fprintf(stderr, "graphrun train: interrupted after step %d\n", done);
    return 130;
  }
  return 0;
}

}  // namespace graphrun
