// ReverseV2 on CPU (TensorFlow's reverse_op.cc semantics and messages):
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

REGISTER_KERNEL(KernelDefBuilder("ReverseV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                ReverseV2Op);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
