// CPU kernels of RaggedTensorToVariant and RaggedTensorFromVariant
// (graph/ops/ragged_more_ops.cc), as TensorFlow computes them. A ragged
// tensor travels as a DT_VARIANT element holding its nested splits and its
// dense values (RaggedTensorVariant):
//   RaggedTensorToVariant    the whole ragged tensor in a scalar, or with
//                            batched_input one element per outermost row
//                            (each row a ragged tensor of one level less).
//   RaggedTensorFromVariant  the inverse: the elements (each of
//                            input_ragged_rank levels) stacked along the
//                            encoded tensor's dims into output_ragged_rank
//                            levels; with output_ragged_rank 0, dense
//                            values stacked along a new outer dim.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "graph/variant.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/ragged_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using ragged::FillSplits;
using ragged::RowElements;
using array_kernels::IntValues;
using ragged::WriteSplits;

// One encoded ragged tensor; its tensors are never written once stored.
struct RaggedTensorVariant : VariantValue {
  std::string TypeName() const override { return "tensorflow::RaggedTensorVariant"; }
  std::string DebugString() const override {
    return absl::StrCat("RaggedTensorVariant(dtype=", DataTypeString(values.dtype()),
                        ", ragged_rank=", splits.size(), ")");
  }

  std::vector<Tensor> splits;  // outermost first
  Tensor values;
};

// Each level's splits: a non-empty vector from 0, non-decreasing, ending at
// the next level's rows (the values' rows for the last level). Their values
// go into `read`, one vector per level.
absl::Status VerifySplits(const std::vector<const Tensor*>& splits, const Tensor& values,
                          std::vector<std::vector<int64_t>>* read) {
  read->assign(splits.size(), {});
  for (size_t level = 0; level < splits.size(); ++level) {
    const Tensor& t = *splits[level];
    if (t.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid ragged splits: ragged splits must be rank 1 but is rank ", t.dims()));
    }
    std::vector<int64_t>& s = (*read)[level] = IntValues(t);
    if (s.empty()) {
      return absl::InvalidArgumentError(
          "Invalid ragged splits: ragged splits must have at least one splits, but is empty");
    }
    if (s[0] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid ragged splits: first element of ragged splits must be 0 but is ", s[0]));
    }
    for (size_t j = 1; j < s.size(); ++j) {
      if (s[j] < s[j - 1]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Invalid ragged splits: ragged splits must be monotonically increasing, but "
            "ragged_splits[", j, "]=", s[j], " is smaller than row_splits[", j - 1, "]=",
            s[j - 1]));
      }
    }
    int64_t rows = 0;
    if (level + 1 < splits.size()) {
      rows = splits[level + 1]->NumElements() - 1;
    } else if (values.dims() == 0) {
      return absl::InvalidArgumentError("Ragged values must have rank >= 1");
    } else {
      rows = values.dim_size(0);
    }
    if (s.back() != rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid ragged splits: last element of ragged splits must be the number of ragged "
          "values(", rows, ") but is ", s.back()));
    }
  }
  return absl::OkStatus();
}

class RaggedTensorToVariantOp : public OpKernel {
 public:
  explicit RaggedTensorToVariantOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("batched_input", &batched_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int levels = ctx->num_inputs() - 1;
    const Tensor& values = ctx->input(levels);
    std::vector<const Tensor*> splits;
    for (int i = 0; i < levels; ++i) splits.push_back(&ctx->input(i));
    std::vector<std::vector<int64_t>> s;
    OP_REQUIRES_OK(ctx, VerifySplits(splits, values, &s));
    Tensor* out = nullptr;
    if (!batched_) {
      auto whole = std::make_shared<RaggedTensorVariant>();
      for (const Tensor* s : splits) whole->splits.push_back(*s);
      whole->values = values;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
      out->scalar<Variant>() = Variant(std::move(whole));
      return;
    }
    OP_REQUIRES(ctx, levels > 0,
                absl::InvalidArgumentError(
                    "ragged_rank=0 is not currently supported when batched_input=true."));
    const int64_t rows = static_cast<int64_t>(s[0].size()) - 1;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rows}), &out));
    const int64_t row = RowElements(values);
    Allocator* allocator = ctx->device()->allocator();
    for (int64_t r = 0; r < rows; ++r) {
      // Row r covers [start, limit) of the next level, and so on down.
      int64_t start = s[0][r], limit = s[0][r + 1];
      auto part = std::make_shared<RaggedTensorVariant>();
      for (int level = 1; level < levels; ++level) {
        absl::StatusOr<Tensor> t = Tensor::Allocate(allocator, splits[level]->dtype(),
                                                    TensorShape({limit - start + 1}));
        OP_REQUIRES_OK(ctx, t.status());
        FillSplits(s[level], start, limit + 1, s[level][start], &*t);
        part->splits.push_back(*std::move(t));
        start = s[level][start];
        limit = s[level][limit];
      }
      // The row's values share values' buffer (never written once stored),
      // copied only where the slice would not start aligned.
      Tensor slice = values.Slice(start, limit);
      if (array_kernels::IsAligned(slice)) {
        part->values = std::move(slice);
      } else {
        absl::StatusOr<Tensor> v = Tensor::Allocate(allocator, values.dtype(), slice.shape(),
                                                    TensorBuffer::Init::kUninitialized);
        OP_REQUIRES_OK(ctx, v.status());
        CopyElements(values, start * row, (limit - start) * row, &*v, 0);
        part->values = *std::move(v);
      }
      out->flat<Variant>()[r] = Variant(std::move(part));
    }
  }

 private:
  bool batched_ = false;
};

