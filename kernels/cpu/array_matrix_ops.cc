// CPU kernels on the innermost two dims seen as a batch of matrices:
// MatrixBandPart (zero outside a band), MatrixDiag (vectors to diagonal
// matrices), MatrixDiagV3 (diagonals k[0]..k[1] to matrices, with a
// padding value and an alignment), MatrixDiagPartV3 (the reverse) and
// MatrixSetDiagV3 (diagonals written into a copy of the matrices).
// Elements move as same-size unsigned integers (strings as strings), so
// each kernel is one instantiation per element size. Semantics follow
// TensorFlow's matrix_band_part_op.cc and matrix_diag_op.cc.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

class MatrixBandPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be at least 2-dim, but has shape ",
                                 input.shape().DebugString())));
    const int64_t rows = input.dim_size(input.dims() - 2);
    const int64_t cols = input.dim_size(input.dims() - 1);
    int64_t bounds[2];
    static constexpr const char* kNames[] = {"num_lower", "num_upper"};
    for (int i = 0; i < 2; ++i) {
      const Tensor& t = ctx->input(1 + i);
      OP_REQUIRES(ctx, t.dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      kNames[i], " must be a scalar, but has shape ",
                      t.shape().DebugString())));
      bounds[i] = IntScalar(t);
      const int64_t limit = i == 0 ? rows : cols;
      OP_REQUIRES(ctx, bounds[i] <= limit,
                  absl::InvalidArgumentError(absl::StrCat(
                      kNames[i], " must be negative or at most the number of ",
                      i == 0 ? "rows" : "columns", " (", limit, "), but is ",
                      bounds[i])));
    }
    const int64_t lower = bounds[0] < 0 ? rows : bounds[0];
    const int64_t upper = bounds[1] < 0 ? cols : bounds[1];
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(
                            0, 0, input.shape(), &output));
    const bool in_place = output->raw_data() == input.raw_data();
    const int64_t matrices =
        rows * cols == 0 ? 0 : input.NumElements() / (rows * cols);
    VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* in = DataAs<P>(input);
      P* out = MutableDataAs<P>(output);
      ParallelForRange(
          ctx, matrices * rows, cols * 4, [&](int64_t b, int64_t e) {
            for (int64_t k = b; k < e; ++k) {
              const int64_t m = k % rows;
              // Kept: columns [m - lower, m + upper] within [0, cols).
              const int64_t first = std::max<int64_t>(0, m - lower);
              const int64_t last = std::min<int64_t>(cols, m + upper + 1);
              P* row = out + k * cols;
              if (first >= last) {
                std::fill(row, row + cols, P());
                continue;
              }
              std::fill(row, row + first, P());
              if (!in_place)
                std::copy(in + k * cols + first, in + k * cols + last,
                          row + first);
              std::fill(row + last, row + cols, P());
            }
          });
    });
  }
};

// Where diagonal `d` of a rows x cols matrix starts within a stored row of
// `max_len` entries: right-aligned diagonals are padded on the left.
struct DiagAlignment {
  bool left_super = false;  // superdiagonals (d >= 0) left-aligned
  bool left_sub = true;     // subdiagonals (d <= 0) left-aligned

  int64_t Offset(int64_t d, int64_t rows, int64_t cols, int64_t max_len) const {
    const int64_t len = DiagLength(d, rows, cols);
    const bool right = (d >= 0 && !left_super) || (d <= 0 && !left_sub);
    return right ? max_len - len : 0;
  }
  static int64_t DiagLength(int64_t d, int64_t rows, int64_t cols) {
    return std::min(rows + std::min<int64_t>(d, 0),
                    cols - std::max<int64_t>(d, 0));
  }
};

