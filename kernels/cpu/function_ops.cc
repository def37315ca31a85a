// _Arg / _Retval kernels: read a step's feeds from, and write its fetches
// to, the CallFrame. Both are cheap and never copy.
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->params().call_frame;
    OP_REQUIRES(ctx, frame != nullptr && index_ < static_cast<int64_t>(frame->args.size()),
                absl::InternalError(absl::StrCat("no argument ", index_, " in the call frame")));
    const Tensor& t = frame->args[index_];
    OP_REQUIRES(ctx, t.dtype() == output_type(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "fed a ", DataTypeString(t.dtype()), " tensor where ",
                    DataTypeString(output_type(0)), " is expected")));
    ctx->set_output(0, t);
  }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->params().call_frame;
    OP_REQUIRES(ctx, frame != nullptr && index_ < static_cast<int64_t>(frame->retvals.size()),
                absl::InternalError(absl::StrCat("no return value ", index_, " in the call frame")));
    frame->retvals[index_] = ctx->input(0);
  }

 private:
  int64_t index_ = 0;
};

REGISTER_KERNEL(KernelDefBuilder("_Arg").Device(kDeviceCpu), ArgOp);
REGISTER_KERNEL(KernelDefBuilder("_Retval").Device(kDeviceCpu), RetvalOp);

}  // namespace
}  // namespace graphrun
