#include "kernels/cpu/narrow_conv.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cpu/bias_activation.h"
#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace graphrun {
namespace cpu {

bool NarrowConvFromEnv() {
  const char* v = std::getenv("GRAPHRUN_NARROW_CONV");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

#if defined(__AVX512F__)

bool NarrowConvComputes(const NarrowConvGeometry& g) {
  const int64_t l = g.out_depth;
  return g.in_depth >= 1 && g.in_depth <= 4 && (l == 4 || l == 8 || l == 16) &&
         g.filter_cols >= 1 && g.filter_cols <= 7 && g.filter_rows >= 1 && g.filter_rows <= 11 &&
         g.stride_rows >= 1 && g.stride_rows <= 4 && g.stride_cols >= 1 && g.stride_cols <= 4 &&
         g.pad_top >= 0 && g.pad_top < g.filter_rows && g.pad_left >= 0 &&
         g.pad_left < g.filter_cols && g.batch > 0 && g.out_rows > 0 && g.out_cols > 0 &&
         g.in_rows > 0 && g.in_cols > 0;
}

bool NarrowConvApplies(const NarrowConvGeometry& g) {
  return NarrowConvComputes(g) && g.in_depth == 1 && g.out_depth <= 8;
}

namespace {

constexpr int kLanes = 16;

// The laid-out input rows of one image, kept in a ring of `ring_rows`
// rows (row ih in ring slot ih % ring_rows): slot j of a row, channel ci,
// lanes [p * L, p * L + L) hold padded column j + p * stride (zero outside
// the input).
class LaidOutRows {
 public:
  LaidOutRows(const NarrowConvGeometry& g, int64_t ring_rows)
      : g_(g),
        pixels_per_vector_(kLanes / g.out_depth),
        groups_((g.out_cols + pixels_per_vector_ - 1) / pixels_per_vector_),
        slots_((groups_ - 1) * pixels_per_vector_ * g.stride_cols + g.filter_cols),
        row_floats_(g.in_depth * slots_ * kLanes),
        ring_rows_(ring_rows),
        ring_(static_cast<size_t>(ring_rows * row_floats_ / kLanes)),
        plane_cols_(std::max(slots_ + kLanes, g.pad_left + g.in_cols)),
        plane_(static_cast<size_t>(g.in_depth * g.in_rows * plane_cols_), 0.0f),
        tag_(static_cast<size_t>(ring_rows), -1) {
    // Lane k of slot j reads padded column j + (k / out_depth) * stride.
    alignas(64) int32_t index[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      index[k] = static_cast<int32_t>((k / g.out_depth) * g.stride_cols);
    }
    index_ = _mm512_load_si512(index);
  }

  int64_t groups() const { return groups_; }
  int64_t pixels_per_vector() const { return pixels_per_vector_; }
  // Floats from one group's first slot to the next group's.
  int64_t group_step() const { return pixels_per_vector_ * g_.stride_cols * kLanes; }
  int64_t channel_floats() const { return slots_ * kLanes; }
  static int64_t RowBytes(const NarrowConvGeometry& g) {
    const int64_t p = kLanes / g.out_depth;
    const int64_t groups = (g.out_cols + p - 1) / p;
    return g.in_depth * ((groups - 1) * p * g.stride_cols + g.filter_cols) * kLanes * 4;
  }
  // Row ih as Row last laid it out.
  const float* At(int64_t ih) const {
    return reinterpret_cast<const float*>(ring_.data()) + (ih % ring_rows_) * row_floats_;
  }

  // Copies `image` ([in_rows, in_cols, in_depth]) into the zero-padded
  // planes the rows are laid out from (written well before they are read
  // back as vectors, which a store just before would stall).
  void NewImage(const float* image) {
    std::fill(tag_.begin(), tag_.end(), -1);
    for (int64_t ci = 0; ci < g_.in_depth; ++ci) {
      for (int64_t r = 0; r < g_.in_rows; ++r) {
        float* dst = plane_.data() + (ci * g_.in_rows + r) * plane_cols_ + g_.pad_left;
        const float* src = image + r * g_.in_cols * g_.in_depth + ci;
        if (g_.in_depth == 1) {
          std::memcpy(dst, src, g_.in_cols * sizeof(float));
        } else {
          for (int64_t c = 0; c < g_.in_cols; ++c) dst[c] = src[c * g_.in_depth];
        }
      }
    }
  }

  // Input row `ih` (valid), laid out unless it is already (slot: ih
  // modulo ring_rows, which the caller steps).
  const float* Row(int64_t ih, int64_t slot) {
    float* dst = reinterpret_cast<float*>(ring_.data()) + slot * row_floats_;
    if (tag_[slot] == ih) return dst;
    tag_[slot] = ih;
    const __m512i index = index_;
    const int64_t slots = slots_;
    for (int64_t ci = 0; ci < g_.in_depth; ++ci) {
      const float* row = plane_.data() + (ci * g_.in_rows + ih) * plane_cols_;
      float* out = dst + ci * channel_floats();
      // Lane k of slot j reads padded column j + index[k] (within 12).
      for (int64_t j = 0; j < slots; ++j) {
        _mm512_store_ps(out + j * kLanes, _mm512_permutexvar_ps(index, _mm512_loadu_ps(row + j)));
      }
    }
    return dst;
  }

 private:
  const NarrowConvGeometry& g_;
  const int64_t pixels_per_vector_, groups_, slots_, row_floats_, ring_rows_;
  std::vector<__m512> ring_;  // 64-byte slots, aligned
  const int64_t plane_cols_;
  std::vector<float> plane_;  // [in_depth][in_rows][plane_cols_], zero-padded
  std::vector<int64_t> tag_;
  __m512i index_;
};

// Lanes of group `group` that are real output pixels.
__mmask16 GroupMask(const NarrowConvGeometry& g, int64_t pixels_per_vector, int64_t group) {
  const int64_t pixels = std::min(pixels_per_vector, g.out_cols - group * pixels_per_vector);
  const int64_t lanes = pixels * g.out_depth;
  return lanes >= kLanes ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << lanes) - 1);
}

// What the forward kernel adds and clamps in registers: the bias (each
// pixel's out_depth values repeated) and Relu or Relu6.
struct Inline {
  __m512 bias = _mm512_setzero_ps();
  bool clamp_low = false;
  bool clamp_high = false;  // at 6
};

// B groups of output row `oh` from group g0: rows[kh] is the laid-out
// input row the filter's row kh meets (null outside the input); weights
// is [kh][kw][ci][16], each tap's out_depth values repeated per pixel.
template <int B>
void ForwardGroups(const NarrowConvGeometry& g, const LaidOutRows& lay, const float* const* rows,
                   const float* weights, const Inline& fused, int64_t g0, float* out_row) {
  __m512 acc[B];
  #pragma GCC unroll 16
  for (int b = 0; b < B; ++b) acc[b] = fused.bias;
  const int64_t step = lay.group_step();
  for (int64_t kh = 0; kh < g.filter_rows; ++kh) {
    if (rows[kh] == nullptr) continue;
    for (int64_t ci = 0; ci < g.in_depth; ++ci) {
      const float* e = rows[kh] + ci * lay.channel_floats() + g0 * step;
      const float* w = weights + (kh * g.filter_cols * g.in_depth + ci) * kLanes;
      for (int64_t kw = 0; kw < g.filter_cols; ++kw) {
        const __m512 wv = _mm512_loadu_ps(w + kw * g.in_depth * kLanes);
        #pragma GCC unroll 16
        for (int b = 0; b < B; ++b) {
          acc[b] = _mm512_fmadd_ps(_mm512_load_ps(e + b * step + kw * kLanes), wv, acc[b]);
        }
      }
    }
  }
  #pragma GCC unroll 16
  for (int b = 0; b < B; ++b) {
    // (max and min return their second operand when either is NaN: a NaN
    // stays NaN through Relu, as TensorFlow's does.)
    if (fused.clamp_low) acc[b] = _mm512_max_ps(_mm512_setzero_ps(), acc[b]);
    if (fused.clamp_high) acc[b] = _mm512_min_ps(_mm512_set1_ps(6.0f), acc[b]);
    _mm512_mask_storeu_ps(out_row + (g0 + b) * kLanes,
                          GroupMask(g, lay.pixels_per_vector(), g0 + b), acc[b]);
  }
}

using ForwardFn = void (*)(const NarrowConvGeometry&, const LaidOutRows&, const float* const*,
                           const float*, const Inline&, int64_t, float*);

// Up to 16 groups at once: a row's groups as independent accumulators.
ForwardFn ForwardFor(int64_t groups) {
  static constexpr ForwardFn kFns[] = {
      ForwardGroups<1>,  ForwardGroups<2>,  ForwardGroups<3>,  ForwardGroups<4>,
      ForwardGroups<5>,  ForwardGroups<6>,  ForwardGroups<7>,  ForwardGroups<8>,
      ForwardGroups<9>,  ForwardGroups<10>, ForwardGroups<11>, ForwardGroups<12>,
      ForwardGroups<13>, ForwardGroups<14>, ForwardGroups<15>, ForwardGroups<16>};
  return kFns[std::min<int64_t>(groups, 16) - 1];
}

// The laid-out rows the filter meets at output row oh (null where a
// filter row falls in the padding).
void RowsFor(const NarrowConvGeometry& g, LaidOutRows* lay, int64_t oh,
             const float** rows) {
  const int64_t first = oh * g.stride_rows - g.pad_top;
  int64_t slot = ((first % g.filter_rows) + g.filter_rows) % g.filter_rows;
  for (int64_t kh = 0; kh < g.filter_rows; ++kh) {
    const int64_t ih = first + kh;
    rows[kh] = (ih >= 0 && ih < g.in_rows) ? lay->Row(ih, slot) : nullptr;
    if (++slot == g.filter_rows) slot = 0;
  }
}

// Pieces of a batch: a few per thread, so a thread that finishes early
// takes another.
int Pieces(const Eigen::ThreadPoolDevice* pool, int64_t batch) {
  if (pool == nullptr) return 1;
  return static_cast<int>(std::min<int64_t>(batch, 4 * pool->numThreads()));
}

// For filter row kh and input channel ci: acc[kw] += laid-out slot
// (group * step + kw) of the row output row oh meets, times the output
// gradient's group vector, over every group of output rows [oh0, oh1)
// (their input rows laid out). Two accumulators a tap, for even and odd
// groups, to keep twice as many multiply-adds in flight.
template <int KW>
void GradRows(const NarrowConvGeometry& g, const LaidOutRows& lay, int64_t kh, int64_t ci,
              int64_t oh0, int64_t oh1, const float* dy_image, float* acc) {
  __m512 a0[KW], a1[KW];
  #pragma GCC unroll 8
  for (int k = 0; k < KW; ++k) {
    a0[k] = _mm512_loadu_ps(acc + k * kLanes);
    a1[k] = _mm512_setzero_ps();
  }
  const int64_t step = lay.group_step();
  const int64_t groups = lay.groups();
  // Groups whose every lane is an output pixel, then the rest masked.
  const int64_t full = g.out_cols / lay.pixels_per_vector();
  const __mmask16 last_mask = GroupMask(g, lay.pixels_per_vector(), groups - 1);
  const int64_t row_out = g.out_cols * g.out_depth;
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const int64_t ih = oh * g.stride_rows - g.pad_top + kh;
    if (ih < 0 || ih >= g.in_rows) continue;
    const float* e = lay.At(ih) + ci * lay.channel_floats();
    const float* dy = dy_image + oh * row_out;
    int64_t group = 0;
    for (; group + 1 < full; group += 2) {
      const __m512 d0 = _mm512_loadu_ps(dy + group * kLanes);
      const __m512 d1 = _mm512_loadu_ps(dy + (group + 1) * kLanes);
      const float* e0 = e + group * step;
      #pragma GCC unroll 8
      for (int k = 0; k < KW; ++k) {
        a0[k] = _mm512_fmadd_ps(_mm512_load_ps(e0 + k * kLanes), d0, a0[k]);
        a1[k] = _mm512_fmadd_ps(_mm512_load_ps(e0 + step + k * kLanes), d1, a1[k]);
      }
    }
    for (; group < groups; ++group) {
      // Lanes past the output masked on both sides (see GradImage).
      const __mmask16 m = group < full ? static_cast<__mmask16>(0xFFFF) : last_mask;
      const __m512 d = _mm512_maskz_loadu_ps(m, dy + group * kLanes);
      #pragma GCC unroll 8
      for (int k = 0; k < KW; ++k) {
        a0[k] = _mm512_fmadd_ps(_mm512_maskz_load_ps(m, e + group * step + k * kLanes), d, a0[k]);
      }
    }
  }
  #pragma GCC unroll 8
  for (int k = 0; k < KW; ++k) _mm512_storeu_ps(acc + k * kLanes, _mm512_add_ps(a0[k], a1[k]));
}