absl::StatusOr<DiagAlignment> ReadAlignment(OpKernelConstruction* ctx) {
  DiagAlignment a;
  if (ctx->attrs().Find("align") == nullptr) {
    // MatrixDiag: the main diagonal only. The V2 ops (V3 before `align`)
    // pack every diagonal to the left.
    if (absl::EndsWith(ctx->def().op(), "V2")) a = {true, true};
    return a;
  }
  std::string align;
  absl::Status s = ctx->GetAttr("align", &align);
  if (!s.ok()) return s;
  if (align == "LEFT_RIGHT") {
    a = {true, false};
  } else if (align == "RIGHT_LEFT") {
    a = {false, true};
  } else if (align == "LEFT_LEFT") {
    a = {true, true};
  } else if (align == "RIGHT_RIGHT") {
    a = {false, false};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("align must be LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT or "
                     "RIGHT_RIGHT, not '",
                     align, "'"));
  }
  return a;
}

// Reads k (a scalar or 1-2 values) into [lower, upper].
absl::Status ReadDiagRange(const Tensor& k, int64_t* lower, int64_t* upper) {
  if (k.dims() > 1 || k.NumElements() < 1 || k.NumElements() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "k must be a scalar or a vector of 1 or 2 values, but has shape ",
        k.shape().DebugString()));
  }
  const std::vector<int64_t> v = IntValues(k);
  *lower = v[0];
  *upper = v.back();
  if (*lower > *upper) {
    return absl::InvalidArgumentError(
        absl::StrCat("lower_diag_index must not be larger than "
                     "upper_diag_index: ",
                     *lower, " > ", *upper));
  }
  return absl::OkStatus();
}

absl::Status CheckScalar(const Tensor& t, absl::string_view name) {
  if (t.dims() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, " must be a scalar, but has shape ", t.shape().DebugString()));
}

// A MatrixDiag* kernel: reads the `align` attr (when the op has one).
class DiagOpBase : public OpKernel {
 public:
  explicit DiagOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    absl::StatusOr<DiagAlignment> a = ReadAlignment(ctx);
    ctx->SetStatus(a.status());
    if (a.ok()) align_ = *a;
  }

 protected:
  DiagAlignment align_;
};

// MatrixDiag (1 input: k = 0, square, zero padding) and MatrixDiagV3.
class MatrixDiagOp : public DiagOpBase {
 public:
  using DiagOpBase::DiagOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& diag = ctx->input(0);
    OP_REQUIRES(ctx, diag.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "diagonal must be at least 1-dim, but has shape ",
                    diag.shape().DebugString())));
    int64_t lower = 0, upper = 0, num_rows = -1, num_cols = -1;
    const Tensor* padding = nullptr;
    if (ctx->num_inputs() == 5) {
      OP_REQUIRES_OK(ctx, ReadDiagRange(ctx->input(1), &lower, &upper));
      OP_REQUIRES_OK(ctx, CheckScalar(ctx->input(2), "num_rows"));
      OP_REQUIRES_OK(ctx, CheckScalar(ctx->input(3), "num_cols"));
      OP_REQUIRES_OK(ctx, CheckScalar(ctx->input(4), "padding_value"));
      num_rows = IntScalar(ctx->input(2));
      num_cols = IntScalar(ctx->input(3));
      padding = &ctx->input(4);
    }
    const int rank = diag.dims();
    const int64_t num_diags = upper - lower + 1;
    if (lower != upper) {
      OP_REQUIRES(ctx, rank >= 2 && diag.dim_size(rank - 2) == num_diags,
                  absl::InvalidArgumentError(absl::StrCat(
                      "diagonal has shape ", diag.shape().DebugString(),
                      ", but k = [", lower, ", ", upper, "] needs ", num_diags,
                      " diagonals in dim -2")));
    }
    const int64_t max_len = diag.dim_size(rank - 1);
    const int64_t min_rows = max_len - std::min<int64_t>(upper, 0);
    const int64_t min_cols = max_len + std::max<int64_t>(lower, 0);
    if (num_rows == -1 && num_cols == -1) {
      num_rows = num_cols = std::max(min_rows, min_cols);
    } else if (num_rows == -1) {
      num_rows = min_rows;
    } else if (num_cols == -1) {
      num_cols = min_cols;
    }
    OP_REQUIRES(
        ctx,
        num_rows >= min_rows && num_cols >= min_cols &&
            (num_rows == min_rows || num_cols == min_cols),
        absl::InvalidArgumentError(absl::StrCat(
            "num_rows ", num_rows, " and num_cols ", num_cols,
            " do not fit diagonals ", lower, "..", upper, " of length ",
            max_len, " (need ", min_rows, " rows or ", min_cols, " columns)")));
    std::vector<int64_t> dims(
        diag.shape().dim_sizes().begin(),
        diag.shape().dim_sizes().end() - (lower == upper ? 1 : 2));
    dims.push_back(num_rows);
    dims.push_back(num_cols);
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (output->NumElements() == 0) return;
    const int64_t batch = output->NumElements() / (num_rows * num_cols);
    const DiagAlignment align = align_;
    VisitCopyType(diag.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P pad = padding != nullptr ? DataAs<P>(*padding)[0] : P();
      const P* in = DataAs<P>(diag);
      P* out = MutableDataAs<P>(output);
      ParallelForRange(
          ctx, batch * num_rows, num_cols * 4, [&](int64_t b, int64_t e) {
            for (int64_t k = b; k < e; ++k) {
              const int64_t r = k % num_rows;
              const P* diags = in + (k / num_rows) * num_diags * max_len;
              P* row = out + k * num_cols;
              for (int64_t c = 0; c < num_cols; ++c) {
                const int64_t d = c - r;
                if (d < lower || d > upper) {
                  row[c] = pad;
                  continue;
                }
                // Entry of (r, c) along diagonal d: r for d >= 0, c below.
                const int64_t j = (d >= 0 ? r : c) +
                                  align.Offset(d, num_rows, num_cols, max_len);
                row[c] = diags[(upper - d) * max_len + j];
              }
            }
          });
    });
  }
};

