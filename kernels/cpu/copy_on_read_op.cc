// DisableCopyOnRead on CPU: graphrun's variables have no copy-on-read mode
// (a read shares the value and an update copies it only while a read still
// holds it, kernels/variable.h), so there is nothing to turn off; the
// kernel only checks that it was given a resource handle.
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class DisableCopyOnReadOp : public OpKernel {
 public:
  explicit DisableCopyOnReadOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->input(0).dtype() == DT_RESOURCE,
                absl::InvalidArgumentError(absl::StrCat(
                    "DisableCopyOnRead takes a resource handle, got ",
                    DataTypeString(ctx->input(0).dtype()))));
  }
};

REGISTER_KERNEL(KernelDefBuilder("DisableCopyOnRead").Device(kDeviceCpu), DisableCopyOnReadOp);

}  // namespace
}  // namespace graphrun