// A square filter of at most 5x5 whole, for one input channel over one
// image: acc[kh][kw] += laid-out slot (group * step + kw) of the row that
// filter row kh meets, times the output gradient's group vector. All K * K
// accumulators stay in registers for the whole image, and each output row
// reads only its K laid-out rows and its gradient row, from L1. (A row in
// the padding reads `zeros`.)
template <int K>
void GradImage(const NarrowConvGeometry& g, LaidOutRows* lay, int64_t ci, const float* dy_image,
               const float* zeros, float* acc) {
  __m512 a[K * K];
  #pragma GCC unroll 32
  for (int kh = 0; kh < K; ++kh) {
    #pragma GCC unroll 8
    for (int kw = 0; kw < K; ++kw) {
      a[kh * K + kw] = _mm512_loadu_ps(acc + ((kh * g.in_depth + ci) * K + kw) * kLanes);
    }
  }
  const int64_t step = lay->group_step();
  const int64_t groups = lay->groups();
  const int64_t full = g.out_cols / lay->pixels_per_vector();
  const __mmask16 last_mask = GroupMask(g, lay->pixels_per_vector(), groups - 1);
  const int64_t row_out = g.out_cols * g.out_depth;
  const float* rows[K];
  const float* e[K];
  for (int64_t oh = 0; oh < g.out_rows; ++oh) {
    RowsFor(g, lay, oh, rows);
    #pragma GCC unroll 8
    for (int kh = 0; kh < K; ++kh) {
      e[kh] = rows[kh] != nullptr ? rows[kh] + ci * lay->channel_floats() : zeros;
    }
    const float* dy = dy_image + oh * row_out;
    for (int64_t group = 0; group < full; ++group) {
      const __m512 d = _mm512_loadu_ps(dy + group * kLanes);
      const int64_t off = group * step;
      #pragma GCC unroll 8
      for (int kh = 0; kh < K; ++kh) {
        #pragma GCC unroll 8
        for (int kw = 0; kw < K; ++kw) {
          a[kh * K + kw] =
              _mm512_fmadd_ps(_mm512_load_ps(e[kh] + off + kw * kLanes), d, a[kh * K + kw]);
        }
      }
    }
    if (full < groups) {
      // The last group's lanes past the output read input columns no
      // output reads: masked to zero on both sides, so an Inf there adds
      // nothing (0 * Inf would be NaN).
      const __m512 d = _mm512_maskz_loadu_ps(last_mask, dy + full * kLanes);
      const int64_t off = full * step;
      #pragma GCC unroll 8
      for (int kh = 0; kh < K; ++kh) {
        #pragma GCC unroll 8
        for (int kw = 0; kw < K; ++kw) {
          a[kh * K + kw] = _mm512_fmadd_ps(
              _mm512_maskz_load_ps(last_mask, e[kh] + off + kw * kLanes), d, a[kh * K + kw]);
        }
      }
    }
  }
  #pragma GCC unroll 8
  for (int kh = 0; kh < K; ++kh) {
    #pragma GCC unroll 8
    for (int kw = 0; kw < K; ++kw) {
      _mm512_storeu_ps(acc + ((kh * g.in_depth + ci) * K + kw) * kLanes, a[kh * K + kw]);
    }
  }
}

