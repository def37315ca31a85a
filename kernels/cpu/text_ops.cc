// CPU kernels of the ops a Keras TextVectorization graph runs
// (graph/ops/text_ops.cc), with TensorFlow's semantics and messages
// (core/kernels/string_lower_op.cc, regex_replace_op.cc,
// string_split_op.cc, ragged_tensor_to_tensor_op.cc, bincount_op.cc):
//   StringLower/Upper    ASCII letters (encoding ""), or ICU's Unicode case
//                        mapping (encoding "utf-8").
//   StaticRegexReplace   RE2 pattern, rewrite with \1..\9, all matches or
//                        the first.
//   StringSplit          (v1) at every byte of `delimiter` (empty: into
//                        single bytes), empty tokens dropped when
//                        skip_empty; an empty string gives no tokens.
//   StringSplitV2        Python's str.split per element: on `sep`, or on
//                        runs of ASCII whitespace when `sep` is empty;
//                        `maxsplit` splits at most, the rest one token.
//   RaggedTensorToTensor one ragged dimension, given as FIRST_DIM_SIZE +
//                        VALUE_ROWIDS or as ROW_SPLITS; rows cut or padded
//                        with the default to `shape` (-1: the longest).
//   DenseBincount        per value in [0, size), counts or weight sums
//                        (or 1/0 with binary_output), per row of a matrix.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/text_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "re2/re2.h"
#include "unicode/locid.h"
#include "unicode/unistr.h"

namespace graphrun {
namespace {

using array_kernels::IntValues;

// StringLower and StringUpper: ASCII letters only with encoding '', the
// Unicode case mapping (ICU's, root locale, as TensorFlow's ICU call) with
// 'utf-8'.
template <bool kUpper>
class StringCaseOp : public OpKernel {
 public:
  explicit StringCaseOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string encoding;
    OP_REQUIRES_OK(c, c->GetAttr("encoding", &encoding));
    OP_REQUIRES(c, encoding.empty() || encoding == "utf-8",
                absl::InvalidArgumentError(absl::StrCat(
                    "only utf-8 or '' (no encoding) is supported, received ", encoding)));
    unicode_ = !encoding.empty();
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    auto i = in.flat<std::string>();
    auto o = out->flat<std::string>();
    for (size_t k = 0; k < i.size(); ++k) {
      if (!unicode_) {
        o[k] = kUpper ? absl::AsciiStrToUpper(i[k]) : absl::AsciiStrToLower(i[k]);
        continue;
      }
      icu::UnicodeString us = icu::UnicodeString::fromUTF8(icu::StringPiece(i[k].data(),
                                                                            i[k].size()));
      if (kUpper) {
        us.toUpper(icu::Locale::getRoot());
      } else {
        us.toLower(icu::Locale::getRoot());
      }
      o[k].clear();
      us.toUTF8String(o[k]);
    }
  }

 private:
  bool unicode_ = false;
};

class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    OP_REQUIRES_OK(c, c->GetAttr("rewrite", &rewrite_));
    OP_REQUIRES_OK(c, c->GetAttr("replace_global", &global_));
    re_ = std::make_unique<RE2>(pattern);
    OP_REQUIRES(c, re_->ok(),
                absl::InvalidArgumentError(absl::StrCat("Invalid pattern: ", pattern,
                                                        ", error: ", re_->error())));
    std::string why;
    OP_REQUIRES(c, re_->CheckRewriteString(rewrite_, &why),
                absl::InvalidArgumentError(absl::StrCat("Invalid rewrite pattern: ", rewrite_,
                                                        ", error: ", why)));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    auto i = in.flat<std::string>();
    auto o = out->flat<std::string>();
    for (size_t k = 0; k < i.size(); ++k) {
      o[k] = i[k];
      if (global_) {
        RE2::GlobalReplace(&o[k], *re_, rewrite_);
      } else {
        RE2::Replace(&o[k], *re_, rewrite_);
      }
    }
  }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Python's str.split(sep or None, maxsplit), as TensorFlow's SplitV2.
