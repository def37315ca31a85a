// A float NHWC convolution's shape, as the convolution benchmarks list
// them: output size, TensorFlow's SAME padding (the extra pixel after) and
// the multiply-add count.
#ifndef GRAPHRUN_BENCH_CONV_SHAPE_H_
#define GRAPHRUN_BENCH_CONV_SHAPE_H_

#include <algorithm>
#include <cstdint>

namespace graphrun {
namespace bench {

struct ConvShape {
  const char* name;
  int64_t batch, rows, cols, in_depth, filter_rows, filter_cols, out_depth;
  int64_t stride;
  bool same;  // SAME padding, else VALID

  int64_t OutSize(int64_t in, int64_t filter) const {
    return same ? (in + stride - 1) / stride : (in - filter + stride) / stride;
  }
  int64_t OutRows() const { return OutSize(rows, filter_rows); }
  int64_t OutCols() const { return OutSize(cols, filter_cols); }
  int64_t PadBefore(int64_t in, int64_t filter, int64_t out) const {
    if (!same) return 0;
    return std::max<int64_t>(0, (out - 1) * stride + filter - in) / 2;
  }
  int64_t PadAfter(int64_t in, int64_t filter, int64_t out) const {
    if (!same) return 0;
    return std::max<int64_t>(0, (out - 1) * stride + filter - in) - PadBefore(in, filter, out);
  }
  // 2 * multiply-adds.
  double Flops() const {
    return 2.0 * batch * OutRows() * OutCols() * out_depth * filter_rows * filter_cols * in_depth;
  }
};

}  // namespace bench
}  // namespace graphrun

#endif  // GRAPHRUN_BENCH_CONV_SHAPE_H_