class RaggedTensorFromVariantOp : public OpKernel {
 public:
  explicit RaggedTensorFromVariantOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("input_ragged_rank", &input_rank_));
    OP_REQUIRES_OK(c, c->GetAttr("output_ragged_rank", &output_rank_));
    OP_REQUIRES_OK(c, c->GetAttr("Tvalues", &values_dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("Tsplits", &splits_dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& encoded = ctx->input(0);
    const int64_t dims = encoded.dims();
    int64_t input_rank = input_rank_;
    if (input_rank < 0) {  // inferred from the encoded tensor's rank
      input_rank = output_rank_ - dims;
      if (output_rank_ == 0 && input_rank < 0) input_rank = 0;
      OP_REQUIRES(ctx, input_rank >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Inferred input_ragged_rank (output_ragged_rank - encoded_variant.dims()) "
                      "must be >= 0, found output_ragged_rank: ", output_rank_,
                      ", encoded_variant.dims(): ", dims,
                      ", inferred input_ragged_rank: ", input_rank)));
    }
    OP_REQUIRES(ctx,
                (output_rank_ == 0 && input_rank == 0) || output_rank_ == dims + input_rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_ragged_rank must be equal to input_ragged_rank + "
                    "encoded_ragged.dims(); output_ragged_rank: ", output_rank_,
                    ", input_ragged_rank: ", input_rank, ", encoded_variant.dims(): ", dims,
                    ".")));
    std::vector<const RaggedTensorVariant*> parts;
    OP_REQUIRES_OK(ctx, Decode(encoded, input_rank, &parts));
    if (dims == 0) {  // the one element as it is
      for (int64_t i = 0; i < input_rank; ++i) ctx->set_output(i, parts[0]->splits[i]);
      ctx->set_output(static_cast<int>(input_rank), parts[0]->values);
      return;
    }
    if (output_rank_ == 0) {
      OP_REQUIRES_OK(ctx, StackDense(ctx, parts));
      return;
    }
    // The outer dims - 1 levels are uniform: dim i + 1 rows each. (For
    // three or more encoded dims these keep dim i + 1 entries, not the
    // product of the dims before, as TensorFlow does.)
    int out = 0;
    for (int64_t i = 0; i + 1 < dims; ++i, ++out) {
      std::vector<int64_t> uniform(static_cast<size_t>(encoded.dim_size(i)) + 1);
      for (size_t j = 0; j < uniform.size(); ++j) {
        uniform[j] = static_cast<int64_t>(j) * encoded.dim_size(i + 1);
      }
      OP_REQUIRES_OK(ctx, WriteSplits(ctx, out, uniform));
    }
    // One row per element: its outer rows (its values' rows when it is flat).
    std::vector<int64_t> rows = {0};
    for (const RaggedTensorVariant* p : parts) {
      const int64_t n = input_rank != 0 && !p->splits.empty() ? p->splits[0].NumElements() - 1
                                                              : p->values.dim_size(0);
      rows.push_back(rows.back() + n);
    }
    OP_REQUIRES_OK(ctx, WriteSplits(ctx, out++, rows));
    // The elements' own levels, concatenated.
    for (int64_t level = 0; level < input_rank; ++level, ++out) {
      std::vector<int64_t> joined = {0};
      for (const RaggedTensorVariant* p : parts) {
        const std::vector<int64_t> s = IntValues(p->splits[level]);
        const int64_t shift = joined.back();
        for (size_t k = 1; k < s.size(); ++k) joined.push_back(s[k] + shift);
      }
      OP_REQUIRES_OK(ctx, WriteSplits(ctx, out, joined));
    }
    OP_REQUIRES_OK(ctx, ConcatValues(ctx, parts, out));
  }

 private:
  // The elements of `encoded`, checked: RaggedTensorVariants of
  // `input_rank` levels and the op's dtypes.
  absl::Status Decode(const Tensor& encoded, int64_t input_rank,
                      std::vector<const RaggedTensorVariant*>* parts) const {
    auto flat = encoded.flat<Variant>();
    for (size_t i = 0; i < flat.size(); ++i) {
      const RaggedTensorVariant* p = flat[i].get<RaggedTensorVariant>();
      if (p == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input Variant element at index ", i,
                         " doesn't hold a RaggedTensorVariant: ", flat[i].DebugString()));
      }
      if (static_cast<int64_t>(p->splits.size()) != input_rank) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Encoded input RaggedTensorVariant has ragged_rank=", p->splits.size(),
            ".  Expected ragged_rank=", input_rank, "."));
      }
      if (p->values.dtype() != values_dtype_) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected values Tensor dtype: ", DataTypeString(values_dtype_),
                         ", found: ", DataTypeString(p->values.dtype())));
      }
      if (p->values.dims() < 1 && output_rank_ != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Ragged values must have rank >= 1; encoded scalar element at index ", i,
            " has values Tensor: ", p->values.DebugString()));
      }
      for (const Tensor& s : p->splits) {
        if (s.dtype() != splits_dtype_) {
          return absl::InvalidArgumentError(
              absl::StrCat("Expected row_splits Tensor dtype: ", DataTypeString(splits_dtype_),
                           ", found: ", DataTypeString(s.dtype())));
        }
        if (s.dims() != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Ragged splits must have rank 1; encoded scalar element at index ", i,
              " has splits Tensor ", s.DebugString()));
        }
      }
      parts->push_back(p);
    }
    return absl::OkStatus();
  }

  // Output 0: the elements' values (all of one shape) stacked along a new
  // outer dim; [0] when there are none.
  static absl::Status StackDense(OpKernelContext* ctx,
                                 const std::vector<const RaggedTensorVariant*>& parts) {
    Tensor* out = nullptr;
    if (parts.empty()) return ctx->allocate_output(0, TensorShape({0}), &out);
    const TensorShape& first = parts[0]->values.shape();
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i]->values.shape() != first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "All flat_values must have compatible shapes.  Shape at index 0: ",
            first.DebugString(), ".  Shape at index ", i, ": ",
            parts[i]->values.shape().DebugString()));
      }
    }
    TensorShape shape;
    absl::Status s = shape.AddDimWithStatus(static_cast<int64_t>(parts.size()));
    for (int d = 0; d < first.dims() && s.ok(); ++d) s = shape.AddDimWithStatus(first.dim_size(d));
    if (!s.ok()) return s;
    s = ctx->allocate_output(0, shape, &out);
    if (!s.ok()) return s;
    const int64_t n = first.num_elements();
    for (size_t i = 0; i < parts.size(); ++i) {
      CopyElements(parts[i]->values, 0, n, out, static_cast<int64_t>(i) * n);
    }
    return absl::OkStatus();
  }

  // Output `output`: the elements' values concatenated along their first
  // dim; their ranks and inner dims must agree. [0] when there are none.
  static absl::Status ConcatValues(OpKernelContext* ctx,
                                   const std::vector<const RaggedTensorVariant*>& parts,
                                   int output) {
    Tensor* out = nullptr;
    if (parts.empty()) return ctx->allocate_output(output, TensorShape({0}), &out);
    const TensorShape& first = parts[0]->values.shape();
    int64_t total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const TensorShape& shape = parts[i]->values.shape();
      if (shape.dims() != first.dims()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Rank of values must match for all components; values shape at index 0: ",
            first.DebugString(), ", values shape at index ", i, ": ", shape.DebugString()));
      }
      total += shape.dim_size(0);
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      const TensorShape& shape = parts[i]->values.shape();
      for (int d = 1; d < shape.dims(); ++d) {
        if (shape.dim_size(d) != first.dim_size(d)) {
          TensorShape a = first, b = shape;
          a.RemoveDim(0);
          b.RemoveDim(0);
          return absl::InvalidArgumentError(absl::StrCat(
              "All flat_values must have compatible shapes.  Shape at index 0: ",
              a.DebugString(), ".  Shape at index ", i, ": ", b.DebugString()));
        }
      }
    }
    TensorShape shape = first;
    absl::Status s = shape.SetDimWithStatus(0, total);
    if (!s.ok()) return s;
    s = ctx->allocate_output(output, shape, &out);
    if (!s.ok()) return s;
    const int64_t row = RowElements(*out);
    int64_t at = 0;
    for (const RaggedTensorVariant* p : parts) {
      CopyElements(p->values, 0, p->values.dim_size(0) * row, out, at * row);
      at += p->values.dim_size(0);
    }
    return absl::OkStatus();
  }

  int64_t input_rank_ = -1;
  int64_t output_rank_ = 0;
  DataType values_dtype_ = DT_INVALID;
  DataType splits_dtype_ = DT_INT64;
};

REGISTER_KERNEL(KernelDefBuilder("RaggedTensorToVariant").Device(kDeviceCpu),
                RaggedTensorToVariantOp);
REGISTER_KERNEL(KernelDefBuilder("RaggedTensorFromVariant").Device(kDeviceCpu),
                RaggedTensorFromVariantOp);

}  // namespace
}  // namespace graphrun
