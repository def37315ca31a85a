// Kernels of v1 control flow. They only route tensors (never copy); what
// makes them control flow is how the executor treats their outputs and
// frames (runtime/executor.cc):
//   Switch        forwards data to output_true or output_false; the other
//                 output is left unset, which the executor reads as dead.
//   Merge         runs on its first live input (the only input slot set)
//                 and forwards it with its index.
//   Enter, Exit, NextIteration, LoopCond
//                 forward their input; the executor moves the value into,
//                 out of, or to the next iteration of a frame.
//   ControlTrigger does nothing; the executor runs it even when dead.
#include "kernels/cpu/control_flow_ops.h"

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class SwitchOp : public OpKernel {
 public:
  explicit SwitchOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    OP_REQUIRES(ctx, pred.dtype() == DT_BOOL && pred.NumElements() == 1 &&
                         pred.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "the predicate must be a bool scalar, got a ",
                    DataTypeString(pred.dtype()), " tensor of shape ",
                    pred.shape().DebugString())));
    ctx->set_output(pred.scalar<bool>() ? 1 : 0, ctx->input(0));
  }
};

class MergeOp : public OpKernel {
 public:
  explicit MergeOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->has_input(i)) continue;
      ctx->set_output(0, ctx->input(i));
      Tensor* index = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape(), &index));
      index->scalar<int32_t>() = i;
      return;
    }
    ctx->SetStatus(absl::InternalError("Merge ran with no live input"));
  }
};

// Enter, Exit, NextIteration, LoopCond.
class ForwardOp : public OpKernel {
 public:
  explicit ForwardOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

class ControlTriggerOp : public OpKernel {
 public:
  explicit ControlTriggerOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext*) override {}
};

REGISTER_KERNEL(KernelDefBuilder("Switch").Device(kDeviceCpu), SwitchOp);
REGISTER_KERNEL(KernelDefBuilder("RefSwitch").Device(kDeviceCpu), SwitchOp);
REGISTER_KERNEL(KernelDefBuilder("Merge").Device(kDeviceCpu), MergeOp);
REGISTER_KERNEL(KernelDefBuilder("RefMerge").Device(kDeviceCpu), MergeOp);
REGISTER_KERNEL(KernelDefBuilder("Enter").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("RefEnter").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("Exit").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("RefExit").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("NextIteration").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("RefNextIteration").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("LoopCond").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL(KernelDefBuilder("ControlTrigger").Device(kDeviceCpu), ControlTriggerOp);

}  // namespace

OpKernel* NewSwitchOp(OpKernelConstruction* c) { return new SwitchOp(c); }
OpKernel* NewMergeOp(OpKernelConstruction* c) { return new MergeOp(c); }
OpKernel* NewControlForwardOp(OpKernelConstruction* c) { return new ForwardOp(c); }
OpKernel* NewControlTriggerOp(OpKernelConstruction* c) { return new ControlTriggerOp(c); }

}  // namespace graphrun
