// graphrun: the command-line front end.
//
//   graphrun run GRAPH --fetch NAME ...     run it (see kUsage)
//   graphrun place GRAPH [--devices=...]    where each node goes and why
//   graphrun partition GRAPH --out=DIR      per-device GraphDefs
//   graphrun inspect GRAPH [--format=text|binary --out=PATH]
//
// Exit status: 0 on success, 1 on a bad graph or failed command, 2 on a
// usage error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "google/protobuf/stubs/logging.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "kernels/kernel_registry.h"
#include "absl/strings/str_split.h"
#include "tools/inspect.h"
#include "tools/saved_model_command.h"
#include "runtime/saved_model.h"
#include "tools/partition_command.h"
#include "tools/place_command.h"
#include "tools/run_command.h"
#include "tools/train_command.h"
#include "tools/worker_command.h"

ABSL_FLAG(std::string, train, "", "train: the train op, run every step");
ABSL_FLAG(std::string, restore, "",
          "train: restore the variables from this TensorFlow V2 checkpoint (prefix, or a "
          "directory with a `checkpoint` file) instead of --init");
ABSL_FLAG(std::string, save, "",
          "train: save the variables as a TensorFlow V2 checkpoint at this prefix after the "
          "last step");
ABSL_FLAG(bool, recover, false,
          "train over workers: when a task goes away, start the tasks again, restore the newest "
          "checkpoint of --save and go on from its step");
ABSL_FLAG(int, first_step, 0,
          "train: step i feeds slice first_step + i of each --feed_steps file (a run that "
          "goes on where another stopped)");
ABSL_FLAG(int, warmup_steps, 1,
          "train: the first N steps are left out of the median step time printed at the end "
          "(the first builds the plan; more let caches and the allocator settle, as benchmarks "
          "warm up)");
ABSL_FLAG(std::string, recover_with, "restarted",
          "train --recover: `restarted` (start the tasks again, or wait for them over "
          "--cluster) or `remaining` (go on without the worker tasks that are gone, their "
          "nodes moved to the workers left; ps tasks are still started again or waited for)");
ABSL_FLAG(int, replicas, 1,
          "train: data-parallel replicas (N GPUs or CPU devices of this process, or the first N "
          "worker tasks), each fed an equal slice of every batch, gradients averaged");
ABSL_FLAG(double, fusion_threshold_mb, 25,
          "train --replicas: fuse gradients into buckets of at most this many MiB; a bucket's "
          "exchange starts once the backward pass has made it");
ABSL_FLAG(std::string, allreduce, "ring",
          "train --replicas over worker tasks: how a bucket is averaged between the tasks: ring "
          "(a collective reduce each task runs over a TCP ring between them), gloo (the same "
          "over gloo's TCP ring, float32 on the wire) or graph (a reduce-scatter and all-gather "
          "in the dataflow graph, over the tasks' receives)");
ABSL_FLAG(bool, check_replicas, false,
          "train --replicas: after every step, check that every replica's variables are "
          "identical to replica 0's, bit for bit (fails naming the variable)");
ABSL_FLAG(bool, fetch_all_replicas, false,
          "train --replicas: stack each fetch over the replicas (default: a float scalar is "
          "their mean, anything else replica 0's)");
ABSL_FLAG(int, save_every, 0,
          "train: with --save, also save every K steps to PREFIX-<step> (the newest 5 kept)");
ABSL_FLAG(std::string, format, "",
          "inspect: convert the graph to this format (text or binary) "
          "instead of printing a summary");
ABSL_FLAG(std::string, out, "",
          "inspect --format: where to write the converted graph (default: "
          "stdout for text); run: directory for the fetched .npy files");
ABSL_FLAG(std::string, input_format, "auto",
          "format of GRAPH: auto (by extension, then content), text or binary");
ABSL_FLAG(std::string, signature, "serving_default",
          "run, inspect: the SavedModel signature to call (feeds and fetches by its keys)");
ABSL_FLAG(std::string, tag, "serve",
          "run, inspect: the SavedModel MetaGraphDef's tags, comma-separated (\"serve,gpu\")");
