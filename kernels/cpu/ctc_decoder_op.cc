// CTCGreedyDecoder on CPU, TensorFlow's ctc_decoder_ops.cc: for each batch
// entry b and step t < sequence_length[b] the class of largest logit (the
// first one on ties) is taken; blanks are dropped and, with merge_repeated,
// so is a class equal to the previous step's. The decoded labels form a
// SparseTensor [batch, longest]; log_probability[b, 0] is minus the sum of
// the chosen logits, accumulated in T step by step.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
class CtcGreedyDecoderOp : public OpKernel {
 public:
  explicit CtcGreedyDecoderOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("merge_repeated", &merge_repeated_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("blank_index", &blank_index_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& lengths = ctx->input(1);
    OP_REQUIRES(ctx, inputs.dims() == 3,
                absl::InvalidArgumentError("inputs is not a 3-Tensor"));
    OP_REQUIRES(ctx, inputs.NumElements() > 0,
                absl::InvalidArgumentError("inputs must not be empty"));
    const int64_t max_time = inputs.dim_size(0);
    const int64_t batch = inputs.dim_size(1);
    const int64_t classes = inputs.dim_size(2);
    OP_REQUIRES(ctx, lengths.dims() == 1,
                absl::InvalidArgumentError("sequence_length is not a vector"));
    OP_REQUIRES(ctx, lengths.dim_size(0) == batch,
                absl::FailedPreconditionError(absl::StrCat(
                    "len(sequence_length) != batch_size.  len(sequence_length):  ",
                    lengths.dim_size(0), " batch_size: ", batch)));
    const int32_t* len = lengths.flat<int32_t>().data();
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, len[b] <= max_time,
                  absl::FailedPreconditionError(
                      absl::StrCat("sequence_length(", b, ") <= ", max_time)));
    }
    Tensor* log_prob = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({batch, 1}), &log_prob));
    OP_REQUIRES(ctx, classes < std::numeric_limits<int>::max(),
                absl::InvalidArgumentError("num_classes cannot exceed max int"));
    const int64_t blank = blank_index_ < 0 ? classes + blank_index_ : blank_index_;
    OP_REQUIRES(ctx, blank >= 0 && blank < classes,
                absl::InvalidArgumentError(absl::StrCat(
                    "blank_index expected to be between ", -classes, " and ", classes - 1,
                    " but was ", blank_index_)));

    const T* logits = inputs.flat<T>().data();
    T* score = log_prob->flat<T>().data();
    std::vector<std::vector<int64_t>> decoded(batch);
    int64_t total = 0, longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      T sum = T(0);
      int64_t prev = -1;
      for (int64_t t = 0; t < len[b]; ++t) {
        const T* row = logits + (t * batch + b) * classes;
        int64_t best = 0;
        for (int64_t k = 1; k < classes; ++k) {
          if (row[k] > row[best]) best = k;
        }
        sum += -row[best];
        if (best != blank && !(merge_repeated_ && best == prev)) decoded[b].push_back(best);
        prev = best;
      }
      score[b] = sum;
      total += static_cast<int64_t>(decoded[b].size());
      longest = std::max(longest, static_cast<int64_t>(decoded[b].size()));
    }

    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({total, 2}), &indices));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({total}), &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({2}), &shape));
    int64_t* ix = indices->flat<int64_t>().data();
    int64_t* v = values->flat<int64_t>().data();
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t t = 0; t < decoded[b].size(); ++t) {
        *ix++ = b;
        *ix++ = static_cast<int64_t>(t);
        *v++ = decoded[b][t];
      }
    }
    shape->flat<int64_t>()[0] = batch;
    shape->flat<int64_t>()[1] = longest;
  }

 private:
  bool merge_repeated_ = false;
  int64_t blank_index_ = -1;
};

REGISTER_KERNEL(
    KernelDefBuilder("CTCGreedyDecoder").Device(kDeviceCpu).TypeConstraint<float>("T"),
    CtcGreedyDecoderOp<float>);
REGISTER_KERNEL(
    KernelDefBuilder("CTCGreedyDecoder").Device(kDeviceCpu).TypeConstraint<double>("T"),
    CtcGreedyDecoderOp<double>);

}  // namespace
}  // namespace graphrun
