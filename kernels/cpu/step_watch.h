// A request a kernel leaves waiting (a dequeue, an enqueue into a full
// queue, an accumulator's take), watched for its step's cancellation.
//
//   StepWatch watch;
//   if (!watch.Start(ctx->cancellation(), [this, id] { Cancel(id); })) {
//     done(absl::CancelledError(...));  // the step is cancelled already
//     return;
//   }
//   Wait(id, watch.Wrap(std::move(done)));
//
// Wrap(done) stops the watch before running `done`, so the step's
// CancellationManager (which ends with the step) is never touched after
// `done`. `on_cancel` runs outside the manager's lock.
#ifndef GRAPHRUN_KERNELS_CPU_STEP_WATCH_H_
#define GRAPHRUN_KERNELS_CPU_STEP_WATCH_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "kernels/op_kernel.h"

namespace graphrun {

class StepWatch {
 public:
  // False, registering nothing, when the step is cancelled already. A null
  // manager watches nothing.
  bool Start(CancellationManager* cm, std::function<void()> on_cancel) {
    cm_ = cm;
    if (cm == nullptr) return true;
    token_ = cm->NewToken();
    return cm->Register(token_, std::move(on_cancel));
  }

  template <typename... Args>
  std::function<void(Args...)> Wrap(std::function<void(Args...)> done) const {
    return [cm = cm_, token = token_, done = std::move(done)](Args... args) {
      if (cm != nullptr) cm->TryDeregister(token);
      done(std::move(args)...);
    };
  }

 private:
  CancellationManager* cm_ = nullptr;
  int64_t token_ = -1;
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_STEP_WATCH_H_
