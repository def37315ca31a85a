// CPU kernels of the seeded sampling ops of graph/ops/random_more_ops.cc,
// bit-exact with TensorFlow's (core/kernels/multinomial_op.cc,
// shuffle_common.h, image/sample_distorted_bounding_box_op.cc).
//
// Each node keeps one Philox4x32 generator per session, seeded from its
// seed/seed2 attrs (both 0: from the OS), and each run reserves the stretch
// of the stream TensorFlow reserves for the same inputs, so run k of a
// session draws what TensorFlow's run k draws:
//   Multinomial: 256 blocks per reserved output, where a row reserves two
//     words per sample, rounded up to 8. A row's samples are uniform
//     doubles (two words each) scaled into the row's running sum of
//     exp(logit - max) over the finite logits, located by binary search.
//   RandomShuffle: (rows - 1 + 3) / 4 blocks; a Fisher-Yates walk over the
//     rows taking one word modulo the remaining count per step. Nothing is
//     reserved when there is at most one row or element.
//   SampleDistortedBoundingBox(V2): max_attempts blocks; per attempt a
//     uniform float aspect ratio, then rejection-sampled integers for the
//     crop's height and corner.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/philox.h"
#include "kernels/cpu/node_generator.h"
#include "kernels/cpu/random_distributions.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using random::Philox4x32;

using random::NodeGenerator;

// A generator's 32-bit words one at a time, with TensorFlow's SimplePhilox
// conversions on top. Not copyable (the sampler points at the generator).
class WordStream {
 public:
  // Starts `words` words into the stream of `gen`.
  WordStream(const Philox4x32& gen, uint64_t words) : gen_(gen), sampler_(&gen_) {
    gen_.Skip(words / Philox4x32::kResultElementCount);
    for (uint64_t i = 0; i < words % Philox4x32::kResultElementCount; ++i) sampler_();
  }
  WordStream(const WordStream&) = delete;
  WordStream& operator=(const WordStream&) = delete;

  uint32_t Rand32() { return sampler_(); }
  // [0, 1) from one word.
  float RandFloat() { return random::WordToFloat(sampler_()); }
  // [0, 1) from two words, the first giving the high mantissa bits.
  double RandDouble() {
    const uint32_t hi = sampler_();
    const uint32_t lo = sampler_();
    return random::WordsToDouble(hi, lo);
  }
  // Exactly uniform in [0, n): a power of two masks one word; otherwise
  // words below 2^32 mod n are rejected before the modulo. n = 0 uses up
  // one word and gives 0.
  uint32_t Uniform(uint32_t n) {
    if (n == 0) {
      Rand32();
      return 0;
    }
    if ((n & (n - 1)) == 0) return Rand32() & (n - 1);
    const uint32_t reject_below = std::numeric_limits<uint32_t>::max() % n + 1;
    uint32_t word;
    do {
      word = Rand32();
    } while (word < reject_below);
    return word % n;
  }

 private:
  Philox4x32 gen_;
  random::SingleSampler sampler_;
};

// ---------------------------------------------------------------------------
// Multinomial

// Draws the `samples` classes of one row of `classes` logits from `words`.
// `cdf` is scratch of `classes` doubles.
template <typename T, typename Out>
void SampleRow(const T* logits, int64_t classes, int64_t samples, WordStream* words, double* cdf,
               Out* out) {
  // The largest finite logit (the type's lowest value when there is none)
  // keeps exp() in range.
  double max_logit = static_cast<double>(std::numeric_limits<T>::lowest());
  for (int64_t j = 0; j < classes; ++j) {
    const double v = static_cast<double>(logits[j]);
    if (std::isfinite(v)) max_logit = std::max(max_logit, v);
  }
  // An unnormalized running sum; non-finite logits add nothing.
  double total = 0;
  for (int64_t j = 0; j < classes; ++j) {
    const double v = static_cast<double>(logits[j]);
    if (std::isfinite(v)) total += std::exp(v - max_logit);
    cdf[j] = total;
  }
  for (int64_t s = 0; s < samples; ++s) {
    const double target = words->RandDouble() * total;
    out[s] = static_cast<Out>(std::upper_bound(cdf, cdf + classes, target) - cdf);
  }
}

