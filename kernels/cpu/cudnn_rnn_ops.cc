// CudnnRNN, CudnnRNNV2 and CudnnRNNV3 on CPU: the forward pass of a
// multi-layer, optionally bidirectional RNN in cuDNN's formulation, for
// graphs exported from GPU training (Keras' CuDNNLSTM / CuDNNGRU, the
// tf.contrib cudnn_rnn layers). Inference only: reserve_space and
// host_reserved come out empty.
//
// params is cuDNN's canonical layout flattened: first every weight matrix,
// layer by layer and, within a layer, forward then backward direction; per
// (layer, direction) the input matrices W_g [units, in] for each gate g,
// then the recurrent matrices R_g [units, units]; then every bias in the
// same order (bW_g, then bR_g, each [units]). That is the order of
// CudnnRNNParamsToCanonical's outputs and the buffer Keras builds with
// canonical_to_params. Gates, in cuDNN's order:
//   rnn_relu / rnn_tanh: h' = act(W x + bW + R h + bR)
//   lstm (i, f, c, o):   c' = f * c + i * tanh(.), h' = o * tanh(c')
//   gru (r, z, n):       n = tanh(W_n x + bW_n + r * (R_n h + bR_n)),
//                        h' = (1 - z) * n + z * h
// Layer l > 0 reads the previous layer's output (both directions side by
// side). V3's sequence_lengths stop each batch entry early: its outputs
// past the length are zero and its final state is the state at the length
// (the backward direction starts at the length). time_major = false takes
// and gives [batch, time, ...].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

enum class RnnMode { kRelu, kTanh, kLstm, kGru };

int GateCount(RnnMode m) {
  switch (m) {
    case RnnMode::kLstm:
      return 4;
    case RnnMode::kGru:
      return 3;
    default:
      return 1;
  }
}

