// CPU kernels of graph/ops/ragged_text_ops.cc, as TensorFlow computes them:
//   RaggedBincount  per row of the splits: counts, weight sums or 1/0 of the
//                   values in [0, size); a negative value is an error.
//   StringNGrams    per row and width, the windows of `width` tokens (with
//                   up to `pad_width` pads each side, -1: width - 1) joined
//                   by the separator; with preserve_short_sequences a
//                   non-empty row too short for every width gives one
//                   n-gram of all its tokens.
//   UnicodeDecode   UTF-8 to code points; an ill-formed sequence's maximal
//                   subpart becomes one replacement char ('replace'), is
//                   dropped ('ignore') or fails ('strict').
//   UnicodeEncode   code points to UTF-8, UTF-16-BE or UTF-32-BE; a
//                   surrogate or out-of-range value is
//                   replaced, dropped or fails the same way.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/utf8.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/text_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using array_kernels::IntValues;

// Row splits must start at 0, never decrease and end at `values`.
absl::Status CheckSplits(const std::vector<int64_t>& splits, int64_t values, const char* what) {
  if (splits.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " must not be empty"));
  if (splits[0] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must start with 0, not ", splits[0]));
  }
  for (size_t i = 1; i < splits.size(); ++i) {
    if (splits[i] < splits[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(what, " must be sorted in ascending order"));
    }
  }
  if (splits.back() != values) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must end with the number of values (",
                                                   values, "), not ", splits.back()));
  }
  return absl::OkStatus();
}

void SetSplits(Tensor* out, const std::vector<int64_t>& splits) {
  for (size_t i = 0; i < splits.size(); ++i) {
    if (out->dtype() == DT_INT32) {
      out->flat<int32_t>()[i] = static_cast<int32_t>(splits[i]);
    } else {
      out->flat<int64_t>()[i] = splits[i];
    }
  }
}

class RaggedBincountOp : public OpKernel {
 public:
  explicit RaggedBincountOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("binary_output", &binary_));
  }
  void Compute(OpKernelContext* ctx) override {
    const std::vector<int64_t> splits = IntValues(ctx->input(0));
    const Tensor& values = ctx->input(1);
    const Tensor& weights = ctx->input(3);
    OP_REQUIRES(ctx, ctx->input(2).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "size must be a scalar, has rank ", ctx->input(2).dims())));
    const int64_t size = IntValues(ctx->input(2))[0];
    OP_REQUIRES(ctx, size >= 0,
                absl::InvalidArgumentError(absl::StrCat("size (", size, ") must be non-negative")));
    OP_REQUIRES(ctx, weights.NumElements() == 0 || weights.shape() == values.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "weights and values must have the same shape: weights ",
                    weights.shape().DebugString(), ", values ", values.shape().DebugString())));
    OP_REQUIRES_OK(ctx, CheckSplits(splits, values.NumElements(), "splits"));
    const std::vector<int64_t> x = IntValues(values);
    const int64_t rows = static_cast<int64_t>(splits.size()) - 1;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rows, size}), &out));
    std::vector<int64_t> row_of(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = splits[r]; k < splits[r + 1]; ++k) row_of[k] = r;
    }
    for (size_t k = 0; k < x.size(); ++k) {
      OP_REQUIRES(ctx, x[k] >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Input must be non-negative. Got ", x[k], " at index ", k)));
    }
    FillBins(x, row_of, size, weights, binary_, out);
  }

 private:
  bool binary_ = false;
};