ABSL_FLAG(int, steps, 1, "run: number of steps to run (progress and steps/s shown)");
ABSL_FLAG(std::string, trace, "", "run: write a Chrome trace of the last step here");
ABSL_FLAG(int, cpu_devices, 1, "run: number of virtual CPU devices");
ABSL_FLAG(int, inter_op_threads, 0, "run: threads running ready nodes (0 = cores)");
ABSL_FLAG(int, intra_op_threads, 0, "run: threads inside big kernels (0 = cores)");
ABSL_FLAG(int64_t, timeout_ms, 0, "run: fail a step that takes longer (0 = no limit)");
ABSL_FLAG(bool, quiet, false, "run: print nothing but errors");
ABSL_FLAG(bool, ops, false,
          "inspect: list every registered op with the dtypes of its CPU and GPU kernels");
ABSL_FLAG(std::string, devices, "",
          "place: cluster description (JSON, see placer/CLUSTER_FORMAT.md); "
          "default: this machine's devices");
ABSL_FLAG(std::string, costs, "",
          "place, run: measured costs to place with (a file written by "
          "run --save_costs, or by hand: placer/COST_PROFILE.md)");
ABSL_FLAG(std::string, save_costs, "",
          "run: write each node's median measured time over the steps here");
ABSL_FLAG(bool, explain, false, "place: one line per node with the reason");
ABSL_FLAG(std::string, dot, "", "place: write a Graphviz DOT picture of the placement");
ABSL_FLAG(bool, allow_soft_placement, false,
          "place, run: let a device request no device can meet fall back");
ABSL_FLAG(bool, log_device_placement, false,
          "run: print where each node runs and why (TensorFlow's format)");
ABSL_FLAG(std::string, optimize, "default",
          "run: graph optimizer before placement: default (constant folding, "
          "dead cond branches, identity removal, arithmetic simplification, "
          "batch-norm folding, kernel fusion, common subexpressions, pruning) "
          "or none");
ABSL_FLAG(bool, log_optimizations, false, "run: print what each optimizer pass changed");
ABSL_FLAG(bool, freeze_variables, true,
          "run: a step that writes no state reads its resource variables as constants of its "
          "plan from its second run on (the optimizer then folds them as in a frozen graph); "
          "a step that writes state makes such a plan stale");
ABSL_FLAG(bool, check_numerics, false,
          "run, train: stop at the first node that outputs NaN or Inf, naming it (and the step)");
ABSL_FLAG(bool, respect_memory, true, "place: keep each device within its memory");
ABSL_FLAG(std::string, gpus, "auto",
          "place, run: GPUs to use on this machine: auto (idle ones; run claims "
          "them so another graphrun process takes others), all, none, or indices "
          "like 0,2 (CUDA_VISIBLE_DEVICES is honoured)");
ABSL_FLAG(int, num_gpus, -1,
          "place, run: with --gpus=auto, how many (-1 = every idle one)");
ABSL_FLAG(double, gpu_memory_fraction, 0,
          "run: share of each GPU's memory graphrun may take (TensorFlow's "
          "per_process_gpu_memory_fraction); 0: what is free, less a reserve");
ABSL_FLAG(bool, gpu_allow_growth, true,
          "run: take GPU memory as tensors need it (false: the whole share at once, "
          "TensorFlow's default)");
ABSL_FLAG(std::string, wire_compression, "",
          "partition, run: float32 edges between tasks travel as none, fp16 or bf16 "
          "(default: none for partition, fp16 for run over workers)");
ABSL_FLAG(std::string, cluster, "",
          "run: run on the workers of this cluster (TensorFlow ClusterSpec JSON, or TF_CONFIG: "
          "the TF_CONFIG variable's, or slurm: srun's tasks at --slurm_base_port); "
          "worker: the cluster this task belongs to");
ABSL_FLAG(int, local_workers, 0,
          "run, train: start this many worker processes on loopback, run on them, stop them");
ABSL_FLAG(bool, clear_devices, false,
          "run, train: ignore the graph's device requests (run a graph pinned to "
          "/job:ps and /job:worker in one process)");
ABSL_FLAG(std::string, ps_placement, "pinned",
          "run, train with ps tasks: pinned (keep the graph's /job:ps pins, place unpinned "
          "variables by bytes) or auto (place every variable by bytes)");
ABSL_FLAG(int64_t, ps_min_part_bytes, 256 << 10,
          "run, train with ps tasks: a variable (with its slots) being placed that holds over "
          "half a ps task's even share of the bytes is split into parts of at least this many "
          "bytes (0: never split)");
ABSL_FLAG(int, local_ps, 0,
          "run, train: with --local_workers, also start this many parameter-server "
          "processes (/job:ps/task:0..M-1) on loopback");