template <typename T, typename Out>
class MultinomialOp : public OpKernel {
 public:
  explicit MultinomialOp(OpKernelConstruction* ctx) : OpKernel(ctx), gen_(ctx, name()) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& samples_t = ctx->input(1);
    OP_REQUIRES(ctx, logits.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat("logits should be a matrix, got shape ",
                                                        logits.shape().DebugString())));
    OP_REQUIRES(
        ctx, samples_t.dims() == 0,
        absl::InvalidArgumentError(absl::StrCat("num_samples should be a scalar, got shape ",
                                                samples_t.shape().DebugString())));
    const int64_t samples = samples_t.flat<int32_t>()[0];
    OP_REQUIRES(ctx, samples >= 0,
                absl::InvalidArgumentError(
                    absl::StrCat("num_samples should be non-negative, got ", samples)));
    const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
    constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
    OP_REQUIRES(ctx, batch <= kIntMax,
                absl::InvalidArgumentError("batch_size cannot exceed max int"));
    OP_REQUIRES(ctx, classes <= kIntMax,
                absl::InvalidArgumentError("num_classes cannot exceed max int"));
    OP_REQUIRES(
        ctx, classes > 0,
        absl::InvalidArgumentError(absl::StrCat("num_classes should be positive, got ", classes)));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch, samples}), &out));
    if (out->NumElements() == 0) return;

    // Two words per sample, a row's count rounded up to a multiple of 4
    // and doubled; 256 blocks per reserved output.
    const uint64_t reserved = static_cast<uint64_t>(batch) * ((samples + 3) / 4 * 4) * 2;
    absl::StatusOr<Philox4x32> gen = gen_.Reserve(ctx, reserved * random::kReservedBlocksPerOutput);
    OP_REQUIRES_OK(ctx, gen.status());

    // Rows read one stream back to back: row b starts 2 * samples * b words
    // in. (TensorFlow's rows share a stream within each of its shards, and
    // its small inputs run as one shard; this is that single-shard stream,
    // whatever the split here.)
    const T* in = logits.flat<T>().data();
    Out* o = out->flat<Out>().data();
    array_kernels::ParallelForRange(
        ctx, batch, (classes + samples) * 64, [&](int64_t begin, int64_t end) {
          std::vector<double> cdf(classes);
          WordStream words(*gen, static_cast<uint64_t>(begin) * 2 * samples);
          for (int64_t b = begin; b < end; ++b) {
            SampleRow(in + b * classes, classes, samples, &words, cdf.data(), o + b * samples);
          }
        });
  }

 private:
  NodeGenerator gen_;
};

// ---------------------------------------------------------------------------
// RandomShuffle

class RandomShuffleOp : public OpKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* ctx) : OpKernel(ctx), gen_(ctx, name()) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (input.NumElements() <= 1 || input.dim_size(0) <= 1) {
      ctx->set_output(0, input);
      return;
    }
    const int64_t rows = input.dim_size(0);
    // One word per swap: rows - 1 words, in whole blocks.
    absl::StatusOr<Philox4x32> gen = gen_.Reserve(ctx, static_cast<uint64_t>(rows - 1 + 3) / 4);
    OP_REQUIRES_OK(ctx, gen.status());
    WordStream words(*gen, 0);
    // Step i swaps row i with one of rows [i, rows) (the word modulo the
    // count of those rows, as a 32-bit count).
    std::vector<int64_t> order(rows);
    std::iota(order.begin(), order.end(), int64_t{0});
    for (int64_t i = 0; i + 1 < rows; ++i) {
      const uint32_t remaining = static_cast<uint32_t>(rows - i);
      std::swap(order[i], order[i + words.Rand32() % remaining]);
    }

    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const int64_t row_size = input.NumElements() / rows;
    const bool typed = array_kernels::VisitCopyType(input.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* src = array_kernels::DataAs<P>(input);
      P* dst = array_kernels::MutableDataAs<P>(out);
      array_kernels::ParallelForRange(ctx, rows, row_size * static_cast<int64_t>(sizeof(P)),
                                      [&](int64_t begin, int64_t end) {
                                        for (int64_t i = begin; i < end; ++i) {
                                          const P* from = src + order[i] * row_size;
                                          std::copy(from, from + row_size, dst + i * row_size);
                                        }
                                      });
    });
    OP_REQUIRES(ctx, typed,
                absl::InvalidArgumentError(absl::StrCat("RandomShuffle does not support ",
                                                        DataTypeString(input.dtype()))));
  }

 private:
  NodeGenerator gen_;
};

// ---------------------------------------------------------------------------
// SampleDistortedBoundingBox(V2)

// A pixel rectangle [min_x, max_x) x [min_y, max_y); empty when a min
// passes its max.
struct Rect {
  int min_x = 0, min_y = 0, max_x = 0, max_y = 0;