class MatrixDiagPartOp : public DiagOpBase {
 public:
  using DiagOpBase::DiagOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be at least 2-dim, but has shape ",
                                 input.shape().DebugString())));
    // MatrixDiagPart (1 input): the main diagonal, k = 0.
    int64_t lower = 0, upper = 0;
    const Tensor* padding = nullptr;
    if (ctx->num_inputs() == 3) {
      OP_REQUIRES_OK(ctx, ReadDiagRange(ctx->input(1), &lower, &upper));
      padding = &ctx->input(2);
      OP_REQUIRES_OK(ctx, CheckScalar(*padding, "padding_value"));
    }
    const int rank = input.dims();
    const int64_t rows = input.dim_size(rank - 2);
    const int64_t cols = input.dim_size(rank - 1);
    for (int64_t d : {lower, upper}) {
      OP_REQUIRES(ctx, d == 0 || (d > -rows && d < cols),
                  absl::InvalidArgumentError(absl::StrCat(
                      "diagonal index ", d, " is out of bounds for a ", rows,
                      "x", cols, " matrix")));
    }
    const int64_t num_diags = upper - lower + 1;
    const int64_t max_len =
        std::max<int64_t>(0, std::min(rows + std::min<int64_t>(upper, 0),
                                      cols - std::max<int64_t>(lower, 0)));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().end() - 2);
    if (lower != upper) dims.push_back(num_diags);
    dims.push_back(max_len);
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &output));
    if (output->NumElements() == 0) return;
    const int64_t batch = output->NumElements() / (num_diags * max_len);
    const DiagAlignment align = align_;
    VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P pad = padding != nullptr ? DataAs<P>(*padding)[0] : P();
      const P* in = DataAs<P>(input);
      P* out = MutableDataAs<P>(output);
      ParallelForRange(
          ctx, batch * num_diags, max_len * 4, [&](int64_t b, int64_t e) {
            for (int64_t k = b; k < e; ++k) {
              const int64_t d = upper - k % num_diags;
              const P* matrix = in + (k / num_diags) * rows * cols;
              const int64_t len = DiagAlignment::DiagLength(d, rows, cols);
              const int64_t offset = align.Offset(d, rows, cols, max_len);
              const int64_t r0 = std::max<int64_t>(-d, 0);
              const int64_t c0 = std::max<int64_t>(d, 0);
              P* row = out + k * max_len;
              for (int64_t j = 0; j < max_len; ++j) {
                const int64_t t = j - offset;
                row[j] =
                    t >= 0 && t < len ? matrix[(r0 + t) * cols + c0 + t] : pad;
              }
            }
          });
    });
  }
};

