// Ops for runtime tests that need a step to hang, fail or run in a known
// order on purpose, without sleeping:
//   TestWaitForCancel(x: float) -> float: waits until the step is
//     cancelled, as a stuck Recv or a hung device would, then fails with
//     Cancelled.
//   TestFailLater(x: float) -> float: fails with InvalidArgument once
//     another partition is waiting in a Recv for its output (seen through
//     the LocalRendezvous test hook), so the failure provably lands while
//     that partition waits; at once when the step has no rendezvous, and
//     with Cancelled if the step is cancelled first.
//   TestDead(x: float) -> float: its output is dead, as the untaken branch
//     of a Switch is.
//   TestRecord(x: float) -> float: forwards x and appends its node name to
//     the sequence test_ops::TakeRecordedOrder() returns.
//   TestBlockedConstruction(x: float) -> float: forwards x; its kernel's
//     constructor (run while a plan is built) waits until
//     test_ops::ReleaseConstruction(), so a test can hold a build open.
#include "runtime/testing/test_ops.h"

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "graph/op_registry.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/rendezvous.h"
#include "runtime/local_rendezvous.h"

namespace graphrun {
namespace {

REGISTER_OP("TestWaitForCancel").Input("x: float").Output("y: float").SetIsStateful();
REGISTER_OP("TestFailLater").Input("x: float").Output("y: float").SetIsStateful();
REGISTER_OP("TestDead").Input("x: float").Output("y: float").SetIsStateful();
REGISTER_OP("TestRecord").Input("x: float").Output("y: float").SetIsStateful();
REGISTER_OP("TestBlockedConstruction").Input("x: float").Output("y: float").SetIsStateful();

class DeadOp : public OpKernel {
 public:
  explicit DeadOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->set_outputs_dead(); }
};
REGISTER_KERNEL(KernelDefBuilder("TestDead").Device(kDeviceCpu), DeadOp);

class WaitForCancelOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CancellationManager* cm = ctx->cancellation();
    if (!cm->Register(cm->NewToken(), [ctx, done] {
          ctx->SetStatus(absl::CancelledError("cancelled while waiting"));
          done();
        })) {
      ctx->SetStatus(absl::CancelledError("already cancelled"));
      done();
    }
  }
};
REGISTER_KERNEL(KernelDefBuilder("TestWaitForCancel").Device(kDeviceCpu), WaitForCancelOp);

// Which Recvs have waited, for the TestFailLater kernels waiting to see one.
// A Recv of node N's output has the tensor name "edge_<k>_N" (partition/).
class RecvWatch {
 public:
  static RecvWatch& Get() {
    static RecvWatch* const watch = new RecvWatch();
    return *watch;
  }

  // Only Recvs of these nodes' outputs are remembered.
  void Watch(const std::string& node) {
    absl::MutexLock lock(&mu_);
    watched_.insert(node);
  }

  // The LocalRendezvous hook.
  static void OnRecvWaiting(const Rendezvous* r, absl::string_view key) {
    Get().RecvWaiting(r, key);
  }

  // Runs `fire` once a Recv of `node`'s output has waited in `r`: now if
  // one already has, else from the hook.
  void WhenRecvWaits(const Rendezvous* r, const std::string& node,
                     std::function<void()> fire) {
    {
      absl::MutexLock lock(&mu_);
      auto it = seen_.find({r, node});
      if (it == seen_.end()) {
        pending_.push_back({r, node, std::move(fire)});
        return;
      }
      seen_.erase(it);
    }
    fire();
  }

 private:
  struct Pending {
    const Rendezvous* r;
    std::string node;
    std::function<void()> fire;
  };

