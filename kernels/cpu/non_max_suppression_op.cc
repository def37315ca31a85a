// NonMaxSuppressionV2/V3/V4/V5 on CPU, TensorFlow's greedy selection: boxes
// scoring above score_threshold are taken best first (ties by lower
// index); a candidate is compared with the boxes selected since it was last
// examined, newest first, and dropped when its IoU with one passes
// iou_threshold. V5 with soft_nms_sigma > 0 instead decays the score by
// exp(-0.5 * iou^2 / sigma) and re-queues the candidate while it stays
// above score_threshold (Soft-NMS, Gaussian). Boxes are [y1, x1, y2, x2]
// in either corner order. Arithmetic in float for half and float inputs.
// CombinedNonMaxSuppression runs it per class and merges the classes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
    // NonMaxSuppressionV2 has no score threshold.
    absl::StatusOr<float> score_threshold = -std::numeric_limits<float>::infinity();
    if (num_inputs() > 4) score_threshold = ScalarInput(ctx->input(4), "score_threshold");
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

// CombinedNonMaxSuppression, as TensorFlow's: per image and class, greedy
// NMS over the boxes scoring above score_threshold (highest first, up to
// max_output_size_per_class); then the image's selections of every class,
// best first, up to max_total_size (or, with pad_per_class, to
// min(max_total_size, per-class size x classes)); boxes clipped to [0, 1]
// when clip_boxes; zeros after the valid detections.
class CombinedNonMaxSuppressionOp : public OpKernel {
 public:
  explicit CombinedNonMaxSuppressionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("pad_per_class", &pad_per_class_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("clip_boxes", &clip_boxes_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    OP_REQUIRES(ctx, boxes.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "boxes must be 4-D", boxes.shape().DebugString())));
    OP_REQUIRES(ctx, scores.dims() == 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "scores must be 3-D", scores.shape().DebugString())));
    const int64_t batch = boxes.dim_size(0), num_boxes = boxes.dim_size(1);
    const int64_t q = boxes.dim_size(2), classes = scores.dim_size(2);
    OP_REQUIRES(ctx, boxes.dim_size(3) == 4,
                absl::InvalidArgumentError("boxes must have 4 columns"));
    OP_REQUIRES(ctx, scores.dim_size(0) == batch && scores.dim_size(1) == num_boxes,
                absl::InvalidArgumentError(absl::StrCat(
                    "scores has incompatible shape ", scores.shape().DebugString())));
    OP_REQUIRES(ctx, q == 1 || q == classes,
                absl::InvalidArgumentError(
                    "third dimension of boxes must be either 1 or num classes"));
    for (int i : {2, 3}) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      i == 2 ? "max_size_per_class" : "max_total_size",
                      " must be 0-D, got shape ", ctx->input(i).shape().DebugString())));
    }
    absl::StatusOr<float> iou = ScalarInput(ctx->input(4), "iou_threshold");
    OP_REQUIRES_OK(ctx, iou.status());
    absl::StatusOr<float> threshold = ScalarInput(ctx->input(5), "score_threshold");
    OP_REQUIRES_OK(ctx, threshold.status());
    const int64_t per_class = ctx->input(2).flat<int32_t>()[0];
    const int64_t total = ctx->input(3).flat<int32_t>()[0];
    OP_REQUIRES(ctx, per_class > 0,
                absl::InvalidArgumentError("max_size_per_class must be > 0"));
    OP_REQUIRES(ctx, total > 0, absl::InvalidArgumentError("max_total_size must be > 0"));
    OP_REQUIRES(ctx, *iou >= 0 && *iou <= 1,
                absl::InvalidArgumentError("iou_threshold must be in [0, 1]"));
    const int64_t size_per_class = std::min(per_class, num_boxes);
    const int64_t detections =
        pad_per_class_ ? std::min(total, per_class * classes) : total;
    Tensor *out_boxes = nullptr, *out_scores = nullptr, *out_classes = nullptr,
           *out_valid = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch, detections, 4}), &out_boxes));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({batch, detections}), &out_scores));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({batch, detections}), &out_classes));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({batch}), &out_valid));
    const std::vector<float> all_boxes = ToFloats(boxes);
    const std::vector<float> all_scores = ToFloats(scores);
    float* ob = out_boxes->flat<float>().data();
    float* os = out_scores->flat<float>().data();
    float* oc = out_classes->flat<float>().data();
    std::fill_n(ob, batch * detections * 4, 0.0f);
    std::fill_n(os, batch * detections, 0.0f);
    std::fill_n(oc, batch * detections, 0.0f);
    struct Chosen {
      float score;
      int64_t box, cls;
    };
    for (int64_t b = 0; b < batch; ++b) {
      const float* bx = all_boxes.data() + b * num_boxes * q * 4;
      const float* sc = all_scores.data() + b * num_boxes * classes;
      std::vector<Chosen> chosen;
      // Each class's boxes and scores, selected greedily as the single-class ops.
      std::vector<float> class_boxes(num_boxes * 4), class_scores(num_boxes);
      for (int64_t c = 0; c < classes; ++c) {
        const int64_t k = q > 1 ? c : 0;
        for (int64_t i = 0; i < num_boxes; ++i) {
          std::copy_n(bx + (i * q + k) * 4, 4, class_boxes.data() + i * 4);
          class_scores[i] = sc[i * classes + c];
        }
        const Selection sel =
            Select(class_boxes, class_scores, size_per_class, *iou, *threshold, 0.0f);
        for (size_t j = 0; j < sel.indices.size(); ++j) {
          chosen.push_back({sel.scores[j], sel.indices[j], c});
        }
      }
      std::stable_sort(chosen.begin(), chosen.end(),
                       [](const Chosen& x, const Chosen& y) { return x.score > y.score; });
      int64_t valid = 0;
      for (const Chosen& ch : chosen) {
        if (valid >= detections) break;
        if (!(ch.score > 0)) continue;
        const float* box = bx + (ch.box * q + (q > 1 ? ch.cls : 0)) * 4;
        for (int j = 0; j < 4; ++j) {
          const float v = box[j];
          ob[(b * detections + valid) * 4 + j] = clip_boxes_ ? std::min(std::max(v, 0.0f), 1.0f) : v;
        }
        os[b * detections + valid] = ch.score;
        oc[b * detections + valid] = static_cast<float>(ch.cls);
        ++valid;
      }
      out_valid->flat<int32_t>()[b] = static_cast<int32_t>(valid);
    }
  }

 private:
  bool pad_per_class_ = false;
  bool clip_boxes_ = true;
};

REGISTER_KERNEL(KernelDefBuilder("CombinedNonMaxSuppression").Device(kDeviceCpu),
                CombinedNonMaxSuppressionOp);
REGISTER_KERNEL(KernelDefBuilder("NonMaxSuppressionV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_HALF})
                    .TypeConstraint("T_threshold", {DT_FLOAT, DT_HALF}),
                NonMaxSuppressionOp);
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
