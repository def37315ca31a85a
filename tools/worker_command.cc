#include "tools/worker_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distributed/cluster_spec.h"
#include "distributed/grpc_worker.h"
#include "distributed/served_worker.h"
#include "distributed/worker.h"

namespace graphrun {
namespace {

using distributed::ClusterSpec;
using distributed::LoadClusterSpecFile;
using distributed::ResolvedCluster;
using distributed::SlurmClusterFromEnvironment;
using distributed::SlurmOptions;
using distributed::TaskDeviceName;
using distributed::TaskRef;
using distributed::TfConfigFromEnvironment;

int Fail(const absl::Status& status, int code = 1) {
  std::fprintf(stderr, "graphrun worker: %s\n", status.ToString().c_str());
  return code;
}

// "host:port" or "[v6]:port" -> (host, port).
absl::StatusOr<std::pair<std::string, int>> SplitAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("address '", address, "' is not HOST:PORT"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, port);
}

bool IsLoopbackName(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string JoinAddress(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

struct Resolved {
  std::string task_name;
  std::string address;  // where peers reach it (from the cluster), or the listen address
};

absl::StatusOr<Resolved> ResolveTask(const WorkerCommandArgs& args) {
  const std::string job = args.job.empty() ? "worker" : args.job;
  if (!args.listen.empty()) {
    TaskRef t{job, args.task < 0 ? 0 : args.task};
    return Resolved{TaskDeviceName(t), args.listen};
  }
  if (!args.cluster_file.empty()) {
    if (args.task < 0) {
      return absl::InvalidArgumentError("--cluster needs --task=N (and --job, default worker)");
    }
    absl::StatusOr<ClusterSpec> cluster = LoadClusterSpecFile(args.cluster_file);
    if (!cluster.ok()) return cluster.status();
    TaskRef t{job, args.task};
    absl::StatusOr<std::string> address = cluster->TaskAddress(t);
    if (!address.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(args.cluster_file, ": ",
                                                     address.status().message()));
    }
    return Resolved{TaskDeviceName(t), *address};
  }
  absl::StatusOr<ResolvedCluster> tf_config = TfConfigFromEnvironment();
  if (tf_config.ok()) {
    if (!tf_config->task.has_value()) {
      return absl::InvalidArgumentError("TF_CONFIG names no task for this process");
    }
    absl::StatusOr<std::string> address = tf_config->OwnAddress();
    if (!address.ok()) return address.status();
    return Resolved{TaskDeviceName(*tf_config->task), *address};
  }
  if (tf_config.status().code() != absl::StatusCode::kNotFound) return tf_config.status();
  if (std::getenv("SLURM_PROCID") != nullptr) {
    SlurmOptions options;
    options.base_port = args.slurm_base_port;
    absl::StatusOr<ResolvedCluster> slurm = SlurmClusterFromEnvironment(options);
    if (!slurm.ok()) return slurm.status();
    absl::StatusOr<std::string> address = slurm->OwnAddress();
    if (!address.ok()) return address.status();
    return Resolved{TaskDeviceName(*slurm->task), *address};
  }
  return absl::InvalidArgumentError(
      "which task? give --cluster=FILE --task=N [--job=J], or --listen=HOST:PORT, "
      "or set TF_CONFIG, or run under srun");
}

}  // namespace

int WorkerCommand(const WorkerCommandArgs& args) {
  absl::StatusOr<Resolved> me = ResolveTask(args);
  if (!me.ok()) return Fail(me.status(), 2);
  absl::StatusOr<std::pair<std::string, int>> own = SplitAddress(me->address);
  if (!own.ok()) return Fail(own.status(), 2);
  const std::string bind_host = !args.bind_address.empty()
                                    ? args.bind_address
                                    : (args.listen.empty() ? "127.0.0.1" : own->first);
  if (args.bind_address.empty() && args.listen.empty() && !IsLoopbackName(own->first)) {
    std::fprintf(stderr,
                 "graphrun worker: listening on loopback only; other hosts cannot reach %s "
                 "(pass --bind_address=0.0.0.0 to serve them)\n",
                 me->address.c_str());
  }
  absl::StatusOr<GrpcSecurity> security =
      LoadGrpcSecurity(args.auth_token_file, args.tls_cert, args.tls_key, args.tls_ca);
  if (!security.ok()) return Fail(security.status(), 2);

  // SIGTERM and SIGINT are taken by sigwait below; threads made from here on
  // inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Fault injection (tests): GRAPHRUN_CRASH_TASK names the one task that
  // GRAPHRUN_CRASH_AT applies to, when tasks share an environment.
  if (const char* only = std::getenv("GRAPHRUN_CRASH_TASK");
      only != nullptr && me->task_name != only) {
    ::unsetenv("GRAPHRUN_CRASH_AT");
  }

  WorkerOptions options;
  options.task_name = me->task_name;
  options.cpu_devices = args.cpu_devices;
  options.inter_op_threads = args.inter_op_threads;
  options.intra_op_threads = args.intra_op_threads;
  options.connect = GrpcConnectFn(*security);
  options.log_steps = args.log_steps;
  // Tensor bytes travel in the clear on the data plane: with TLS they stay
  // inside the encrypted gRPC calls.
  options.data_plane = args.data_plane && !security->tls();
  options.data_plane_host = bind_host;
  GrpcWorkerServerOptions server_options;
  server_options.listen_address = JoinAddress(bind_host, own->second);
  server_options.security = *security;
  absl::StatusOr<std::shared_ptr<ServedWorker>> served =
      ServedWorker::Start(options, server_options);
  if (!served.ok()) return Fail(served.status());
  const std::string serving = JoinAddress(bind_host, (*served)->port());
  std::printf("graphrun worker %s serving on %s (%d CPU device%s%s%s)\n", me->task_name.c_str(),
              serving.c_str(), args.cpu_devices, args.cpu_devices == 1 ? "" : "s",
              security->auth_token.empty() ? "" : ", auth token", security->tls() ? ", TLS" : "");
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  served->reset();
  return 0;
}

}  // namespace graphrun
