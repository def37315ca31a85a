// What the ragged kernels share (ragged_ops.cc, ragged_variant_ops.cc):
// splits written in an int32/int64 tensor (they are read with
// array_kernels::IntValues) and the size of a tensor's rows. Stateless;
// thread-safe.
#ifndef GRAPHRUN_KERNELS_CPU_RAGGED_UTIL_H_
#define GRAPHRUN_KERNELS_CPU_RAGGED_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "graph/types.h"
#include "graph/variant.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace ragged {

// Copies v[begin, end) - shift into `out`, an int32 or int64 vector with
// end - begin elements.
inline void FillSplits(const std::vector<int64_t>& v, size_t begin, size_t end, int64_t shift,
                       Tensor* out) {
  auto fill = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    for (size_t i = begin; i < end; ++i) o[i - begin] = static_cast<T>(v[i] - shift);
  };
  if (out->dtype() == DT_INT32) {
    fill(out->flat<int32_t>().data());
  } else {
    fill(out->flat<int64_t>().data());
  }
}

// Output `output` (int32 or int64, as the op declares it) set to `splits`.
inline absl::Status WriteSplits(OpKernelContext* ctx, int output,
                                const std::vector<int64_t>& splits) {
  Tensor* out = nullptr;
  absl::Status s =
      ctx->allocate_output(output, TensorShape({static_cast<int64_t>(splits.size())}), &out);
  if (!s.ok()) return s;
  FillSplits(splits, 0, splits.size(), 0, out);
  return absl::OkStatus();
}

// Elements in one row (outermost index) of `t`: the product of dims 1...
inline int64_t RowElements(const Tensor& t) {
  int64_t n = 1;
  for (int d = 1; d < t.dims(); ++d) n *= t.dim_size(d);
  return n;
}

}  // namespace ragged
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_RAGGED_UTIL_H_
