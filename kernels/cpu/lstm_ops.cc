// The LSTM ops on CPU, as TensorFlow's (lstm_ops.cc): LSTMBlockCell, one
// step of an LSTM cell in one kernel, and BlockLSTM / BlockLSTMV2, the same
// cell over every step of a sequence x [time, batch, input].
//
//   [i, ci, f, o] = [x, h_prev] * w + b       (LSTMBlockCell's and
//                                              BlockLSTM's gate columns;
//                                              BlockLSTMV2's are i, f, ci, o)
//   i  = sigmoid(i + cs_prev * wci)            (peepholes when use_peephole)
//   f  = sigmoid(f + forget_bias + cs_prev * wcf)   (no forget_bias in V2)
//   ci = tanh(ci)
//   cs = clip(ci * i + cs_prev * f, cell_clip) (no clip when cell_clip <= 0)
//   o  = sigmoid(o + cs * wco)
//   co = tanh(cs)
//   h  = co * o
//
// The cell's product is one Gemm of [x, h_prev] (copied side by side) with
// w. The sequence ops multiply the inputs of all steps by w's input rows in
// one Gemm first, then per step only h_prev by its recurrent rows; steps
// from seq_len_max on are zeros in every output (TensorFlow zeroes cs and h
// there and leaves the other outputs' memory as it found it). The gates are Eigen's
// logistic and tanh functors, the ones the Sigmoid and Tanh kernels use, so
// a cell fused from a Keras graph (graph/optimize/lstm_cell.cc) computes
// what its nodes did, up to the order of the product's sums.
#include <algorithm>
#include <cstring>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Where each gate's block of `units` columns starts, in units.
struct GateLayout {
  int i, ci, f, o;
};
constexpr GateLayout kIcfo = {0, 1, 2, 3};  // LSTMBlockCell, BlockLSTM
constexpr GateLayout kIfco = {0, 2, 1, 3};  // BlockLSTMV2

struct CellAttrs {
  float forget_bias = 0.0f;
  float cell_clip = 0.0f;
  bool use_peephole = false;
};

// The outputs' rows for one batch row: `gates` holds the row's 4 * h
// pre-activations with the bias added; each of out[0..6] (i, cs, f, o, ci,
// co, h) points at the row's h values.
void CellRow(const CellAttrs& a, const GateLayout& l, const float* gates_p, const float* cs_prev,
             const float* wci_p, const float* wcf_p, const float* wco_p, int64_t h,
             float* const out[7]) {
  using Row = Eigen::Map<Eigen::ArrayXf>;
  using ConstRow = Eigen::Map<const Eigen::ArrayXf>;
  const ConstRow gates(gates_p, 4 * h);
  const ConstRow cs_in(cs_prev, h);
  const ConstRow wci(wci_p, h), wcf(wcf_p, h), wco(wco_p, h);
  Row i(out[0], h), cs(out[1], h), f(out[2], h), o(out[3], h), ci(out[4], h), co(out[5], h),
      hr(out[6], h);
  if (a.use_peephole) {
    i = (gates.segment(l.i * h, h) + cs_in * wci).logistic();
    f = (gates.segment(l.f * h, h) + a.forget_bias + cs_in * wcf).logistic();
  } else {
    i = gates.segment(l.i * h, h).logistic();
    f = (gates.segment(l.f * h, h) + a.forget_bias).logistic();
  }
  ci = gates.segment(l.ci * h, h).tanh();
  cs = ci * i + cs_in * f;
  if (a.cell_clip > 0.0f) cs = cs.max(-a.cell_clip).min(a.cell_clip);
  if (a.use_peephole) {
    o = (gates.segment(l.o * h, h) + cs * wco).logistic();
  } else {
    o = gates.segment(l.o * h, h).logistic();
  }
  co = cs.tanh();
  hr = co * o;
}

