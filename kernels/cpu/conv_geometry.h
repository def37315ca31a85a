// ConvGeometry: an NHWC convolution's geometry, pads as TensorFlow computes
// them; what the CPU convolution kernels (oneDNN's, conv_onednn.h, and the
// direct one, small_conv.h) are given.
#ifndef GRAPHRUN_KERNELS_CPU_CONV_GEOMETRY_H_
#define GRAPHRUN_KERNELS_CPU_CONV_GEOMETRY_H_

#include <cstdint>

namespace graphrun {
namespace cpu {

struct ConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_rows = 0, out_cols = 0;
  // 0: an ordinary convolution, filter [rows, cols, in_depth, out_depth].
  // Above 0: a depthwise one (DepthwiseConv2dNative), filter [rows, cols,
  // in_depth, multiplier], out_depth = in_depth * multiplier, output
  // channel c * multiplier + q from input channel c.
  int64_t multiplier = 0;

  bool operator==(const ConvGeometry& o) const {
    return batch == o.batch && in_rows == o.in_rows && in_cols == o.in_cols &&
           in_depth == o.in_depth && filter_rows == o.filter_rows &&
           filter_cols == o.filter_cols && out_depth == o.out_depth &&
           stride_rows == o.stride_rows && stride_cols == o.stride_cols &&
           pad_top == o.pad_top && pad_bottom == o.pad_bottom && pad_left == o.pad_left &&
           pad_right == o.pad_right && out_rows == o.out_rows && out_cols == o.out_cols &&
           multiplier == o.multiplier;
  }
};

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CONV_GEOMETRY_H_
