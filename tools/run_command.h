// `graphrun run`: feeds .npy files to a serialized graph, runs it in a
// Session and writes the fetched tensors as .npy files.
#ifndef GRAPHRUN_TOOLS_RUN_COMMAND_H_
#define GRAPHRUN_TOOLS_RUN_COMMAND_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/cluster_spec.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {

struct RunCommandArgs {
  std::string graph;  // a GraphDef file or a SavedModel directory
  // SavedModel directories: the MetaGraphDef's tags ("serve", or
  // "serve,gpu") and the signature to call; --feed and --fetch then name
  // its input and output keys (tensor names are accepted too).
  std::string tags = "serve";
  std::string signature = "serving_default";
  std::vector<std::string> feeds;    // "name=path.npy"
  std::vector<std::string> fetches;  // "name[:k]"
  std::vector<std::string> targets;  // node names
  std::string out_dir;               // "" = print only
  std::string trace_path;            // "" = no trace
  int steps = 1;
  int cpu_devices = 1;
  int inter_op_threads = 0;
  int intra_op_threads = 0;
  int64_t timeout_ms = 0;
  bool quiet = false;
  bool log_device_placement = false;
  bool allow_soft_placement = false;
  bool optimize = true;  // SessionOptions::optimize
  bool log_optimizations = false;
  bool freeze_variables = true;
  bool check_numerics = false;  // fail at the first node that outputs NaN/Inf
  // Ignore the graph's device requests (a graph pinned to /job:ps and
  // /job:worker run in one process), as TensorFlow's clear_devices.
  bool clear_devices = false;
  std::string costs_file;  // measured costs for the placer
  std::string save_costs;  // write measured costs here
  // Run over worker processes: a ClusterSpec JSON file of running workers
  // (or "TF_CONFIG" / "slurm": the cluster those give, ResolveClusterSource),
  // or N workers (and M parameter-server tasks, /job:ps) started on
  // loopback for this run.
  std::string cluster_file;
  std::shared_ptr<const distributed::ClusterSpec> resolved_cluster;
  int slurm_base_port = 8888;  // --cluster=slurm: the first task's port per node
  int local_workers = 0;
  int local_ps = 0;
  // Over workers: the task feeds and fetches go through (--job, --task),
  // canonical; empty: the chief's or worker 0's.
  std::string client_task;
  // Serve that task from this process (a worker process fewer; feeds and
  // fetches handed over in memory), as TensorFlow's session on a server's
  // target does. Over --cluster, listens on the task's address.
  bool in_process_worker = false;
  // With ps tasks: "pinned" keeps the graph's /job:ps pins and places
  // unpinned variables by bytes; "auto" places every variable by bytes
  // (placer/ps_placement.h).
  std::string ps_placement = "pinned";
  // A variable group over half a ps task's even share of the bytes is
  // split into parts of at least this many bytes (0: never).
  int64_t ps_min_part_bytes = 256 << 10;
  std::string auth_token_file;
  std::string tls_cert, tls_key, tls_ca;
  // gradients | all (= fp16) | none | bf16: distributed/wire_codec.h
  std::string wire_compression = "gradients";
  int connect_timeout_s = 30;
  // Over --cluster: tasks of the file to leave out ("/job:worker/replica:0/
  // task:1"), gone ones that training goes on without.
  std::vector<std::string> left_out_tasks;
  // GPUs of this machine: auto (the idle ones), all, none, or indices like
  // "0,2"; with auto, how many (-1: every idle one).
  std::string gpus = "auto";
  int num_gpus = -1;
  // TensorFlow's GPUOptions: the share of each GPU's memory graphrun may
  // take (0: what is free, less a reserve), and whether it takes it as
  // tensors need it (true) or at once.
  double gpu_memory_fraction = 0;
  bool gpu_allow_growth = true;
};

// A session as `graphrun run` makes it from `args` (devices, GPUs chosen and
// claimed, worker processes or a cluster), with what must outlive it.
struct RunSession {
  std::unique_ptr<Session> session;
  std::shared_ptr<void> keep;  // GPU claims, local workers: held while it runs
  // The graph the session runs: the one given, with its device requests
  // cleared (--clear_devices) or its variables placed on ps tasks.
  GraphDef graph;
  // Over workers: the tasks, task name -> "host:port", and which of them do
  // not answer now (task name -> why).
  std::map<std::string, std::string> cluster;
  std::function<std::map<std::string, std::string>()> unreachable_tasks;
};
absl::StatusOr<RunSession> NewRunSession(const RunCommandArgs& args, const GraphDef& graph);

// --cluster=TF_CONFIG or --cluster=slurm: the cluster from the TF_CONFIG
// variable (as Kubeflow's TFJob sets it) or from Slurm's (under srun, tasks
// on a node at slurm_base_port + i) goes into args->resolved_cluster and,
// without --task, this process's own task there (a chief or worker) is the
// client's task (serve it here with --in_process_worker). A file: nothing to
// do. InvalidArgument naming the source when it is not set, or names a
// task that cannot be a client.
absl::Status ResolveClusterSource(RunCommandArgs* args);

// The cluster of --cluster: the resolved one, else the file's.
absl::StatusOr<distributed::ClusterSpec> LoadRunCluster(const RunCommandArgs& args);

// Returns the process exit status (0 ok, 1 failure); messages go to
// stdout/stderr.
int RunCommand(const RunCommandArgs& args);

// What one `run` does: the graph, feeds and fetches in tensor names, how
// each fetch is printed and named under --out, and what must run once in
// the new session before the steps (a SavedModel's restore and init).
struct RunPlan {
  GraphDef graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> labels;     // printed beside each fetch
  std::vector<std::string> out_files;  // under --out
  std::function<absl::Status(Session*)> prepare;
};
// A GraphDef file's plan: --feed and --fetch as given.
absl::StatusOr<RunPlan> PlanGraphRun(const RunCommandArgs& args);
// A SavedModel directory's plan (saved_model_command.cc): the MetaGraphDef
// of --tags, signature --signature's inputs and outputs by key (every
// output, sorted, without --fetch; DIR/<key>.npy under --out), restored
// and initialized as TensorFlow's loader does.
absl::StatusOr<RunPlan> PlanSavedModelRun(const RunCommandArgs& args);
// Runs a plan: the session as `args` asks, args.steps steps, the outputs.
int RunPlanned(const RunCommandArgs& args, RunPlan plan);

// What `run` and `train` share:
// "dense/probs:1" -> "dense__probs_1.npy" (output 0 drops the index).
std::string FetchFileName(const std::string& fetch);
// Makes --out's directory if needed; an error unless it is a writable
// directory.
absl::Status PrepareOutDir(const std::string& dir);
// "float [2,3] [0.1 0.2 ...]", at most `max_values` values.
std::string Summary(const Tensor& t, int max_values = 12);
// "NAME=FILE.npy" -> (NAME, the file's tensor).
absl::StatusOr<std::pair<std::string, Tensor>> ReadFeedFlag(const std::string& flag);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_RUN_COMMAND_H_
