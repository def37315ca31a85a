#include "distributed/worker_sessions.h"

#include <utility>

namespace graphrun {

WorkerSessions::WorkerSessions(absl::Duration lost_after, absl::Duration timeout,
                               std::function<absl::Time()> clock)
    : lost_after_(lost_after), timeout_(timeout), clock_(std::move(clock)) {}

void WorkerSessions::Touch(const std::string& handle) {
  if (handle.empty()) return;
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  Entry& e = sessions_[handle];
  e.seen = now;
  e.reported_lost = false;  // heard from again: a later silence counts anew
}

bool WorkerSessions::Forget(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  return sessions_.erase(handle) > 0;
}

WorkerSessions::Due WorkerSessions::Poll() {
  const absl::Time now = clock_();
  Due due;
  absl::MutexLock lock(&mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const absl::Duration quiet = now - it->second.seen;
    if (quiet > lost_after_ && !it->second.reported_lost) {
      it->second.reported_lost = true;
      due.lost.push_back(it->first);
    }
    if (quiet > timeout_) {
      due.idle.push_back(it->first);
      sessions_.erase(it++);
    } else {
      ++it;
    }
  }
  return due;
}

}  // namespace graphrun
