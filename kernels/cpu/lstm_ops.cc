// LSTMBlockCell on CPU, as TensorFlow's LSTMBlockCellOp (lstm_ops.cc): one
// step of an LSTM cell in one kernel.
//
//   [i, ci, f, o] = [x, h_prev] * w + b       (gate columns in that order)
//   i  = sigmoid(i + cs_prev * wci)            (peepholes when use_peephole)
//   f  = sigmoid(f + forget_bias + cs_prev * wcf)
//   ci = tanh(ci)
//   cs = clip(ci * i + cs_prev * f, cell_clip) (no clip when cell_clip <= 0)
//   o  = sigmoid(o + cs * wco)
//   co = tanh(cs)
//   h  = co * o
//
// The product is one Gemm of [x, h_prev] (copied side by side) with w; the
// gates are Eigen's logistic and tanh functors, the ones the Sigmoid and
// Tanh kernels use, so a cell fused from a Keras graph (graph/optimize/
// lstm_cell.cc) computes what its nodes did, up to the order of the
// product's sums.
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {


class LstmBlockCellOp : public OpKernel {
 public:
  explicit LstmBlockCellOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("forget_bias", &forget_bias_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("cell_clip", &cell_clip_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_peephole", &use_peephole_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& cs_prev = ctx->input(1);
    const Tensor& h_prev = ctx->input(2);
    const Tensor& w = ctx->input(3);
    const Tensor& b = ctx->input(7);
    auto shape_error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LSTMBlockCell: ", what, "; x ", x.shape().DebugString(), ", cs_prev ",
          cs_prev.shape().DebugString(), ", h_prev ", h_prev.shape().DebugString(), ", w ",
          w.shape().DebugString(), ", b ", b.shape().DebugString()));
    };
    OP_REQUIRES(ctx, x.dims() == 2 && cs_prev.dims() == 2 && h_prev.dims() == 2 && w.dims() == 2,
                shape_error("x, cs_prev, h_prev and w must be matrices"));
    const int64_t batch = x.dim_size(0);
    const int64_t input = x.dim_size(1);
    const int64_t units = cs_prev.dim_size(1);
    OP_REQUIRES(ctx, cs_prev.dim_size(0) == batch && h_prev.dim_size(0) == batch,
                shape_error("x, cs_prev and h_prev must have the same batch size"));
    OP_REQUIRES(ctx, h_prev.dim_size(1) == units,
                shape_error("cs_prev and h_prev must have the same number of units"));
    OP_REQUIRES(ctx, w.dim_size(0) == input + units && w.dim_size(1) == 4 * units,
                shape_error("w must be [input + units, 4 * units]"));
    OP_REQUIRES(ctx, b.dims() == 1 && b.dim_size(0) == 4 * units,
                shape_error("b must be [4 * units]"));
    for (int i = 4; i < 7; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 1 && ctx->input(i).dim_size(0) == units,
                  shape_error(absl::StrCat("the peephole weights (input ", i,
                                           ") must be [units], got ",
                                           ctx->input(i).shape().DebugString())));
    }
    Tensor* out[7];
    for (int i = 0; i < 7; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({batch, units}), &out[i]));
    }
    if (batch == 0 || units == 0) return;

    // [x, h_prev] side by side, then the gates' pre-activations.
    const int64_t width = input + units;
    // Kept per thread between steps: a cell runs once per loop iteration.
    thread_local std::vector<float> xh, icfo;
    xh.resize(batch * width);
    icfo.resize(batch * 4 * units);
    const float* xs = x.flat<float>().data();
    const float* hs = h_prev.flat<float>().data();
    for (int64_t r = 0; r < batch; ++r) {
      std::memcpy(&xh[r * width], xs + r * input, input * sizeof(float));
      std::memcpy(&xh[r * width + input], hs + r * units, units * sizeof(float));
    }
    // A cell runs once per step of a loop, one step after another: below
    // about 20 us of arithmetic, waking a second thread for half of the
    // product costs more than it saves (a 64-unit cell at batch 2 spent a
    // fifth of its time in futex wake-ups that way).
    const double work = static_cast<double>(batch) * width * 4 * units;
    Gemm<float>(work < kStepThreadedMinWork ? nullptr : ctx->device()->eigen_cpu_device(), false,
                false, batch, 4 * units, width, xh.data(), w.flat<float>().data(), icfo.data());

    using Row = Eigen::Map<Eigen::ArrayXf>;
    using ConstRow = Eigen::Map<const Eigen::ArrayXf>;
    const int64_t h = units;
    const ConstRow bias(b.flat<float>().data(), 4 * h);
    const ConstRow wci(ctx->input(4).flat<float>().data(), h);
    const ConstRow wcf(ctx->input(5).flat<float>().data(), h);
    const ConstRow wco(ctx->input(6).flat<float>().data(), h);
    for (int64_t r = 0; r < batch; ++r) {
      Row gates(&icfo[r * 4 * h], 4 * h);
      gates += bias;
      const ConstRow cs_in(cs_prev.flat<float>().data() + r * h, h);
      auto row = [&](int output) { return Row(out[output]->flat<float>().data() + r * h, h); };
      Row i = row(0), cs = row(1), f = row(2), o = row(3), ci = row(4), co = row(5), hr = row(6);
      if (use_peephole_) {
        i = (gates.segment(0, h) + cs_in * wci).logistic();
        f = (gates.segment(2 * h, h) + forget_bias_ + cs_in * wcf).logistic();
      } else {
        i = gates.segment(0, h).logistic();
        f = (gates.segment(2 * h, h) + forget_bias_).logistic();
      }
      ci = gates.segment(h, h).tanh();
      cs = ci * i + cs_in * f;
      if (cell_clip_ > 0.0f) cs = cs.max(-cell_clip_).min(cell_clip_);
      if (use_peephole_) {
        o = (gates.segment(3 * h, h) + cs * wco).logistic();
      } else {
        o = gates.segment(3 * h, h).logistic();
      }
      co = cs.tanh();
      hr = co * o;
    }
  }

 private:
  float forget_bias_ = 1.0f;
  float cell_clip_ = 3.0f;
  bool use_peephole_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("LSTMBlockCell").Device(kDeviceCpu).TypeConstraint<float>("T"),
                LstmBlockCellOp);

}  // namespace
}  // namespace graphrun