// "x [..], cs_prev [..], ..., b [..]" for the inputs from `first` (x) on,
// for errors.
std::string Shapes(OpKernelContext* ctx, int first) {
  std::string s;
  const char* names[] = {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"};
  for (int k = 0; k < 8; ++k) {
    absl::StrAppend(&s, k == 0 ? "" : ", ", names[k], " ",
                    ctx->input(first + k).shape().DebugString());
  }
  return s;
}

// The shapes both kinds share: cs_prev and h_prev [batch, units], w
// [input + units, 4 * units], peepholes [units], b [4 * units] (inputs
// `first` + 0..6, x the one before). x's checks are the caller's.
absl::Status CheckWeights(OpKernelContext* ctx, const std::string& op, int first,
                          int64_t batch, int64_t input, int64_t units) {
  const Tensor& cs_prev = ctx->input(first);
  const Tensor& h_prev = ctx->input(first + 1);
  const Tensor& w = ctx->input(first + 2);
  const Tensor& b = ctx->input(first + 6);
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, "; ", Shapes(ctx, first - 1)));
  };
  if (cs_prev.dims() != 2 || h_prev.dims() != 2 || w.dims() != 2) {
    return error("cs_prev, h_prev and w must be matrices");
  }
  if (cs_prev.dim_size(0) != batch || h_prev.dim_size(0) != batch) {
    return error("x, cs_prev and h_prev must have the same batch size");
  }
  if (h_prev.dim_size(1) != units) {
    return error("cs_prev and h_prev must have the same number of units");
  }
  if (w.dim_size(0) != input + units || w.dim_size(1) != 4 * units) {
    return error("w must be [input + units, 4 * units]");
  }
  if (b.dims() != 1 || b.dim_size(0) != 4 * units) return error("b must be [4 * units]");
  for (int i = first + 3; i < first + 6; ++i) {
    if (ctx->input(i).dims() != 1 || ctx->input(i).dim_size(0) != units) {
      return error(absl::StrCat("the peephole weights (input ", i, ") must be [units], got ",
                                ctx->input(i).shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

// A cell runs once per step of a loop, one step after another: below
// about 20 us of arithmetic, waking a second thread for half of the
// product costs more than it saves (a 64-unit cell at batch 2 spent a
// fifth of its time in futex wake-ups that way).
const Eigen::ThreadPoolDevice* StepDevice(OpKernelContext* ctx, double work) {
  return work < kStepThreadedMinWork ? nullptr : ctx->device()->eigen_cpu_device();
}

absl::Status ReadAttrs(OpKernelConstruction* ctx, bool forget_bias, CellAttrs* a) {
  if (forget_bias) {
    absl::Status s = ctx->GetAttr("forget_bias", &a->forget_bias);
    if (!s.ok()) return s;
  }
  absl::Status s = ctx->GetAttr("cell_clip", &a->cell_clip);
  if (!s.ok()) return s;
  return ctx->GetAttr("use_peephole", &a->use_peephole);
}

class LstmBlockCellOp : public OpKernel {
 public:
  explicit LstmBlockCellOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, /*forget_bias=*/true, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& cs_prev = ctx->input(1);
    OP_REQUIRES(ctx, x.dims() == 2 && cs_prev.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "LSTMBlockCell: x, cs_prev, h_prev and w must be matrices; ",
                    Shapes(ctx, 0))));
    const int64_t batch = x.dim_size(0);
    const int64_t input = x.dim_size(1);
    const int64_t units = cs_prev.dim_size(1);
    OP_REQUIRES_OK(ctx, CheckWeights(ctx, def().op(), 1, batch, input, units));
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
    const float* hs = ctx->input(2).flat<float>().data();
    for (int64_t r = 0; r < batch; ++r) {
      std::memcpy(&xh[r * width], xs + r * input, input * sizeof(float));
      std::memcpy(&xh[r * width + input], hs + r * units, units * sizeof(float));
    }
    Gemm<float>(StepDevice(ctx, static_cast<double>(batch) * width * 4 * units), false, false,
                batch, 4 * units, width, xh.data(), ctx->input(3).flat<float>().data(),
                icfo.data());
    const float* bias = ctx->input(7).flat<float>().data();
    for (int64_t r = 0; r < batch; ++r) {
      float* gates = &icfo[r * 4 * units];
      for (int64_t k = 0; k < 4 * units; ++k) gates[k] += bias[k];
      float* rows[7];
      for (int k = 0; k < 7; ++k) rows[k] = out[k]->flat<float>().data() + r * units;
      CellRow(attrs_, kIcfo, gates, cs_prev.flat<float>().data() + r * units,
              ctx->input(4).flat<float>().data(), ctx->input(5).flat<float>().data(),
              ctx->input(6).flat<float>().data(), units, rows);
    }
  }

 private:
  CellAttrs attrs_;
};

// out[r, :] += h[r, :] * u for the `rows` rows of h ([rows, k]) and u
// ([k, n]), on this thread: a recurrent step's product at a small batch.
// Two rows at a time share each load of u; 32 columns of each row stay in
// registers over all of k. (A library GEMM per step, or the skinny
// product, did the same in 1.5-2x the time here.)
void AddRecurrentProduct(const float* h, const float* u, int64_t rows, int64_t k, int64_t n,
                         float* out) {
  int64_t r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; r + 2 <= rows; r += 2) {
    const float* h0 = h + r * k;
    const float* h1 = h0 + k;
    float* o0 = out + r * n;
    float* o1 = o0 + n;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
      __m256 a0 = _mm256_loadu_ps(o0 + j), a1 = _mm256_loadu_ps(o0 + j + 8);
      __m256 a2 = _mm256_loadu_ps(o0 + j + 16), a3 = _mm256_loadu_ps(o0 + j + 24);
      __m256 b0 = _mm256_loadu_ps(o1 + j), b1 = _mm256_loadu_ps(o1 + j + 8);
      __m256 b2 = _mm256_loadu_ps(o1 + j + 16), b3 = _mm256_loadu_ps(o1 + j + 24);
      for (int64_t p = 0; p < k; ++p) {
        const float* ur = u + p * n + j;
        const __m256 u0 = _mm256_loadu_ps(ur), u1 = _mm256_loadu_ps(ur + 8);
        const __m256 u2 = _mm256_loadu_ps(ur + 16), u3 = _mm256_loadu_ps(ur + 24);
        const __m256 x = _mm256_broadcast_ss(h0 + p), y = _mm256_broadcast_ss(h1 + p);
        a0 = _mm256_fmadd_ps(x, u0, a0);
        a1 = _mm256_fmadd_ps(x, u1, a1);
        a2 = _mm256_fmadd_ps(x, u2, a2);
        a3 = _mm256_fmadd_ps(x, u3, a3);
        b0 = _mm256_fmadd_ps(y, u0, b0);
        b1 = _mm256_fmadd_ps(y, u1, b1);
        b2 = _mm256_fmadd_ps(y, u2, b2);
        b3 = _mm256_fmadd_ps(y, u3, b3);
      }
      _mm256_storeu_ps(o0 + j, a0);
      _mm256_storeu_ps(o0 + j + 8, a1);
      _mm256_storeu_ps(o0 + j + 16, a2);
      _mm256_storeu_ps(o0 + j + 24, a3);
      _mm256_storeu_ps(o1 + j, b0);
      _mm256_storeu_ps(o1 + j + 8, b1);
      _mm256_storeu_ps(o1 + j + 16, b2);
      _mm256_storeu_ps(o1 + j + 24, b3);
    }
    for (; j < n; ++j) {
      float s0 = o0[j], s1 = o1[j];
      for (int64_t p = 0; p < k; ++p) {
        s0 += h0[p] * u[p * n + j];
        s1 += h1[p] * u[p * n + j];
      }
      o0[j] = s0;
      o1[j] = s1;
    }
  }
