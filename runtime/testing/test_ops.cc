// Ops for runtime tests that need a step to hang or fail on purpose:
//   TestWaitForCancel(x: float) -> float: waits until the step is
//     cancelled, as a stuck Recv or a hung device would, then fails with
//     Cancelled.
//   TestFailLater(x: float) -> float: sleeps 30 ms (so other partitions are
//     already waiting for it), then fails with InvalidArgument.
//   TestDead(x: float) -> float: its output is dead, as the untaken branch
//     of a Switch is (until control flow ops exist).
#include "absl/time/clock.h"
#include "graph/op_registry.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

REGISTER_OP("TestWaitForCancel").Input("x: float").Output("y: float");
REGISTER_OP("TestFailLater").Input("x: float").Output("y: float");
REGISTER_OP("TestDead").Input("x: float").Output("y: float");

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

class FailLaterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    absl::SleepFor(absl::Milliseconds(30));
    ctx->SetStatus(absl::InvalidArgumentError("TestFailLater always fails"));
  }
};
REGISTER_KERNEL(KernelDefBuilder("TestFailLater").Device(kDeviceCpu), FailLaterOp);

}  // namespace
}  // namespace graphrun