using GradImageFn = void (*)(const NarrowConvGeometry&, LaidOutRows*, int64_t, const float*,
                             const float*, float*);

// The square kernels, or null for other filters.
GradImageFn GradImageFor(const NarrowConvGeometry& g) {
  static constexpr GradImageFn kFns[] = {GradImage<1>, GradImage<2>, GradImage<3>, GradImage<4>,
                                         GradImage<5>};
  if (g.filter_rows != g.filter_cols || g.filter_rows > 5) return nullptr;
  return kFns[g.filter_rows - 1];
}

using GradRowsFn = void (*)(const NarrowConvGeometry&, const LaidOutRows&, int64_t, int64_t,
                            int64_t, int64_t, const float*, float*);

GradRowsFn GradRowsFor(int64_t kw) {
  static constexpr GradRowsFn kFns[] = {GradRows<1>, GradRows<2>, GradRows<3>, GradRows<4>,
                                        GradRows<5>, GradRows<6>, GradRows<7>};
  return kFns[kw - 1];
}

}  // namespace

void NarrowConvForward(const Eigen::ThreadPoolDevice* pool, const NarrowConvGeometry& g,
                       const float* in, const float* filter, const BiasActivation* epilogue,
                       const float* bias, float* out) {
  const int64_t l = g.out_depth;
  const int64_t p_count = kLanes / l;
  const int64_t taps = g.filter_rows * g.filter_cols * g.in_depth;
  std::vector<float> weights(static_cast<size_t>(taps * kLanes));
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t p = 0; p < p_count; ++p) {
      std::memcpy(&weights[t * kLanes + p * l], filter + t * l, l * sizeof(float));
    }
  }
  Inline fused;
  bool apply_after = false;
  if (epilogue != nullptr) {
    const FusedActivation a = epilogue->activation;
    if (a == FusedActivation::kNone || a == FusedActivation::kRelu ||
        a == FusedActivation::kRelu6) {
      alignas(64) float b[kLanes];
      for (int64_t k = 0; k < kLanes; ++k) b[k] = bias != nullptr ? bias[k % l] : 0.0f;
      fused.bias = _mm512_load_ps(b);
      fused.clamp_low = a != FusedActivation::kNone;
      fused.clamp_high = a == FusedActivation::kRelu6;
    } else {
      apply_after = true;
    }
  }
  const int64_t image_in = g.in_rows * g.in_cols * g.in_depth;
  const int64_t row_out = g.out_cols * l;
  RunPieceRanges(pool, g.batch, Pieces(pool, g.batch), [&](int, int64_t first, int64_t last) {
    LaidOutRows lay(g, g.filter_rows);
    std::vector<const float*> rows(static_cast<size_t>(g.filter_rows));
    for (int64_t b = first; b < last; ++b) {
      lay.NewImage(in + b * image_in);
      for (int64_t oh = 0; oh < g.out_rows; ++oh) {
        RowsFor(g, &lay, oh, rows.data());
        float* out_row = out + (b * g.out_rows + oh) * row_out;
        for (int64_t g0 = 0; g0 < lay.groups(); g0 += 16) {
          ForwardFor(lay.groups() - g0)(g, lay, rows.data(), weights.data(), fused, g0, out_row);
        }
        if (apply_after) epilogue->ApplyBlock(bias, l, out_row, 0, g.out_cols, 0, l);
      }
    }
  });
}

