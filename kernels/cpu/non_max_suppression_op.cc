// NonMaxSuppressionV3/V4/V5 on CPU, TensorFlow's greedy selection: boxes
// scoring above score_threshold are taken best first (ties by lower
// index); a candidate is compared with the boxes selected since it was last
// examined, newest first, and dropped when its IoU with one passes
// iou_threshold. V5 with soft_nms_sigma > 0 instead decays the score by
// exp(-0.5 * iou^2 / sigma) and re-queues the candidate while it stays
// above score_threshold (Soft-NMS, Gaussian). Boxes are [y1, x1, y2, x2]
// in either corner order. Arithmetic in float for half and float inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

std::vector<float> ToFloats(const Tensor& t) {
  std::vector<float> out(t.NumElements());
  if (t.dtype() == DT_HALF) {
    const half* p = t.flat<half>().data();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  } else {
    const float* p = t.flat<float>().data();
    std::copy(p, p + out.size(), out.begin());
  }
  return out;
}

absl::StatusOr<float> ScalarInput(const Tensor& t, const char* name) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be 0-D, got shape ", t.shape().DebugString()));
  }
  return ToFloats(t)[0];
}

// Intersection over union of boxes i and j (0 when either has no area).
float Iou(const float* boxes, int64_t i, int64_t j) {
  const float* a = boxes + 4 * i;
  const float* b = boxes + 4 * j;
  const float ymin_a = std::min(a[0], a[2]), ymax_a = std::max(a[0], a[2]);
  const float xmin_a = std::min(a[1], a[3]), xmax_a = std::max(a[1], a[3]);
  const float ymin_b = std::min(b[0], b[2]), ymax_b = std::max(b[0], b[2]);
  const float xmin_b = std::min(b[1], b[3]), xmax_b = std::max(b[1], b[3]);
  const float area_a = (ymax_a - ymin_a) * (xmax_a - xmin_a);
  const float area_b = (ymax_b - ymin_b) * (xmax_b - xmin_b);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ymin = std::max(ymin_a, ymin_b), ymax = std::min(ymax_a, ymax_b);
  const float xmin = std::max(xmin_a, xmin_b), xmax = std::min(xmax_a, xmax_b);
  const float inter =
      std::max(ymax - ymin, 0.0f) * std::max(xmax - xmin, 0.0f);
  return inter / (area_a + area_b - inter);
}

struct Selection {
  std::vector<int32_t> indices;
  std::vector<float> scores;
};

Selection Select(const std::vector<float>& boxes,
                 const std::vector<float>& scores, int64_t max_output,
                 float iou_threshold, float score_threshold, float sigma) {
  struct Candidate {
    int64_t index;
    float score;
    // Selected boxes before this position were already compared.
    size_t suppress_begin;
  };
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)>
      queue(worse);
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] > score_threshold) {
      queue.push({static_cast<int64_t>(i), scores[i], 0});
    }
  }
  const bool soft = sigma > 0;
  const float scale = soft ? -0.5f / sigma : 0.0f;
  const int64_t limit =
      std::min<int64_t>(max_output, static_cast<int64_t>(scores.size()));
  Selection out;
  while (static_cast<int64_t>(out.indices.size()) < limit && !queue.empty()) {
    Candidate next = queue.top();
    queue.pop();
    const float original = next.score;
    bool suppressed = false;
    for (int64_t j = static_cast<int64_t>(out.indices.size()) - 1;
         j >= static_cast<int64_t>(next.suppress_begin); --j) {
      const float iou = Iou(boxes.data(), next.index, out.indices[j]);
      if (!soft && iou > iou_threshold) {
        suppressed = true;
        break;
      }
      if (soft) next.score *= std::exp(scale * iou * iou);
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin = out.indices.size();
    if (suppressed) continue;
    if (next.score == original) {
      out.indices.push_back(static_cast<int32_t>(next.index));
      out.scores.push_back(next.score);
    } else if (next.score > score_threshold) {
      queue.push(next);
    }
  }
  return out;
}

