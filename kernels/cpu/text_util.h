// What the text kernels share (text_ops.cc, ragged_text_ops.cc): the
// counting loop of DenseBincount and RaggedBincount.
#ifndef GRAPHRUN_KERNELS_CPU_TEXT_UTIL_H_
#define GRAPHRUN_KERNELS_CPU_TEXT_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "graph/tensor.h"
#include "graph/types.h"

namespace graphrun {

// Zeroes `out` (`size` bins per row, of its dtype) and, for each value k
// with x[k] < size, adds 1 (or weights[k] when weights has elements, or
// sets 1 when `binary`) to bin x[k] of row row_of[k]. Values are known
// non-negative.
inline void FillBins(const std::vector<int64_t>& x, const std::vector<int64_t>& row_of,
                     int64_t size, const Tensor& weights, bool binary, Tensor* out) {
  VisitDataType(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T>) {
      auto o = out->flat<T>();
      std::fill(o.begin(), o.end(), T(0));
      for (size_t k = 0; k < x.size(); ++k) {
        if (x[k] >= size) continue;
        T& slot = o[row_of[k] * size + x[k]];
        if (binary) {
          slot = T(1);
        } else {
          slot += weights.NumElements() == 0 ? T(1) : weights.flat<T>()[k];
        }
      }
    }
  });
}

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_TEXT_UTIL_H_
