// ReverseV2 and ReverseSequence on CPU (TensorFlow's reverse_op.cc and
// reverse_sequence_op.cc semantics and messages). ReverseV2:
// reverses `tensor` along the dims listed in `axis` (negative counts from
// the end; each at most once). Size-1 dims are dropped and neighbours that
// are both reversed or both kept are merged, then Eigen's reverse runs on
// the collapsed view, moving elements as same-size unsigned integers
// (strings element-wise). Big outputs use the intra-op pool.
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

class ReverseV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    OP_REQUIRES(ctx, axis_t.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "'axis' must be 1-D, not ", axis_t.shape().DebugString())));
    const int rank = input.dims();
    OP_REQUIRES(ctx, rank <= kMaxEigenRank,
                absl::UnimplementedError(absl::StrCat(
                    "reverse is not implemented for tensors of rank > 8.")));
    std::vector<bool> reversed(rank, false);
    const std::vector<int64_t> axes = IntValues(axis_t);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      OP_REQUIRES(ctx, a >= 0 && a < rank,
                  absl::InvalidArgumentError(absl::StrCat(
                      "'axis'[", i, "] = ", axes[i], " is out of valid range [0, ",
                      rank - 1, "].")));
      OP_REQUIRES(ctx, !reversed[a],
                  absl::InvalidArgumentError(absl::StrCat(
                      "axis ", a, " specified more than once.")));
      reversed[a] = true;
    }
    // Collapse to runs of non-trivial dims that are all reversed or all kept.
    std::vector<int64_t> dims;
    std::vector<bool> flags;
    for (int d = 0; d < rank; ++d) {
      if (input.dim_size(d) == 1) continue;
      if (!dims.empty() && flags.back() == reversed[d]) {
        dims.back() *= input.dim_size(d);
      } else {
        dims.push_back(input.dim_size(d));
        flags.push_back(reversed[d]);
      }
    }
    bool any = false;
    for (bool f : flags) any |= f;
    if (!any || input.NumElements() == 0) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const bool typed = VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      VisitEigenRank(static_cast<int>(dims.size()), [&](auto rank_constant) {
        constexpr int N = decltype(rank_constant)::value;
        EigenConstMap<P, N> in_map(DataAs<P>(input), ToDSizes<N>(dims));
        EigenMap<P, N> out_map(MutableDataAs<P>(out), ToDSizes<N>(dims));
        Eigen::array<bool, N> rev;
        for (int k = 0; k < N; ++k) rev[k] = flags[k];
        RunOnEigenDevice(ctx, input.NumElements(), [&](const auto& device) {
          out_map.device(device) = in_map.reverse(rev);
        });
      });
    });
    OP_REQUIRES(ctx, typed,
                absl::InvalidArgumentError(absl::StrCat(
                    "ReverseV2 does not support ", DataTypeString(input.dtype()))));
  }
};

// ReverseSequence: for each index b along batch_dim, the first
// seq_lengths[b] entries along seq_dim reversed, the rest copied.
class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("seq_dim", &seq_dim_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dim", &batch_dim_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& lengths_t = ctx->input(1);
    const int rank = input.dims();
    OP_REQUIRES(ctx, seq_dim_ != batch_dim_,
                absl::InvalidArgumentError(absl::StrCat("seq_dim == batch_dim == ", seq_dim_)));
    OP_REQUIRES(ctx, seq_dim_ >= 0 && seq_dim_ < rank,
                absl::InvalidArgumentError(absl::StrCat("seq_dim must be < input rank (", seq_dim_,
                                                        " vs. ", rank, ")")));
    OP_REQUIRES(ctx, batch_dim_ >= 0 && batch_dim_ < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "batch_dim must be < input rank (", batch_dim_, " vs. ", rank, ")")));
    OP_REQUIRES(ctx, lengths_t.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "seq_lengths must be 1-dim, not ", lengths_t.dims())));
    const int64_t batch = input.dim_size(batch_dim_);
    OP_REQUIRES(ctx, lengths_t.NumElements() == batch,
                absl::InvalidArgumentError(absl::StrCat(
                    "Length of seq_lengths != input.dims(", batch_dim_, "), (",
                    lengths_t.NumElements(), " vs. ", batch, ")")));
    const std::vector<int64_t> lengths = IntValues(lengths_t);
    const int64_t seq = input.dim_size(seq_dim_);
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, lengths[b] >= 0,
                  absl::InvalidArgumentError(absl::StrCat("seq_lens(", b, ") < 0")));
      OP_REQUIRES(ctx, lengths[b] <= seq,
                  absl::InvalidArgumentError(absl::StrCat(
                      "seq_lens(", b, ") > input.dims(", seq_dim_, ")")));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const int64_t n = input.NumElements();
    if (n == 0) return;
    // Strides (in elements) of the seq and batch dims.
    int64_t seq_stride = 1, batch_stride = 1;
    for (int d = rank - 1; d > seq_dim_; --d) seq_stride *= input.dim_size(d);
    for (int d = rank - 1; d > batch_dim_; --d) batch_stride *= input.dim_size(d);
    const bool typed = VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* in = DataAs<P>(input);
      P* o = MutableDataAs<P>(out);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t s = (i / seq_stride) % seq;
        const int64_t len = lengths[(i / batch_stride) % batch];
        o[i] = s < len ? in[i + (len - 1 - 2 * s) * seq_stride] : in[i];
      }
    });
    OP_REQUIRES(ctx, typed,
                absl::InvalidArgumentError(absl::StrCat(
                    "ReverseSequence does not support ", DataTypeString(input.dtype()))));
  }

 private:
  int64_t seq_dim_ = 0, batch_dim_ = 0;
};

REGISTER_KERNEL(KernelDefBuilder("ReverseSequence")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes())
                    .TypeConstraint("Tlen", {DT_INT32, DT_INT64}),
                ReverseSequenceOp);
REGISTER_KERNEL(KernelDefBuilder("ReverseV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                ReverseV2Op);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
