#include "kernels/cpu/small_conv.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/bias_activation.h"
#include "kernels/eigen.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GRAPHRUN_SMALL_CONV 1
#endif

namespace graphrun {
namespace cpu {

#ifdef GRAPHRUN_SMALL_CONV
namespace {

// kPixels output pixels side by side from a band of input rows padded with
// zeros (every tap inside it): `x` is the first pixel's window corner in
// the band, `row_step` one band row, `pixel_step` the next pixel's corner;
// filter rows [kr_lo, kr_hi) (the others meet only padding); kNv vectors
// of 8 output channels. A filter row's taps (filter column, input channel)
// are consecutive in the band and in the filter, one loop of fc * depth.
//
// Every register array is indexed by constants only (fold expressions over
// index sequences), so that the compiler keeps it in registers: indexed by
// loop counters, even unrolled ones, the accumulators went to the stack on
// every step.
template <size_t... kV>
inline void LoadFilter(const float* w, __m256* wv, std::index_sequence<kV...>) {
  ((wv[kV] = _mm256_loadu_ps(w + 8 * kV)), ...);
}

template <size_t... kP>
inline void LoadInputs(const float* x, int64_t pixel_step, __m256* xv,
                       std::index_sequence<kP...>) {
  ((xv[kP] = _mm256_broadcast_ss(x + kP * pixel_step)), ...);
}

// What is applied to the accumulators before they are stored: a bias per
// output channel (or none) and Relu or Relu6 (as std::max and std::min: a
// NaN stays NaN). Other activations run after, on the stored row.
struct InRegister {
  const float* bias = nullptr;
  bool relu = false, relu6 = false;
};

template <int kNv>
inline __m256 Finish(const InRegister& e, __m256 v, int vector) {
  if (e.bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(e.bias + 8 * vector));
  // max(0, v) is v when v is NaN; min(6, v) likewise.
  if (e.relu || e.relu6) v = _mm256_max_ps(_mm256_setzero_ps(), v);
  if (e.relu6) v = _mm256_min_ps(_mm256_set1_ps(6.0f), v);
  return v;
}

template <int kNv, int kPixels, size_t... kI>
inline void Pixels(const ConvGeometry& g, const float* x, int64_t row_step,
                   int64_t pixel_step, const float* filter, int64_t kr_lo, int64_t kr_hi,
                   const InRegister& e, float* out, std::index_sequence<kI...>) {
  __m256 acc[kPixels * kNv];
  ((acc[kI] = _mm256_setzero_ps()), ...);
  const int64_t taps = g.filter_cols * g.in_depth;
  const int64_t out_depth = g.out_depth;
  for (int64_t kr = kr_lo; kr < kr_hi; ++kr) {
    const float* xr = x + kr * row_step;
    const float* wr = filter + kr * taps * out_depth;
    for (int64_t j = 0; j < taps; ++j) {
      __m256 wv[kNv];
      __m256 xv[kPixels];
      LoadFilter(wr + j * out_depth, wv, std::make_index_sequence<kNv>());
      LoadInputs(xr + j, pixel_step, xv, std::make_index_sequence<kPixels>());
      ((acc[kI] = _mm256_fmadd_ps(xv[kI / kNv], wv[kI % kNv], acc[kI])), ...);
    }
  }
  (_mm256_storeu_ps(out + (kI / kNv) * out_depth + 8 * (kI % kNv),
                    Finish<kNv>(e, acc[kI], kI % kNv)),
   ...);
}

// Output rows [begin, end) (batch-major).
template <int kNv>
void Rows(const ConvGeometry& g, const float* in, const float* filter, float* out,
          int64_t begin, int64_t end, const BiasActivation* epilogue, const float* bias) {
  // Pixels side by side hide the multiply-adds' latency: 8 independent
  // accumulators (or 9), and the filter vectors, in the 16 registers.
  constexpr int kGroup = kNv == 1 ? 8 : kNv == 2 ? 4 : kNv == 3 ? 3 : 2;
  const int64_t depth = g.in_depth;
  const int64_t image = g.in_rows * g.in_cols * depth;
  // The band: the window's input rows, each padded with zeros to the
  // columns the windows reach ([-pad_left, width - pad_left)).
  const int64_t width =
      std::max(g.in_cols + g.pad_left, (g.out_cols - 1) * g.stride_cols + g.filter_cols);
  const int64_t row_step = width * depth;
  std::vector<float> band(g.filter_rows * row_step, 0.0f);
  // Bias, Relu and Relu6 in registers; another activation after each row.
  InRegister in_register;
  bool after = false;
  if (epilogue != nullptr) {
    in_register.bias = bias;
    in_register.relu = epilogue->activation == FusedActivation::kRelu;
    in_register.relu6 = epilogue->activation == FusedActivation::kRelu6;
    if (epilogue->activation != FusedActivation::kNone && !in_register.relu &&
        !in_register.relu6) {
      in_register.bias = nullptr;
      after = true;
    }
  }
  for (int64_t r = begin; r < end; ++r) {
    const int64_t b = r / g.out_rows, orow = r % g.out_rows;
    const int64_t ir0 = orow * g.stride_rows - g.pad_top;
    const int64_t kr_lo = std::max<int64_t>(0, -ir0);
    const int64_t kr_hi = std::min<int64_t>(g.filter_rows, g.in_rows - ir0);
    for (int64_t kr = kr_lo; kr < kr_hi; ++kr) {
      std::memcpy(band.data() + kr * row_step + g.pad_left * depth,
                  in + b * image + (ir0 + kr) * g.in_cols * depth,
                  g.in_cols * depth * sizeof(float));
    }
    float* out_row = out + r * g.out_cols * g.out_depth;
    const int64_t pixel_step = g.stride_cols * depth;
    int64_t ocol = 0;
    auto group = [&](auto pixels) {
      constexpr int kPixels = decltype(pixels)::value;
      for (; ocol + kPixels <= g.out_cols; ocol += kPixels) {
        Pixels<kNv, kPixels>(g, band.data() + ocol * pixel_step, row_step, pixel_step, filter,
                             kr_lo, kr_hi, in_register, out_row + ocol * g.out_depth,
                             std::make_index_sequence<kPixels * kNv>());
      }
    };
    group(std::integral_constant<int, kGroup>());
    if constexpr (kGroup > 4) group(std::integral_constant<int, 4>());
    if constexpr (kGroup > 2) group(std::integral_constant<int, 2>());
    group(std::integral_constant<int, 1>());
    if (after) {
      epilogue->ApplyBlock(bias, g.out_depth, out, r * g.out_cols, g.out_cols, 0, g.out_depth);
    }
  }
}

}  // namespace
#endif  // GRAPHRUN_SMALL_CONV

bool SmallConvFits(const ConvGeometry& g) {
#ifdef GRAPHRUN_SMALL_CONV
  return g.multiplier == 0 && g.out_depth % 8 == 0 && g.out_depth >= 8 && g.out_depth <= 32 &&
         g.in_depth >= 1 && g.in_depth <= 4 && g.filter_rows >= 1 && g.filter_cols >= 1 &&
         g.stride_rows >= 1 && g.stride_cols >= 1;
#else
  (void)g;
  return false;
#endif
}

void SmallConv(const Eigen::ThreadPoolDevice* device, const ConvGeometry& g,
               const float* in, const float* filter, float* out,
               const BiasActivation* epilogue, const float* bias) {
#ifdef GRAPHRUN_SMALL_CONV
  auto run = [&](Eigen::Index begin, Eigen::Index end) {
    switch (g.out_depth / 8) {
      case 1: Rows<1>(g, in, filter, out, begin, end, epilogue, bias); break;
      case 2: Rows<2>(g, in, filter, out, begin, end, epilogue, bias); break;
      case 3: Rows<3>(g, in, filter, out, begin, end, epilogue, bias); break;
      default: Rows<4>(g, in, filter, out, begin, end, epilogue, bias); break;
    }
  };
  const Eigen::Index rows = g.batch * g.out_rows;
  if (device == nullptr) {
    run(0, rows);
    return;
  }
  // Per output row: a vector multiply-add per tap, input channel and
  // 8 output channels of each pixel.
  const double fmas = static_cast<double>(g.out_cols) * g.filter_rows * g.filter_cols *
                      g.in_depth * (g.out_depth / 8);
  device->parallelFor(rows,
                      Eigen::TensorOpCost(static_cast<double>(g.filter_rows * g.in_cols *
                                                              g.in_depth * sizeof(float)),
                                          static_cast<double>(g.out_cols * g.out_depth *
                                                              sizeof(float)),
                                          fmas),
                      run);
#else
  (void)device, (void)g, (void)in, (void)filter, (void)out, (void)epilogue, (void)bias;
#endif
}

}  // namespace cpu
}  // namespace graphrun
