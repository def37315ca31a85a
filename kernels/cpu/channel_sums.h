// AddChannelSums: acc[c] += the sum of column c over `rows` rows of a
// row-major [rows, channels] block (channels last), the sum BiasAddGrad
// takes. Internal to the CPU kernels.
#ifndef GRAPHRUN_KERNELS_CPU_CHANNEL_SUMS_H_
#define GRAPHRUN_KERNELS_CPU_CHANNEL_SUMS_H_

#include <cstdint>
#include <type_traits>

#include "graph/types.h"

namespace graphrun {
namespace cpu {

// The type sums of T accumulate in: float for the 16-bit floats.
template <typename T>
using AccumulatorOf =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

template <typename T>
void AddChannelSums(const T* __restrict x, int64_t rows, int64_t channels,
                    AccumulatorOf<T>* __restrict acc) {
  using Acc = AccumulatorOf<T>;
  if (channels <= 0) return;
  // A few channels (a first convolution's 8): a row's adds wait on the
  // last row's, one vector add latency per row. Rows are then summed m at
  // a time into m * channels independent lanes, folded into the channels
  // at the end (the CNN's 401,408-value BiasAddGrad: about 4x faster).
  constexpr int64_t kLanes = 64;
  if (channels < kLanes / 2) {
    const int64_t m = kLanes / channels;
    const int64_t width = m * channels;
    Acc lanes[kLanes] = {};
    int64_t r = 0;
    for (; r + m <= rows; r += m) {
      const T* group = x + r * channels;
      for (int64_t j = 0; j < width; ++j) lanes[j] += static_cast<Acc>(group[j]);
    }
    for (int64_t j = 0; j < width; ++j) acc[j % channels] += lanes[j];
    x += r * channels;
    rows -= r;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) acc[c] += static_cast<Acc>(row[c]);
  }
}

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CHANNEL_SUMS_H_
