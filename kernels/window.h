// The geometry of a windowed op (convolution, pooling) as TensorFlow
// computes it: one spatial dim's output size and padding, and the check of
// a 4-D op's explicit paddings; and max pooling's per-channel scan. Shared
// by the CPU kernels and the GPU kernels' plans (kernels/gpu/array_plans.h).
// Header only; stateless.
#ifndef GRAPHRUN_KERNELS_WINDOW_H_
#define GRAPHRUN_KERNELS_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/ops/shape_helpers.h"

namespace graphrun {
namespace windowed {

// One spatial dim of a windowed op, as TensorFlow's
// GetWindowedOutputSizeVerboseV2 (same messages). For EXPLICIT the pads
// come in through `window`.
struct Window {
  int64_t out = 0;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
};

inline absl::Status ComputeWindow(int64_t input, int64_t filter,
                                  int64_t dilation, int64_t stride,
                                  op_shapes::Padding padding, Window* window) {
  using op_shapes::Padding;
  if (stride <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Stride must be > 0, but got ", stride));
  }
  if (dilation < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dilation rate must be >= 1, but got ", dilation));
  }
  const int64_t effective = (filter - 1) * dilation + 1;
  switch (padding) {
    case Padding::kValid:
      window->out = (input - effective + stride) / stride;
      window->pad_before = window->pad_after = 0;
      break;
    case Padding::kExplicit:
      window->out = (input + window->pad_before + window->pad_after -
                     effective + stride) /
                    stride;
      break;
    case Padding::kSame: {
      window->out = (input + stride - 1) / stride;
      const int64_t needed =
          std::max<int64_t>(0, (window->out - 1) * stride + effective - input);
      window->pad_before = needed / 2;
      window->pad_after = needed - window->pad_before;
      break;
    }
  }
  if (window->out < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Computed output size would be negative: ", window->out,
        " [input_size: ", input, ", effective_filter_size: ", effective,
        ", stride: ", stride, "]"));
  }
  return absl::OkStatus();
}

// What each explicit padding value may be: in [0, max_value], else an
// InvalidArgument with `message`.
struct PaddingValueRule {
  int64_t max_value = std::numeric_limits<int64_t>::max();
  const char* message = "All elements of explicit_paddings must be nonnegative";
};

// The explicit_paddings attr of a 4-D windowed op, as TensorFlow's
// CheckValidPadding (same messages): with EXPLICIT padding 8 values that
// follow `rule`, zero for the batch dim and for `channel_dim` (1 for NCHW, 3
// for NHWC); otherwise none.
inline absl::Status CheckExplicitPaddings(op_shapes::Padding padding,
                                          absl::Span<const int64_t> paddings,
                                          int channel_dim,
                                          const PaddingValueRule& rule = {}) {
  if (padding != op_shapes::Padding::kExplicit) {
    if (!paddings.empty()) {
      return absl::InvalidArgumentError(
          "explicit_paddings attribute must be empty if the padding attribute "
          "is not EXPLICIT");
    }
    return absl::OkStatus();
  }
  if (paddings.size() != 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "explicit_paddings attribute must contain 8 values, but got: ",
        paddings.size()));
  }
  for (int64_t p : paddings) {
    if (p < 0 || p > rule.max_value) {
      return absl::InvalidArgumentError(rule.message);
    }
  }
  if (paddings[0] != 0 || paddings[1] != 0 || paddings[2 * channel_dim] != 0 ||
      paddings[2 * channel_dim + 1] != 0) {
    return absl::InvalidArgumentError(
        "Nonzero explicit padding in the batch or depth dimensions is not "
        "supported");
  }
  return absl::OkStatus();
}

// Max pooling's scan, NHWC: where each channel's values xs[c] exceed the window's maximum so far, they
// and their offsets (base + c) replace it. Only a strictly greater value
// moves the maximum: ties keep the first, as TensorFlow's scan does (and a
// NaN stays). Separate buffers, so the channel loop vectorizes.
template <typename T>
void KeepMaxima(const T* __restrict xs, T* __restrict best, int64_t* __restrict where,
                int64_t base, int64_t depth) {
  for (int64_t c = 0; c < depth; ++c) {
    const bool greater = best[c] < xs[c];
    best[c] = greater ? xs[c] : best[c];
    where[c] = greater ? base + c : where[c];
  }
}

}  // namespace windowed
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_WINDOW_H_