  float Area() const { return static_cast<float>((max_x - min_x) * (max_y - min_y)); }
  // The overlap, or the all-zero rectangle when there is none.
  Rect Intersect(const Rect& r) const {
    Rect o{std::max(min_x, r.min_x), std::max(min_y, r.min_y), std::min(max_x, r.max_x),
           std::min(max_y, r.max_y)};
    return (o.min_x > o.max_x || o.min_y > o.max_y) ? Rect{} : o;
  }
};

// True when `crop` holds at least one pixel and covers at least
// `min_covered` of some box of at least one pixel.
bool CoversEnough(const Rect& crop, float min_covered, const std::vector<Rect>& boxes) {
  constexpr float kMinArea = 1.0f;
  if (crop.Area() < kMinArea) return false;
  for (const Rect& box : boxes) {
    const float area = box.Area();
    if (area < kMinArea) continue;
    if (crop.Intersect(box).Area() / area >= min_covered) return true;
  }
  return false;
}

// One attempt at a crop of `width` x `height` with width = round(aspect *
// crop height) and an area within [min_area, max_area] of the image's: the
// crop height is uniform between the heights the area bounds give, the
// corner uniform among the positions that fit. False when the constraints
// cannot be met.
bool RandomCrop(int width, int height, float min_area_frac, float max_area_frac, float aspect,
                WordStream* words, Rect* crop) {
  if (max_area_frac <= 0.0 || aspect <= 0.0 || width <= 0 || height <= 0 ||
      min_area_frac > max_area_frac) {
    return false;
  }
  const float min_area = min_area_frac * width * height;
  const float max_area = max_area_frac * width * height;
  int crop_h = static_cast<int>(lrintf(std::sqrt(min_area / aspect)));
  int max_h = static_cast<int>(lrintf(std::sqrt(max_area / aspect)));
  // Keep round(max_h * aspect) within the image width, allowing for
  // rounding of the quotient.
  if (lrintf(max_h * aspect) > width) {
    const float kEps = 0.0000001f;
    max_h = static_cast<int>((width + 0.5 - kEps) / aspect);
    if (lrintf(max_h * aspect) > width) max_h -= 1;
  }
  max_h = std::min(max_h, height);
  crop_h = std::min(crop_h, max_h);
  if (crop_h < max_h) crop_h += words->Uniform(max_h - crop_h + 1);
  int crop_w = static_cast<int>(lrintf(crop_h * aspect));

  // Rounding may leave the area just outside the bounds: one step up, then
  // one step down.
  float area = static_cast<float>(crop_w * crop_h);
  if (area < min_area) {
    ++crop_h;
    crop_w = static_cast<int>(lrintf(crop_h * aspect));
    area = static_cast<float>(crop_w * crop_h);
  }
  if (area > max_area) {
    --crop_h;
    crop_w = static_cast<int>(lrintf(crop_h * aspect));
    area = static_cast<float>(crop_w * crop_h);
  }
  if (area < min_area || area > max_area || crop_w > width || crop_h > height || crop_w <= 0 ||
      crop_h <= 0) {
    return false;
  }
  const int y = crop_h < height ? static_cast<int>(words->Uniform(height - crop_h)) : 0;
  const int x = crop_w < width ? static_cast<int>(words->Uniform(width - crop_w)) : 0;
  *crop = Rect{x, y, x + crop_w, y + crop_h};
  return true;
}

