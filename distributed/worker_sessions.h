// A worker's record of its masters' sessions: when each master last called
// (RegisterGraph, RunGraph, CleanupGraph, or the Health it sends every
// second), which sessions have gone quiet for `lost_after` (their client
// is most likely gone: each reported once per silence, so the worker can
// let go of steps that wait on them), and which have been idle for
// `timeout` (dropped).
//
// Thread-safe.
#ifndef GRAPHRUN_DISTRIBUTED_WORKER_SESSIONS_H_
#define GRAPHRUN_DISTRIBUTED_WORKER_SESSIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace graphrun {

class WorkerSessions {
 public:
  WorkerSessions(absl::Duration lost_after, absl::Duration timeout,
                 std::function<absl::Time()> clock);

  // `handle`'s master called now (an empty handle is no session).
  void Touch(const std::string& handle);
  // Forgets `handle` (its master closed it, or it was dropped); true when
  // it was known.
  bool Forget(const std::string& handle);

  struct Due {
    std::vector<std::string> lost;  // quiet for lost_after, newly
    std::vector<std::string> idle;  // quiet for timeout: forgotten here
  };
  Due Poll();

 private:
  struct Entry {
    absl::Time seen;
    bool reported_lost = false;
  };
  const absl::Duration lost_after_, timeout_;
  const std::function<absl::Time()> clock_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_WORKER_SESSIONS_H_