// V3 (1 output), V4 (indices, valid_outputs) and V5 (indices, scores,
// valid_outputs; soft_nms_sigma input).
class NonMaxSuppressionOp : public OpKernel {
 public:
  explicit NonMaxSuppressionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->attrs().Find("pad_to_max_output_size") != nullptr) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("pad_to_max_output_size", &pad_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    OP_REQUIRES(ctx, boxes.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "boxes must be 2-D", boxes.shape().DebugString())));
    const int64_t num_boxes = boxes.dim_size(0);
    OP_REQUIRES(ctx, boxes.dim_size(1) == 4,
                absl::InvalidArgumentError("boxes must have 4 columns"));
    OP_REQUIRES(ctx, scores.dims() == 1 && scores.dim_size(0) == num_boxes,
                absl::InvalidArgumentError(absl::StrCat(
                    "scores has incompatible shape ",
                    scores.shape().DebugString())));
    const Tensor& max_output = ctx->input(2);
    OP_REQUIRES(ctx, max_output.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "max_output_size must be 0-D, got shape ",
                    max_output.shape().DebugString())));
    const int64_t max_output_size = max_output.flat<int32_t>()[0];
    OP_REQUIRES(ctx, max_output_size >= 0,
                absl::InvalidArgumentError("output size must be non-negative"));
    auto iou = ScalarInput(ctx->input(3), "iou_threshold");
    OP_REQUIRES_OK(ctx, iou.status());
    OP_REQUIRES(ctx, *iou >= 0 && *iou <= 1,
                absl::InvalidArgumentError("iou_threshold must be in [0, 1]"));
    auto score_threshold = ScalarInput(ctx->input(4), "score_threshold");
    OP_REQUIRES_OK(ctx, score_threshold.status());
    float sigma = 0;
    const bool v5 = num_inputs() == 6;
    if (v5) {
      auto s = ScalarInput(ctx->input(5), "soft_nms_sigma");
      OP_REQUIRES_OK(ctx, s.status());
      OP_REQUIRES(ctx, *s >= 0,
                  absl::InvalidArgumentError("soft_nms_sigma must be >= 0"));
      sigma = *s;
    }
    const Selection sel = Select(ToFloats(boxes), ToFloats(scores),
                                 max_output_size, *iou, *score_threshold,
                                 sigma);
    const int64_t valid = static_cast<int64_t>(sel.indices.size());
    const int64_t size = pad_ ? max_output_size : valid;
    Tensor* indices = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({size}), &indices));
    int32_t* idx = indices->flat<int32_t>().data();
    std::fill_n(idx, size, 0);
    std::copy(sel.indices.begin(), sel.indices.end(), idx);
    int next_output = 1;
    if (v5) {
      Tensor* out_scores = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({size}),
                                               &out_scores));
      for (int64_t i = 0; i < size; ++i) {
        const float v = i < valid ? sel.scores[i] : 0.0f;
        if (out_scores->dtype() == DT_HALF) {
          out_scores->flat<half>()[i] = static_cast<half>(v);
        } else {
          out_scores->flat<float>()[i] = v;
        }
      }
      next_output = 2;
    }
    if (num_outputs() > next_output) {
      Tensor* num_valid = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(next_output, TensorShape(),
                                               &num_valid));
      num_valid->flat<int32_t>()[0] = static_cast<int32_t>(valid);
    }
  }

 private:
  bool pad_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("NonMaxSuppressionV3")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_HALF})
                    .TypeConstraint("T_threshold", {DT_FLOAT, DT_HALF}),
                NonMaxSuppressionOp);
REGISTER_KERNEL(KernelDefBuilder("NonMaxSuppressionV4")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_HALF})
                    .TypeConstraint("T_threshold", {DT_FLOAT, DT_HALF}),
                NonMaxSuppressionOp);
REGISTER_KERNEL(KernelDefBuilder("NonMaxSuppressionV5")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_HALF}),
                NonMaxSuppressionOp);

}  // namespace
}  // namespace graphrun
