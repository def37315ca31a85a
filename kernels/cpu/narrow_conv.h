// Convolutions with few input and output channels (the first layer of a
// CNN on grayscale images: one input channel, 4 or 8 filters), forward and
// filter gradient, float NHWC, on AVX-512.
//
// Such a layer is many small dot products: 25 multiply-adds per output
// value for a 5x5 filter over one channel. oneDNN pads the output channels
// of its weights to 16 and runs them at a fraction of the rate it reaches
// on wider layers (bench/conv_benchmark's narrow shapes). Here one 16-lane
// vector holds 16 / out_depth neighbouring output pixels with all their
// channels, which is 16 consecutive floats of the NHWC output. The input
// is laid out once per row so that each tap is one vector load: slot j of
// a laid-out row holds input column j (of the padded row) for the first
// pixel's lanes, column j + stride for the second's, and so on.
//
// Undilated, ungrouped; any stride and explicit or SAME/VALID padding.
// Thread-safe; work is split by image over the pool (RunPieces).
#ifndef GRAPHRUN_KERNELS_CPU_NARROW_CONV_H_
#define GRAPHRUN_KERNELS_CPU_NARROW_CONV_H_

#include <cstdint>

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

struct BiasActivation;

struct NarrowConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t out_rows = 0, out_cols = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_left = 0;  // padding before the first row/column
};

// False when GRAPHRUN_NARROW_CONV=0 (for side-by-side timing against the
// general paths); kernels read it when they are built.
bool NarrowConvFromEnv();

// True when this build has the kernels (AVX-512) and they compute the
// geometry: 1-4 input channels, 4, 8 or 16 output channels, a filter at
// most 11 x 7, strides of 1-4, padding smaller than the filter.
bool NarrowConvComputes(const NarrowConvGeometry& g);

// True when the kernels are also the faster choice, as measured against
// oneDNN (bench/conv_benchmark, bench/conv_grad_benchmark): one input
// channel and 4 or 8 output channels, where oneDNN pads the output
// channels to 16. (With 3 input channels, or 16 output channels, oneDNN
// was 1.4-2.4x faster.)
bool NarrowConvApplies(const NarrowConvGeometry& g);

// out[b, r, c, :] = sum over the window of in * filter, then, with
// `epilogue`, plus bias and through its activation. filter is HWIO
// ([filter_rows, filter_cols, in_depth, out_depth]); out is overwritten.
// `pool` may be null (this thread alone).
void NarrowConvForward(const Eigen::ThreadPoolDevice* pool, const NarrowConvGeometry& g,
                       const float* in, const float* filter, const BiasActivation* epilogue,
                       const float* bias, float* out);

// filter_grad[kh, kw, ci, co] = sum over images and output pixels of
// in[b, r * stride + kh - pad_top, c * stride + kw - pad_left, ci] *
// out_grad[b, r, c, co]; HWIO, overwritten.
void NarrowConvFilterGrad(const Eigen::ThreadPoolDevice* pool, const NarrowConvGeometry& g,
                          const float* in, const float* out_grad, float* filter_grad);

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_NARROW_CONV_H_