class StringNGramsOp : public OpKernel {
 public:
  explicit StringNGramsOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
    OP_REQUIRES_OK(c, c->GetAttr("ngram_widths", &widths_));
    OP_REQUIRES_OK(c, c->GetAttr("left_pad", &left_pad_));
    OP_REQUIRES_OK(c, c->GetAttr("right_pad", &right_pad_));
    OP_REQUIRES_OK(c, c->GetAttr("pad_width", &pad_width_));
    OP_REQUIRES_OK(c, c->GetAttr("preserve_short_sequences", &preserve_short_));
    for (int64_t w : widths_) {
      OP_REQUIRES(c, w > 0,
                  absl::InvalidArgumentError(absl::StrCat("ngram_widths must be positive, got ", w)));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const std::vector<int64_t> splits = IntValues(ctx->input(1));
    OP_REQUIRES_OK(ctx, CheckSplits(splits, data.NumElements(), "data_splits"));
    auto d = data.flat<std::string>();
    std::vector<std::string> grams;
    std::vector<int64_t> out_splits = {0};
    for (size_t r = 0; r + 1 < splits.size(); ++r) {
      const int64_t start = splits[r];
      const int64_t length = splits[r + 1] - start;
      const size_t before = grams.size();
      for (int64_t width : widths_) {
        const int64_t pad = Pad(width);
        const int64_t count = std::max<int64_t>(0, length + 2 * pad - width + 1);
        Emit(d, start, length, width, pad, count, &grams);
      }
      if (preserve_short_ && length > 0 && grams.size() == before) {
        // One n-gram of the whole row, with the first width's padding.
        const int64_t pad = widths_.empty() ? 0 : Pad(widths_[0]);
        Emit(d, start, length, length + 2 * pad, pad, 1, &grams);
      }
      out_splits.push_back(static_cast<int64_t>(grams.size()));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({static_cast<int64_t>(grams.size())}), &out));
    for (size_t i = 0; i < grams.size(); ++i) out->flat<std::string>()[i] = std::move(grams[i]);
    Tensor* s = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            1, TensorShape({static_cast<int64_t>(out_splits.size())}), &s));
    SetSplits(s, out_splits);
  }

 private:
  // Never more padding than width - 1 on a side.
  int64_t Pad(int64_t width) const {
    return std::min<int64_t>(pad_width_ < 0 ? width - 1 : pad_width_, width - 1);
  }
  template <typename Flat>
  void Emit(const Flat& d, int64_t start, int64_t length, int64_t width, int64_t pad,
            int64_t count, std::vector<std::string>* grams) const {
    for (int64_t g = 0; g < count; ++g) {
      const int64_t left = std::max<int64_t>(0, pad - g);
      const int64_t right = std::max<int64_t>(0, pad - (count - (g + 1)));
      const int64_t tokens = width - left - right;
      const int64_t first = left > 0 ? 0 : g - pad;
      std::string gram;
      int64_t parts = 0;
      auto add = [&](const std::string& s) {
        if (parts++ > 0) gram += separator_;
        gram += s;
      };
      for (int64_t i = 0; i < left; ++i) add(left_pad_);
      for (int64_t i = 0; i < tokens && first + i < length; ++i) add(d[start + first + i]);
      for (int64_t i = 0; i < right; ++i) add(right_pad_);
      grams->push_back(std::move(gram));
    }
  }

  std::string separator_, left_pad_, right_pad_;
  std::vector<int64_t> widths_;
  int64_t pad_width_ = -1;
  bool preserve_short_ = false;
};

enum class OnError { kStrict, kReplace, kIgnore };

absl::Status ParseErrors(const std::string& s, OnError* e) {
  if (s == "strict") {
    *e = OnError::kStrict;
  } else if (s == "replace") {
    *e = OnError::kReplace;
  } else if (s == "ignore") {
    *e = OnError::kIgnore;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("errors must be strict, replace or ignore: ", s));
  }
  return absl::OkStatus();
}

class UnicodeDecodeOp : public OpKernel {
 public:
  explicit UnicodeDecodeOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string encoding, errors;
    OP_REQUIRES_OK(c, c->GetAttr("input_encoding", &encoding));
    const std::string upper = absl::AsciiStrToUpper(encoding);
    OP_REQUIRES(c, upper == "UTF-8" || upper == "UTF8",
                absl::UnimplementedError(absl::StrCat(
                    "UnicodeDecode from '", encoding, "': only UTF-8 input is supported")));
    OP_REQUIRES_OK(c, c->GetAttr("errors", &errors));
    OP_REQUIRES_OK(c, ParseErrors(errors, &errors_));
    int64_t replacement = 0;
    OP_REQUIRES_OK(c, c->GetAttr("replacement_char", &replacement));
    replacement_ = static_cast<int32_t>(replacement);
    OP_REQUIRES_OK(c, c->GetAttr("replace_control_characters", &replace_control_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    auto strings = in.flat<std::string>();
    std::vector<int32_t> chars;
    std::vector<int64_t> splits = {0};
    for (size_t s = 0; s < strings.size(); ++s) {
      const auto* p = reinterpret_cast<const unsigned char*>(strings[s].data());
      const size_t n = strings[s].size();
      for (size_t at = 0; at < n;) {
        int32_t cp = 0;
        const size_t used = utf8::Decode(p + at, n - at, &cp);
        if (cp < 0) {
          OP_REQUIRES(ctx, errors_ != OnError::kStrict,
                      absl::InvalidArgumentError(absl::StrCat(
                          "Invalid formatting on input string ", s, " at byte ", at)));
          if (errors_ == OnError::kReplace) chars.push_back(replacement_);
        } else if (replace_control_ && cp < 0x20) {
          // As TensorFlow: replaced, except that errors='ignore' drops it.
          if (errors_ != OnError::kIgnore) chars.push_back(replacement_);
        } else {
          chars.push_back(cp);
        }
        at += used;
      }
      splits.push_back(static_cast<int64_t>(chars.size()));
    }
    Tensor* row_splits = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({static_cast<int64_t>(splits.size())}), &row_splits));
    SetSplits(row_splits, splits);
    Tensor* values = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            1, TensorShape({static_cast<int64_t>(chars.size())}), &values));
    std::copy(chars.begin(), chars.end(), values->flat<int32_t>().begin());
  }

 private:
  OnError errors_ = OnError::kReplace;
  int32_t replacement_ = 0xFFFD;
  bool replace_control_ = false;
};

