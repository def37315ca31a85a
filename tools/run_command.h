// `graphrun run`: feeds .npy files to a serialized graph, runs it in a
// Session and writes the fetched tensors as .npy files.
#ifndef GRAPHRUN_TOOLS_RUN_COMMAND_H_
#define GRAPHRUN_TOOLS_RUN_COMMAND_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {

struct RunCommandArgs {
  std::string graph;
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
  bool check_numerics = false;  // fail at the first node that outputs NaN/Inf
  std::string costs_file;  // measured costs for the placer
  std::string save_costs;  // write measured costs here
  // Run over worker processes: a ClusterSpec JSON file of running workers,
  // or N workers started on loopback for this run.
  std::string cluster_file;
  int local_workers = 0;
  std::string auth_token_file;
  std::string tls_cert, tls_key, tls_ca;
  std::string wire_compression = "fp16";  // none | fp16 | bf16
  int connect_timeout_s = 30;
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
};
absl::StatusOr<RunSession> NewRunSession(const RunCommandArgs& args, const GraphDef& graph);

// Returns the process exit status (0 ok, 1 failure); messages go to
// stdout/stderr.
int RunCommand(const RunCommandArgs& args);

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
