#include "kernels/cpu/cwise_common.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace graphrun {
namespace cwise {

BroadcastPlan MakeBroadcastPlan(absl::Span<const TensorShape* const> shapes) {
  BroadcastPlan p;
  const size_t n = shapes.size();
  p.in_dims.resize(n);
  p.in_bcast.resize(n);
  if (n == 0) return p;

  bool all_same = true;
  int largest_rank = 0;
  for (const TensorShape* s : shapes) {
    all_same = all_same && *s == *shapes[0];
    largest_rank = std::max(largest_rank, s->dims());
  }
  if (all_same) {
    // One flat dimension, nothing repeats.
    const int64_t count = shapes[0]->num_elements();
    const auto dims = shapes[0]->dim_sizes();
    p.valid = true;
    p.output_dims.assign(dims.begin(), dims.end());
    p.out_dims = {count};
    for (size_t i = 0; i < n; ++i) {
      p.in_dims[i] = {count};
      p.in_bcast[i] = {1};
    }
    return p;
  }

  // Each shape reversed (innermost first) and padded with 1s.
  std::vector<std::vector<int64_t>> rev(n, std::vector<int64_t>(largest_rank, 1));
  for (size_t i = 0; i < n; ++i) {
    const int rank = shapes[i]->dims();
    for (int j = 0; j < rank; ++j) rev[i][j] = shapes[i]->dim_size(rank - 1 - j);
  }

  // Walk the dimensions innermost first. A dimension where every input is 1
  // is dropped; a run of dimensions in which the same inputs are 1 (being
  // broadcast) merges into one.
  std::vector<bool> prev_is_one(n, false), is_one(n, false);
  bool have_group = false;
  for (int j = 0; j < largest_rank; ++j) {
    int64_t out_dim = 1;
    bool out_set = false;
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = rev[i][j];
      is_one[i] = (d == 1);
      if (d == 1) continue;
      if (out_set && d != out_dim) return p;  // invalid
      out_dim = d;
      out_set = true;
    }
    p.output_dims.push_back(out_dim);
    if (!out_set) continue;
    if (have_group && is_one == prev_is_one) {
      // Products within a group are bounded by one input's element count.
      p.out_dims.back() *= out_dim;
      for (size_t i = 0; i < n; ++i) {
        p.in_dims[i].back() *= rev[i][j];
        if (is_one[i]) p.in_bcast[i].back() *= out_dim;
      }
    } else {
      p.out_dims.push_back(out_dim);
      for (size_t i = 0; i < n; ++i) {
        p.in_dims[i].push_back(rev[i][j]);
        p.in_bcast[i].push_back(is_one[i] ? out_dim : 1);
      }
    }
    have_group = true;
    prev_is_one = is_one;
  }
  if (p.out_dims.empty()) {
    p.out_dims.push_back(1);
    for (size_t i = 0; i < n; ++i) {
      p.in_dims[i].push_back(1);
      p.in_bcast[i].push_back(1);
    }
  }
  std::reverse(p.output_dims.begin(), p.output_dims.end());
  std::reverse(p.out_dims.begin(), p.out_dims.end());
  for (size_t i = 0; i < n; ++i) {
    std::reverse(p.in_dims[i].begin(), p.in_dims[i].end());
    std::reverse(p.in_bcast[i].begin(), p.in_bcast[i].end());
  }
  p.valid = true;
  return p;
}

bool CanForward(OpKernelContext* ctx, int input, const TensorShape& shape) {
  const Tensor& in = ctx->input(input);
  return in.dtype() == ctx->expected_output_dtype(0) && in.dtype() != DT_STRING &&
         in.NumElements() == shape.num_elements() && in.RefCountIsOne() &&
         in.IsWholeBuffer() &&
         in.buffer_allocator() == ctx->device()->allocator();
}

absl::Status ForwardOrAllocate(OpKernelContext* ctx,
                               std::initializer_list<int> candidates,
                               const TensorShape& shape, Tensor** out) {
  for (int i : candidates) {
    if (ctx->forward_input(i, 0, shape, out)) return absl::OkStatus();
  }
  return ctx->allocate_output(0, shape, out);
}

