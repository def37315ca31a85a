// Assert on CPU (TensorFlow's logging_ops.cc): nothing when `condition` is
// true; otherwise the step fails with InvalidArgument "assertion failed:
// [data 0] [data 1] ...", each data tensor summarized to its first
// `summarize` values.
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Up to `max` values separated by spaces, "..." when there are more;
// strings unquoted, as TensorFlow's SummarizeValue.
std::string Summarize(const Tensor& t, int64_t max) {
  std::string out;
  const int64_t n = t.NumElements();
  const int64_t shown = max < 0 ? n : std::min(n, max);
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) out += " ";
    out += t.dtype() == DT_STRING ? t.flat<std::string>()[i] : t.ValueString(i);
  }
  if (shown < n) out += "...";
  return out;
}

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    OP_REQUIRES_OK(c, c->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    OP_REQUIRES(ctx, cond.NumElements() == 1 && cond.dtype() == DT_BOOL,
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] should be a scalar: ", cond.shape().DebugString())));
    if (cond.flat<bool>()[0]) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&msg, i > 1 ? " " : "", "[", Summarize(ctx->input(i), summarize_),
                      "]");
    }
    ctx->SetStatus(absl::InvalidArgumentError(msg));
  }

 private:
  int64_t summarize_ = 3;
};

REGISTER_KERNEL(KernelDefBuilder("Assert").Device(kDeviceCpu), AssertOp);

}  // namespace
}  // namespace graphrun