std::vector<std::string> SplitV2(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (maxsplit == 0) return {s};
  size_t pos = 0;
  int64_t splits = 0;
  if (sep.empty()) {
    auto skip = [&] { while (pos < s.size() && IsSpace(s[pos])) ++pos; };
    skip();
    while (pos < s.size()) {
      const size_t start = pos;
      while (pos < s.size() && !IsSpace(s[pos])) ++pos;
      out.push_back(s.substr(start, pos - start));
      skip();
      if (maxsplit > 0 && ++splits == maxsplit) {
        out.push_back(s.substr(pos));
        return out;
      }
    }
    return out;
  }
  for (size_t hit; (hit = s.find(sep, pos)) != std::string::npos;) {
    out.push_back(s.substr(pos, hit - pos));
    pos = hit + sep.size();
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  out.push_back(s.substr(pos));
  return out;
}

// TensorFlow's v1 StringSplit of one string: at every byte of `delims`,
// or into single bytes when `delims` is empty; empty tokens dropped when
// skip_empty. An empty string gives no tokens.
std::vector<std::string> SplitAnyOf(const std::string& s, const std::string& delims,
                                    bool skip_empty) {
  std::vector<std::string> tokens;
  if (s.empty()) return tokens;
  if (delims.empty()) {
    for (char c : s) tokens.emplace_back(1, c);
    return tokens;
  }
  size_t start = 0;
  while (true) {
    const size_t hit = s.find_first_of(delims, start);
    std::string token = s.substr(start, hit == std::string::npos ? std::string::npos : hit - start);
    if (!skip_empty || !token.empty()) tokens.push_back(std::move(token));
    if (hit == std::string::npos) break;
    start = hit + 1;
  }
  return tokens;
}

// StringSplit (kV2 false) and StringSplitV2: a vector of strings and a
// scalar separator in; sparse tokens out, indices [n, 2] of (row, position),
// values [n], shape [rows, longest row].
template <bool kV2>
class StringSplitOp : public OpKernel {
 public:
  explicit StringSplitOp(OpKernelConstruction* c) : OpKernel(c) {
    if constexpr (kV2) {
      OP_REQUIRES_OK(c, c->GetAttr("maxsplit", &maxsplit_));
    } else {
      OP_REQUIRES_OK(c, c->GetAttr("skip_empty", &skip_empty_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& sep = ctx->input(1);
    OP_REQUIRES(ctx, in.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat("input must be a vector, got shape: ",
                                                        in.shape().DebugString())));
    OP_REQUIRES(ctx, sep.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(kV2 ? "sep" : "delimiter",
                                                        " must be a scalar, got shape: ",
                                                        sep.shape().DebugString())));
    const std::string& separator = sep.flat<std::string>()[0];
    std::vector<std::vector<std::string>> rows;
    int64_t n = 0, longest = 0;
    for (const std::string& s : in.flat<std::string>()) {
      rows.push_back(kV2 ? SplitV2(s, separator, maxsplit_)
                         : SplitAnyOf(s, separator, skip_empty_));
      n += static_cast<int64_t>(rows.back().size());
      longest = std::max<int64_t>(longest, static_cast<int64_t>(rows.back().size()));
    }
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n, 2}), &indices));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n}), &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({2}), &shape));
    auto idx = indices->flat<int64_t>();
    auto val = values->flat<std::string>();
    int64_t k = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t j = 0; j < rows[r].size(); ++j, ++k) {
        idx[2 * k] = static_cast<int64_t>(r);
        idx[2 * k + 1] = static_cast<int64_t>(j);
        val[k] = std::move(rows[r][j]);
      }
    }
    shape->flat<int64_t>()[0] = in.dim_size(0);
    shape->flat<int64_t>()[1] = longest;
  }

 private:
  int64_t maxsplit_ = -1;
  bool skip_empty_ = true;
};