// MatrixSetDiag (k = 0) and MatrixSetDiagV2/V3: the input with diagonals
// lower..upper replaced by `diagonal`, laid out as MatrixDiagPartV3 returns
// them ([..., max_len], or [..., num_diags, max_len] for a band).
class MatrixSetDiagOp : public DiagOpBase {
 public:
  using DiagOpBase::DiagOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& diag = ctx->input(1);
    OP_REQUIRES(ctx, input.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("input must be at least 2-dim, received shape: ",
                                 input.shape().DebugString())));
    OP_REQUIRES(ctx, diag.dims() >= 1,
                absl::InvalidArgumentError(
                    absl::StrCat("diagonal must be at least 1-dim, received shape: ",
                                 diag.shape().DebugString())));
    int64_t lower = 0, upper = 0;
    if (ctx->num_inputs() == 3) {
      OP_REQUIRES_OK(ctx, ReadDiagRange(ctx->input(2), &lower, &upper));
    }
    const int rank = input.dims();
    const int64_t rows = input.dim_size(rank - 2);
    const int64_t cols = input.dim_size(rank - 1);
    OP_REQUIRES(ctx, (-rows < lower && lower < cols) || lower == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("lower_diag_index is out of bound: ", lower,
                                 ". It must be between ", -rows, " and ", cols)));
    OP_REQUIRES(ctx, (-rows < upper && upper < cols) || upper == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("upper_diag_index is out of bound: ", upper,
                                 " It must be between ", -rows, " and ", cols)));
    const int64_t num_diags = upper - lower + 1;
    const int64_t max_len = std::min(rows + std::min<int64_t>(upper, 0),
                                     cols - std::max<int64_t>(lower, 0));
    std::vector<int64_t> want(input.shape().dim_sizes().begin(),
                              input.shape().dim_sizes().end() - 2);
    if (lower != upper) want.push_back(num_diags);
    want.push_back(max_len);
    OP_REQUIRES(ctx, diag.shape().dim_sizes() == want,
                absl::InvalidArgumentError(absl::StrCat(
                    "diagonal must have shape [", absl::StrJoin(want, ","),
                    "] for an input of shape ", input.shape().DebugString(), " and k = [",
                    lower, ", ", upper, "], but has shape ", diag.shape().DebugString())));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, input.shape(), &output));
    if (output->NumElements() == 0) return;
    const bool in_place = output->raw_data() == input.raw_data();
    const int64_t matrices = output->NumElements() / (rows * cols);
    const DiagAlignment align = align_;
    VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* in = DataAs<P>(input);
      const P* d_in = DataAs<P>(diag);
      P* out = MutableDataAs<P>(output);
      ParallelForRange(ctx, matrices, rows * cols * 2, [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
          P* matrix = out + m * rows * cols;
          if (!in_place) std::copy(in + m * rows * cols, in + (m + 1) * rows * cols, matrix);
          for (int64_t d = lower; d <= upper; ++d) {
            const P* src = d_in + (m * num_diags + (upper - d)) * max_len +
                           align.Offset(d, rows, cols, max_len);
            const int64_t len = DiagAlignment::DiagLength(d, rows, cols);
            const int64_t r0 = std::max<int64_t>(-d, 0), c0 = std::max<int64_t>(d, 0);
            for (int64_t t = 0; t < len; ++t) matrix[(r0 + t) * cols + c0 + t] = src[t];
          }
        }
      });
    });
  }
};

REGISTER_KERNEL(KernelDefBuilder("MatrixBandPart")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tindex", {DT_INT32, DT_INT64}),
                MatrixBandPartOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiag")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiagV3")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiagV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiagPartV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagPartOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiagPart")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagPartOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixDiagPartV3")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixDiagPartOp);

REGISTER_KERNEL(KernelDefBuilder("MatrixSetDiag")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixSetDiagOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixSetDiagV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixSetDiagOp);
REGISTER_KERNEL(KernelDefBuilder("MatrixSetDiagV3")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                MatrixSetDiagOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