template <typename T>
class SampleDistortedBoundingBoxOp : public OpKernel {
 public:
  explicit SampleDistortedBoundingBoxOp(OpKernelConstruction* ctx)
      : OpKernel(ctx), gen_(ctx, name()) {
    if (num_inputs() == 2) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("min_object_covered", &min_object_covered_));
      OP_REQUIRES(ctx, min_object_covered_ >= 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Min object covered must be non-negative: ", min_object_covered_)));
    }
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_image_if_no_bounding_boxes", &use_image_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("aspect_ratio_range", &aspect_range_));
    OP_REQUIRES(ctx, aspect_range_.size() == 2,
                absl::InvalidArgumentError("Aspect ratio range field must specify 2 dimensions"));
    OP_REQUIRES(
        ctx, aspect_range_[0] > 0 && aspect_range_[1] > 0,
        absl::InvalidArgumentError(absl::StrCat("Aspect ratio range must be non-negative: [",
                                                aspect_range_[0], ", ", aspect_range_[1], "]")));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("area_range", &area_range_));
    OP_REQUIRES(ctx, area_range_.size() == 2,
                absl::InvalidArgumentError("Area range field must specify 2 dimensions"));
    OP_REQUIRES(
        ctx, area_range_[0] > 0 && area_range_[1] > 0,
        absl::InvalidArgumentError(absl::StrCat("Area range must be non-negative: [",
                                                area_range_[0], ", ", area_range_[1], "]")));
    OP_REQUIRES(
        ctx, area_range_[0] <= 1 && area_range_[1] <= 1,
        absl::InvalidArgumentError(absl::StrCat("Area range must be less then or equal to 1.0: [",
                                                area_range_[0], ", ", area_range_[1], "]")));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("max_attempts", &max_attempts_));
    OP_REQUIRES(ctx, max_attempts_ > 0,
                absl::InvalidArgumentError(
                    absl::StrCat("Max attempts must be non-negative: ", max_attempts_)));
  }

  void Compute(OpKernelContext* ctx) override {
    // Four words per attempt, reserved before the inputs are checked.
    absl::StatusOr<Philox4x32> gen = gen_.Reserve(ctx, static_cast<uint64_t>(max_attempts_));
    OP_REQUIRES_OK(ctx, gen.status());

    const Tensor& image_size = ctx->input(0);
    OP_REQUIRES(ctx, image_size.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat("image_size must be 1-dimensional",
                                                        image_size.shape().DebugString())));
    OP_REQUIRES(ctx, image_size.dim_size(0) == 3,
                absl::InvalidArgumentError(absl::StrCat("image_size must contain 3 elements",
                                                        image_size.shape().DebugString())));
    // Negative sizes read as huge unsigned values and fail the bound.
    const uint64_t height_raw = static_cast<uint64_t>(image_size.flat<T>()[0]);
    const uint64_t width_raw = static_cast<uint64_t>(image_size.flat<T>()[1]);
    constexpr uint64_t kIntMax = std::numeric_limits<int32_t>::max();
    OP_REQUIRES(ctx, height_raw < kIntMax,
                absl::InvalidArgumentError("image height cannot be >= int32 max"));
    OP_REQUIRES(ctx, width_raw < kIntMax,
                absl::InvalidArgumentError("image width cannot be >= int32 max"));
    const int height = static_cast<int>(height_raw), width = static_cast<int>(width_raw);

    const Tensor& boxes_t = ctx->input(1);
    OP_REQUIRES(ctx, boxes_t.dims() == 3,
                absl::InvalidArgumentError(
                    absl::StrCat("input boxes must be 3-dimensional [batch, num_boxes, coords]: ",
                                 boxes_t.shape().DebugString())));
    OP_REQUIRES(
        ctx, boxes_t.dim_size(2) == 4,
        absl::InvalidArgumentError(absl::StrCat(
            "bounding boxes must have shape [4] or [*, 4], got ", boxes_t.shape().DebugString())));
    float min_covered = min_object_covered_;
    if (num_inputs() >= 3) {
      const Tensor& t = ctx->input(2);
      OP_REQUIRES(ctx, t.dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "min_object_covered must be 0-D, got shape ", t.shape().DebugString())));
      min_covered = t.flat<float>()[0];
      OP_REQUIRES(ctx, min_covered >= 0,
                  absl::InvalidArgumentError(
                      absl::StrCat("Min object covered must be non-negative: ", min_covered)));
    }

    // Boxes [y_min, x_min, y_max, x_max] in [0, 1], truncated to pixels.
    std::vector<Rect> boxes;
    const absl::Span<const float> coords = boxes_t.flat<float>();
    for (size_t b = 0; b + 4 <= coords.size(); b += 4) {
      for (size_t i = b; i < b + 4; ++i) {
        OP_REQUIRES(ctx, coords[i] >= 0.0f && coords[i] <= 1.0f,
                    absl::InvalidArgumentError(absl::StrCat(
                        "All bounding box coordinates must be in [0.0, 1.0]: ", coords[i])));
      }
      boxes.push_back(
          Rect{static_cast<int>(coords[b + 1] * width), static_cast<int>(coords[b] * height),
               static_cast<int>(coords[b + 3] * width), static_cast<int>(coords[b + 2] * height)});
    }
    const Rect image{0, 0, width, height};
    if (boxes.empty()) {
      OP_REQUIRES(ctx, use_image_,
                  absl::InvalidArgumentError(
                      "No bounding boxes provided as input. One must enable "
                      "use_image_if_no_bounding_boxes if you wish to not provide any "
                      "bounding boxes."));
      boxes.push_back(image);
    }

    WordStream words(*gen, 0);
    const float aspect_lo = aspect_range_[0], aspect_span = aspect_range_[1] - aspect_range_[0];
    Rect crop;
    bool found = false;
    for (int i = 0; i < max_attempts_ && !found; ++i) {
      const float aspect = words.RandFloat() * aspect_span + aspect_lo;
      found = RandomCrop(width, height, area_range_[0], area_range_[1], aspect, &words, &crop) &&
              CoversEnough(crop, min_covered, boxes);
    }
    if (!found) crop = image;

    const int crop_w = crop.max_x - crop.min_x, crop_h = crop.max_y - crop.min_y;
    OP_REQUIRES(ctx, width >= crop_w + crop.min_x,
                absl::FailedPreconditionError(
                    absl::StrCat("width must be > target_width + offset_width: ", width, "vs ",
                                 crop_w, " + ", crop.min_x)));
    OP_REQUIRES(ctx, height >= crop_h + crop.min_y,
                absl::FailedPreconditionError(
                    absl::StrCat("height must be >= target_height: height = ", height, "vs ",
                                 crop_h, " + ", crop.min_y)));
    Tensor* begin = nullptr;
    Tensor* size = nullptr;
    Tensor* bbox = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({3}), &begin));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({3}), &size));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({1, 1, 4}), &bbox));
    // Slice arguments over [height, width, channels]: every channel.
    absl::Span<T> b = begin->flat<T>(), s = size->flat<T>();
    b[0] = static_cast<T>(crop.min_y);
    b[1] = static_cast<T>(crop.min_x);
    b[2] = static_cast<T>(0);
    s[0] = static_cast<T>(crop_h);
    s[1] = static_cast<T>(crop_w);
    s[2] = static_cast<T>(-1);
    absl::Span<float> o = bbox->flat<float>();
    o[0] = static_cast<float>(crop.min_y) / static_cast<float>(height);
    o[1] = static_cast<float>(crop.min_x) / static_cast<float>(width);
    o[2] = static_cast<float>(crop.max_y) / static_cast<float>(height);
    o[3] = static_cast<float>(crop.max_x) / static_cast<float>(width);
  }

 private:
  NodeGenerator gen_;
  float min_object_covered_ = 0;
  bool use_image_ = false;
  std::vector<float> aspect_range_, area_range_;
  int32_t max_attempts_ = 0;
};

