// The gradient cases of gpu_cases.h: the convolutions' backward data and
// filter (the paddings, strides and dilations where the GPU kernel takes
// different paths: cuDNN's symmetric padding, a padded copy for
// TensorFlow's asymmetric SAME and EXPLICIT padding), MaxPoolGrad and
// AvgPoolGrad (overlapping windows, padding, ties), the activation
// gradients and the softmax cross entropies. NHWC, and NCHW: against the
// CPU kernel in NCHW where it takes it (Conv2DBackpropInput), else against
// it in NHWC on transposed inputs (RunNhwcOnCpu).
//
// Tolerances from the arithmetic, relative to max(1, |expected|): a sum of
// k float products of operands bounded by a and b, 2 * k * eps * a * b (the
// rounding error grows as sqrt(k) and meets it with a wide margin); the
// max pooling gradient adds the same floats in the same order as the CPU,
// exactly; the element-wise gradients round a few operations (and an exp).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/gpu_cases.h"

namespace graphrun {
namespace testing {
namespace {

using Case = GpuOpCase;

constexpr double kFloatEps = 1.1920929e-7;

// A float sum of k products of operands bounded by bound_a and bound_b.
double SumTolerance(int64_t k, double bound_a = 1, double bound_b = 1) {
  return std::max(1e-6, 2.0 * static_cast<double>(k) * kFloatEps * bound_a * bound_b);
}

// A 4-D float tensor transposed between NCHW and NHWC.
Tensor Relayout(const Tensor& t, bool to_nhwc) {
  const int64_t n = t.dim_size(0);
  const int64_t c = t.dim_size(to_nhwc ? 1 : 3), h = t.dim_size(to_nhwc ? 2 : 1),
                w = t.dim_size(to_nhwc ? 3 : 2);
  Tensor out(DT_FLOAT, to_nhwc ? TensorShape({n, h, w, c}) : TensorShape({n, c, h, w}));
  const float* src = t.flat<float>().data();
  float* dst = out.flat<float>().data();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((b * c + k) * h + y) * w + x, nhwc = ((b * h + y) * w + x) * c + k;
          if (to_nhwc) {
            dst[nhwc] = src[nchw];
          } else {
            dst[nchw] = src[nhwc];
          }
        }
      }
    }
  }
  return out;
}

TensorShape NhwcOf(const TensorShape& nchw) {
  return TensorShape({nchw.dim_size(0), nchw.dim_size(2), nchw.dim_size(3), nchw.dim_size(1)});
}

Tensor I32(const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(v, *TensorShape::FromDims({static_cast<int64_t>(v.size())}));
}

std::string WindowAttrs(const char* padding, int stride, int dilation, const char* format,
                        const std::string& explicit_paddings) {
  const bool nchw = std::string(format) == "NCHW";
  const std::string s = nchw ? absl::StrCat("i: 1 i: 1 i: ", stride, " i: ", stride)
                             : absl::StrCat("i: 1 i: ", stride, " i: ", stride, " i: 1");
  const std::string d = nchw ? absl::StrCat("i: 1 i: 1 i: ", dilation, " i: ", dilation)
                             : absl::StrCat("i: 1 i: ", dilation, " i: ", dilation, " i: 1");
  std::string attrs = absl::StrCat(
      "attr { key: 'padding' value { s: '", padding, "' } } attr { key: 'strides' value { list { ",
      s, " } } } attr { key: 'dilations' value { list { ", d,
      " } } } attr { key: 'data_format' value { s: '", format, "' } }");
  if (!explicit_paddings.empty()) {
    absl::StrAppend(&attrs, " attr { key: 'explicit_paddings' value { list { ", explicit_paddings,
                    " } } }");
  }
  return attrs;
}

// One convolution geometry: input [2, 9, 10, 3] (NHWC), filter [3, 3, 3, 8].
struct ConvShape {
  const char* padding;
  int stride, dilation;
  std::string explicit_paddings;
  int64_t out_h, out_w;
};