class RaggedTensorToTensorOp : public OpKernel {
 public:
  explicit RaggedTensorToTensorOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("row_partition_types", &types_));
    const bool rowids = types_ == std::vector<std::string>({"FIRST_DIM_SIZE", "VALUE_ROWIDS"});
    const bool splits = types_ == std::vector<std::string>({"ROW_SPLITS"});
    OP_REQUIRES(c, rowids || splits,
                absl::UnimplementedError(absl::StrCat(
                    "RaggedTensorToTensor: only one ragged dimension, as [FIRST_DIM_SIZE, "
                    "VALUE_ROWIDS] or [ROW_SPLITS], is supported; got ",
                    types_.size(), " row partitions")));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& values = ctx->input(1);
    const Tensor& fill = ctx->input(2);
    OP_REQUIRES(ctx, values.dims() >= 1,
                absl::InvalidArgumentError("values must have rank 1 or more"));
    // Each value's row.
    std::vector<int64_t> row_of;
    int64_t nrows = 0;
    if (types_.size() == 2) {
      nrows = IntValues(ctx->input(3))[0];
      row_of = IntValues(ctx->input(4));
    } else {
      const std::vector<int64_t> splits = IntValues(ctx->input(3));
      OP_REQUIRES(ctx, !splits.empty() && splits[0] == 0,
                  absl::InvalidArgumentError("row_splits must start with 0"));
      nrows = static_cast<int64_t>(splits.size()) - 1;
      for (int64_t r = 0; r < nrows; ++r) {
        OP_REQUIRES(ctx, splits[r] <= splits[r + 1],
                    absl::InvalidArgumentError("row_splits must be sorted"));
        for (int64_t k = splits[r]; k < splits[r + 1]; ++k) row_of.push_back(r);
      }
    }
    OP_REQUIRES(ctx, static_cast<int64_t>(row_of.size()) == values.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "the row partition gives ", row_of.size(), " values, values has ",
                    values.dim_size(0))));
    std::vector<int64_t> position(row_of.size());
    int64_t longest = 0;
    for (size_t k = 0; k < row_of.size(); ++k) {
      OP_REQUIRES(ctx, row_of[k] >= 0 && row_of[k] < nrows && (k == 0 || row_of[k] >= row_of[k - 1]),
                  absl::InvalidArgumentError(absl::StrCat(
                      "value_rowids must be sorted and in [0, ", nrows, "), got ", row_of[k])));
      position[k] = k > 0 && row_of[k] == row_of[k - 1] ? position[k - 1] + 1 : 0;
      longest = std::max(longest, position[k] + 1);
    }
    TensorShape shape({nrows, longest});
    for (int d = 1; d < values.dims(); ++d) shape.AddDim(values.dim_size(d));
    const Tensor& given = ctx->input(0);
    if (given.dims() == 1) {
      const std::vector<int64_t> dims = IntValues(given);
      OP_REQUIRES(ctx, static_cast<int>(dims.size()) == shape.dims(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "shape has ", dims.size(), " dims, the result has rank ", shape.dims())));
      for (int d = 0; d < shape.dims(); ++d) {
        if (dims[d] >= 0) {
          OP_REQUIRES(ctx, d < 2 || dims[d] == shape.dim_size(d),
                      absl::InvalidArgumentError(absl::StrCat(
                          "shape[", d, "] = ", dims[d], " differs from the values' ",
                          shape.dim_size(d))));
          shape.set_dim(d, dims[d]);
        }
      }
    }
    const int64_t inner = values.dim_size(0) == 0 ? 1 : values.NumElements() / values.dim_size(0);
    OP_REQUIRES(ctx, fill.NumElements() == 1 || fill.NumElements() == inner,
                absl::InvalidArgumentError(absl::StrCat(
                    "default_value of shape ", fill.shape().DebugString(),
                    " does not broadcast to the values' rows")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const bool known = VisitDataType(values.dtype(), [&](auto zero) {
      using T = decltype(zero);
      {
        auto o = out->flat<T>();
        auto v = values.flat<T>();
        auto f = fill.flat<T>();
        for (size_t i = 0; i < o.size(); ++i) o[i] = f[f.size() == 1 ? 0 : i % inner];
        const int64_t rows = shape.dim_size(0), cols = shape.dim_size(1);
        for (size_t k = 0; k < row_of.size(); ++k) {
          if (row_of[k] >= rows || position[k] >= cols) continue;
          const int64_t at = (row_of[k] * cols + position[k]) * inner;
          for (int64_t e = 0; e < inner; ++e) o[at + e] = v[k * inner + e];
        }
      }
    });
    OP_REQUIRES(ctx, known,
                absl::UnimplementedError(absl::StrCat("RaggedTensorToTensor of ",
                                                      DataTypeString(values.dtype()))));
  }

 private:
  std::vector<std::string> types_;
};

class DenseBincountOp : public OpKernel {
 public:
  explicit DenseBincountOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("binary_output", &binary_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& weights = ctx->input(2);
    const int64_t size = IntValues(ctx->input(1))[0];
    OP_REQUIRES(ctx, ctx->input(1).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape must be rank 0 but is rank ", ctx->input(1).dims())));
    OP_REQUIRES(ctx, size >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "size (", size, ") must be non-negative")));
    OP_REQUIRES(ctx, in.dims() == 1 || in.dims() == 2,
                absl::InvalidArgumentError("Input must be a 1 or 2-dimensional tensor."));
    OP_REQUIRES(ctx, weights.NumElements() == 0 || weights.shape() == in.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Input and weights must have the same shape. Input: ",
                    in.shape().DebugString(), ", weights: ", weights.shape().DebugString())));
    const std::vector<int64_t> x = IntValues(in);
    for (int64_t v : x) {
      OP_REQUIRES(ctx, v >= 0, absl::InvalidArgumentError("Input arr must be non-negative!"));
    }
    const int64_t rows = in.dims() == 2 ? in.dim_size(0) : 1;
    const int64_t per_row = rows == 0 ? 0 : static_cast<int64_t>(x.size()) / rows;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, in.dims() == 2 ? TensorShape({rows, size}) : TensorShape({size}),
                            &out));
    std::vector<int64_t> row_of(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      row_of[k] = per_row == 0 ? 0 : static_cast<int64_t>(k) / per_row;
    }
    FillBins(x, row_of, size, weights, binary_, out);
  }

 private:
  bool binary_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("StringLower").Device(kDeviceCpu), StringCaseOp<false>);
REGISTER_KERNEL(KernelDefBuilder("StringUpper").Device(kDeviceCpu), StringCaseOp<true>);
REGISTER_KERNEL(KernelDefBuilder("StaticRegexReplace").Device(kDeviceCpu), StaticRegexReplaceOp);
REGISTER_KERNEL(KernelDefBuilder("StringSplit").Device(kDeviceCpu), StringSplitOp<false>);
REGISTER_KERNEL(KernelDefBuilder("StringSplitV2").Device(kDeviceCpu), StringSplitOp<true>);
REGISTER_KERNEL(KernelDefBuilder("RaggedTensorToTensor").Device(kDeviceCpu),
                RaggedTensorToTensorOp);
REGISTER_KERNEL(KernelDefBuilder("DenseBincount").Device(kDeviceCpu), DenseBincountOp);

}  // namespace
}  // namespace graphrun