ABSL_FLAG(bool, in_process_worker, false,
          "run, train over workers: serve the client's own task (--job, --task; else the "
          "chief or worker 0) from this process instead of another: feeds and fetches are "
          "handed over in memory, as TensorFlow's session on a server's target");
ABSL_FLAG(std::string, job, "worker", "worker: this task's job in --cluster");
ABSL_FLAG(int, task, -1,
          "worker: this task's index in its job; run, train over --cluster: the task (of --job) "
          "whose graph replica this client drives, where feeds and fetches go");
ABSL_FLAG(int, wait_for_variables_s, 0,
          "train: before the steps, wait up to this long for another client (the chief) to "
          "set every variable");
ABSL_FLAG(bool, close_queues, true,
          "train: when the steps end, close the queues the --queue_runner ops fill (so a "
          "synchronous run's other workers stop); false keeps them open");
ABSL_FLAG(std::string, listen, "",
          "worker: serve on HOST:PORT (port 0: any) instead of the cluster's address");
ABSL_FLAG(std::string, bind_address, "",
          "worker: interface to listen on (default 127.0.0.1; 0.0.0.0 for every one)");
ABSL_FLAG(int, slurm_base_port, 8888,
          "worker, and run with --cluster=slurm: under srun, the first task's port per node");
ABSL_FLAG(std::string, auth_token_file, "",
          "worker, run: every call between master and workers carries this file's token");
