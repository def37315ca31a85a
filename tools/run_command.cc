#include "tools/run_command.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "distributed/cluster_spec.h"
#include "distributed/grpc_worker.h"
#include "distributed/master_session.h"
#include "distributed/served_worker.h"
#include "distributed/task_probe.h"
#include "distributed/wire_codec.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/npy.h"
#include "graph/status_macros.h"
#include "placer/gpu_select.h"
#include "placer/ps_placement.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_info_source.h"
#include "runtime/gpu/gpu_platform.h"
#include "runtime/saved_model.h"
#include "runtime/session.h"
#include "runtime/step_costs.h"
#include "runtime/trace.h"
#include "tools/inspect.h"
#include "tools/local_workers.h"

namespace graphrun {
// "dense/probs:1" -> "dense__probs_1.npy"; output 0 drops the index.
std::string FetchFileName(const std::string& fetch) {
  auto id = ParseTensorId(fetch);
  std::string base = id.ok() ? (id->index == 0 ? id->node : absl::StrCat(id->node, "_", id->index))
                             : fetch;
  return absl::StrCat(absl::StrReplaceAll(base, {{"/", "__"}, {":", "_"}}), ".npy");
}

absl::Status PrepareOutDir(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (mkdir(dir.c_str(), 0755) != 0) {
      return absl::PermissionDeniedError(absl::StrCat("cannot create --out directory ", dir,
                                                      ": ", std::strerror(errno)));
    }
  } else if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", dir, " is not a directory"));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("--out directory ", dir, " is not writable"));
  }
  return absl::OkStatus();
}

std::string Summary(const Tensor& t, int max_values) {
  std::string s = absl::StrCat(DataTypeString(t.dtype()), " ", t.shape().DebugString(), " [");
  const int64_t n = std::min<int64_t>(t.NumElements(), max_values);
  for (int64_t i = 0; i < n; ++i) absl::StrAppend(&s, i ? " " : "", t.ValueString(i));
  if (t.NumElements() > n) absl::StrAppend(&s, " ...");
  return s + "]";
}

absl::StatusOr<std::pair<std::string, Tensor>> ReadFeedFlag(const std::string& flag) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--feed '", flag, "' must be NAME=FILE.npy"));
  }
  GR_ASSIGN_OR_RETURN(Tensor t, ReadNpyFile(flag.substr(eq + 1)));
  return std::make_pair(flag.substr(0, eq), std::move(t));
}

namespace {

using distributed::ClusterSpec;
using distributed::LoadClusterSpecFile;
using distributed::TaskDeviceName;
using distributed::TaskRef;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "graphrun run: %s\n", s.ToString().c_str());
  return 1;
}

// The GPUs this run uses: chosen as `graphrun place` chooses them (idle
// ones first, CUDA_VISIBLE_DEVICES honoured) and claimed until the run ends,
// so that another graphrun process on the host takes another GPU. With
// --gpus=auto and no usable GPU, none, and `note` says once that the run is
// on CPU; GPUs asked for by index that cannot be used are an error.
struct RunGpus {
  std::unique_ptr<placer::GpuClaims> claims;
  std::vector<std::shared_ptr<GpuPlatform>> platforms;
  std::string choice;               // FormatGpuChoice: which GPUs, and why
  std::vector<std::string> shared;  // GpuChoice::shared
};

