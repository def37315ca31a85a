// What the backward-convolution tests share: a float NHWC case on
// training shapes (checked against the double kernel on both the oneDNN
// and the GEMM paths), its attrs and output size, and float-valued inputs.
#ifndef GRAPHRUN_KERNELS_CPU_CONV_GRAD_TEST_CASE_H_
#define GRAPHRUN_KERNELS_CPU_CONV_GRAD_TEST_CASE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace testing {

// Input [n, h, w, ci], filter [k, k, ci, co]; padding "SAME", "VALID" or
// "EXPLICIT" (with explicit_paddings); run on `threads` intra-op threads.
struct ConvGradCase {
  int64_t n, h, w, ci, k, co, stride;
  const char* padding;
  int threads;
  std::vector<int64_t> explicit_paddings = {};

  std::string Describe() const {
    return absl::StrCat(n, "x", h, "x", w, "x", ci, " ", k, "x", k, " -> ", co, " stride ",
                        stride, " ", padding, " threads ", threads);
  }
};

// The op's attrs, and the output's rows and columns.
struct ConvGradSetup {
  std::map<std::string, AttrValue> attrs;
  int64_t out_rows = 0, out_cols = 0;
};

inline ConvGradSetup SetUpConvGrad(const ConvGradCase& c) {
  ConvGradSetup s;
  s.attrs = {{"strides", AttrInts({1, c.stride, c.stride, 1})}, {"padding", AttrS(c.padding)}};
  if (std::string(c.padding) == "SAME") {
    s.out_rows = (c.h + c.stride - 1) / c.stride;
    s.out_cols = (c.w + c.stride - 1) / c.stride;
  } else {
    const std::vector<int64_t>& p = c.explicit_paddings;
    const int64_t ph = p.empty() ? 0 : p[2] + p[3], pw = p.empty() ? 0 : p[4] + p[5];
    if (!p.empty()) s.attrs["explicit_paddings"] = AttrInts(p);
    s.out_rows = (c.h + ph - c.k) / c.stride + 1;
    s.out_cols = (c.w + pw - c.k) / c.stride + 1;
  }
  return s;
}

// `n` random values in [-1, 1], each rounded to float, so the float and
// double kernels see the same inputs.
inline std::vector<double> RandomFloatValues(int64_t n, int seed) {
  std::vector<double> v = RandomDoubles(n, -1, 1, seed);
  for (double& x : v) x = static_cast<float>(x);
  return v;
}

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CONV_GRAD_TEST_CASE_H_