ABSL_FLAG(std::string, tls_cert, "", "worker, run: PEM certificate for TLS");
ABSL_FLAG(std::string, tls_key, "", "worker, run: PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_ca, "", "worker, run: PEM CA that signed the cluster's certificates");
ABSL_FLAG(bool, data_plane, true,
          "worker: send large tensors over a TCP stream beside gRPC (off: inside gRPC "
          "calls; always off with TLS)");
ABSL_FLAG(bool, log_steps, false, "worker: print a line to stderr as each step starts and ends");
ABSL_FLAG(int, connect_timeout_s, 30,
          "run: how long to wait for the cluster's workers to answer");
ABSL_FLAG(std::string, cpu_only_ops, "",
          "place: comma-separated ops assumed to have no kernel off the CPU");

namespace graphrun {
namespace {

constexpr char kUsage[] = R"(graphrun: run TensorFlow-compatible dataflow graphs.

Usage:
  graphrun run GRAPH --fetch NAME[:k] [--feed NAME=FILE.npy] [--target NAME]
               [--out DIR] [--steps N] [--trace trace.json] [--cpu_devices N]
               [--log_device_placement] [--costs F] [--save_costs F]
               [--optimize=default|none] [--log_optimizations]
               [--freeze_variables=false]
               [--gpus=auto|all|none|0,2] [--gpu_memory_fraction=F]
               [--gpu_allow_growth=false]
                                         run the graph; --feed, --fetch and
                                         --target repeat; fetched tensors are
                                         printed and written to DIR as .npy;
                                         the idle GPUs are taken by default
  graphrun place GRAPH [--devices=cluster.json] [--costs=profile.json]
               [--explain] [--dot=placed.dot]
                                         place the graph with the cost model:
                                         per-device summary, predicted step
                                         time, why each node goes where
  graphrun partition GRAPH --out=DIR [--devices=cluster.json]
               [--wire_compression=none|fp16|bf16]
                                         place, then cut into one GraphDef per
                                         device with _Send/_Recv pairs
  graphrun run GRAPH --local_workers=N [--local_ps=M] ...
  graphrun run GRAPH --cluster=cluster.json [--auth_token_file=F]
               [--tls_cert=F --tls_key=F --tls_ca=F]
               [--wire_compression=fp16|bf16|none] [--in_process_worker]
                                         the same over worker processes: N
                                         started on loopback for this run, or
                                         a running cluster (--cluster=TF_CONFIG
                                         or --cluster=slurm: the environment's,
                                         this process's task the client's);
                                         nodes pinned to /job:worker/task:1
                                         run on that task, variables pinned
                                         to /job:ps/task:k live there across
                                         steps; the client's own task served
                                         here with --in_process_worker
  graphrun worker --cluster=cluster.json --job=worker --task=N
               [--bind_address=0.0.0.0] [--auth_token_file=F] [--tls_*=F]
                                         serve one task of a cluster (or from
                                         TF_CONFIG, or srun's environment)
                                         until SIGTERM
  graphrun train GRAPH --train OP [--init OP] [--restore PREFIX] [--steps N]
               [--feed NAME=FILE.npy] [--feed_steps NAME=FILE.npy] [--fetch T]
               [--out DIR] [--save PREFIX] [--save_every K]
               [--recover [--recover_with=restarted|remaining]]
               [--local_init OP] [--queue_runner OP] [--first_step K]
               [--warmup_steps N]
               [--replicas N [--fusion_threshold_mb MB] [--allreduce=ring|gloo|graph]
               [--check_replicas]
               [--fetch_all_replicas]] [every run option]
                                         train: --init (or --restore a TensorFlow
                                         V2 checkpoint), then N steps of the
                                         train op; each --feed_steps file has a
                                         leading step axis (step i feeds slice
                                         i); DIR/<fetch>.npy stacks each fetch
                                         over the steps, DIR/loss.csv and
                                         loss.svg chart the first; --save writes
                                         a checkpoint TensorFlow reads; Ctrl-C
                                         finishes the step, saves, exits 130;
                                         --local_init ops run in order once the
                                         variables are set (a SyncReplicas
                                         optimizer's local step and chief init),
                                         each --queue_runner op over and over on
                                         a thread while the steps run (its sync
                                         op, on the chief), its queue closed at
                                         the end (--close_queues=false: open)
  graphrun inspect GRAPH                 summary: ops, inputs, outputs, devices,
                                         ops this build cannot run, validation
                                         (exit status 1 when it fails)
  graphrun inspect GRAPH --format=text|binary [--out=PATH]
                                         convert between GraphDef formats
  graphrun inspect --ops                 every registered op, with the dtypes
                                         of its CPU and GPU kernels

GRAPH is a GraphDef in binary (.pb) or text (.pbtxt) format, or a
TensorFlow SavedModel directory: then --tag (default serve) picks its
MetaGraphDef and --signature (default serving_default) the signature whose
input and output keys --feed and --fetch name (every output without
--fetch); train calls the signature each step.
)";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "graphrun: %s\n", status.ToString().c_str());
  return 1;
}

std::string WhyCannotRun(const std::string& op) {
  if (OpRegistry::Global()->Find(op) == nullptr) return "the op is not registered in graphrun";
  if (!KernelRegistry::Global()->HasKernelForOp(op, kDeviceCpu)) {
    return "no CPU kernel in this build";
  }
  return "";
}

int Inspect(const std::vector<std::string>& args) {
  if (absl::GetFlag(FLAGS_ops) && args.empty()) {
    std::cout << RegisteredOpsTable();
    return 0;
  }
  if (args.size() != 1) {
    std::fprintf(stderr, "graphrun inspect: expected one GRAPH argument\n\n%s",
                 kUsage);
    return 2;
  }
  const std::string& path = args[0];
  if (IsSavedModelDirectory(path)) {
    // The signatures, then the chosen tag set's graph like any other.
    auto described = DescribeSavedModel(path);
    if (!described.ok()) return Fail(described.status());
    std::cout << *described << "\n";
    auto saved = ReadSavedModelDir(path);
    if (!saved.ok()) return Fail(saved.status());
    auto meta = FindMetaGraph(*saved, absl::StrSplit(absl::GetFlag(FLAGS_tag), ','), path);
    if (!meta.ok()) return Fail(meta.status());
    InspectOptions options;
    options.source = absl::StrCat(path, " (tag set ", absl::GetFlag(FLAGS_tag), ")");
    options.why_cannot_run = WhyCannotRun;
    InspectReport report = InspectGraph((*meta)->graph_def(), options);
    std::cout << report.summary;
    return report.validation.ok() ? 0 : 1;
  }
  auto in_format = ParseGraphFormat(absl::GetFlag(FLAGS_input_format));
  if (!in_format.ok()) return Fail(in_format.status());
  auto graph_def = ReadGraphDefFile(path, *in_format);
  if (!graph_def.ok()) return Fail(graph_def.status());

  const std::string format = absl::GetFlag(FLAGS_format);
  if (format.empty()) {
    InspectOptions options;
    options.source = path;
    options.why_cannot_run = WhyCannotRun;
    InspectReport report = InspectGraph(*graph_def, options);
    std::cout << report.summary;
    return report.validation.ok() ? 0 : 1;
  }
  auto out_format = ParseGraphFormat(format);
  if (!out_format.ok()) return Fail(out_format.status());
  if (*out_format == GraphFormat::kAuto) {
    return Fail(absl::InvalidArgumentError("--format must be text or binary"));
  }
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() && *out_format == GraphFormat::kBinary) {
    return Fail(absl::InvalidArgumentError(
        "--format=binary needs --out=PATH (binary is not written to a terminal)"));
  }
  if (out.empty()) {
    auto text = SerializeGraphDef(*graph_def, GraphFormat::kText);
    if (!text.ok()) return Fail(text.status());
    std::cout << *text;
    return 0;
  }
  absl::Status s = WriteGraphDefFile(out, *graph_def, *out_format);
  if (!s.ok()) return Fail(s);
  std::fprintf(stderr, "wrote %s (%d nodes, %s)\n", out.c_str(),
               graph_def->node_size(),
               *out_format == GraphFormat::kText ? "text" : "binary");
  return 0;
}

}  // namespace
}  // namespace graphrun

