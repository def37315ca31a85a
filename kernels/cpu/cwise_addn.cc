// AddN on CPU: the sum of N same-shaped tensors, accumulated left to right
// into the output (which reuses an input's buffer when it can), on every
// real and complex dtype TensorFlow's CPU kernel takes (not DT_VARIANT).
#include <utility>
#include <vector>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckInputsSameShape(ctx));
    const int num = ctx->num_inputs();
    if (num == 1) {
      ctx->set_output(0, ctx->input(0));
      return;
    }
    const TensorShape shape = ctx->input(0).shape();
    const int64_t n = shape.num_elements();
    std::vector<const T*> in(num);
    for (int i = 0; i < num; ++i) in[i] = Data<T>(ctx->input(i));

    // Accumulate into an input's buffer if one is free; it goes first so it
    // is read before it is overwritten.
    Tensor* out = nullptr;
    int reused = -1;
    for (int i = 0; i < num && reused < 0; ++i) {
      if (CanForward(ctx, i, shape)) reused = i;
    }
    if (reused >= 0) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(reused, 0, shape, &out));
      std::swap(in[0], in[reused]);
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    }
    if (n == 0) return;

    T* sum = MutableData<T>(out);
    RunOnDevice(ctx, n, [&](const auto& d) {
      MutableMap<T> o(sum, n);
      auto at = [&](int i) { return ConstMap<T>(in[i], n); };
      o.device(d) = at(0) + at(1);
      int i = 2;
      for (; i + 1 < num; i += 2) o.device(d) = o + at(i) + at(i + 1);
      if (i < num) o.device(d) = o + at(i);
    });
  }
};

#define GR_REGISTER_ADDN(T) GR_CWISE_REGISTER("AddN", T, AddNOp<T>)
GR_REGISTER_ADDN(float);
GR_REGISTER_ADDN(double);
GR_REGISTER_ADDN(half);
GR_REGISTER_ADDN(bfloat16);
GR_REGISTER_ADDN(int8_t);
GR_REGISTER_ADDN(int16_t);
GR_REGISTER_ADDN(int32_t);
GR_REGISTER_ADDN(int64_t);
GR_REGISTER_ADDN(uint8_t);
GR_REGISTER_ADDN(uint16_t);
GR_REGISTER_ADDN(uint32_t);
GR_REGISTER_ADDN(uint64_t);
GR_REGISTER_ADDN(complex64);
GR_REGISTER_ADDN(complex128);
#undef GR_REGISTER_ADDN

}  // namespace
}  // namespace cwise
}  // namespace graphrun
