// Cluster resolution: which tasks make up a distributed graphrun cluster and
// where each listens. A ClusterSpec maps job names to tasks (task index ->
// "host:port"), as TensorFlow's ClusterSpec does. Resolvers build one, and
// find this process's own task, from a ClusterSpec JSON file, from
// TF_CONFIG, or from Slurm's environment; workers use the result to choose
// their address, masters to know every task to dial.
//
// JSON is read with protobuf's JSON parser (already linked everywhere) into
// google.protobuf.Value, then walked by hand: TensorFlow lets a job be a
// list of addresses or an object keyed by sparse task indices ("0", "3"),
// which no fixed message could describe; the parser rejects duplicate keys.
//
// Thread-compatible: values and pure functions. Only the *FromEnvironment
// functions read the process environment.
#ifndef GRAPHRUN_DISTRIBUTED_CLUSTER_SPEC_H_
#define GRAPHRUN_DISTRIBUTED_CLUSTER_SPEC_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {
namespace distributed {

// One task of a cluster: job name and task index.
struct TaskRef {
  std::string job;
  int index = 0;

  bool operator==(const TaskRef& other) const {
    return job == other.job && index == other.index;
  }
};

// "/job:worker/replica:0/task:1": the prefix of the task's device names.
std::string TaskDeviceName(const TaskRef& task);

// The task of a full device name: "/job:w/replica:0/task:1/device:CPU:0"
// -> "/job:w/replica:0/task:1" (a name without "/device:" is returned as
// it is).
absl::string_view TaskOfDevice(absl::string_view device);

// OK when `address` is "host:port": a host name or IPv4 address of letters,
// digits, '-', '.', '_', or an IPv6 address in brackets ("[::1]:2222"), and
// a port in 1..65535. InvalidArgument saying what is wrong otherwise.
absl::Status ValidateAddress(absl::string_view address);

// Jobs and their tasks. Always valid: job names are [A-Za-z][A-Za-z0-9_]*,
// task indices are >= 0, every address passes ValidateAddress and no address
// belongs to two tasks. Jobs iterate in name order, tasks in index order.
class ClusterSpec {
 public:
  using Tasks = std::map<int, std::string>;  // task index -> "host:port"

  // The empty cluster: no jobs (a single process on its own).
  ClusterSpec() = default;

  // Validates `jobs`; errors start with `what` and name the job, task and
  // address at fault. A job may have no tasks.
  static absl::StatusOr<ClusterSpec> Create(std::map<std::string, Tasks> jobs,
                                            absl::string_view what = "cluster");
  // The same, each job's tasks indexed 0..n-1 in list order.
  static absl::StatusOr<ClusterSpec> FromLists(
      const std::map<std::string, std::vector<std::string>>& jobs,
      absl::string_view what = "cluster");

  const std::map<std::string, Tasks>& jobs() const { return jobs_; }
  std::vector<std::string> JobNames() const;
  bool HasJob(absl::string_view job) const;
  // Tasks of `job`; 0 when there is no such job.
  int NumTasks(absl::string_view job) const;
  int TotalTasks() const;
  bool empty() const { return TotalTasks() == 0; }
  // Every task, by job name then index.
  std::vector<TaskRef> AllTasks() const;

  // The task's "host:port". InvalidArgument naming the job and what exists
  // when the job or the index is not in the cluster.
  absl::StatusOr<std::string> TaskAddress(const TaskRef& task) const;

  // A copy without `job` / with only `job` (empty when absent).
  ClusterSpec WithoutJob(absl::string_view job) const;
  ClusterSpec OnlyJob(absl::string_view job) const;

  // TensorFlow's JSON form: a job with tasks 0..n-1 is a list, a sparse one
  // an object keyed by index. ParseClusterSpecJson reads it back.
  std::string ToJson() const;

  bool operator==(const ClusterSpec& other) const {
    return jobs_ == other.jobs_;
  }

 private:
  std::map<std::string, Tasks> jobs_;
};

// ---------------------------------------------------------------------------
// A TensorFlow ClusterSpec in JSON:
//   {"worker": ["host0:2222", "host1:2222"], "ps": ["host2:2222"]}
//   {"worker": {"0": "host0:2222", "3": "host3:2222"}}
// `what` (a file name) starts every error. InvalidArgument for malformed
// JSON, a top level that is not an object, a job that is not a list or an
// object, an index key that is not a decimal number, an address that is not
// a string or not host:port, duplicate addresses, and a cluster with no
// tasks at all.
absl::StatusOr<ClusterSpec> ParseClusterSpecJson(
    absl::string_view json, absl::string_view what = "cluster spec");

// Reads and parses the file at `path` (errors name it); errors from reading
// keep their code (NotFound, PermissionDenied).
absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path);

