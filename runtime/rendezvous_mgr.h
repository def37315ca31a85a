// RendezvousMgr: one worker's rendezvous, one per step, by step id.
//
// A step's executors and its client find the step's Rendezvous with
// Find(step_id), which makes it on first use; when the step is over (or
// fails, or its master goes away) Cleanup(step_id) aborts it, so every
// Recv still waiting fails with Aborted naming the step, and forgets it.
// Anyone still holding the aborted rendezvous gets that error from every
// later call, and a later Find(step_id) makes a fresh, empty one: nothing
// sent to the old one reaches it. Steps are independent: a key sent in
// one step never matches a Recv of another. Every step's rendezvous refuses
// keys made for another incarnation of one of the worker's devices
// (runtime/local_rendezvous.h).
// Thread-safe.
#ifndef GRAPHRUN_RUNTIME_RENDEZVOUS_MGR_H_
#define GRAPHRUN_RUNTIME_RENDEZVOUS_MGR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kernels/rendezvous.h"
#include "runtime/device.h"
#include "runtime/local_rendezvous.h"

namespace graphrun {

class RendezvousMgr {
 public:
  // Without devices keys are only matched, never checked.
  RendezvousMgr() = default;
  // `devices`: the worker's devices, whose incarnations keys must carry
  // (read once, here).
  explicit RendezvousMgr(const std::vector<Device*>& devices);
  RendezvousMgr(const RendezvousMgr&) = delete;
  RendezvousMgr& operator=(const RendezvousMgr&) = delete;
  // Aborts every step's rendezvous still here (Cancelled).
  ~RendezvousMgr();

  // The rendezvous of `step_id`, made on the first call (a LocalRendezvous).
  std::shared_ptr<Rendezvous> Find(int64_t step_id);
  // Aborts the rendezvous of `step_id` with Aborted naming the step and
  // removes it; nothing when the step has none.
  void Cleanup(int64_t step_id);
  // Aborts every step's rendezvous with `status` (not OK) and removes them.
  void CleanupAll(const absl::Status& status);
  // How many steps have a rendezvous here.
  int NumSteps() const;

 private:
  // Null: keys are not checked.
  const std::shared_ptr<const DeviceIncarnations> incarnations_ = nullptr;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, std::shared_ptr<Rendezvous>> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_RENDEZVOUS_MGR_H_