absl::StatusOr<RunGpus> ChooseRunGpus(const RunCommandArgs& args, std::string* note) {
  RunGpus out;
  if (args.gpus == "none") return out;
  placer::GpuSelectOptions select;
  select.gpus = args.gpus;
  select.num_gpus = args.num_gpus;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    select.has_cuda_visible_devices = true;
    select.cuda_visible_devices = v;
  }
  out.claims = std::make_unique<placer::GpuClaims>();
  std::unique_ptr<placer::GpuInfoSource> source = DefaultGpuInfoSource();
  absl::StatusOr<placer::GpuChoice> choice =
      placer::SelectGpus(select, source.get(), out.claims.get());
  const bool automatic = args.gpus == "auto";
  auto on_cpu = [note](absl::string_view why) {
    *note = absl::StrCat("graphrun: running on CPU (", why, ")");
  };
  if (!choice.ok()) {
    // Only the lack of GPUs falls back to CPU; a bad --gpus/--num_gpus is
    // an error whatever the mode.
    if (!automatic || choice.status().code() != absl::StatusCode::kUnavailable) {
      return choice.status();
    }
    on_cpu(choice.status().message());
    return out;
  }
  out.choice = placer::FormatGpuChoice(*choice);
  out.shared = choice->shared;
  for (int ordinal : choice->cuda_ordinals) {
    absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(ordinal);
    if (!platform.ok()) {
      if (!automatic) return platform.status();
      on_cpu(platform.status().message());
      out.platforms.clear();
      return out;
    }
    out.platforms.push_back(std::shared_ptr<GpuPlatform>(*std::move(platform)));
  }
  if (out.platforms.empty() && automatic) {
    std::string why;
    for (const std::string& r : choice->reasons) absl::StrAppend(&why, why.empty() ? "" : "; ", r);
    on_cpu(why.empty() ? "no GPU" : why);
  }
  return out;
}

// How many ps tasks the run has: --local_ps, or the "ps" job of --cluster
// (its tasks must be 0..M-1).
absl::StatusOr<int> CountPsTasks(const RunCommandArgs& args) {
  if (args.local_workers > 0) return args.local_ps;
  if (args.cluster_file.empty()) return 0;
  GR_ASSIGN_OR_RETURN(ClusterSpec cluster, LoadRunCluster(args));
  int n = 0;
  for (const TaskRef& t : cluster.AllTasks()) {
    if (t.job != "ps") continue;
    if (t.index != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          args.cluster_file, ": the ps tasks must be numbered 0.."
          "M-1 for variables to be placed on them; task ", t.index, " follows ", n - 1));
    }
    ++n;
  }
  return n;
}

void LogPsPlacement(const placer::PsPlacement& placed) {
  for (const placer::PsVariableSplit& s : placed.splits) {
    const std::string what = absl::StrCat(
        "'", s.variable, "'", s.variables > 1 ? absl::StrCat(" and ", s.variables - 1, " more") : "",
        " (", s.bytes, " bytes, over half a ps task's even share)");
    if (s.rows.empty()) {
      std::fprintf(stderr, "ps placement: %s stays whole: %s\n", what.c_str(), s.why_not.c_str());
    } else {
      std::fprintf(stderr, "ps placement: split %s into %zu parts of %s rows\n", what.c_str(),
                   s.rows.size(), absl::StrJoin(s.rows, ", ").c_str());
    }
  }
  for (const placer::PsVariableGroup& g : placed.groups) {
    std::fprintf(stderr, "ps placement: '%s'%s (%lld bytes) -> /job:ps/task:%d: %s\n",
                 g.variable.c_str(),
                 g.variables > 1 ? absl::StrCat(" and ", g.variables - 1, " more").c_str() : "",
                 static_cast<long long>(g.bytes), g.task, g.why.c_str());
  }
  std::string per_task;
  for (size_t k = 0; k < placed.bytes_per_task.size(); ++k) {
    absl::StrAppend(&per_task, k == 0 ? "" : ", ", "task ", k, ": ", placed.bytes_per_task[k]);
  }
  std::fprintf(stderr, "ps placement: variable bytes per ps task: %s (max/mean %.2f)\n",
               per_task.c_str(), placed.max_over_mean);
}

// The task feeds and fetches go through, as the master picks it.
std::string ClientTaskOf(const std::string& client_task,
                         const std::map<std::string, std::string>& cluster) {
  if (!client_task.empty()) return client_task;
  for (const char* task : {"/job:chief/replica:0/task:0", "/job:worker/replica:0/task:0"}) {
    if (cluster.count(task) > 0) return task;
  }
  return cluster.empty() ? "" : cluster.begin()->first;
}