// A cluster and, when the source says, which of its tasks this process is.
struct ResolvedCluster {
  ClusterSpec cluster;
  // Absent for a process outside the cluster (a client).
  std::optional<TaskRef> task;
  // TF_CONFIG's "rpc_layer" ("grpc"); empty when not given.
  std::string rpc_layer;

  // This process's "host:port". FailedPrecondition when there is no task or
  // the task is not in the cluster (an evaluator that TF_CONFIG lists only
  // by its task).
  absl::StatusOr<std::string> OwnAddress() const;
};

// Which tasks `task` works with, as TensorFlow's multi-worker setup splits a
// cluster: an "evaluator" sees only the evaluator job, every other task sees
// the cluster without it.
ClusterSpec TaskCluster(const ClusterSpec& cluster, const TaskRef& task);

// TensorFlow's chief: the "chief" task; else worker 0 when there is no chief
// job. An "evaluator" is the chief of its own cluster.
bool IsChief(const ClusterSpec& cluster, const TaskRef& task);

// ---------------------------------------------------------------------------
// TF_CONFIG, as set by launchers such as Kubeflow's TFJob:
//   {"cluster": {"chief": ["c:2222"], "worker": ["w0:2222", "w1:2222"]},
//    "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"}
// "cluster" may be absent (an empty cluster) and so may "task" (no task).
// "index" is a non-negative integer or a string of digits. As TensorFlow
// checks for multi-worker training: "chief" and "evaluator" have at most one
// task each; the task's job must be in the cluster, except "evaluator"; its
// index must name a task of the job. Other keys ("environment") are ignored.
// Errors start with `what`, then the key at fault ("task.index").
absl::StatusOr<ResolvedCluster> ParseTfConfig(
    absl::string_view json, absl::string_view what = "TF_CONFIG");

// Parses the TF_CONFIG environment variable; NotFound when it is not set.
absl::StatusOr<ResolvedCluster> TfConfigFromEnvironment();

// ---------------------------------------------------------------------------
// Slurm. Every task of a job step runs one graphrun process; tasks on a node
// listen on consecutive ports from `base_port`. Ranks are laid out as Slurm's
// block distribution places them: the nodes in hostlist order, each node's
// tasks in turn. The ranks then go to the jobs in job-name order, each job a
// consecutive block (TensorFlow's SlurmClusterResolver assigns them the same
// way; it sorts nodes by name, which is hostlist order for Slurm's sorted,
// zero-padded lists but not for "n[9-10]").
//
// Variables read (a step's own first, then the allocation's):
//   SLURM_PROCID                                 this process's rank
//   SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST   the nodes
//   SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE    "2(x3),1"
//   SLURM_STEP_NUM_TASKS, SLURM_NTASKS           total tasks (a cross-check;
//                                                optional)
struct SlurmOptions {
  int base_port = 8888;
  // Job name -> number of tasks; empty: every task in job "worker".
  std::map<std::string, int> jobs;
  // > 0: this many tasks on every node, instead of the tasks-per-node
  // variable.
  int tasks_per_node = 0;
};

// Looks an environment variable up; nullopt when it is not set.
using EnvironmentLookup =
    std::function<std::optional<std::string>(const std::string& name)>;

// InvalidArgument naming the variable and its value for a malformed or
// inconsistent environment, or options that do not fit it (job task counts
// that do not add up to the tasks, a port past 65535, a node listed twice);
// NotFound naming the variables when a required one is not set.
absl::StatusOr<ResolvedCluster> ResolveSlurmCluster(
    const SlurmOptions& options, const EnvironmentLookup& environment);
absl::StatusOr<ResolvedCluster> SlurmClusterFromEnvironment(
    const SlurmOptions& options);

// Slurm's hostlist syntax: comma-separated names, each with any number of
// bracketed ranges expanded in order, zero padding kept from the range's
// first number: "node[01-03,7],gpu[1-2]x" -> node01 node02 node03 node07
// gpu1x gpu2x. InvalidArgument for unbalanced brackets, empty names, bad or
// reversed ranges, and lists over 1,000,000 names.
absl::StatusOr<std::vector<std::string>> ExpandSlurmHostlist(
    absl::string_view hostlist);

// Slurm's tasks-per-node syntax: "2(x3),1" -> 2 2 2 1. InvalidArgument for
// anything else (counts must be positive).
absl::StatusOr<std::vector<int>> ExpandSlurmTasksPerNode(
    absl::string_view tasks_per_node);

}  // namespace distributed
}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_CLUSTER_SPEC_H_
