// SmallConv: a direct float NHWC convolution for layers with few channels
// (the first layers of CNNs: 1 to 4 input channels, 8 to 32 output
// channels). oneDNN's kernels block channels by 8 or 16 and pay for it
// here: the training CNN's 5x5 convolution of one channel into eight ran at
// 36 GFLOP/s there (bench/conv_benchmark --benchmark_filter=cnn_). This one
// keeps each output pixel's channels in vector registers, four pixels at a
// time, and adds input value times filter row for each tap, in the order
// (filter row, filter column, input channel) an im2col product sums in.
//
// Built only where the compiler targets AVX2 with FMA; elsewhere
// SmallConvFits is always false and callers take their other path.
#ifndef GRAPHRUN_KERNELS_CPU_SMALL_CONV_H_
#define GRAPHRUN_KERNELS_CPU_SMALL_CONV_H_

#include <cstdint>

#include "kernels/cpu/conv_geometry.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

struct BiasActivation;


// True when SmallConv takes `g` (not depthwise): out_depth 8, 16,
// 24 or 32, in_depth at most 4 (from 8 input channels on, oneDNN's kernels
// are faster: 0.65 against 0.82 ms on the training CNN's second layer),
// and this build has the kernel.
bool SmallConvFits(const ConvGeometry& g);

// out ([batch, out_rows, out_cols, out_depth]) = in ([batch, in_rows,
// in_cols, in_depth]) convolved with filter ([filter_rows, filter_cols,
// in_depth, out_depth]); taps outside the input are skipped (zero
// padding). With `epilogue`, out = act(convolution + bias) instead. Output
// rows are shared out over `device`'s pool (this thread alone when null).
void SmallConv(const Eigen::ThreadPoolDevice* device, const ConvGeometry& g,
               const float* in, const float* filter, float* out,
               const BiasActivation* epilogue = nullptr, const float* bias = nullptr);

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_SMALL_CONV_H_