void AddConvGradCases(std::vector<Case>* cases) {
  const std::vector<ConvShape> shapes = {
      {"SAME", 1, 1, "", 9, 10},
      {"SAME", 2, 1, "", 5, 5},  // columns padded 0 before, 1 after: a padded copy
      {"VALID", 2, 1, "", 4, 4},
      {"SAME", 1, 2, "", 9, 10},
      // rows padded 1 and 2, columns 0 and 1
      {"EXPLICIT", 1, 1, "i: 0 i: 0 i: 1 i: 2 i: 0 i: 1 i: 0 i: 0", 10, 9},
  };
  for (const ConvShape& s : shapes) {
    const TensorShape dy({2, s.out_h, s.out_w, 8});
    Case input{"Conv2DBackpropInput", {TensorShape({3, 3, 3, 8}), dy}};
    input.consts[0] = I32({2, 9, 10, 3});
    input.lo = -1;
    input.hi = 1;
    input.tol = SumTolerance(3 * 3 * 8);
    input.attrs = WindowAttrs(s.padding, s.stride, s.dilation, "NHWC", s.explicit_paddings);
    cases->push_back(input);
    Case filter{"Conv2DBackpropFilter", {TensorShape({2, 9, 10, 3}), dy}};
    filter.consts[1] = I32({3, 3, 3, 8});
    filter.lo = -1;
    filter.hi = 1;
    filter.tol = SumTolerance(2 * s.out_h * s.out_w);
    filter.attrs = input.attrs;
    cases->push_back(filter);
  }
  // input_sizes of only the spatial dims.
  Case spatial{"Conv2DBackpropInput", {TensorShape({3, 3, 3, 8}), TensorShape({2, 5, 5, 8})}};
  spatial.consts[0] = I32({9, 10});
  spatial.lo = -1;
  spatial.hi = 1;
  spatial.tol = SumTolerance(3 * 3 * 8);
  spatial.attrs = WindowAttrs("SAME", 2, 1, "NHWC", "");
  cases->push_back(spatial);
  // NCHW, with the padded copy.
  Case nchw = spatial;
  nchw.inputs[1] = TensorShape({2, 8, 5, 5});
  nchw.consts[0] = I32({2, 3, 9, 10});
  nchw.attrs = WindowAttrs("SAME", 2, 1, "NCHW", "");
  cases->push_back(nchw);
  // Conv2DBackpropFilter in NCHW (a padded copy), against the CPU in NHWC.
  Case filter{"Conv2DBackpropFilter", {TensorShape({2, 3, 9, 10}), TensorShape({2, 8, 5, 5})}};
  filter.consts[1] = I32({3, 3, 3, 8});
  filter.lo = -1;
  filter.hi = 1;
  filter.tol = SumTolerance(2 * 5 * 5);
  filter.attrs = WindowAttrs("SAME", 2, 1, "NCHW", "");
  filter.cpu_in_nhwc = true;
  filter.cpu_attrs = WindowAttrs("SAME", 2, 1, "NHWC", "");
  filter.cpu_consts = filter.consts;
  filter.cpu_outputs_as_they_are = true;  // [kh, kw, in, out] in both
  cases->push_back(filter);
}

void AddPoolGradCases(std::vector<Case>* cases) {
  struct PoolShape {
    int k, stride;
    const char* padding;
    int64_t out_h, out_w;  // over [2, 9, 10, 3]
  };
  const std::vector<PoolShape> shapes = {
      {3, 2, "SAME", 5, 5}, {3, 2, "VALID", 4, 4}, {3, 1, "SAME", 9, 10}, {2, 2, "VALID", 4, 5}};
  const TensorShape img({2, 9, 10, 3});
  for (const PoolShape& s : shapes) {
    const TensorShape out({2, s.out_h, s.out_w, 3});
    const std::string attrs = absl::StrFormat(
        "attr { key: 'ksize' value { list { i: 1 i: %d i: %d i: 1 } } } attr { key: 'strides' "
        "value { list { i: 1 i: %d i: %d i: 1 } } } attr { key: 'padding' value { s: '%s' } }",
        s.k, s.k, s.stride, s.stride, s.padding);
    Case max{"MaxPoolGrad", {img, out, out}};
    max.attrs = attrs;
    max.tol = 0;  // the same floats added in the same order
    cases->push_back(max);
    Case avg{"AvgPoolGrad", {out}};
    avg.consts[0] = I32({2, 9, 10, 3});
    avg.attrs = attrs;
    avg.tol = SumTolerance(s.k * s.k, 2);
    cases->push_back(avg);
  }
  // NCHW, against the CPU in NHWC.
  const std::string nhwc_attrs =
      "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } attr { key: 'strides' "
      "value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } }";
  const std::string nchw_attrs =
      "attr { key: 'ksize' value { list { i: 1 i: 1 i: 3 i: 3 } } } attr { key: 'strides' "
      "value { list { i: 1 i: 1 i: 2 i: 2 } } } attr { key: 'padding' value { s: 'SAME' } } "
      "attr { key: 'data_format' value { s: 'NCHW' } }";
  const TensorShape img_nchw({2, 3, 9, 10}), out_nchw({2, 3, 5, 5});
  Case max{"MaxPoolGrad", {img_nchw, out_nchw, out_nchw}};
  max.tol = 0;
  max.attrs = nchw_attrs;
  max.cpu_in_nhwc = true;
  max.cpu_attrs = nhwc_attrs;
  cases->push_back(max);
  Case avg{"AvgPoolGrad", {out_nchw}};
  avg.consts[0] = I32({2, 3, 9, 10});
  avg.tol = SumTolerance(9, 2);
  avg.attrs = nchw_attrs;
  avg.cpu_in_nhwc = true;
  avg.cpu_attrs = nhwc_attrs;
  avg.cpu_consts[0] = I32({2, 9, 10, 3});
  cases->push_back(avg);
  // Every element equal: each window's gradient to its first element.
  Case ties{"MaxPoolGrad", {img, img, img}};
  ties.lo = ties.hi = 1;
  ties.tol = 0;
  ties.attrs =
      "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } attr { key: 'strides' "
      "value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } }";
  cases->push_back(ties);
  // Explicit padding (MaxPoolGrad only: AvgPoolGrad takes SAME and VALID).
  Case explicit_pad{"MaxPoolGrad", {img, TensorShape({2, 5, 6, 3}), TensorShape({2, 5, 6, 3})}};
  explicit_pad.tol = 0;
  explicit_pad.attrs =
      "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } attr { key: 'strides' "
      "value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: 'padding' value { s: 'EXPLICIT' } } "
      "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 2 i: 1 i: 1 i: 2 i: 0 i: 0 "
      "} } }";
  cases->push_back(explicit_pad);
}

