#include "tools/train_replicas.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distributed/cluster_spec.h"
#include "graph/replicate.h"
#include "graph/status_macros.h"
#include "runtime/replicated_session.h"

namespace graphrun {
namespace {

// Where each of n replicas runs: the first n worker tasks (the placer
// picks each one's GPU or CPU), or n GPUs of this process, or n CPU devices.
absl::StatusOr<std::vector<std::string>> ReplicaDevices(const RunCommandArgs& run,
                                                         const std::vector<Device*>& devices,
                                                         int n) {
  std::vector<std::string> out;
  if (run.local_workers > 0 || !run.cluster_file.empty()) {
    int workers = run.local_workers;
    if (!run.cluster_file.empty()) {
      GR_ASSIGN_OR_RETURN(distributed::ClusterSpec cluster, LoadRunCluster(run));
      workers = cluster.NumTasks("worker");
    }
    if (workers < n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--replicas=", n, " runs one replica per worker task, and there are ", workers,
          " worker task(s)"));
    }
    for (int r = 0; r < n; ++r) out.push_back(absl::StrCat("/job:worker/replica:0/task:", r));
    return out;
  }
  std::vector<std::string> cpus, gpus;
  for (const Device* d : devices) (d->device_type() == "GPU" ? gpus : cpus).push_back(d->name());
  std::sort(cpus.begin(), cpus.end());
  std::sort(gpus.begin(), gpus.end());
  const std::vector<std::string>& use = static_cast<int>(gpus.size()) >= n ? gpus : cpus;
  if (static_cast<int>(use.size()) < n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replicas=", n, ": this process has ", use.size(), " devices for them"));
  }
  out.assign(use.begin(), use.begin() + n);
  return out;
}

}  // namespace

absl::StatusOr<RunSession> NewReplicatedRunSession(RunCommandArgs run, const GraphDef& graph,
                                                   const ReplicaArgs& replicas) {
  const int n = replicas.replicas;
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("--replicas must be >= 1, not ", n));
  if (run.local_ps > 0) {
    return absl::InvalidArgumentError(
        "--replicas averages gradients between replicas; parameter-server tasks (--local_ps) "
        "are the other way to train over workers: give one of them");
  }
  if (replicas.allreduce != "ring" && replicas.allreduce != "gloo" &&
      replicas.allreduce != "graph") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--allreduce must be ring, gloo or graph, not '", replicas.allreduce, "'"));
  }
  if (!(replicas.fusion_threshold_mb > 0)) {
    return absl::InvalidArgumentError("--fusion_threshold_mb must be > 0");
  }
  const bool distributed = run.local_workers > 0 || !run.cluster_file.empty();
  if (!distributed) run.cpu_devices = std::max(run.cpu_devices, n);
  // Ops without a kernel for a replica's GPU run beside it on the CPU.
  run.allow_soft_placement = true;
  run.ps_placement = "pinned";
  // The session first, empty, to learn its devices; then the replicas.
  GR_ASSIGN_OR_RETURN(RunSession made, NewRunSession(run, GraphDef()));
  GR_ASSIGN_OR_RETURN(std::vector<std::string> devices,
                      ReplicaDevices(run, made.session->devices(), n));
  ReplicateOptions options;
  options.devices = devices;
  options.bucket_bytes = static_cast<int64_t>(replicas.fusion_threshold_mb * (1 << 20));
  if (distributed && run.wire_compression != "none") {
    options.wire_float = run.wire_compression == "bf16" ? DT_BFLOAT16 : DT_HALF;
  }
  if (distributed && replicas.allreduce != "graph") {
    options.collective_exchange = replicas.allreduce;
    // gloo sums what it carries: its gradients travel as float32.
    if (replicas.allreduce == "gloo") options.wire_float = DT_FLOAT;
  }
  GR_ASSIGN_OR_RETURN(ReplicatedGraph rg, ReplicateForDataParallel(graph, options));
  GR_RETURN_IF_ERROR(made.session->Extend(rg.graph));
  if (!run.quiet) {
    std::vector<std::string> sizes;
    for (const GradientBucket& b : rg.buckets) {
      sizes.push_back(absl::StrCat(b.updates.size(), " x ", b.elements, " values"));
    }
    std::printf("%d replicas on %s; gradients averaged in %zu bucket(s) (%s)%s%s\n", n,
                absl::StrJoin(devices, ", ").c_str(), rg.buckets.size(),
                absl::StrJoin(sizes, ", ").c_str(),
                options.collective_exchange == "ring"   ? " over a ring between the tasks"
                : options.collective_exchange == "gloo" ? " over gloo between the tasks"
                                                        : "",
                options.wire_float == DT_FLOAT
                    ? ""
                    : (options.wire_float == DT_HALF ? ", fp16 between tasks"
                                                     : ", bf16 between tasks"));
  }
  made.graph = rg.replica0;
  made.session = std::make_unique<ReplicatedSession>(std::move(rg), std::move(made.session),
                                                     replicas.fetch_all_replicas);
  return made;
}

}  // namespace graphrun
