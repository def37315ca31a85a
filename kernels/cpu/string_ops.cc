// CPU kernels of StringJoin, StaticRegexFullMatch and RegexFullMatch
// (graph/ops/string_ops.cc), TensorFlow's semantics and messages
// (core/kernels/string_join_op.cc, regex_full_match_op.cc). Patterns are
// RE2's, as in TensorFlow; a static pattern is compiled once per kernel.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "re2/re2.h"

namespace graphrun {
namespace {

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    std::vector<bool> scalar(static_cast<size_t>(n));
    const TensorShape* shape = nullptr;
    for (int i = 0; i < n; ++i) {
      const Tensor& in = ctx->input(i);
      scalar[i] = in.shape().dims() == 0;
      if (scalar[i]) continue;
      if (shape == nullptr) {
        shape = &in.shape();
      } else {
        OP_REQUIRES(ctx, in.shape() == *shape,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Input shapes do not match: ", shape->DebugString(), " vs. ",
                        in.shape().DebugString())));
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape ? *shape : TensorShape(), &out));
    auto o = out->flat<std::string>();
    for (int64_t j = 0; j < static_cast<int64_t>(o.size()); ++j) {
      std::string s;
      for (int i = 0; i < n; ++i) {
        if (i > 0) s += separator_;
        s += ctx->input(i).flat<std::string>()[scalar[i] ? 0 : j];
      }
      o[j] = std::move(s);
    }
  }

 private:
  std::string separator_;
};

absl::Status FullMatches(const RE2& re, const Tensor& in, OpKernelContext* ctx) {
  Tensor* out = nullptr;
  absl::Status s = ctx->allocate_output(0, in.shape(), &out);
  if (!s.ok()) return s;
  auto i = in.flat<std::string>();
  auto o = out->flat<bool>();
  for (size_t k = 0; k < i.size(); ++k) o[k] = RE2::FullMatch(i[k], re);
  return absl::OkStatus();
}

class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    re_ = std::make_unique<RE2>(pattern, RE2::Quiet);
    OP_REQUIRES(c, re_->ok(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Invalid pattern: ", pattern, ", error: ", re_->error())));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, FullMatches(*re_, ctx->input(0), ctx));
  }

 private:
  std::unique_ptr<RE2> re_;
};

class RegexFullMatchOp : public OpKernel {
 public:
  explicit RegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pattern = ctx->input(1);
    OP_REQUIRES(ctx, pattern.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Pattern must be scalar, but received ", pattern.shape().DebugString())));
    const RE2 re(pattern.scalar<std::string>(), RE2::Quiet);
    OP_REQUIRES(ctx, re.ok(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Invalid pattern: ", pattern.scalar<std::string>(), ", error: ", re.error())));
    OP_REQUIRES_OK(ctx, FullMatches(re, ctx->input(0), ctx));
  }
};

REGISTER_KERNEL(KernelDefBuilder("StringJoin").Device(kDeviceCpu), StringJoinOp);
REGISTER_KERNEL(KernelDefBuilder("StaticRegexFullMatch").Device(kDeviceCpu),
                StaticRegexFullMatchOp);
REGISTER_KERNEL(KernelDefBuilder("RegexFullMatch").Device(kDeviceCpu), RegexFullMatchOp);

}  // namespace
}  // namespace graphrun