// --in_process_worker: serves `task` from this process on `listen`
// ("host:port", port 0: any); *connect then reaches it without a socket.
// Returns the address it serves on.
absl::StatusOr<std::string> ServeClientTask(const RunCommandArgs& args,
                                            const GrpcSecurity& security,
                                            const std::string& task, const std::string& listen,
                                            ConnectFn* connect) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("task ", task, ": address '", listen,
                                                   "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  WorkerOptions worker;
  worker.task_name = task;
  worker.cpu_devices = args.cpu_devices;
  worker.inter_op_threads = args.inter_op_threads;
  worker.intra_op_threads = args.intra_op_threads;
  worker.connect = *connect;
  // Tensor bytes travel in the clear on the data plane: with TLS they stay
  // inside the encrypted gRPC calls.
  worker.data_plane = !security.tls();
  worker.data_plane_host = host;
  GrpcWorkerServerOptions server;
  server.listen_address = listen;
  server.security = security;
  absl::StatusOr<std::shared_ptr<ServedWorker>> served = ServedWorker::Start(worker, server);
  if (!served.ok()) {
    return absl::Status(served.status().code(),
                        absl::StrCat("--in_process_worker: serving ", task, " here: ",
                                     served.status().message()));
  }
  *connect = (*served)->ConnectWithSelf(*connect);
  return absl::StrCat(listen.substr(0, colon), ":", (*served)->port());
}

// A MasterSession over the workers of --cluster, or over --local_workers
// started here (kept in *local until the run ends).
absl::StatusOr<std::unique_ptr<Session>> NewDistributedSession(
    const RunCommandArgs& given, const GraphDef& graph, const SessionOptions& options,
    std::unique_ptr<LocalWorkers>* local, RunSession* out) {
  RunCommandArgs args = given;
  if (args.local_workers > 1 && args.intra_op_threads == 0) {
    // Local worker tasks share this machine's cores: each kernel's threads
    // take its share (as DDP's one OpenMP thread per process on a core
    // each), rather than every task spreading over every core. Measured on
    // two cores, 2 replicas over 2 worker processes: MLP step 0.92x, CNN
    // 0.86x against a thread per core in each task.
    cpu_set_t cpus;
    const int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0
                          ? CPU_COUNT(&cpus)
                          : static_cast<int>(std::thread::hardware_concurrency());
    args.intra_op_threads = std::max(1, cores / args.local_workers);
  }
  if (!args.cluster_file.empty() && args.local_workers > 0) {
    return absl::InvalidArgumentError("give --cluster or --local_workers, not both");
  }
  MasterSessionOptions master;
  master.session = options;
  GR_ASSIGN_OR_RETURN(WireCompression wire, ParseWireCompression(args.wire_compression));
  master.wire_encoding = wire == WireCompression::kNone   ? WIRE_ENCODING_NONE
                         : wire == WireCompression::kBf16 ? WIRE_ENCODING_BF16
                                                          : WIRE_ENCODING_FP16;
  master.wire_gradients_only = CompressesGradientsOnly(wire);
  if (args.connect_timeout_s < 1) {
    return absl::InvalidArgumentError("--connect_timeout_s must be at least 1");
  }
  master.connect_timeout = absl::Seconds(args.connect_timeout_s);
  master.client_task = args.client_task;
  GR_ASSIGN_OR_RETURN(GrpcSecurity security, LoadGrpcSecurity(args.auth_token_file, args.tls_cert,
                                                             args.tls_key, args.tls_ca));
  master.connect = GrpcConnectFn(security);
  if (args.local_workers > 0) {
    std::vector<std::string> worker_args = {
        absl::StrCat("--cpu_devices=", args.cpu_devices),
        absl::StrCat("--inter_op_threads=", args.inter_op_threads),
        absl::StrCat("--intra_op_threads=", args.intra_op_threads)};
    if (!args.auth_token_file.empty()) {
      worker_args.push_back(absl::StrCat("--auth_token_file=", args.auth_token_file));
    }
    if (!args.tls_cert.empty()) {
      worker_args.push_back(absl::StrCat("--tls_cert=", args.tls_cert));
      worker_args.push_back(absl::StrCat("--tls_key=", args.tls_key));
    }
    if (!args.tls_ca.empty()) worker_args.push_back(absl::StrCat("--tls_ca=", args.tls_ca));
    int skip = -1;
    if (args.in_process_worker) {
      const std::string prefix = "/job:worker/replica:0/task:";
      const std::string own =
          args.client_task.empty() ? absl::StrCat(prefix, 0) : args.client_task;
      if (own.rfind(prefix, 0) != 0 || !absl::SimpleAtoi(own.substr(prefix.size()), &skip) ||
          skip < 0 || skip >= args.local_workers) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--in_process_worker: the client's task ", own, " is not one of the ",
            args.local_workers, " local worker tasks"));
      }
    }
    GR_ASSIGN_OR_RETURN(*local, LocalWorkers::Start(args.local_workers, worker_args,
                                                    args.local_ps, skip));
    if (skip >= 0) {
      GR_ASSIGN_OR_RETURN(
          std::string address,
          ServeClientTask(args, security, absl::StrCat("/job:worker/replica:0/task:", skip),
                          "127.0.0.1:0", &master.connect));
      (*local)->AddTask(absl::StrCat("/job:worker/replica:0/task:", skip), address);
    }
    master.cluster = (*local)->cluster();
  } else {
    GR_ASSIGN_OR_RETURN(ClusterSpec cluster, LoadRunCluster(args));
    for (const TaskRef& t : cluster.AllTasks()) {
      const std::string task = TaskDeviceName(t);
      if (std::find(args.left_out_tasks.begin(), args.left_out_tasks.end(), task) !=
          args.left_out_tasks.end()) {
        continue;
      }
      GR_ASSIGN_OR_RETURN(std::string address, cluster.TaskAddress(t));
      master.cluster[task] = address;
    }
    if (args.in_process_worker) {
      const std::string own = ClientTaskOf(args.client_task, master.cluster);
      auto it = master.cluster.find(own);
      if (it == master.cluster.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--in_process_worker: the client's task ", own, " is not in ", args.cluster_file));
      }
      GR_RETURN_IF_ERROR(
          ServeClientTask(args, security, own, it->second, &master.connect).status());
    }
  }
  out->cluster = master.cluster;
  out->unreachable_tasks = [cluster = master.cluster, connect = master.connect] {
    return UnreachableTasks(cluster, connect, absl::Seconds(5));
  };
  return NewMasterSession(graph, master);
}

}  // namespace