#endif
  // The last row (or every row without AVX2): one row against u, row by
  // row of u, which the compiler vectorizes over the columns.
  for (; r < rows; ++r) {
    float* o = out + r * n;
    for (int64_t p = 0; p < k; ++p) {
      const float x = h[r * k + p];
      const float* ur = u + p * n;
      for (int64_t j = 0; j < n; ++j) o[j] += x * ur[j];
    }
  }
}

// BlockLSTM (kIcfo, forget_bias) and BlockLSTMV2 (kIfco, none).
class BlockLstmOp : public OpKernel {
 public:
  BlockLstmOp(OpKernelConstruction* ctx, GateLayout layout, bool forget_bias)
      : OpKernel(ctx), layout_(layout) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, forget_bias, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& seq_len_max = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& cs_prev = ctx->input(2);
    const std::string& op = def().op();
    OP_REQUIRES(ctx, seq_len_max.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    op, ": seq_len_max must be a scalar, got shape ",
                    seq_len_max.shape().DebugString())));
    OP_REQUIRES(ctx, x.dims() == 3 && cs_prev.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    op, ": x must be [time, batch, input] and cs_prev a matrix; ",
                    Shapes(ctx, 1))));
    const int64_t time = x.dim_size(0), batch = x.dim_size(1), input = x.dim_size(2);
    const int64_t units = cs_prev.dim_size(1);
    OP_REQUIRES_OK(ctx, CheckWeights(ctx, op, 2, batch, input, units));
    const int64_t steps = std::max<int64_t>(seq_len_max.flat<int64_t>()[0], 0);
    OP_REQUIRES(ctx, steps <= time,
                absl::InvalidArgumentError(absl::StrCat(
                    op, ": seq_len_max is ", steps, " but x has only ", time, " steps")));
    Tensor* out[7];
    for (int i = 0; i < 7; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({time, batch, units}), &out[i]));
      float* o = out[i]->flat<float>().data();
      std::fill(o + steps * batch * units, o + time * batch * units, 0.0f);
    }
    if (steps == 0 || batch == 0 || units == 0) return;

    const int64_t gates_width = 4 * units;
    const float* w = ctx->input(4).flat<float>().data();
    const float* bias = ctx->input(8).flat<float>().data();
    // Every step's input product at once, [steps * batch, input] * w's
    // first `input` rows, each block of it finished with the bias by the
    // thread that multiplied it (as _FusedMatMul's epilogue).
    std::vector<float> xw(steps * batch * gates_width);
    const cpu::BiasActivation add_bias;  // no activation
    GemmWithEpilogue(ctx->device()->eigen_cpu_device(), false, false, steps * batch,
                     gates_width, input, x.flat<float>().data(), w, xw.data(),
                     [&](int64_t m0, int64_t mc, int64_t n0, int64_t nc) {
                       add_bias.ApplyBlock(bias, gates_width, xw.data(), m0, mc, n0, nc);
                     });
    const float* u = w + input * gates_width;  // the recurrent rows
    // A small batch adds h_prev * u into the pre-activations on this
    // thread; a larger one multiplies with Gemm (the pool past
    // kStepThreadedMinWork) and adds.
    const bool small = batch <= 8;
    std::vector<float> hw(small ? 0 : batch * gates_width);
    const Eigen::ThreadPoolDevice* step_device =
        StepDevice(ctx, static_cast<double>(batch) * units * gates_width);
    const float* h_prev = ctx->input(3).flat<float>().data();
    const float* c_prev = cs_prev.flat<float>().data();
    const float* wci = ctx->input(5).flat<float>().data();
    const float* wcf = ctx->input(6).flat<float>().data();
    const float* wco = ctx->input(7).flat<float>().data();
    float* outs[7];
    for (int k = 0; k < 7; ++k) outs[k] = out[k]->flat<float>().data();
    for (int64_t t = 0; t < steps; ++t) {
      float* gates_t = xw.data() + t * batch * gates_width;
      if (small) {
        AddRecurrentProduct(h_prev, u, batch, units, gates_width, gates_t);
      } else {
        Gemm<float>(step_device, false, false, batch, gates_width, units, h_prev, u, hw.data());
        for (int64_t k = 0; k < batch * gates_width; ++k) gates_t[k] += hw[k];
      }
      for (int64_t r = 0; r < batch; ++r) {
        float* rows[7];
        for (int k = 0; k < 7; ++k) rows[k] = outs[k] + (t * batch + r) * units;
        CellRow(attrs_, layout_, gates_t + r * gates_width, c_prev + r * units, wci, wcf, wco,
                units, rows);
      }
      h_prev = outs[6] + t * batch * units;
      c_prev = outs[1] + t * batch * units;
    }
  }

 private:
  const GateLayout layout_;
  CellAttrs attrs_;
};

class BlockLstmV1Op : public BlockLstmOp {
 public:
  explicit BlockLstmV1Op(OpKernelConstruction* ctx) : BlockLstmOp(ctx, kIcfo, true) {}
};

class BlockLstmV2Op : public BlockLstmOp {
 public:
  explicit BlockLstmV2Op(OpKernelConstruction* ctx) : BlockLstmOp(ctx, kIfco, false) {}
};

REGISTER_KERNEL(KernelDefBuilder("LSTMBlockCell").Device(kDeviceCpu).TypeConstraint<float>("T"),
                LstmBlockCellOp);
REGISTER_KERNEL(KernelDefBuilder("BlockLSTM").Device(kDeviceCpu).TypeConstraint<float>("T"),
                BlockLstmV1Op);
REGISTER_KERNEL(KernelDefBuilder("BlockLSTMV2").Device(kDeviceCpu).TypeConstraint<float>("T"),
                BlockLstmV2Op);

}  // namespace
}  // namespace graphrun