void AddActivationAndLossCases(std::vector<Case>* cases) {
  const TensorShape m({33, 70});
  for (const char* op : {"EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad", "SigmoidGrad",
                         "TanhGrad"}) {
    cases->push_back({op, {m, m}});
  }
  {
    Case relu6{"Relu6Grad", {m, m}};
    relu6.hi = 8;  // both sides of 6
    cases->push_back(relu6);
    Case leaky{"LeakyReluGrad", {m, m}};
    leaky.attrs = "attr { key: 'alpha' value { f: 0.3 } }";
    cases->push_back(leaky);
  }
  for (const char* op : {"RsqrtGrad", "SqrtGrad", "ReciprocalGrad"}) {
    Case c{op, {m, m}};
    c.lo = 0.1f;
    c.hi = 4;
    cases->push_back(c);
  }
  // Logits and labels in [0, 4]: every term of the loss non-negative, so
  // its sum of 70 carries 70 roundings relative to itself.
  for (const TensorShape& labels : {m, TensorShape({1, 70})}) {
    Case c{"SoftmaxCrossEntropyWithLogits", {m, labels}};
    c.lo = 0;
    c.hi = 4;
    c.outputs = 2;
    c.tol = SumTolerance(70, 2);
    cases->push_back(c);
  }
  for (const char* index : {"DT_INT32", "DT_INT64"}) {
    Case c{"SparseSoftmaxCrossEntropyWithLogits", {m}};
    std::vector<int64_t> labels;
    for (int64_t r = 0; r < 33; ++r) labels.push_back((r * 17) % 70);
    if (std::string(index) == "DT_INT64") {
      c.consts[1] = Tensor::FromVector<int64_t>(labels, TensorShape({33}));
    } else {
      c.consts[1] = I32(std::vector<int32_t>(labels.begin(), labels.end()));
    }
    c.lo = 0;
    c.hi = 4;
    c.outputs = 2;
    c.tol = SumTolerance(70, 2);
    c.attrs = absl::StrCat("attr { key: 'Tlabels' value { type: ", index, " } }");
    cases->push_back(c);
  }
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunNhwcOnCpu(const GpuOpCase& c,
                                                 const std::vector<Tensor>& inputs) {
  GpuOpCase nhwc = c;
  nhwc.attrs = c.cpu_attrs;
  nhwc.consts = c.cpu_consts;
  std::vector<Tensor> transposed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool image = inputs[i].dims() == 4;
    if (image) nhwc.inputs[i] = NhwcOf(c.inputs[i]);
    transposed.push_back(image ? Relayout(inputs[i], true) : inputs[i]);
  }
  absl::StatusOr<std::vector<Tensor>> out =
      RunCase(nhwc, "/device:CPU:0", SessionOptions(), transposed);
  if (!out.ok()) return out;
  for (Tensor& t : *out) {
    if (!c.cpu_outputs_as_they_are && t.dtype() == DT_FLOAT && t.dims() == 4) {
      t = Relayout(t, false);
    }
  }
  return out;
}

void AddGradientCases(std::vector<GpuOpCase>* cases) {
  AddConvGradCases(cases);
  AddPoolGradCases(cases);
  AddActivationAndLossCases(cases);
}

}  // namespace testing
}  // namespace graphrun