// --feed, --fetch and --target may repeat (and take comma-separated
// lists); absl flags keep only the last value, so they are taken out of
// argv first.
struct RepeatedFlags {
  std::vector<std::string> feeds, fetches, targets, inits, feed_steps, local_inits,
      queue_runners;
};

std::vector<char*> ExtractRepeatedFlags(int argc, char** argv, RepeatedFlags* out) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::vector<std::string>* dst = nullptr;
    std::string value;
    for (auto [name, vec] : {std::pair<const char*, std::vector<std::string>*>{"feed", &out->feeds},
                             {"fetch", &out->fetches}, {"target", &out->targets},
                             {"init", &out->inits}, {"feed_steps", &out->feed_steps},
                             {"local_init", &out->local_inits},
                             {"queue_runner", &out->queue_runners}}) {
      for (const std::string& prefix : {std::string("--") + name, std::string("-") + name}) {
        if (arg == prefix && i + 1 < argc) {
          dst = vec;
          value = argv[++i];
        } else if (arg.rfind(prefix + "=", 0) == 0) {
          dst = vec;
          value = arg.substr(prefix.size() + 1);
        }
        if (dst) break;
      }
      if (dst) break;
    }
    if (dst == nullptr) {
      rest.push_back(argv[i]);
      continue;
    }
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      if (comma > start) dst->push_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return rest;
}

// The options `run` and `train` share, from the flags; false (after a
// message) when one is invalid.
bool RunArgsFromFlags(const std::string& graph, const RepeatedFlags& repeated,
                      const char* command, graphrun::RunCommandArgs* run) {
  run->graph = graph;
  run->tags = absl::GetFlag(FLAGS_tag);
  run->signature = absl::GetFlag(FLAGS_signature);
  run->feeds = repeated.feeds;
  run->fetches = repeated.fetches;
  run->targets = repeated.targets;
  run->out_dir = absl::GetFlag(FLAGS_out);
  run->trace_path = absl::GetFlag(FLAGS_trace);
  run->steps = absl::GetFlag(FLAGS_steps);
  run->cpu_devices = absl::GetFlag(FLAGS_cpu_devices);
  run->inter_op_threads = absl::GetFlag(FLAGS_inter_op_threads);
  run->intra_op_threads = absl::GetFlag(FLAGS_intra_op_threads);
  run->timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  run->quiet = absl::GetFlag(FLAGS_quiet);
  run->log_device_placement = absl::GetFlag(FLAGS_log_device_placement);
  run->allow_soft_placement = absl::GetFlag(FLAGS_allow_soft_placement);
  const std::string optimize = absl::GetFlag(FLAGS_optimize);
  if (optimize != "default" && optimize != "none") {
    std::fprintf(stderr, "graphrun %s: --optimize must be default or none, not '%s'\n",
                 command, optimize.c_str());
    return false;
  }
  run->optimize = optimize == "default";
  run->log_optimizations = absl::GetFlag(FLAGS_log_optimizations);
  run->freeze_variables = absl::GetFlag(FLAGS_freeze_variables);
  run->check_numerics = absl::GetFlag(FLAGS_check_numerics);
  run->costs_file = absl::GetFlag(FLAGS_costs);
  run->save_costs = absl::GetFlag(FLAGS_save_costs);
  run->cluster_file = absl::GetFlag(FLAGS_cluster);
  run->local_workers = absl::GetFlag(FLAGS_local_workers);
  run->local_ps = absl::GetFlag(FLAGS_local_ps);
  run->clear_devices = absl::GetFlag(FLAGS_clear_devices);
  if (absl::GetFlag(FLAGS_task) >= 0) {
    run->client_task = absl::StrCat("/job:", absl::GetFlag(FLAGS_job),
                                    "/replica:0/task:", absl::GetFlag(FLAGS_task));
  }
  run->in_process_worker = absl::GetFlag(FLAGS_in_process_worker);
  run->ps_placement = absl::GetFlag(FLAGS_ps_placement);
  run->ps_min_part_bytes = absl::GetFlag(FLAGS_ps_min_part_bytes);
  run->auth_token_file = absl::GetFlag(FLAGS_auth_token_file);
  run->tls_cert = absl::GetFlag(FLAGS_tls_cert);
  run->tls_key = absl::GetFlag(FLAGS_tls_key);
  run->tls_ca = absl::GetFlag(FLAGS_tls_ca);
  run->connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout_s);
  run->gpus = absl::GetFlag(FLAGS_gpus);
  run->gpu_memory_fraction = absl::GetFlag(FLAGS_gpu_memory_fraction);
  run->gpu_allow_growth = absl::GetFlag(FLAGS_gpu_allow_growth);
  run->num_gpus = absl::GetFlag(FLAGS_num_gpus);
  const std::string wire = absl::GetFlag(FLAGS_wire_compression);
  if (!wire.empty()) run->wire_compression = wire;
  run->slurm_base_port = absl::GetFlag(FLAGS_slurm_base_port);
  const absl::Status cluster = graphrun::ResolveClusterSource(run);
  if (!cluster.ok()) {
    std::fprintf(stderr, "graphrun %s: %s\n", command, std::string(cluster.message()).c_str());
    return false;
  }
  return true;
}

