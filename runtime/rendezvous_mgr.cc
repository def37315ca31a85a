#include "runtime/rendezvous_mgr.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/local_rendezvous.h"

namespace graphrun {
namespace {

std::shared_ptr<const DeviceIncarnations> IncarnationsOf(const std::vector<Device*>& devices) {
  auto out = std::make_shared<DeviceIncarnations>();
  for (const Device* d : devices) (*out)[d->name()] = d->incarnation();
  return out;
}

}  // namespace

RendezvousMgr::RendezvousMgr(const std::vector<Device*>& devices)
    : incarnations_(IncarnationsOf(devices)) {}

RendezvousMgr::~RendezvousMgr() {
  CleanupAll(absl::CancelledError("the worker's rendezvous manager was destroyed"));
}

std::shared_ptr<Rendezvous> RendezvousMgr::Find(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Rendezvous>& r = table_[step_id];
  if (r == nullptr) r = NewLocalRendezvous(incarnations_);
  return r;
}

void RendezvousMgr::Cleanup(int64_t step_id) {
  std::shared_ptr<Rendezvous> r;
  {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(step_id);
    if (it == table_.end()) return;
    r = std::move(it->second);
    table_.erase(it);
  }
  // Outside the lock: the aborted Recvs' callbacks may call Find.
  r->StartAbort(absl::AbortedError(absl::StrCat("step ", step_id, " was cleaned up")));
}

void RendezvousMgr::CleanupAll(const absl::Status& status) {
  absl::flat_hash_map<int64_t, std::shared_ptr<Rendezvous>> table;
  {
    absl::MutexLock lock(&mu_);
    table.swap(table_);
  }
  const absl::Status abort = status.ok() ? absl::AbortedError("every step was cleaned up") : status;
  for (auto& [step_id, r] : table) r->StartAbort(abort);
}

int RendezvousMgr::NumSteps() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(table_.size());
}

}  // namespace graphrun
