#include "kernels/cpu/skinny_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

// 16 floats: one AVX-512 register where the machine has them, else what
// the compiler makes of it.
typedef float Vec __attribute__((vector_size(64)));
constexpr int kLanes = 16;

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }

// Weight bytes below which a piece is not worth a thread (about 10 us of
// reading from memory).
constexpr double kMinBytesPerPiece = 128 * 1024;

// Weight rows read side by side: each accumulator vector is loaded and
// stored once per this many rows, which stream along together.
constexpr int kRowsAtOnce = 8;

// acc_r[:] += sum over k in [k, k + KB) of x_r[k] * w[k, :] for R rows,
// KB weight rows at a time, the loops over r and k unrolled so that the
// weight vectors stay in registers.
template <int R, int KB>
void AccumulateBlock(const float* const* x, float* const* acc, const float* w, int64_t n,
                     int64_t k) {
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Vec wv[KB];
#pragma GCC unroll 8
    for (int t = 0; t < KB; ++t) wv[t] = Load(w + (k + t) * n + j);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      Vec s = Load(acc[r] + j);
#pragma GCC unroll 8
      for (int t = 0; t < KB; ++t) s += x[r][k + t] * wv[t];
      Store(acc[r] + j, s);
    }
  }
  for (; j < n; ++j) {
    for (int r = 0; r < R; ++r) {
      float sum = acc[r][j];
      for (int t = 0; t < KB; ++t) sum += x[r][k + t] * w[(k + t) * n + j];
      acc[r][j] = sum;
    }
  }
}

template <int R>
void AccumulateRows(const float* const* x, float* const* acc, const float* w, int64_t n,
                    int64_t k0, int64_t k1) {
  int64_t k = k0;
  for (; k + kRowsAtOnce <= k1; k += kRowsAtOnce) {
    AccumulateBlock<R, kRowsAtOnce>(x, acc, w, n, k);
  }
  for (; k < k1; ++k) AccumulateBlock<R, 1>(x, acc, w, n, k);
}

// acc[p] += sum over k in [k0, k1) of x_p[k] * w[k, :], for the rows of
// one tap; acc is [out_rows, n] with rows `ld` floats apart.
void Accumulate(const SkinnyTap& tap, int64_t n, int64_t ld, int64_t k0, int64_t k1,
                float* acc) {
  const float* x[kSkinnyMaxRows];
  float* out[kSkinnyMaxRows];
  const size_t count = tap.rows.size();
  for (size_t done = 0; done < count;) {
    const int r = static_cast<int>(std::min<size_t>(count - done, kSkinnyMaxRows));
    for (int i = 0; i < r; ++i) {
      x[i] = tap.rows[done + i].second;
      out[i] = acc + tap.rows[done + i].first * ld;
    }
    switch (r) {
      case 1: AccumulateRows<1>(x, out, tap.weights, n, k0, k1); break;
      case 2: AccumulateRows<2>(x, out, tap.weights, n, k0, k1); break;
      case 3: AccumulateRows<3>(x, out, tap.weights, n, k0, k1); break;
      case 4: AccumulateRows<4>(x, out, tap.weights, n, k0, k1); break;
      case 5: AccumulateRows<5>(x, out, tap.weights, n, k0, k1); break;
      case 6: AccumulateRows<6>(x, out, tap.weights, n, k0, k1); break;
      case 7: AccumulateRows<7>(x, out, tap.weights, n, k0, k1); break;
      default: AccumulateRows<8>(x, out, tap.weights, n, k0, k1); break;
    }
    done += r;
  }
}

// Rows [r0, r1) of the taps' weights stacked (tap after tap, `depth` rows
// each) into acc ([out_rows, n], rows `ld` apart), zeroed first.
void RunRange(absl::Span<const SkinnyTap* const> taps, int64_t depth, int64_t n, int64_t ld,
              int64_t out_rows, int64_t r0, int64_t r1, float* acc) {
  std::fill(acc, acc + out_rows * ld, 0.f);
  for (int64_t t = r0 / depth; t < static_cast<int64_t>(taps.size()) && t * depth < r1; ++t) {
    const int64_t k0 = std::max<int64_t>(r0 - t * depth, 0);
    const int64_t k1 = std::min<int64_t>(r1 - t * depth, depth);
    if (k0 < k1) Accumulate(*taps[t], n, ld, k0, k1, acc);
  }
}

// Accumulator rows a multiple of 4 KiB apart make each row's load wait for
// the store to the row before it (the core matches loads to pending stores
// by their low 12 address bits): one vector more per row keeps them apart.
int64_t PaddedStride(int64_t n) { return n + kLanes; }

}  // namespace

bool SkinnyWorthIt(int64_t rows, int64_t depth, int64_t n, int64_t taps) {
  return rows >= 1 && rows <= kSkinnyMaxRows && n >= kLanes &&
         static_cast<double>(depth) * n * taps * sizeof(float) >= kMinBytesPerPiece;
}

void SkinnyGemm(const Eigen::ThreadPoolDevice* device, absl::Span<const SkinnyTap> taps,
                int64_t depth, int64_t n, int64_t out_rows, float* out) {
  absl::InlinedVector<const SkinnyTap*, 16> used;
  for (const SkinnyTap& t : taps) {
    if (!t.rows.empty()) used.push_back(&t);
  }
  const int64_t total = static_cast<int64_t>(used.size()) * depth;
  if (total == 0) {
    std::fill(out, out + out_rows * n, 0.f);
    return;
  }
  const double bytes = static_cast<double>(total) * n * sizeof(float);
  int pieces = 1;
  if (device != nullptr) {
    pieces = std::max(1, std::min<int>(device->numThreads(),
                                       static_cast<int>(bytes / kMinBytesPerPiece)));
  }
  // Each piece sums into a buffer of the calling thread (which waits for
  // them all), kept across calls; the buffers are added up into `out`.
  const int64_t ld = PaddedStride(n);
  const int64_t piece_size = out_rows * ld;
  thread_local std::vector<float> partial;
  if (partial.size() < static_cast<size_t>(pieces * piece_size)) {
    partial.resize(pieces * piece_size);
  }
  // (Taken here: inside the pieces `partial` would name the running
  // thread's own buffer.)
  float* const scratch = partial.data();
  if (pieces == 1) {
    RunRange(used, depth, n, ld, out_rows, 0, total, scratch);
  } else {
    // Cut points on multiples of four rows.
    const int64_t step = (total / pieces + 3) / 4 * 4;
    RunPieces(*device, pieces, [&](int i) {
      const int64_t r0 = std::min(total, i * step);
      const int64_t r1 = i + 1 == pieces ? total : std::min(total, (i + 1) * step);
      RunRange(used, depth, n, ld, out_rows, r0, r1, scratch + i * piece_size);
    });
  }
  for (int64_t p = 0; p < out_rows; ++p) {
    float* o = out + p * n;
    std::copy(scratch + p * ld, scratch + p * ld + n, o);
    for (int i = 1; i < pieces; ++i) {
      const float* src = scratch + i * piece_size + p * ld;
      for (int64_t j = 0; j < n; ++j) o[j] += src[j];
    }
  }
  // Kept for the next call unless unusually large (a product with a very
  // wide output), which each thread would otherwise hold for good.
  constexpr size_t kKeptScratchFloats = size_t{4} << 20;
  if (partial.size() > kKeptScratchFloats) std::vector<float>().swap(partial);
}

}  // namespace cpu
}  // namespace graphrun