  void RecvWaiting(const Rendezvous* r, absl::string_view key) {
    absl::StatusOr<ParsedRendezvousKey> parsed = ParseRendezvousKey(key);
    if (!parsed.ok()) return;
    std::function<void()> fire;
    {
      absl::MutexLock lock(&mu_);
      std::string node;
      for (const std::string& w : watched_) {
        if (absl::StartsWith(parsed->tensor_name, "edge_") &&
            absl::EndsWith(parsed->tensor_name, "_" + w)) {
          node = w;
        }
      }
      if (node.empty()) return;
      for (auto it = pending_.begin(); it != pending_.end(); ++it) {
        if (it->r == r && it->node == node) {
          fire = std::move(it->fire);
          pending_.erase(it);
          break;
        }
      }
      if (!fire) {
        seen_.insert({r, node});
        return;
      }
    }
    fire();
  }

  absl::Mutex mu_;
  std::set<std::string> watched_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<const Rendezvous*, std::string>> seen_ ABSL_GUARDED_BY(mu_);
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
};

const bool kHookInstalled = [] {
  SetRecvWaitingHookForTest(&RecvWatch::OnRecvWaiting);
  return true;
}();

class FailLaterOp : public AsyncOpKernel {
 public:
  explicit FailLaterOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    RecvWatch::Get().Watch(name());
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Rendezvous* r = ctx->params().rendezvous;
    if (r == nullptr) {
      ctx->SetStatus(absl::InvalidArgumentError("TestFailLater always fails"));
      done();
      return;
    }
    // Whichever comes first, the waiting Recv or a cancellation, finishes;
    // the winner is the only one to touch ctx and cm (alive until done()).
    auto finished = std::make_shared<std::atomic<bool>>(false);
    CancellationManager* cm = ctx->cancellation();
    const int64_t token = cm->NewToken();
    auto finish = [ctx, done, finished, cm, token](absl::Status status, bool deregister) {
      if (finished->exchange(true)) return;
      if (deregister) cm->TryDeregister(token);
      ctx->SetStatus(status);
      done();
    };
    if (!cm->Register(token, [finish] {
          finish(absl::CancelledError("cancelled before a Recv waited"), false);
        })) {
      finish(absl::CancelledError("already cancelled"), false);
      return;
    }
    RecvWatch::Get().WhenRecvWaits(r, name(), [finish] {
      finish(absl::InvalidArgumentError("TestFailLater always fails"), true);
    });
  }
};
REGISTER_KERNEL(KernelDefBuilder("TestFailLater").Device(kDeviceCpu), FailLaterOp);

absl::Mutex record_mu;
std::vector<std::string>* recorded ABSL_GUARDED_BY(record_mu) = new std::vector<std::string>();

class RecordOp : public OpKernel {
 public:
  explicit RecordOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    {
      absl::MutexLock lock(&record_mu);
      recorded->push_back(name());
    }
    ctx->set_output(0, ctx->input(0));
  }
};
REGISTER_KERNEL(KernelDefBuilder("TestRecord").Device(kDeviceCpu), RecordOp);

absl::Mutex construction_mu;
int constructions_waiting ABSL_GUARDED_BY(construction_mu) = 0;
bool construction_released ABSL_GUARDED_BY(construction_mu) = false;

class BlockedConstructionOp : public OpKernel {
 public:
  explicit BlockedConstructionOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    absl::MutexLock lock(&construction_mu);
    ++constructions_waiting;
    construction_mu.Await(absl::Condition(&construction_released));
    --constructions_waiting;
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};
REGISTER_KERNEL(KernelDefBuilder("TestBlockedConstruction").Device(kDeviceCpu),
                BlockedConstructionOp);

}  // namespace

namespace test_ops {

void AwaitBlockedConstruction() {
  absl::MutexLock lock(&construction_mu);
  construction_mu.Await(absl::Condition(
      +[](int* waiting) { return *waiting > 0; }, &constructions_waiting));
}

void ReleaseConstruction() {
  absl::MutexLock lock(&construction_mu);
  construction_released = true;
}

std::vector<std::string> TakeRecordedOrder() {
  absl::MutexLock lock(&record_mu);
  std::vector<std::string> out;
  out.swap(*recorded);
  return out;
}

}  // namespace test_ops
}  // namespace graphrun
