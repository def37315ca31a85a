#include "distributed/task_probe.h"

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"

namespace graphrun {

std::map<std::string, std::string> UnreachableTasks(
    const std::map<std::string, std::string>& cluster, const ConnectFn& connect,
    absl::Duration timeout) {
  struct Probe {
    std::string task;
    std::string address;
    std::shared_ptr<WorkerInterface> worker;
    GetStatusRequest request;
    GetStatusResponse response;
    CallOptions opts;
    absl::Status status;
  };
  std::vector<std::unique_ptr<Probe>> probes;
  std::map<std::string, std::string> gone;
  for (const auto& [task, address] : cluster) {
    auto p = std::make_unique<Probe>();
    p->task = task;
    p->address = address;
    absl::StatusOr<std::shared_ptr<WorkerInterface>> w = connect(task, address);
    if (!w.ok()) {
      gone[task] = absl::StrCat(task, " at ", address, ": ", w.status().message());
      continue;
    }
    p->worker = *std::move(w);
    p->opts.SetTimeout(timeout);
    p->opts.SetWaitForReady(false);  // a closed port fails at once
    probes.push_back(std::move(p));
  }
  absl::BlockingCounter pending(static_cast<int>(probes.size()));
  for (auto& p : probes) {
    Probe* probe = p.get();
    probe->worker->GetStatusAsync(&probe->request, &probe->response, &probe->opts,
                                  [probe, &pending](const absl::Status& s) {
                                    probe->status = s;
                                    pending.DecrementCount();
                                  });
  }
  pending.Wait();
  for (const auto& p : probes) {
    if (!p->status.ok()) {
      // The client's messages name the task and its address already.
      gone[p->task] = absl::StrContains(p->status.message(), p->task)
                          ? std::string(p->status.message())
                          : absl::StrCat(p->task, " at ", p->address, ": ", p->status.message());
    } else if (p->response.task_name() != p->task) {
      gone[p->task] = absl::StrCat(p->task, ": ", p->address, " serves ",
                                   p->response.task_name());
    }
  }
  return gone;
}

}  // namespace graphrun
