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
#include <functional>
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
#include "distributed/cluster_spec.h"
#include "placer/device_name.h"
#include "placer/task_moves.h"
#include "tools/queue_closers.h"
#include "runtime/trace.h"
#include "runtime/saved_model.h"
#include "runtime/replicated_session.h"
#include "runtime/saver.h"
#include "runtime/train_loop.h"

namespace graphrun {
namespace {

using distributed::ClusterSpec;
using distributed::TaskDeviceName;
using distributed::TaskRef;

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

// --recover_with=remaining: leaves the worker tasks that `gone` names (task
// name -> why) out of the next session's tasks and moves their nodes in
// `graph` to the workers left, each in turn. Local tasks are started anew,
// renumbered 0..n-1; a --cluster's keep their indices. ps tasks, which hold
// variables, are not left out. Returns a line saying what changed, "" when
// no worker task is gone.
absl::StatusOr<std::string> LeaveOutGoneWorkers(const std::map<std::string, std::string>& gone,
                                                const std::string& given_client_task,
                                                RunCommandArgs* run, GraphDef* graph) {
  std::vector<int> workers, lost;
  std::string why;
  const bool local = run->local_workers > 0;
  if (local) {
    for (int i = 0; i < run->local_workers; ++i) workers.push_back(i);
  }
  auto worker_index = [](const std::string& task) {
    absl::StatusOr<placer::DeviceName> name = placer::ParseDeviceName(task);
    return name.ok() && name->has_task && name->job == "worker" ? name->task : -1;
  };
  for (const auto& [task, reason] : gone) {
    const int index = worker_index(task);
    if (index < 0) continue;
    lost.push_back(index);
    absl::StrAppend(&why, why.empty() ? "" : "; ", reason);
  }
  if (lost.empty()) return std::string();
  if (!local) {
    GR_ASSIGN_OR_RETURN(ClusterSpec cluster, LoadRunCluster(*run));
    for (const TaskRef& t : cluster.AllTasks()) {
      const std::string name = TaskDeviceName(t);
      if (t.job == "worker" && std::find(run->left_out_tasks.begin(), run->left_out_tasks.end(),
                                         name) == run->left_out_tasks.end()) {
        workers.push_back(t.index);
      }
    }
  }
  absl::StatusOr<std::map<int, int>> moves = placer::MovesWithout(workers, lost, local);
  if (!moves.ok()) {
    if (moves.status().code() != absl::StatusCode::kFailedPrecondition) return moves.status();
    return absl::Status(moves.status().code(),
                        absl::StrCat("no worker task left to go on with (", why, ")"));
  }
  GR_RETURN_IF_ERROR(placer::MoveTasks(graph, {{"worker", *moves}}).status());
  std::string moved;
  for (int t : lost) absl::StrAppend(&moved, moved.empty() ? "" : ", ", t, " -> ", (*moves)[t]);
  const int left = static_cast<int>(workers.size() - lost.size());
  if (local) {
    run->local_workers = left;
    run->client_task.clear();
  } else {
    for (int t : lost) {
      const std::string name = TaskDeviceName(TaskRef{"worker", t});
      if (given_client_task == name) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the client's own task ", name, " is gone (", why,
            "); its replica cannot go on without it"));
      }
      // A client task picked here (the first worker left) is picked anew.
      if (run->client_task == name) run->client_task.clear();
      run->left_out_tasks.push_back(name);
    }
    if (run->client_task.empty()) {
      // Feeds and fetches go through the first worker left (the default,
      // worker 0, may be gone).
      for (const auto& [from, to] : *moves) {
        if (std::find(lost.begin(), lost.end(), from) == lost.end()) {
          run->client_task = TaskDeviceName(TaskRef{"worker", to});
          break;
        }
      }
    }
  }
  return absl::StrCat("going on with the ", left, " worker task(s) left: the nodes of worker ",
                      "task ", moved, local ? " (renumbered)" : "", " (", why, ")");
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
  if (args.warmup_steps < 0) {
    return Fail(absl::InvalidArgumentError("--warmup_steps must be >= 0"));
  }
  if (args.first_step < 0) {
    return Fail(absl::InvalidArgumentError("--first_step must be >= 0"));
  }
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
  if (args.recover_with != "restarted" && args.recover_with != "remaining") {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--recover_with must be restarted or remaining, not '", args.recover_with, "'")));
  }
  if (args.recover_with == "remaining" && args.replicas.replicas > 1) {
    return Fail(absl::InvalidArgumentError(
        "--recover_with=remaining does not go with --replicas: each replica's share of the "
        "batch would change"));
  }
  if (!args.restore.empty() && !args.init_ops.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--restore and --init both set the variables: give one"));
  }
  for (const std::string& op : [&] {
         std::vector<std::string> ops = args.init_ops;
         ops.insert(ops.end(), args.local_init_ops.begin(), args.local_init_ops.end());
         ops.insert(ops.end(), args.queue_runners.begin(), args.queue_runners.end());
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
    if (feed->second.dims() == 0 || feed->second.dim_size(0) < args.first_step + run.steps) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--feed_steps ", f, ": needs a leading step axis of at least ",
          args.first_step > 0 ? absl::StrCat("--first_step + --steps = ", args.first_step, " + ")
                              : "--steps=",
          run.steps, ", has shape ", feed->second.shape().DebugString())));
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
  auto broadcast = [&](Session* session) -> absl::Status {
    // Replicas: replica 0's variables copied to the others once set.
    return replicated ? static_cast<ReplicatedSession*>(session)->Broadcast() : absl::OkStatus();
  };
  TrainLoopOptions loop;
  loop.train_op = args.train_op;
  loop.fetches = run.fetches;
  loop.steps = run.steps;
  loop.timeout_ms = run.timeout_ms;
  loop.feeds = [&](int step) -> absl::StatusOr<TrainFeeds> {
    TrainFeeds in = feeds;
    for (const auto& [name, t] : step_feeds) {
      GR_ASSIGN_OR_RETURN(Tensor slice, StepSlice(t, args.first_step + step));
      in.emplace_back(name, std::move(slice));
    }
    return in;
  };
  loop.saver = saver;
  // --local_init, in order: once the variables are set, and again after a
  // recovery's restore (as TensorFlow's local init op runs in every new
  // session).
  auto local_init = [&](Session* session) -> absl::Status {
    std::vector<Tensor> outputs;
    for (const std::string& op : args.local_init_ops) {
      absl::Status s = session->Run({}, {}, {op}, &outputs);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("--local_init ", op, ": ", s.message()));
      }
    }
    return absl::OkStatus();
  };
  // Sets the variables of the first session: --init, --restore (with the
  // graph's own Saver when it has one), a chief's values on the ps tasks,
  // a SavedModel's own.
  loop.initialize = [&](Session* session, const GraphDef& graph) -> absl::Status {
    std::vector<Tensor> outputs;
    if (!args.init_ops.empty()) {
      absl::Status s = session->Run(feeds, {}, args.init_ops, &outputs);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--init: ", s.message()));
      GR_RETURN_IF_ERROR(broadcast(session));
    }
    if (!args.restore.empty()) {
      if (saver.has_value()) {
        GR_ASSIGN_OR_RETURN(std::string prefix, ResolveCheckpointPrefix(args.restore));
        absl::Status s = session->Run(
            {{saver->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}}, {},
            {saver->restore_op_name()}, &outputs);
        if (!s.ok()) {
          return absl::Status(s.code(), absl::StrCat("restoring ", prefix, ": ", s.message()));
        }
        if (!run.quiet) std::cout << "restored " << prefix << " with the graph's Saver\n";
      } else {
        GR_ASSIGN_OR_RETURN(int restored, RestoreVariables(graph, session, args.restore));
        if (!run.quiet) {
          std::cout << "restored " << restored << " variable(s) from " << args.restore << "\n";
        }
      }
      GR_RETURN_IF_ERROR(broadcast(session));
    }
    if (args.wait_for_variables_s > 0) {
      // The client's own task's variables are its local ones, which
      // --local_init sets once the shared ones have values.
      absl::StatusOr<placer::DeviceName> own = placer::ParseDeviceName(run.client_task);
      GR_RETURN_IF_ERROR(WaitForVariables(
          graph, session, absl::Seconds(args.wait_for_variables_s),
          [&](const std::string&, const std::string& device) {
            if (run.client_task.empty() || !own.ok()) return true;
            absl::StatusOr<placer::DeviceName> d = placer::ParseDeviceName(device);
            return !(d.ok() && d->has_job && d->has_task && d->job == own->job &&
                     d->task == own->task);
          }));
    }
    if (saved_model != nullptr) {
      // The SavedModel's variables (unless --restore or --init set them),
      // then its init op, as its loader would.
      GR_RETURN_IF_ERROR(RestoreAndInitialize(session, *saved_model, run.graph,
                                              args.restore.empty() && args.init_ops.empty()));
      GR_RETURN_IF_ERROR(broadcast(session));
    }
    return local_init(session);
  };
  loop.after_restore = [&](Session* session) -> absl::Status {
    GR_RETURN_IF_ERROR(broadcast(session));
    return local_init(session);
  };
  loop.queue_runners = args.queue_runners;
  if (args.close_queues) loop.close_at_end = QueueCloseOps(*graph, args.queue_runners);
  if (replicated && args.replicas.check_replicas) {
    // --check_replicas: the replicas' variables compared after every step.
    loop.after_step = [](Session* session, int) {
      return static_cast<ReplicatedSession*>(session)->CheckReplicasEqual();
    };
  }
  loop.save = args.save;
  loop.save_every = args.save_every;
  loop.recover = args.recover;
  // Every step's fetches are kept only to be stacked into --out.
  loop.keep_fetches = !out_paths.empty();
  loop.trace_last_step = !run.trace_path.empty();
  loop.stop = [] { return interrupted.load(); };
  const bool tty = isatty(fileno(stderr));
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  loop.on_step = [&](int step, const std::vector<Tensor>& out) {
    const auto now = std::chrono::steady_clock::now();
    if (!tty || (step + 1 != run.steps && now - last_report <= std::chrono::milliseconds(200))) {
      return;
    }
    last_report = now;
    const double secs = std::chrono::duration<double>(now - start).count();
    std::string line = absl::StrFormat("\rstep %d/%d  %.1f steps/s", step + 1, run.steps,
                                       (step + 1) / std::max(secs, 1e-9));
    if (!out.empty() && IsScalarNumber(out[0])) {
      absl::StrAppend(&line, "  ", labels[0], " ", ScalarValue(out[0]));
    }
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  };
  loop.log = [&](const std::string& line) {
    if (!run.quiet && !tty) std::cout << line << "\n";
  };
  loop.on_recover = [&](const absl::Status& failure, const std::string& prefix, int step) {
    std::fprintf(stderr, "%sgraphrun train: %s\ngraphrun train: recovering from %s (step %d)\n",
                 tty ? "\n" : "", std::string(failure.message()).c_str(),
                 prefix.empty() ? "the initial variables" : prefix.c_str(), step);
  };
  // The sessions: the first as the flags say; after a failure, with the
  // tasks started again (or waited for), or with --recover_with=remaining
  // without the worker tasks that no longer answer. The last session's
  // tasks are kept until then so they can be asked.
  RunCommandArgs session_run = run;
  GraphDef session_graph = *graph;
  std::shared_ptr<void> last_keep;
  std::function<std::map<std::string, std::string>()> last_unreachable;
  const TrainSessionFactory make = [&](const absl::Status& failure)
      -> absl::StatusOr<TrainSession> {
    if (!failure.ok() && args.recover_with == "remaining" && last_unreachable) {
      const std::map<std::string, std::string> gone = last_unreachable();
      GR_ASSIGN_OR_RETURN(std::string note,
                          LeaveOutGoneWorkers(gone, run.client_task, &session_run,
                                              &session_graph));
      if (!note.empty()) std::fprintf(stderr, "graphrun train: %s\n", note.c_str());
    }
    last_keep.reset();
    last_unreachable = nullptr;
    GR_ASSIGN_OR_RETURN(RunSession made,
                        replicated ? NewReplicatedRunSession(session_run, session_graph,
                                                             args.replicas)
                                   : NewRunSession(session_run, session_graph));
    last_keep = made.keep;
    last_unreachable = made.unreachable_tasks;
    return TrainSession{std::move(made.session), std::move(made.graph), std::move(made.keep)};
  };

  std::signal(SIGINT, OnInterrupt);
  absl::StatusOr<TrainLoopResult> trained = RunTrainLoop(make, loop);
  if (tty) std::fputc('\n', stderr);
  if (!trained.ok()) return Fail(trained.status());
  const TrainLoopResult& r = *trained;
  const int done = r.steps_done;
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < run.fetches.size() && done > 0; ++i) {
    if (!run.quiet) {
      std::cout << labels[i] << ": " << Summary(r.last[i]) << " (step " << done - 1 << ")\n";
    }
    if (!out_paths.empty()) {
      absl::StatusOr<Tensor> stacked = Stack(r.fetched[i], labels[i]);
      if (!stacked.ok()) return Fail(stacked.status());
      absl::Status s = WriteNpyFile(out_paths[i], *stacked);
      if (!s.ok()) return Fail(s);
    }
  }
  if (!run.out_dir.empty() && done > 0 && !r.fetched.empty()) {
    // The loss curve of the first fetch, when it is a number each step.
    std::vector<double> curve;
    for (const Tensor& t : r.fetched[0]) {
      if (!IsScalarNumber(t)) break;
      curve.push_back(ScalarValue(t));
    }
    if (curve.size() == static_cast<size_t>(done)) {
      absl::Status s = WriteLossCurve(run.out_dir, labels[0], curve);
      if (!s.ok()) return Fail(s);
    }
  }
  if (!run.trace_path.empty() && r.trace.has_step_stats()) {
    absl::Status s =
        WriteFileAtomically(run.trace_path, StepStatsToChromeTrace(r.trace.step_stats()));
    if (!s.ok()) return Fail(s);
    if (!run.quiet) std::cout << "wrote trace of the last step " << run.trace_path << "\n";
  }
  if (!run.quiet) {
    std::cout << absl::StrFormat("%d steps in %.3f s: %.1f steps/s", done, total_s,
                                 done / std::max(total_s, 1e-9));
    if (!r.step_ms.empty()) {
      // The first step builds the plan: the median is of the steps after the
      // warm-up (all of them when there are no more).
      const size_t skip = std::min(r.step_ms.size() - 1, static_cast<size_t>(args.warmup_steps));
      std::vector<double> sorted(r.step_ms.begin() + skip, r.step_ms.end());
      std::sort(sorted.begin(), sorted.end());
      std::cout << absl::StrFormat(", median step %.3f ms", sorted[sorted.size() / 2]);
    }
    std::cout << "\n";
    if (!args.save.empty()) std::cout << "saved checkpoint " << args.save << "\n";
  }
  if (!r.end_of_input.empty()) {  // a queue closed: the end, as TensorFlow's sessions take it
    std::fprintf(stderr, "graphrun train: the steps ended at %s\n", r.end_of_input.c_str());
  }
  if (r.stopped) {
    std::fprintf(stderr, "graphrun train: interrupted after step %d\n", done);
    return 130;
  }
  return 0;
}

}  // namespace graphrun
