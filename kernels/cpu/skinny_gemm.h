// SkinnyGemm: a float product with few rows in the output, computed by
// reading the weights once, front to back, in the layout TensorFlow keeps
// them in. A dense layer at batch 2, or a convolution whose output has a
// few pixels (the last stage of a CNN on small images), is such a product:
// its cost is reading the weights from memory, and a library GEMM that
// packs or re-lays the weights first reads them at about half the speed
// the memory allows here. Each pool thread streams a contiguous share of
// the weight rows into accumulators of its own, summed at the end; each
// accumulator vector is loaded and stored once per eight weight rows.
//
//   out[p, :] = sum over taps t, over (p, a) in t.rows,
//               of sum_k a[k] * t.weights[k, :]
//
// with each tap's weights a row-major [depth, n] matrix (a 1x1 kernel, one
// spatial tap of a larger one, or a MatMul's whole b) and each row a
// pointer to `depth` input values. out is [out_rows, n], overwritten.
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_CPU_SKINNY_GEMM_H_
#define GRAPHRUN_KERNELS_CPU_SKINNY_GEMM_H_

#include <cstdint>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

// Output rows up to which a skinny product is used. With 8 rows it does
// 8 multiply-adds per weight read, still under what a core can do while
// memory delivers the weights; ResNet50V2's step (bench/step_ab) could not
// tell 4, 8 and 16 apart within the machine's noise.
inline constexpr int64_t kSkinnyMaxRows = 8;

struct SkinnyTap {
  const float* weights = nullptr;  // [depth, n]
  // (output row, its `depth` input values) for each row the tap reaches.
  absl::InlinedVector<std::pair<int, const float*>, 8> rows;
};

// True when a product of `rows` output rows over a `depth` x `n` weight
// matrix (per tap) is worth streaming: few rows, and enough weights that
// reading them is the cost.
bool SkinnyWorthIt(int64_t rows, int64_t depth, int64_t n, int64_t taps);

// `device` may be null (calling thread only).
void SkinnyGemm(const Eigen::ThreadPoolDevice* device, absl::Span<const SkinnyTap> taps,
                int64_t depth, int64_t n, int64_t out_rows, float* out);

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_SKINNY_GEMM_H_
