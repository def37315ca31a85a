// `graphrun run --local_workers=N [--local_ps=M]`: N `graphrun worker`
// processes of this binary on loopback, as /job:worker/replica:0/task:0..N-1,
// and M more as /job:ps/replica:0/task:0..M-1 (each started with its
// --job and --task), each on a port the system picks, stopped (SIGTERM,
// then waited for) when the object goes. A task also stops when the
// process that started it dies.
#ifndef GRAPHRUN_TOOLS_LOCAL_WORKERS_H_
#define GRAPHRUN_TOOLS_LOCAL_WORKERS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphrun {

// The program each task runs as `PROGRAM worker --listen=... --job=...`:
// this process's own executable unless set. A process that is not the
// graphrun CLI (Python with the graphrun module) names the CLI it came with.
void SetLocalWorkerProgram(const std::string& path);

class LocalWorkers {
 public:
  // Starts them and waits (up to 30 s) until each says where it serves.
  // `worker_args` go to every task (--auth_token_file=..., --cpu_devices=2).
  // Worker task `skip_worker` (if in 0..n-1) is not started: the caller
  // serves it itself and adds it to the cluster (AddTask). Unavailable
  // naming the task when one exits or stays silent.
  static absl::StatusOr<std::unique_ptr<LocalWorkers>> Start(
      int n, const std::vector<std::string>& worker_args, int ps = 0, int skip_worker = -1);
  ~LocalWorkers();

  // Task name -> "127.0.0.1:port".
  const std::map<std::string, std::string>& cluster() const { return cluster_; }
  // A task served elsewhere (the one skipped).
  void AddTask(const std::string& task, const std::string& address) {
    cluster_[task] = address;
  }
  // The processes started: worker tasks first, then ps tasks.
  pid_t pid(int process) const { return pids_[process]; }

 private:
  LocalWorkers() = default;
  std::vector<pid_t> pids_;
  // Read ends of the workers' stdout.
  std::vector<int> fds_;
  std::map<std::string, std::string> cluster_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_LOCAL_WORKERS_H_