absl::StatusOr<RunSession> NewRunSession(const RunCommandArgs& args, const GraphDef& given) {
  if (args.local_ps != 0 && args.local_workers < 1) {
    return absl::InvalidArgumentError("--local_ps=M needs --local_workers=N beside it");
  }
  GR_ASSIGN_OR_RETURN(const int ps_tasks, CountPsTasks(args));
  if (args.ps_placement != "pinned" && args.ps_placement != "auto") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ps_placement must be pinned or auto, not '", args.ps_placement, "'"));
  }
  GraphDef edited;
  if (args.clear_devices || ps_tasks > 0) {
    edited = given;
    if (args.clear_devices) {
      for (NodeDef& node : *edited.mutable_node()) node.clear_device();
      for (FunctionDef& f : *edited.mutable_library()->mutable_function()) {
        for (NodeDef& node : *f.mutable_node_def()) node.clear_device();
      }
    }
    if (ps_tasks > 0) {
      placer::PsPlacementOptions ps;
      ps.num_ps_tasks = ps_tasks;
      ps.override_pins = args.ps_placement == "auto";
      if (args.ps_min_part_bytes < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--ps_min_part_bytes must be >= 0, not ", args.ps_min_part_bytes));
      }
      ps.min_part_bytes = args.ps_min_part_bytes;
      GR_ASSIGN_OR_RETURN(placer::PsPlacement placed, placer::PlaceVariablesOnPs(&edited, ps));
      if (args.log_device_placement) LogPsPlacement(placed);
    }
  }
  const GraphDef& graph = args.clear_devices || ps_tasks > 0 ? edited : given;
  const bool distributed = !args.cluster_file.empty() || args.local_workers > 0;
  SessionOptions options;
  options.cpu_devices = args.cpu_devices;
  options.inter_op_threads = args.inter_op_threads;
  options.intra_op_threads = args.intra_op_threads;
  options.log_device_placement = args.log_device_placement;
  options.allow_soft_placement = args.allow_soft_placement;
  options.optimize = args.optimize ? SessionOptions::Optimize::kDefault
                                   : SessionOptions::Optimize::kNone;
  options.log_optimizations = args.log_optimizations;
  options.freeze_read_only_variables = args.freeze_variables;
  options.check_numerics = args.check_numerics;
  options.cost_profile = args.costs_file;
  if (args.gpu_memory_fraction < 0 || args.gpu_memory_fraction > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpu_memory_fraction must be in [0, 1], not ", args.gpu_memory_fraction));
  }
  RunGpus gpus;
  if (!distributed) {
    std::string note;
    absl::StatusOr<RunGpus> chosen = ChooseRunGpus(args, &note);
    if (!chosen.ok()) return chosen.status();
    gpus = *std::move(chosen);
    if (!note.empty() && !args.quiet) std::fprintf(stderr, "%s\n", note.c_str());
    if (args.log_device_placement && !gpus.choice.empty()) {
      std::fprintf(stderr, "%s\n", gpus.choice.c_str());
    }
    for (const std::string& line : gpus.shared) {
      if (!args.quiet && !gpus.platforms.empty()) {
        std::fprintf(stderr, "graphrun: %s (no idle GPU)\n", line.c_str());
      }
    }
    if (!gpus.platforms.empty()) {
      GpuDeviceOptions gpu_options;
      gpu_options.memory_fraction = args.gpu_memory_fraction;
      gpu_options.allow_growth = args.gpu_allow_growth;
      options.make_gpu_devices = GpuDevicesOn(gpus.platforms, gpu_options);
    }
  }
  auto keep = std::make_shared<std::pair<RunGpus, std::unique_ptr<LocalWorkers>>>();
  keep->first = std::move(gpus);
  absl::StatusOr<std::unique_ptr<Session>> session;
  RunSession out;
  if (distributed) {
    session = NewDistributedSession(args, graph, options, &keep->second, &out);
  } else {
    session = Session::Create(graph, options);
  }
  if (!session.ok()) return session.status();
  out.session = *std::move(session);
  out.keep = std::move(keep);
  out.graph = graph;
  return out;
}