template <typename C>
C Sigmoid(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

struct RnnDims {
  int64_t time = 0, batch = 0, input = 0, units = 0, layers = 0, dirs = 1;
  int gates = 1;
  int64_t LayerInput(int64_t layer) const { return layer == 0 ? input : units * dirs; }
  // Elements params must hold.
  int64_t ParamCount() const {
    int64_t n = 0;
    for (int64_t l = 0; l < layers; ++l) {
      n += dirs * gates * units * (LayerInput(l) + units + 2);
    }
    return n;
  }
};

template <typename T>
class CudnnRnnOp : public OpKernel {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;

 public:
  explicit CudnnRnnOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string mode, input_mode, direction;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("rnn_mode", &mode));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("input_mode", &input_mode));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("direction", &direction));
    if (mode == "rnn_relu") {
      mode_ = RnnMode::kRelu;
    } else if (mode == "rnn_tanh") {
      mode_ = RnnMode::kTanh;
    } else if (mode == "lstm") {
      mode_ = RnnMode::kLstm;
    } else if (mode == "gru") {
      mode_ = RnnMode::kGru;
    } else {
      ctx->SetStatus(absl::InvalidArgumentError(absl::StrCat("Invalid RNN mode: ", mode)));
      return;
    }
    OP_REQUIRES(ctx, input_mode != "skip_input",
                absl::UnimplementedError(absl::StrCat(
                    "node '", ctx->def().name(),
                    "': CudnnRNN with input_mode 'skip_input' is not supported on CPU")));
    OP_REQUIRES(ctx, direction == "unidirectional" || direction == "bidirectional",
                absl::InvalidArgumentError(absl::StrCat("Invalid RNN direction: ", direction)));
    bidirectional_ = direction == "bidirectional";
    if (ctx->attrs().Find("num_proj") != nullptr) {
      int64_t num_proj = 0;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("num_proj", &num_proj));
      OP_REQUIRES(ctx, num_proj == 0,
                  absl::UnimplementedError(absl::StrCat(
                      "node '", ctx->def().name(),
                      "': CudnnRNNV3 with a projection (num_proj ", num_proj,
                      ") is not supported on CPU")));
    }
    if (ctx->attrs().Find("time_major") != nullptr) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("time_major", &time_major_));
    }
    // Dropout between layers applies only in training, which this forward
    // pass does not do: refused rather than silently left out.
    float dropout = 0;
    bool is_training = false;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dropout", &dropout));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("is_training", &is_training));
    OP_REQUIRES(ctx, dropout == 0 || !is_training,
                absl::UnimplementedError(absl::StrCat(
                    "node '", ctx->def().name(), "': CudnnRNN dropout ", dropout,
                    " in training (is_training true) is not supported on CPU")));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& input_h = ctx->input(1);
    const Tensor& input_c = ctx->input(2);
    const Tensor& params = ctx->input(3);
    const std::string& node = def().name();
    OP_REQUIRES(ctx, input.dims() == 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "node '", node, "': input must be 3-D, got ", input.shape().DebugString())));
    OP_REQUIRES(ctx, input_h.dims() == 3,
                absl::InvalidArgumentError(absl::StrCat("node '", node,
                                                        "': input_h must be 3-D, got ",
                                                        input_h.shape().DebugString())));
    RnnDims d;
    d.gates = GateCount(mode_);
    d.dirs = bidirectional_ ? 2 : 1;
    d.time = input.dim_size(time_major_ ? 0 : 1);
    d.batch = input.dim_size(time_major_ ? 1 : 0);
    d.input = input.dim_size(2);
    d.units = input_h.dim_size(2);
    OP_REQUIRES(ctx, input_h.dim_size(0) % d.dirs == 0 && input_h.dim_size(1) == d.batch,
                absl::InvalidArgumentError(absl::StrCat(
                    "node '", node, "': Invalid input_h shape: ", input_h.shape().DebugString(),
                    " for input ", input.shape().DebugString())));
    d.layers = input_h.dim_size(0) / d.dirs;
    if (mode_ == RnnMode::kLstm) {
      OP_REQUIRES(ctx, input_c.shape() == input_h.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "node '", node, "': input_h and input_c must have the same shape: ",
                      input_h.shape().DebugString(), " ", input_c.shape().DebugString())));
    }
    OP_REQUIRES(ctx, params.NumElements() == d.ParamCount(),
                absl::InvalidArgumentError(absl::StrCat(
                    "node '", node, "': params has ", params.NumElements(), " elements, but ",
                    d.layers, " layer(s) of ", d.units, " units over an input of ", d.input,
                    " need ", d.ParamCount())));
    std::vector<int32_t> lengths(d.batch, static_cast<int32_t>(d.time));
    if (ctx->num_inputs() == 5) {
      const Tensor& seq = ctx->input(4);
      OP_REQUIRES(ctx, seq.dims() == 1 && seq.dim_size(0) == d.batch,
                  absl::InvalidArgumentError(absl::StrCat(
                      "node '", node, "': sequence_lengths must be [batch], got ",
                      seq.shape().DebugString())));
      for (int64_t b = 0; b < d.batch; ++b) {
        const int32_t len = seq.flat<int32_t>()[b];
        OP_REQUIRES(ctx, len >= 0 && len <= d.time,
                    absl::InvalidArgumentError(absl::StrCat(
                        "node '", node, "': sequence_lengths[", b, "] = ", len,
                        " is not in [0, ", d.time, "]")));
        lengths[b] = len;
      }
    }
    const int64_t out_width = d.dirs * d.units;
    TensorShape out_shape = time_major_ ? TensorShape({d.time, d.batch, out_width})
                                        : TensorShape({d.batch, d.time, out_width});
    Tensor *output = nullptr, *output_h = nullptr, *output_c = nullptr, *reserve = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &output));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, input_h.shape(), &output_h));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            2, mode_ == RnnMode::kLstm ? input_h.shape() : TensorShape({}),
                            &output_c));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &reserve));
    if (ctx->num_outputs() == 5) {
      Tensor* host = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &host));
    }
    if (mode_ != RnnMode::kLstm) output_c->flat<T>().data()[0] = T(0);

    // Everything in the compute type, time-major.
    std::vector<C> x(d.time * d.batch * d.input);
    const T* in = input.flat<T>().data();
    for (int64_t t = 0; t < d.time; ++t) {
      for (int64_t b = 0; b < d.batch; ++b) {
        const int64_t src = (time_major_ ? t * d.batch + b : b * d.time + t) * d.input;
        for (int64_t i = 0; i < d.input; ++i) {
          x[(t * d.batch + b) * d.input + i] = static_cast<C>(in[src + i]);
        }
      }
    }
    // The weights as they are (float, double), or widened once (half).
    std::vector<C> widened;
    const C* p = nullptr;
    if constexpr (std::is_same_v<T, C>) {
      p = params.flat<T>().data();
    } else {
      const T* raw = params.flat<T>().data();
      widened.assign(raw, raw + params.NumElements());
      p = widened.data();
    }
    const int64_t state = d.batch * d.units;
    std::vector<C> h_final(d.layers * d.dirs * state), c_final(h_final.size());
    int64_t w_offset = 0;
    int64_t b_offset = 0;
    for (int64_t l = 0; l < d.layers; ++l) b_offset += d.dirs * d.gates * d.units * (d.LayerInput(l) + d.units);
    std::vector<C> layer_out;
    for (int64_t l = 0; l < d.layers; ++l) {
      const int64_t in_width = d.LayerInput(l);
      layer_out.assign(d.time * d.batch * out_width, C(0));
      for (int64_t dir = 0; dir < d.dirs; ++dir) {
        const int64_t k = l * d.dirs + dir;
        const C* w = p + w_offset;
        const C* r = w + d.gates * d.units * in_width;
        w_offset += d.gates * d.units * (in_width + d.units);
        const C* bw = p + b_offset;
        const C* br = bw + d.gates * d.units;
        b_offset += 2 * d.gates * d.units;
        C* h = h_final.data() + k * state;
        C* c = c_final.data() + k * state;
        for (int64_t i = 0; i < state; ++i) {
          h[i] = static_cast<C>(input_h.flat<T>().data()[k * state + i]);
          c[i] = mode_ == RnnMode::kLstm ? static_cast<C>(input_c.flat<T>().data()[k * state + i])
                                         : C(0);
        }
        RunDirection(ctx->device()->eigen_cpu_device(), d, x, in_width, w, r, bw, br, dir == 1,
                     lengths, h, c,
                     layer_out.data() + dir * d.units, out_width);
      }
      x.swap(layer_out);
    }
    T* out = output->flat<T>().data();
    for (int64_t t = 0; t < d.time; ++t) {
      for (int64_t b = 0; b < d.batch; ++b) {
        const int64_t dst = (time_major_ ? t * d.batch + b : b * d.time + t) * out_width;
        for (int64_t i = 0; i < out_width; ++i) {
          out[dst + i] = static_cast<T>(x[(t * d.batch + b) * out_width + i]);
        }
      }
    }
    for (size_t i = 0; i < h_final.size(); ++i) {
      output_h->flat<T>().data()[i] = static_cast<T>(h_final[i]);
      if (mode_ == RnnMode::kLstm) output_c->flat<T>().data()[i] = static_cast<T>(c_final[i]);
    }
  }

 private:
  // One direction of one layer over x [time, batch, in_width]; writes h at
  // each step into out (row stride out_stride) and leaves the final state
  // in h and c.
  void RunDirection(const Eigen::ThreadPoolDevice* pool, const RnnDims& d,
                    const std::vector<C>& x, int64_t in_width, const C* w, const C* r,
                    const C* bw, const C* br, bool backward,
                    const std::vector<int32_t>& lengths, C* h, C* c, C* out,
                    int64_t out_stride) const {
    const int64_t g_units = d.gates * d.units;
    const int64_t rows = d.time * d.batch;
    // Input projections of every step at once: [time * batch, gates * units].
    std::vector<C> xw(static_cast<size_t>(rows * g_units));
    Gemm<C>(pool, false, true, rows, g_units, in_width, x.data(), w, xw.data());
    // The recurrent product of one step: on the pool only when big enough
    // to pay for waking it.
    std::vector<C> hr(static_cast<size_t>(d.batch * g_units));
    const double step_work = static_cast<double>(d.batch) * g_units * d.units;
    const Eigen::ThreadPoolDevice* step_pool = step_work < kStepThreadedMinWork ? nullptr : pool;
    std::vector<C> h_next(d.units);
    for (int64_t step = 0; step < d.time; ++step) {
      Gemm<C>(step_pool, false, true, d.batch, g_units, d.units, h, r, hr.data());
      for (int64_t b = 0; b < d.batch; ++b) {
        const int64_t len = lengths[b];
        if (step >= len) continue;
        const int64_t t = backward ? len - 1 - step : step;
        const C* gx = xw.data() + (t * d.batch + b) * g_units;
        const C* gh = hr.data() + b * g_units;
        C* hb = h + b * d.units;
        C* cb = c + b * d.units;
        for (int64_t u = 0; u < d.units; ++u) {
          auto pre = [&](int g) {
            const int64_t j = g * d.units + u;
            return gx[j] + bw[j] + gh[j] + br[j];
          };
          switch (mode_) {
            case RnnMode::kRelu:
              h_next[u] = std::max(pre(0), C(0));
              break;
            case RnnMode::kTanh:
              h_next[u] = std::tanh(pre(0));
              break;
            case RnnMode::kLstm: {
              const C i = Sigmoid(pre(0)), f = Sigmoid(pre(1));
              const C cand = std::tanh(pre(2)), o = Sigmoid(pre(3));
              cb[u] = f * cb[u] + i * cand;
              h_next[u] = o * std::tanh(cb[u]);
              break;
            }
            case RnnMode::kGru: {
              const C rg = Sigmoid(pre(0)), z = Sigmoid(pre(1));
              const int64_t j = 2 * d.units + u;
              const C n = std::tanh(gx[j] + bw[j] + rg * (gh[j] + br[j]));
              h_next[u] = (C(1) - z) * n + z * hb[u];
              break;
            }
          }
        }
        std::copy(h_next.begin(), h_next.end(), hb);
        std::copy(h_next.begin(), h_next.end(), out + (t * d.batch + b) * out_stride);
      }
    }
  }

  RnnMode mode_ = RnnMode::kLstm;
  bool bidirectional_ = false;
  bool time_major_ = true;
};

#define GR_REGISTER_CUDNN_RNN(T)                                                          \
  REGISTER_KERNEL(KernelDefBuilder("CudnnRNN").Device(kDeviceCpu).TypeConstraint<T>("T"),   \
                  CudnnRnnOp<T>);                                                         \
  REGISTER_KERNEL(KernelDefBuilder("CudnnRNNV2").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  CudnnRnnOp<T>);                                                         \
  REGISTER_KERNEL(KernelDefBuilder("CudnnRNNV3").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  CudnnRnnOp<T>)
GR_REGISTER_CUDNN_RNN(float);
GR_REGISTER_CUDNN_RNN(double);
GR_REGISTER_CUDNN_RNN(half);
#undef GR_REGISTER_CUDNN_RNN

}  // namespace
}  // namespace graphrun
