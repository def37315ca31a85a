// `graphrun worker`: serves one task of a cluster (distributed/worker.h
// over gRPC) until SIGTERM or SIGINT.
//
// Which task, and where it listens, comes from the first of:
//   --listen=HOST:PORT [--job=J --task=N]  (port 0: the system picks one)
//   --cluster=FILE --job=J --task=N         (a TensorFlow ClusterSpec JSON)
//   TF_CONFIG                               (as Kubeflow's TFJob sets it)
//   Slurm's environment (SLURM_PROCID ...)  (every task a "worker")
// Servers bind to loopback unless --bind_address says otherwise (the port
// is the task's). Once listening, one line goes to stdout:
//   graphrun worker /job:worker/replica:0/task:1 serving on 127.0.0.1:2223
#ifndef GRAPHRUN_TOOLS_WORKER_COMMAND_H_
#define GRAPHRUN_TOOLS_WORKER_COMMAND_H_

#include <string>

namespace graphrun {

struct WorkerCommandArgs {
  std::string listen;
  std::string cluster_file;
  std::string job;  // "" = "worker"
  int task = -1;    // -1 = not given
  std::string bind_address;  // "" = 127.0.0.1
  int slurm_base_port = 8888;
  std::string auth_token_file;
  std::string tls_cert, tls_key, tls_ca;
  int cpu_devices = 1;
  int inter_op_threads = 0;
  int intra_op_threads = 0;
  bool log_steps = false;
  // Large tensors over the TCP data plane (off: inside gRPC; always off
  // with TLS).
  bool data_plane = true;
};

// Returns the exit status: 0 after a clean shutdown, 1 when the worker
// cannot start, 2 for a usage error.
int WorkerCommand(const WorkerCommandArgs& args);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_WORKER_COMMAND_H_