int RunCommand(const RunCommandArgs& args) {
  if (args.steps < 1) return Fail(absl::InvalidArgumentError("--steps must be >= 1"));
  if (args.local_workers < 0) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--local_workers must be >= 0, not ", args.local_workers)));
  }

  // A directory is taken for a SavedModel (a directory without one then
  // fails saying what was looked for).
  struct stat st;
  const bool directory = stat(args.graph.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  absl::StatusOr<RunPlan> plan = directory ? PlanSavedModelRun(args) : PlanGraphRun(args);
  if (!plan.ok()) return Fail(plan.status());
  return RunPlanned(args, *std::move(plan));
}

absl::StatusOr<RunPlan> PlanGraphRun(const RunCommandArgs& args) {
  RunPlan plan;
  GR_ASSIGN_OR_RETURN(plan.graph, ReadGraphDefFile(args.graph));
  std::vector<std::string> fetches = args.fetches;
  if (fetches.empty() && args.targets.empty()) {
    // No --fetch: the tensors nothing in the graph reads, as inspect lists.
    GR_ASSIGN_OR_RETURN(fetches, LikelyOutputs(plan.graph));
    if (fetches.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          args.graph, " has no output nothing reads: give at least one --fetch or --target"));
    }
  }
  for (const std::string& f : args.feeds) {
    GR_ASSIGN_OR_RETURN(auto feed, ReadFeedFlag(f));
    plan.feeds.push_back(std::move(feed));
  }
  plan.fetches = fetches;
  plan.labels = fetches;
  for (const std::string& f : fetches) plan.out_files.push_back(FetchFileName(f));
  return plan;
}

