// CPU kernel of ReduceJoin (graph/ops/string_more_ops.cc), with
// TensorFlow's semantics and messages (core/kernels/reduce_join_op.cc):
// joins the strings along the axes in `reduction_indices` (negative counts
// from the end; a duplicate is an error), separated by `separator`. Within
// one output the axis listed first varies fastest. No axes: the input
// unchanged. (The v1 StringSplit runs beside StringSplitV2 in text_ops.cc.)
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class ReduceJoinOp : public OpKernel {
 public:
  explicit ReduceJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& axes_t = ctx->input(1);
    const TensorShape& shape = in.shape();
    const int rank = shape.dims();
    const auto axes = axes_t.flat<int32_t>();

    // Canonical axes in the order given; axes[0] is the fastest-varying one.
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    std::vector<int> order;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = axes[i];
      OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                  absl::OutOfRangeError(absl::StrCat("Invalid reduction dimension ", axis,
                                                     " for input with ", rank,
                                                     " dimension(s)")));
      const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
      OP_REQUIRES(ctx, !reduced[a],
                  absl::InvalidArgumentError(
                      absl::StrCat("Duplicate reduction dimension ", axis)));
      reduced[a] = true;
      order.push_back(a);
    }
    if (order.empty()) {  // nothing joined: the input itself
      ctx->set_output(0, in);
      return;
    }

    // Row-major strides of the input.
    std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim_size(d + 1);

    TensorShape out_shape;
    std::vector<int> kept;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        out_shape.AddDim(shape.dim_size(d));
        kept.push_back(d);
      } else if (keep_dims_) {
        out_shape.AddDim(1);
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    auto o = out->flat<std::string>();
    if (o.size() == 0) return;

    // Input offsets of the joined elements, relative to an output's first
    // one: order[0] innermost, order.back() outermost.
    std::vector<int64_t> offsets(1, 0);
    for (int a : order) {
      const int64_t size = shape.dim_size(a);
      std::vector<int64_t> next;
      next.reserve(offsets.size() * static_cast<size_t>(size));
      for (int64_t k = 0; k < size; ++k) {
        for (int64_t base : offsets) next.push_back(base + k * strides[a]);
      }
      offsets.swap(next);
    }

    const auto i = in.flat<std::string>();
    std::vector<absl::string_view> parts(offsets.size());
    for (int64_t n = 0; n < static_cast<int64_t>(o.size()); ++n) {
      // The input offset of output n's first element, from its kept dims.
      int64_t start = 0;
      int64_t rest = n;
      for (int k = static_cast<int>(kept.size()) - 1; k >= 0; --k) {
        const int d = kept[k];
        start += (rest % shape.dim_size(d)) * strides[d];
        rest /= shape.dim_size(d);
      }
      for (size_t k = 0; k < offsets.size(); ++k) parts[k] = i[start + offsets[k]];
      o[n] = absl::StrJoin(parts, separator_);
    }
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

REGISTER_KERNEL(KernelDefBuilder("ReduceJoin").Device(kDeviceCpu), ReduceJoinOp);

}  // namespace
}  // namespace graphrun