absl::Status CheckInputsSameShape(OpKernelContext* ctx) {
  const TensorShape& first = ctx->input(0).shape();
  for (int i = 1; i < ctx->num_inputs(); ++i) {
    const TensorShape& shape = ctx->input(i).shape();
    if (shape != first) {
      const OpKernel& op = ctx->op_kernel();
      return absl::InvalidArgumentError(absl::StrCat(
          "Inputs to operation ", op.name(), " of type ", op.type_string(),
          " must have the same size and shape.  Input 0: ", first.DebugString(),
          " != input ", i, ": ", shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

namespace {
// PrepareBinary after the plan and output shape are known.
bool FinishPrepareBinary(
    OpKernelContext* ctx, const Tensor& x, const Tensor& y, const Tensor& a, const Tensor& b,
    TensorShape shape,
    absl::FunctionRef<absl::Status(const Tensor&, const Tensor&)> validate,
    BinaryState* state);
}  // namespace

bool PrepareBinary(
    OpKernelContext* ctx, const BinaryOptions& options,
    absl::FunctionRef<absl::Status(const Tensor&, const Tensor&)> validate,
    BinaryState* state) {
  const Tensor& x = ctx->input(0);
  const Tensor& y = ctx->input(1);
  const Tensor& a = options.swap_inputs ? y : x;
  const Tensor& b = options.swap_inputs ? x : y;
  // The common cases, same shapes or a scalar side, need no plan beyond
  // one flat dimension (all ComputeBinary reads of it), and the output
  // takes the larger input's shape as it is.
  const bool same = a.shape() == b.shape();
  if (same || a.dims() == 0 || b.dims() == 0) {
    const TensorShape& shape = (same || b.dims() == 0) ? a.shape() : b.shape();
    state->plan.valid = true;
    state->plan.out_dims.assign(1, shape.num_elements());
    return FinishPrepareBinary(ctx, x, y, a, b, shape, validate, state);
  }
  const TensorShape* shapes[] = {&a.shape(), &b.shape()};
  state->plan = MakeBroadcastPlan(shapes);
  if (!state->plan.valid) {
    if (options.incompatible_result.has_value()) {
      Tensor* out = nullptr;
      absl::Status s = ctx->allocate_output(0, TensorShape(), &out);
      if (!s.ok()) {
        ctx->SetStatus(s);
        return false;
      }
      out->scalar<bool>() = *options.incompatible_result;
      return false;
    }
    ctx->SetStatus(absl::InvalidArgumentError(
        absl::StrCat("Incompatible shapes: ", x.shape().DebugString(), " vs. ",
                     y.shape().DebugString())));
    return false;
  }
  auto shape = TensorShape::FromDims(state->plan.output_dims);
  if (!shape.ok()) {
    ctx->SetStatus(shape.status());
    return false;
  }
  if (state->plan.rank() > kMaxBroadcastRank && shape->num_elements() != 0) {
    ctx->SetStatus(absl::UnimplementedError(
        absl::StrCat("Broadcast between ", x.shape().DebugString(), " and ",
                     y.shape().DebugString(), " is not supported yet.")));
    return false;
  }
  return FinishPrepareBinary(ctx, x, y, a, b, *std::move(shape), validate, state);
}

namespace {
bool FinishPrepareBinary(
    OpKernelContext* ctx, const Tensor& x, const Tensor& y, const Tensor& a, const Tensor& b,
    TensorShape shape,
    absl::FunctionRef<absl::Status(const Tensor&, const Tensor&)> validate,
    BinaryState* state) {
  // (By value: the output may take over the input whose shape this was.)
  if (shape.num_elements() == 0) {
    Tensor* out = nullptr;
    ctx->SetStatus(ctx->allocate_output(0, shape, &out));
    return false;
  }
  absl::Status s = validate(x, y);
  if (!s.ok()) {
    ctx->SetStatus(s);
    return false;
  }
  // Capture the inputs before the output may take one over.
  state->a = a.raw_data();
  state->a_count = a.NumElements();
  state->b = b.raw_data();
  state->b_count = b.NumElements();
  s = ForwardOrAllocate(ctx, {0, 1}, shape, &state->out);
  if (!s.ok()) {
    ctx->SetStatus(s);
    return false;
  }
  return true;
}
}  // namespace

}  // namespace cwise
}  // namespace graphrun