// ---------------------------------------------------------------------------

#define GR_REGISTER_MULTINOMIAL(T)                              \
  REGISTER_KERNEL(KernelDefBuilder("Multinomial")               \
                      .Device(kDeviceCpu)                       \
                      .TypeConstraint<T>("T")                   \
                      .TypeConstraint<int32_t>("output_dtype"), \
                  MultinomialOp<T, int32_t>);                   \
  REGISTER_KERNEL(KernelDefBuilder("Multinomial")               \
                      .Device(kDeviceCpu)                       \
                      .TypeConstraint<T>("T")                   \
                      .TypeConstraint<int64_t>("output_dtype"), \
                  MultinomialOp<T, int64_t>)
GR_REGISTER_MULTINOMIAL(half);
GR_REGISTER_MULTINOMIAL(bfloat16);
GR_REGISTER_MULTINOMIAL(float);
GR_REGISTER_MULTINOMIAL(double);
#undef GR_REGISTER_MULTINOMIAL

REGISTER_KERNEL(KernelDefBuilder("RandomShuffle")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", array_kernels::AllTensorTypes()),
                RandomShuffleOp);

#define GR_REGISTER_BOUNDING_BOX(T)                                                               \
  REGISTER_KERNEL(                                                                                \
      KernelDefBuilder("SampleDistortedBoundingBox").Device(kDeviceCpu).TypeConstraint<T>("T"),   \
      SampleDistortedBoundingBoxOp<T>);                                                           \
  REGISTER_KERNEL(                                                                                \
      KernelDefBuilder("SampleDistortedBoundingBoxV2").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      SampleDistortedBoundingBoxOp<T>)
GR_REGISTER_BOUNDING_BOX(uint8_t);
GR_REGISTER_BOUNDING_BOX(int8_t);
GR_REGISTER_BOUNDING_BOX(int16_t);
GR_REGISTER_BOUNDING_BOX(int32_t);
GR_REGISTER_BOUNDING_BOX(int64_t);
#undef GR_REGISTER_BOUNDING_BOX

}  // namespace
}  // namespace graphrun
