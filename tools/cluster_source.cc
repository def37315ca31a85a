// --cluster=TF_CONFIG / --cluster=slurm for `graphrun run` and `train`
// (run_command.h): the cluster from the launcher's environment.
#include <cstdlib>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distributed/cluster_spec.h"
#include "tools/run_command.h"

namespace graphrun {

using distributed::ClusterSpec;
using distributed::TaskDeviceName;
using distributed::TaskRef;

absl::Status ResolveClusterSource(RunCommandArgs* args) {
  const bool tf_config = args->cluster_file == "TF_CONFIG";
  if (!tf_config && args->cluster_file != "slurm") return absl::OkStatus();
  absl::StatusOr<distributed::ResolvedCluster> resolved;
  if (tf_config) {
    resolved = distributed::TfConfigFromEnvironment();
    if (resolved.status().code() == absl::StatusCode::kNotFound) {
      return absl::InvalidArgumentError(
          "--cluster=TF_CONFIG: the TF_CONFIG environment variable is not set");
    }
  } else {
    if (std::getenv("SLURM_PROCID") == nullptr) {
      return absl::InvalidArgumentError(
          "--cluster=slurm: SLURM_PROCID is not set (run the command under srun)");
    }
    distributed::SlurmOptions options;
    options.base_port = args->slurm_base_port;
    resolved = distributed::SlurmClusterFromEnvironment(options);
  }
  if (!resolved.ok()) {
    return absl::Status(resolved.status().code(),
                        absl::StrCat("--cluster=", args->cluster_file, ": ",
                                     resolved.status().message()));
  }
  if (resolved->cluster.AllTasks().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cluster=", args->cluster_file, ": the cluster has no tasks"));
  }
  if (args->client_task.empty() && resolved->task.has_value()) {
    const TaskRef& own = *resolved->task;
    if (own.job != "chief" && own.job != "worker") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--cluster=", args->cluster_file, ": this process is ", TaskDeviceName(own),
          ", and the client runs on a chief or worker task (pass --job and --task)"));
    }
    args->client_task = TaskDeviceName(own);
  }
  args->resolved_cluster =
      std::make_shared<const ClusterSpec>(std::move(resolved->cluster));
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> LoadRunCluster(const RunCommandArgs& args) {
  if (args.resolved_cluster != nullptr) return *args.resolved_cluster;
  return distributed::LoadClusterSpecFile(args.cluster_file);
}

}  // namespace graphrun