void NarrowConvFilterGrad(const Eigen::ThreadPoolDevice* pool, const NarrowConvGeometry& g,
                          const float* in, const float* out_grad, float* filter_grad) {
  const int64_t l = g.out_depth;
  const int64_t taps = g.filter_rows * g.filter_cols * g.in_depth;
  const int n = Pieces(pool, g.batch);
  // Per piece, [kh][ci][kw][16] sums (lanes of all pixels of a vector).
  std::vector<float> sums(static_cast<size_t>(n * taps * kLanes), 0.0f);
  const int64_t image_in = g.in_rows * g.in_cols * g.in_depth;
  const int64_t row_out = g.out_cols * l;
  const GradRowsFn grad_rows = GradRowsFor(g.filter_cols);
  // Output rows are taken in chunks whose input rows, laid out, fit in
  // about 256 KiB (all of a small image's at once).
  const int64_t ring_rows = std::max(
      g.filter_rows, std::min(g.in_rows, (int64_t{256} << 10) / LaidOutRows::RowBytes(g)));
  const int64_t chunk = std::max<int64_t>(1, (ring_rows - g.filter_rows) / g.stride_rows + 1);
  const GradImageFn grad_image = GradImageFor(g);
  RunPieceRanges(pool, g.batch, Pieces(pool, g.batch), [&](int piece, int64_t first, int64_t last) {
    float* acc = sums.data() + piece * taps * kLanes;
    if (grad_image != nullptr) {
      LaidOutRows lay(g, g.filter_rows);
      std::vector<__m512> zeros(static_cast<size_t>(lay.channel_floats() / kLanes),
                                _mm512_setzero_ps());
      for (int64_t b = first; b < last; ++b) {
        lay.NewImage(in + b * image_in);
        for (int64_t ci = 0; ci < g.in_depth; ++ci) {
          grad_image(g, &lay, ci, out_grad + b * g.out_rows * row_out,
                     reinterpret_cast<const float*>(zeros.data()), acc);
        }
      }
      return;
    }
    LaidOutRows lay(g, ring_rows);
    for (int64_t b = first; b < last; ++b) {
      lay.NewImage(in + b * image_in);
      for (int64_t oh0 = 0; oh0 < g.out_rows; oh0 += chunk) {
        const int64_t oh1 = std::min(g.out_rows, oh0 + chunk);
        const int64_t ih0 = std::max<int64_t>(0, oh0 * g.stride_rows - g.pad_top);
        const int64_t ih1 =
            std::min(g.in_rows, (oh1 - 1) * g.stride_rows - g.pad_top + g.filter_rows);
        for (int64_t ih = ih0; ih < ih1; ++ih) lay.Row(ih, ih % ring_rows);
        for (int64_t kh = 0; kh < g.filter_rows; ++kh) {
          for (int64_t ci = 0; ci < g.in_depth; ++ci) {
            grad_rows(g, lay, kh, ci, oh0, oh1, out_grad + b * g.out_rows * row_out,
                      acc + (kh * g.in_depth + ci) * g.filter_cols * kLanes);
          }
        }
      }
    }
  });
  // Fold the pixels of each vector and the pieces: HWIO.
  for (int64_t kh = 0; kh < g.filter_rows; ++kh) {
    for (int64_t kw = 0; kw < g.filter_cols; ++kw) {
      for (int64_t ci = 0; ci < g.in_depth; ++ci) {
        float* dst = filter_grad + ((kh * g.filter_cols + kw) * g.in_depth + ci) * l;
        std::fill(dst, dst + l, 0.0f);
        for (int piece = 0; piece < n; ++piece) {
          const float* s =
              sums.data() + piece * taps * kLanes +
              ((kh * g.in_depth + ci) * g.filter_cols + kw) * kLanes;
          for (int64_t lane = 0; lane < kLanes; ++lane) dst[lane % l] += s[lane];
        }
      }
    }
  }
}

#else  // no AVX-512: nothing applies, and nothing is called.

bool NarrowConvComputes(const NarrowConvGeometry&) { return false; }
bool NarrowConvApplies(const NarrowConvGeometry&) { return false; }
void NarrowConvForward(const Eigen::ThreadPoolDevice*, const NarrowConvGeometry&, const float*,
                       const float*, const BiasActivation*, const float*, float*) {
  std::abort();
}
void NarrowConvFilterGrad(const Eigen::ThreadPoolDevice*, const NarrowConvGeometry&,
                          const float*, const float*, float*) {
  std::abort();
}

#endif

}  // namespace cpu
}  // namespace graphrun