// A Unicode scalar value: in range and not a surrogate.
bool IsScalarValue(int64_t c) { return c >= 0 && c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

void AppendBigEndian16(uint32_t unit, std::string* out) {
  out->push_back(static_cast<char>(unit >> 8));
  out->push_back(static_cast<char>(unit & 0xFF));
}

class UnicodeEncodeOp : public OpKernel {
 public:
  explicit UnicodeEncodeOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string errors;
    OP_REQUIRES_OK(c, c->GetAttr("errors", &errors));
    OP_REQUIRES_OK(c, ParseErrors(errors, &errors_));
    OP_REQUIRES_OK(c, c->GetAttr("output_encoding", &encoding_));
    int64_t replacement = 0;
    OP_REQUIRES_OK(c, c->GetAttr("replacement_char", &replacement));
    replacement_ = static_cast<int32_t>(replacement);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& values = ctx->input(0);
    const std::vector<int64_t> splits = IntValues(ctx->input(1));
    OP_REQUIRES_OK(ctx, CheckSplits(splits, values.NumElements(), "input_splits"));
    auto v = values.flat<int32_t>();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({static_cast<int64_t>(splits.size()) - 1}), &out));
    for (size_t r = 0; r + 1 < splits.size(); ++r) {
      std::string& s = out->flat<std::string>()[r];
      for (int64_t k = splits[r]; k < splits[r + 1]; ++k) {
        int32_t c = v[k];
        if (!IsScalarValue(c)) {
          OP_REQUIRES(ctx, errors_ != OnError::kStrict,
                      absl::InvalidArgumentError(absl::StrCat(
                          "Code point ", c, " is out of range for Unicode, or is a surrogate.")));
          if (errors_ == OnError::kIgnore) continue;
          c = replacement_;
        }
        if (encoding_ == "UTF-8") {
          utf8::Append(static_cast<uint32_t>(c), &s);
        } else if (encoding_ == "UTF-16-BE") {
          if (c < 0x10000) {
            AppendBigEndian16(static_cast<uint32_t>(c), &s);
          } else {
            const uint32_t u = static_cast<uint32_t>(c) - 0x10000;
            AppendBigEndian16(0xD800 | (u >> 10), &s);
            AppendBigEndian16(0xDC00 | (u & 0x3FF), &s);
          }
        } else {
          AppendBigEndian16(static_cast<uint32_t>(c) >> 16, &s);
          AppendBigEndian16(static_cast<uint32_t>(c) & 0xFFFF, &s);
        }
      }
    }
  }

 private:
  OnError errors_ = OnError::kReplace;
  std::string encoding_;
  int32_t replacement_ = 0xFFFD;
};

REGISTER_KERNEL(KernelDefBuilder("RaggedBincount").Device(kDeviceCpu), RaggedBincountOp);
REGISTER_KERNEL(KernelDefBuilder("StringNGrams").Device(kDeviceCpu), StringNGramsOp);
REGISTER_KERNEL(KernelDefBuilder("UnicodeDecode").Device(kDeviceCpu), UnicodeDecodeOp);
REGISTER_KERNEL(KernelDefBuilder("UnicodeEncode").Device(kDeviceCpu), UnicodeEncodeOp);

}  // namespace
}  // namespace graphrun