graphrun::PlaceCommandArgs PlaceArgsFromFlags(const std::string& graph) {
  graphrun::PlaceCommandArgs place;
  place.graph = graph;
  place.devices_file = absl::GetFlag(FLAGS_devices);
  place.costs_file = absl::GetFlag(FLAGS_costs);
  place.dot_path = absl::GetFlag(FLAGS_dot);
  place.explain = absl::GetFlag(FLAGS_explain);
  place.allow_soft_placement = absl::GetFlag(FLAGS_allow_soft_placement);
  place.respect_memory = absl::GetFlag(FLAGS_respect_memory);
  place.cpu_devices = absl::GetFlag(FLAGS_cpu_devices);
  place.gpus = absl::GetFlag(FLAGS_gpus);
  place.num_gpus = absl::GetFlag(FLAGS_num_gpus);
  for (absl::string_view op : absl::StrSplit(absl::GetFlag(FLAGS_cpu_only_ops), ',',
                                             absl::SkipEmpty())) {
    place.cpu_only_ops.emplace_back(op);
  }
  return place;
}

int main(int argc, char** argv) {
  // Under `bazel run`, paths on the command line are relative to where the
  // user typed the command, not to the runfiles tree.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(dir) != 0) std::perror("graphrun: chdir");
  }
  // Protobuf would log each invalid UTF-8 string it meets; graphrun reports
  // the failed parse itself, once, with the file name.
  google::protobuf::SetLogHandler(nullptr);
  absl::SetProgramUsageMessage(graphrun::kUsage);
  RepeatedFlags repeated;
  std::vector<char*> remaining = ExtractRepeatedFlags(argc, argv, &repeated);
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(remaining.size()), remaining.data());
  if (positional.size() < 2) {
    std::fputs(graphrun::kUsage, stderr);
    return 2;
  }
  const std::string command = positional[1];
  if (absl::GetFlag(FLAGS_cpu_devices) < 1) {
    std::fprintf(stderr, "graphrun: --cpu_devices must be at least 1, not %d\n",
                 absl::GetFlag(FLAGS_cpu_devices));
    return 2;
  }
  std::vector<std::string> args(positional.begin() + 2, positional.end());
  if (command == "inspect") return graphrun::Inspect(args);
  if (command == "run") {
    if (args.size() != 1) {
      std::fprintf(stderr, "graphrun run: expected one GRAPH argument\n\n%s", graphrun::kUsage);
      return 2;
    }
    graphrun::RunCommandArgs run;
    if (!RunArgsFromFlags(args[0], repeated, "run", &run)) return 2;
    return graphrun::RunCommand(run);
  }
  if (command == "train") {
    if (args.size() != 1) {
      std::fprintf(stderr, "graphrun train: expected one GRAPH argument\n\n%s",
                   graphrun::kUsage);
      return 2;
    }
    graphrun::TrainCommandArgs train;
    if (!RunArgsFromFlags(args[0], repeated, "train", &train.run)) return 2;
    train.init_ops = repeated.inits;
    train.feed_steps = repeated.feed_steps;
    train.local_init_ops = repeated.local_inits;
    train.first_step = absl::GetFlag(FLAGS_first_step);
    train.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
    train.queue_runners = repeated.queue_runners;
    train.close_queues = absl::GetFlag(FLAGS_close_queues);
    train.train_op = absl::GetFlag(FLAGS_train);
    train.restore = absl::GetFlag(FLAGS_restore);
    train.save = absl::GetFlag(FLAGS_save);
    train.save_every = absl::GetFlag(FLAGS_save_every);
    train.recover = absl::GetFlag(FLAGS_recover);
    train.recover_with = absl::GetFlag(FLAGS_recover_with);
    train.wait_for_variables_s = absl::GetFlag(FLAGS_wait_for_variables_s);
    train.replicas.replicas = absl::GetFlag(FLAGS_replicas);
    train.replicas.fusion_threshold_mb = absl::GetFlag(FLAGS_fusion_threshold_mb);
    train.replicas.allreduce = absl::GetFlag(FLAGS_allreduce);
    train.replicas.check_replicas = absl::GetFlag(FLAGS_check_replicas);
    train.replicas.fetch_all_replicas = absl::GetFlag(FLAGS_fetch_all_replicas);
    return graphrun::TrainCommand(train);
  }
  if (command == "worker") {
    if (!args.empty()) {
      std::fprintf(stderr, "graphrun worker: takes no arguments\n\n%s", graphrun::kUsage);
      return 2;
    }
    graphrun::WorkerCommandArgs worker;
    worker.listen = absl::GetFlag(FLAGS_listen);
    worker.cluster_file = absl::GetFlag(FLAGS_cluster);
    worker.job = absl::GetFlag(FLAGS_job);
    worker.task = absl::GetFlag(FLAGS_task);
    worker.bind_address = absl::GetFlag(FLAGS_bind_address);
    worker.slurm_base_port = absl::GetFlag(FLAGS_slurm_base_port);
    worker.auth_token_file = absl::GetFlag(FLAGS_auth_token_file);
    worker.tls_cert = absl::GetFlag(FLAGS_tls_cert);
    worker.tls_key = absl::GetFlag(FLAGS_tls_key);
    worker.tls_ca = absl::GetFlag(FLAGS_tls_ca);
    worker.cpu_devices = absl::GetFlag(FLAGS_cpu_devices);
    worker.inter_op_threads = absl::GetFlag(FLAGS_inter_op_threads);
    worker.intra_op_threads = absl::GetFlag(FLAGS_intra_op_threads);
    worker.log_steps = absl::GetFlag(FLAGS_log_steps);
    worker.data_plane = absl::GetFlag(FLAGS_data_plane);
    return graphrun::WorkerCommand(worker);
  }
  if (command == "place") {
    if (args.size() != 1) {
      std::fprintf(stderr, "graphrun place: expected one GRAPH argument\n\n%s", graphrun::kUsage);
      return 2;
    }
    graphrun::PlaceCommandArgs place = PlaceArgsFromFlags(args[0]);
    return graphrun::PlaceCommand(place);
  }
  if (command == "partition") {
    if (args.size() != 1) {
      std::fprintf(stderr, "graphrun partition: expected one GRAPH argument\n\n%s",
                   graphrun::kUsage);
      return 2;
    }
    graphrun::PartitionCommandArgs partition;
    partition.place = PlaceArgsFromFlags(args[0]);
    partition.out_dir = absl::GetFlag(FLAGS_out);
    partition.wire_compression = absl::GetFlag(FLAGS_wire_compression);
    if (partition.wire_compression.empty()) partition.wire_compression = "none";
    return graphrun::PartitionCommand(partition);
  }
  if (command == "help") {
    std::fputs(graphrun::kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "graphrun: unknown command '%s'\n\n%s", command.c_str(),
               graphrun::kUsage);
  return 2;
}
