// ClipByValue on CPU (float, double, int32, int64): t limited to
// [clip_value_min, clip_value_max], each bound a scalar or t-shaped, as
// TensorFlow's: the upper bound applies first, so min > max gives min; a
// NaN in t stays NaN and a NaN bound is ignored.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

// a limited from above by b; a NaN (in either) gives a.
template <typename T>
struct AtMost {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
// a limited from below by b; a NaN (in either) gives a.
template <typename T>
struct AtLeast {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

// out = F(src, bound): the bound a single value or one per element.
template <typename T, typename F, typename Device>
void Limit(const Device& d, const T* src, const Tensor& bound, T* out,
           int64_t n) {
  MutableMap<T> o(out, n);
  ConstMap<T> s(src, n);
  if (bound.NumElements() == n) {
    o.device(d) = s.binaryExpr(ConstMap<T>(Data<T>(bound), n), F());
  } else {
    o.device(d) = s.unaryExpr(ScalarRight<F, T>(Data<T>(bound)));
  }
}

template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    const TensorShape shape = t.shape();
    auto fits = [&](const Tensor& bound) {
      return bound.shape() == shape || bound.dims() == 0;
    };
    OP_REQUIRES(ctx, fits(lo) && fits(hi),
                absl::InvalidArgumentError(absl::StrCat(
                    "clip_value_min and clip_value_max must be either of the "
                    "same shape as input, or a scalar. input shape: ",
                    shape.DebugString(),
                    " clip_value_min shape: ", lo.shape().DebugString(),
                    " clip_value_max shape: ", hi.shape().DebugString())));
    const T* in = Data<T>(t);
    const int64_t n = shape.num_elements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ForwardOrAllocate(ctx, {0}, shape, &out));
    if (n == 0) return;
    T* o = MutableData<T>(out);
    RunOnDevice(ctx, n, [&](const auto& d) {
      Limit<T, AtMost<T>>(d, in, hi, o, n);
      Limit<T, AtLeast<T>>(d, o, lo, o, n);
    });
  }
};

#define GR_REGISTER_CLIP(T) \
  GR_CWISE_REGISTER("ClipByValue", T, ClipByValueOp<T>)
GR_REGISTER_CLIP(float);
GR_REGISTER_CLIP(double);
GR_REGISTER_CLIP(int32_t);
GR_REGISTER_CLIP(int64_t);
#undef GR_REGISTER_CLIP

}  // namespace
}  // namespace cwise
}  // namespace graphrun