int RunPlanned(const RunCommandArgs& args, RunPlan plan) {
  const GraphDef* graph = &plan.graph;
  const std::vector<std::pair<std::string, Tensor>>& feeds = plan.feeds;
  // Check the output directory before spending time on the run.
  std::vector<std::string> out_paths;
  if (!args.out_dir.empty()) {
    absl::Status s = PrepareOutDir(args.out_dir);
    if (!s.ok()) return Fail(s);
    for (const std::string& f : plan.out_files) {
      std::string path = absl::StrCat(args.out_dir, "/", f);
      if (std::find(out_paths.begin(), out_paths.end(), path) != out_paths.end()) {
        return Fail(absl::InvalidArgumentError(absl::StrCat("two fetches map to ", path)));
      }
      out_paths.push_back(path);
    }
  }

  absl::StatusOr<RunSession> made = NewRunSession(args, *graph);
  if (!made.ok()) return Fail(made.status());
  std::unique_ptr<Session>* session = &made->session;
  if (plan.prepare) {
    absl::Status s = plan.prepare(session->get());
    if (!s.ok()) return Fail(s);
  }

  StepCostRecorder measured(*graph);

  const bool tty = isatty(fileno(stderr));
  std::vector<double> step_ms;
  std::vector<Tensor> outputs;
  RunMetadata metadata;
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  for (int step = 0; step < args.steps; ++step) {
    RunOptions run_options;
    run_options.set_timeout_in_ms(args.timeout_ms);
    const bool last = step + 1 == args.steps;
    const bool measure = !args.save_costs.empty();
    if ((last && !args.trace_path.empty()) || measure) {
      run_options.set_trace_level(RunOptions::FULL_TRACE);
    }
    if (measure) metadata.Clear();
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = (*session)->Run(run_options, feeds, plan.fetches, args.targets, &outputs,
                                     last || measure ? &metadata : nullptr);
    if (s.ok() && measure) measured.Add(metadata.step_stats());
    const auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      if (tty && args.steps > 1) std::fputc('\n', stderr);
      return Fail(args.steps > 1 ? absl::Status(s.code(), absl::StrCat("step ", step, ": ", s.message()))
                                 : s);
    }
    step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (tty && args.steps > 1 &&
        (last || t1 - last_report > std::chrono::milliseconds(200))) {
      last_report = t1;
      const double secs = std::chrono::duration<double>(t1 - start).count();
      std::fprintf(stderr, "\rstep %d/%d  %.1f steps/s", step + 1, args.steps, (step + 1) / secs);
      std::fflush(stderr);
    }
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (tty && args.steps > 1) std::fputc('\n', stderr);

  for (size_t i = 0; i < plan.fetches.size(); ++i) {
    if (!args.quiet) std::cout << plan.labels[i] << ": " << Summary(outputs[i]) << "\n";
    if (!out_paths.empty()) {
      absl::Status s = WriteNpyFile(out_paths[i], outputs[i]);
      if (!s.ok()) return Fail(s);
    }
  }
  if (!out_paths.empty() && !args.quiet) {
    std::cout << "wrote " << out_paths.size() << " .npy file(s) to " << args.out_dir << "\n";
  }
  if (args.steps > 1) {
    std::vector<double> sorted = step_ms;
    std::sort(sorted.begin(), sorted.end());
    std::cout << absl::StrFormat("%d steps in %.3f s: %.1f steps/s, median step %.3f ms\n",
                                 args.steps, total_s, args.steps / total_s,
                                 sorted[sorted.size() / 2]);
  }
  if (!args.save_costs.empty()) {
    absl::Status s = measured.costs().SaveProfile(
        args.save_costs, absl::StrCat("graphrun run ", args.graph, ", ", args.steps,
                                      " step(s); compute_us is the median"));
    if (!s.ok()) return Fail(s);
    if (!args.quiet) {
      std::cout << "wrote costs " << args.save_costs << " (use with --costs)\n";
    }
  }
  if (!args.trace_path.empty()) {
    absl::Status s = WriteFileAtomically(args.trace_path,
                                         StepStatsToChromeTrace(metadata.step_stats()));
    if (!s.ok()) return Fail(s);
    if (!args.quiet) std::cout << "wrote trace " << args.trace_path << " (open in Perfetto)\n";
  }
  return 0;
}

}  // namespace graphrun
