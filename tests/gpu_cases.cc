#include "tests/gpu_cases.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace testing {
namespace {

using Case = GpuOpCase;

Tensor Random(const TensorShape& shape, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = u(rng);
  return t;
}

const char* TypeName(DataType t) {
  return t == DT_INT64 ? "DT_INT64" : t == DT_BOOL ? "DT_BOOL" : "DT_INT32";
}

// A Const node's value attr in text format (int32, int64, bool tensors).
std::string TensorText(const Tensor& t) {
  std::string text = absl::StrCat("tensor { dtype: ", TypeName(t.dtype()), " tensor_shape {");
  for (int d = 0; d < t.dims(); ++d) absl::StrAppend(&text, " dim { size: ", t.dim_size(d), " }");
  absl::StrAppend(&text, " }");
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (t.dtype() == DT_BOOL) {
      absl::StrAppend(&text, " bool_val: ", t.flat<bool>()[i] ? "true" : "false");
    } else if (t.dtype() == DT_INT64) {
      absl::StrAppend(&text, " int64_val: ", t.flat<int64_t>()[i]);
    } else {
      absl::StrAppend(&text, " int_val: ", t.flat<int32_t>()[i]);
    }
  }
  return text + " }";
}

GraphDef OneOp(const Case& c, const std::string& device) {
  std::string text;
  std::string inputs;
  const int slots = static_cast<int>(c.inputs.size() + c.consts.size());
  for (int i = 0; i < slots; ++i) {
    auto constant = c.consts.find(i);
    if (constant != c.consts.end()) {
      absl::StrAppend(&text, "node { name: 'in", i, "' op: 'Const' device: '/device:CPU:0' ",
                      "attr { key: 'dtype' value { type: ", TypeName(constant->second.dtype()),
                      " } } attr { key: 'value' value { ", TensorText(constant->second),
                      " } } }\n");
    } else {
      absl::StrAppend(&text, "node { name: 'in", i,
                      "' op: 'Placeholder' device: '/device:CPU:0' attr { key: "
                      "'dtype' value { "
                      "type: DT_FLOAT } } }\n");
    }
    absl::StrAppend(&inputs, " input: 'in", i, "'");
  }
  absl::StrAppend(&text, "node { name: 'op' op: '", c.op, "'", inputs, " device: '", device, "' ");
  if (!c.type_attr.empty()) {
    absl::StrAppend(&text, "attr { key: '", c.type_attr, "' value { type: DT_FLOAT } } ");
  }
  absl::StrAppend(&text, c.attrs, " }\n");
  for (char& ch : text) {
    if (ch == '\'') ch = '"';
  }
  absl::StatusOr<GraphDef> g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  return *g;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunCase(const Case& c, const std::string& device,
                                            SessionOptions options,
                                            const std::vector<Tensor>& inputs) {
  options.optimize = SessionOptions::Optimize::kNone;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(OneOp(c, device), options);
  if (!s.ok()) return s.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  int next = 0;
  for (int i = 0; i < static_cast<int>(c.inputs.size() + c.consts.size()); ++i) {
    if (c.consts.count(i) == 0) feeds.push_back({absl::StrCat("in", i), inputs[next++]});
  }
  std::vector<std::string> fetches;
  for (int i = 0; i < c.outputs; ++i) fetches.push_back(absl::StrCat("op:", i));
  std::vector<Tensor> out;
  RunMetadata metadata;
  absl::Status status = (*s)->Run(RunOptions(), feeds, fetches, {}, &out, &metadata);
  if (!status.ok()) return status;
  // The plan's devices are full names (".../device:GPU:0").
  bool ran_there = false;
  for (const std::string& d : metadata.placement().devices()) {
    ran_there |= absl::EndsWith(d, absl::StripPrefix(device, "/"));
  }
  if (!ran_there) return absl::InternalError(absl::StrCat("nothing ran on ", device));
  return out;
}

namespace {

Tensor I32(const std::vector<int32_t>& v, std::vector<int64_t> dims = {}) {
  if (dims.empty() && v.size() != 1) dims = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<int32_t>(v, *TensorShape::FromDims(dims));
}
Tensor I32Scalar(int32_t v) { return Tensor::Scalar<int32_t>(v); }

// The array, reduction and nn kernels: each with its int arguments as
// constants (in host memory on the GPU), and the layouts and paddings where
// the GPU kernels take different paths.
void AddArrayAndNnCases(std::vector<Case>* cases) {
  const TensorShape t3({4, 5, 6}), img({2, 9, 10, 3}), img_nchw({2, 3, 9, 10});
  auto add = [&](Case c) { cases->push_back(std::move(c)); };
  // bool constants for the logical ops and SelectV2.
  Tensor mask(DT_BOOL, TensorShape({5, 6}));
  for (int64_t i = 0; i < mask.NumElements(); ++i) mask.flat<bool>()[i] = (i * 7) % 3 == 0;
  Tensor row(DT_BOOL, TensorShape({6}));
  for (int64_t i = 0; i < row.NumElements(); ++i) row.flat<bool>()[i] = i % 2 == 0;
  for (const char* op : {"LogicalAnd", "LogicalOr"}) {
    Case c{op, {}};
    c.type_attr = "";
    c.consts[0] = mask;
    c.consts[1] = row;
    add(c);
  }
  {
    Case c{"LogicalNot", {}};
    c.type_attr = "";
    c.consts[0] = mask;
    add(c);
    Case select{"SelectV2", {TensorShape({4, 1, 6}), TensorShape({1})}};
    select.consts[0] = mask;
    add(select);
    Case addn{"AddN", {t3, t3, t3}};
    addn.attrs = "attr { key: 'N' value { i: 3 } }";
    add(addn);
  }
  for (const char* to : {"DT_HALF", "DT_BFLOAT16", "DT_INT64", "DT_BOOL", "DT_DOUBLE"}) {
    Case c{"Cast", {t3}};
    c.type_attr = "SrcT";
    c.lo = -300;  // past half's precision, and int truncation of negatives
    c.hi = 300;
    c.attrs = absl::StrCat("attr { key: 'DstT' value { type: ", to, " } }");
    add(c);
  }
  {
    Case c{"Cast", {}};
    c.type_attr = "";
    c.consts[0] = I32({3, -7, 0, 65537}, {4});
    c.attrs =
        "attr { key: 'SrcT' value { type: DT_INT32 } } attr { key: 'DstT' "
        "value { type: "
        "DT_FLOAT } }";
    add(c);
  }
  for (const auto& [equation, x, y] :
       std::vector<std::tuple<const char*, TensorShape, TensorShape>>{
           {"abc,cd->abd", TensorShape({2, 7, 16}), TensorShape({16, 24})},
           {"aecd,abcd->acbe", TensorShape({2, 9, 4, 8}), TensorShape({2, 7, 4, 8})},
           {"acbe,aecd->abcd", TensorShape({2, 4, 7, 9}), TensorShape({2, 9, 4, 8})},
           {"...ij,...jk->...ik", TensorShape({2, 1, 5, 6}), TensorShape({3, 6, 4})}}) {
    Case c{"Einsum", {x, y}};
    c.lo = -1;
    c.hi = 1;
    c.tol = 1e-4;
    c.attrs = absl::StrCat("attr { key: 'equation' value { s: '", equation,
                           "' } } attr { key: 'N' value { i: 2 } }");
    add(c);
  }
  {
    Case c{"Transpose", {t3}};
    c.consts[1] = I32({2, 0, 1});
    add(c);
    c.consts[1] = I32({1, 0, 2});
    add(c);
  }
  {
    Case c{"Slice", {t3}};
    c.consts[1] = I32({1, 0, 2});
    c.consts[2] = I32({2, -1, 3});
    c.attrs = "attr { key: 'Index' value { type: DT_INT32 } }";
    add(c);
  }
  {
    Case c{"StridedSlice", {t3}};
    c.consts[1] = I32({-1, 4, 0});
    c.consts[2] = I32({0, 0, 6});
    c.consts[3] = I32({-1, -2, 2});
    c.attrs =
        "attr { key: 'Index' value { type: DT_INT32 } } attr { key: "
        "'shrink_axis_mask' "
        "value { i: 0 } } attr { key: 'begin_mask' value { i: 0 } } attr { "
        "key: "
        "'end_mask' value { i: 0 } } attr { key: 'ellipsis_mask' value { i: 0 "
        "} } attr { "
        "key: 'new_axis_mask' value { i: 0 } }";
    add(c);
  }
  {
    Case c{"ConcatV2", {t3, TensorShape({4, 2, 6}), TensorShape({4, 0, 6})}};
    c.consts[3] = I32Scalar(1);
    c.attrs =
        "attr { key: 'N' value { i: 3 } } attr { key: 'Tidx' value { type: "
        "DT_INT32 } }";
    add(c);
  }
  {
    Case c{"Pack", {t3, t3}};
    c.attrs = "attr { key: 'N' value { i: 2 } } attr { key: 'axis' value { i: -1 } }";
    add(c);
  }
  {
    Case c{"Pad", {t3}};
    c.consts[1] = I32({1, 0, 2, 3, 0, 1}, {3, 2});
    c.attrs = "attr { key: 'Tpaddings' value { type: DT_INT32 } }";
    add(c);
  }
  {
    Case c{"GatherV2", {t3}};
    c.type_attr = "Tparams";
    c.consts[1] = Tensor::FromVector<int64_t>({4, 0, 2, 2, 1, 3}, *TensorShape::FromDims({2, 3}));
    c.consts[2] = I32Scalar(1);
    c.attrs =
        "attr { key: 'Tindices' value { type: DT_INT64 } } attr { key: 'Taxis' "
        "value { "
        "type: DT_INT32 } } attr { key: 'batch_dims' value { i: 0 } }";
    add(c);
    Case batched = c;  // each row of params with its own indices
    batched.consts[1] =
        Tensor::FromVector<int64_t>({4, 0, 2, 1, 1, 3, 0, 0}, *TensorShape::FromDims({4, 2}));
    batched.attrs =
        "attr { key: 'Tindices' value { type: DT_INT64 } } attr { key: 'Taxis' "
        "value { type: DT_INT32 } } attr { key: 'batch_dims' value { i: 1 } }";
    add(batched);
  }
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    for (const std::vector<int32_t>& axes :
         std::vector<std::vector<int32_t>>{{2}, {0}, {0, 2}, {-1, 0, 1}}) {
      Case c{op, {t3}};
      if (std::string(op) == "Prod") {
        c.lo = 0.8f;
        c.hi = 1.2f;
      }
      c.consts[1] = I32(axes, {static_cast<int64_t>(axes.size())});
      c.attrs =
          "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: "
          "'keep_dims' value { "
          "b: true } }";
      add(c);
    }
  }
  {
    Case c{"Reshape", {t3}};
    c.consts[1] = I32({5, -1});
    c.attrs = "attr { key: 'Tshape' value { type: DT_INT32 } }";
    add(c);
    Case shape{"Shape", {t3}};
    shape.attrs = "attr { key: 'out_type' value { type: DT_INT32 } }";
    add(shape);
  }
  auto conv = [&](const char* op, TensorShape filter, const char* padding, int stride) {
    Case c{op, {img, filter}};
    c.lo = -1;
    c.hi = 1;
    c.tol = 1e-4;  // float arithmetic: TF32 is off (gpu_test_util.h)
    c.attrs = absl::StrCat("attr { key: 'padding' value { s: '", padding,
                           "' } } attr { key: 'strides' value { list { i: 1 i: ", stride,
                           " i: ", stride, " i: 1 } } }");
    return c;
  };
  add(conv("Conv2D", TensorShape({3, 3, 3, 8}), "SAME", 1));
  add(conv("Conv2D", TensorShape({3, 3, 3, 8}), "SAME", 2));  // padded copy
  add(conv("Conv2D", TensorShape({1, 1, 3, 16}), "VALID", 1));
  add(conv("DepthwiseConv2dNative", TensorShape({3, 3, 3, 2}), "SAME", 2));
  {
    Case c = conv("Conv2D", TensorShape({3, 3, 3, 4}), "SAME", 1);
    c.inputs[0] = img_nchw;
    c.attrs =
        "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'strides' "
        "value { list { "
        "i: 1 i: 1 i: 2 i: 2 } } } attr { key: 'data_format' value { s: 'NCHW' "
        "} }";
    add(c);
  }
  for (bool nchw : {false, true}) {
    Case c = conv("_FusedConv2D", TensorShape({3, 3, 3, 8}), "SAME", 1);
    c.inputs.push_back(TensorShape({8}));
    c.attrs +=
        " attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' "
        "value { list { "
        "s: 'BiasAdd' s: 'Relu' } } } attr { key: 'epsilon' value { f: 0.0001 "
        "} }";
    if (nchw) {
      c.inputs[0] = img_nchw;
      c.attrs += " attr { key: 'data_format' value { s: 'NCHW' } }";
    }
    add(c);
  }
  for (const char* activation : {"Relu6", "Relu"}) {
    Case c = conv("_FusedDepthwiseConv2dNative", TensorShape({3, 3, 3, 2}), "SAME", 1);
    c.inputs.push_back(TensorShape({6}));
    c.attrs = absl::StrCat(c.attrs,
                           " attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' "
                           "value { list { s: 'BiasAdd' s: '",
                           activation, "' } } }");
    add(c);
  }
  {
    Case c{"BiasAdd", {img_nchw, TensorShape({3})}};
    c.attrs = "attr { key: 'data_format' value { s: 'NCHW' } }";
    add(c);
  }
  // The training gradients: ReluGrad, and BiasAddGrad over rows (2-D,
  // NHWC) and over each image's positions and the batch (NCHW).
  add({"ReluGrad", {img, img}});
  add({"BiasAddGrad", {TensorShape({300, 7})}});
  for (const char* format : {"NHWC", "NCHW"}) {
    Case c{"BiasAddGrad", {format[1] == 'C' ? img_nchw : img}};
    c.attrs = absl::StrCat("attr { key: 'data_format' value { s: '", format, "' } }");
    add(c);
  }
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      Case c{op, {img}};
      c.attrs = absl::StrFormat(
          "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } attr { "
          "key: 'strides' "
          "value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: 'padding' "
          "value { s: '%s' } }",
          padding);
      add(c);
    }
  }
  for (const auto& [training, x, format] : std::vector<std::tuple<bool, TensorShape, const char*>>{
           {false, img, "NHWC"},
           {true, img, "NHWC"},
           {false, img_nchw, "NCHW"},
           {true, img_nchw, "NCHW"},
           {true, TensorShape({2, 3, 4, 5, 3}), "NDHWC"}}) {
    Case c{"FusedBatchNormV3",
           {x, TensorShape({3}), TensorShape({3}), TensorShape({3}), TensorShape({3})}};
    c.lo = 0.5f;  // variances must be positive
    c.hi = 2;
    c.tol = 1e-4;
    c.outputs = 3;  // y, batch mean, batch variance
    c.attrs = absl::StrFormat(
        "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'epsilon' "
        "value { f: 0.001 } } "
        "attr { key: 'is_training' value { b: %s } } attr { key: 'data_format' "
        "value { s: '%s' "
        "} }",
        training ? "true" : "false", format);
    add(c);
  }
}

}  // namespace

// A float GEMM's tolerance for depth k over inputs in [-2, 2]: twice
// k * eps * max|a| * max|b|. A float GEMM's rounding error grows as sqrt(k)
// and meets it with a wide margin; TF32 (inputs rounded to 10 bits) or half
// precision does not.
namespace {
double GemmTolerance(int64_t k) { return 2.0 * k * 1.1920929e-7 * 4.0; }
}  // namespace

std::vector<Case> AllGpuOpCases() {
  const TensorShape m({33, 70}), v({70}), scalar({});
  std::vector<Case> cases = {
      {"MatMul",
       {TensorShape({64, 96}), TensorShape({96, 80})},
       -1,
       1,
       "attr { key: 'transpose_a' value { b: false } } attr { key: "
       "'transpose_b' value { b: false } }",
       GemmTolerance(96)},
      {"MatMul",
       {TensorShape({96, 64}), TensorShape({80, 96})},
       -1,
       1,
       "attr { key: 'transpose_a' value { b: true } } attr { key: "
       "'transpose_b' value { b: true } }",
       GemmTolerance(96)},
      {"BatchMatMulV2",
       {TensorShape({3, 20, 30}), TensorShape({3, 30, 10})},
       -1,
       1,
       "attr { key: 'adj_x' value { b: false } } attr { key: 'adj_y' value { "
       "b: false } }",
       GemmTolerance(30)},
      {"_FusedMatMul",
       {TensorShape({64, 96}), TensorShape({96, 80}), TensorShape({80})},
       -1,
       1,
       "attr { key: 'transpose_a' value { b: false } } attr { key: "
       "'transpose_b' value { b: "
       "false } } attr { key: 'num_args' value { i: 1 } } attr { key: "
       "'fused_ops' value { list "
       "{ s: 'BiasAdd' s: 'Relu' } } } attr { key: 'epsilon' value { f: 0.0001 "
       "} }",
       GemmTolerance(96)},
      {"BiasAdd", {m, v}},
      {"Softmax", {m}},
      {"LogSoftmax", {m}},
  };
  for (const char* op : {"Neg",      "Abs",   "Square", "Tanh", "Sigmoid",  "Relu", "Relu6", "Elu",
                         "Softplus", "Exp",   "Erf",    "Erfc", "Floor",    "Ceil", "Round", "Rint",
                         "Sign",     "Expm1", "Sin",    "Cos",  "Softsign", "Selu"}) {
    cases.push_back({op, {m}});
  }
  {
    Case c{"LeakyRelu", {m}};
    c.attrs = "attr { key: 'alpha' value { f: 0.3 } }";
    cases.push_back(c);
    Case log1p{"Log1p", {m}};
    log1p.lo = -0.5f;
    cases.push_back(log1p);
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) {
    Case c{op, {m}};
    c.lo = 0.1f;
    c.hi = 4;
    cases.push_back(c);
  }
  for (const char* op : {"AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
                         "SquaredDifference", "FloorDiv", "FloorMod", "DivNoNan", "Less",
                         "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"}) {
    cases.push_back({op, {m, m}});
    cases.push_back({op, {m, v}});
    cases.push_back({op, {TensorShape({33, 1}), v}});
    cases.push_back({op, {scalar, m}});
  }
  Case pow{"Pow", {m, m}};
  pow.lo = 0.5f;
  pow.hi = 2;
  cases.push_back(pow);

  AddArrayAndNnCases(&cases);
  AddGradientCases(&cases);
  for (Case& c : cases) {
    // Keep the ops' attrs in TensorFlow's spelling.
    for (std::string* attrs : {&c.attrs, &c.cpu_attrs}) {
      for (char& ch : *attrs) {
        if (ch == '\'') ch = '"';
      }
    }
  }
  return cases;
}

std::vector<Tensor> InputsOf(const Case& c, uint32_t* seed) {
  std::vector<Tensor> inputs;
  for (const TensorShape& s : c.inputs) inputs.push_back(Random(s, c.lo, c.hi, (*seed)++));
  if (c.op == "RealDiv" || c.op == "FloorDiv" || c.op == "FloorMod") {
    inputs[1] = Random(c.inputs[1], 0.5f, 2, (*seed)++);
  }
  return inputs;
}

std::string Describe(const Case& c) {
  return absl::StrCat(c.op, " ", c.inputs.empty() ? "" : c.inputs[0].DebugString(), " ", c.attrs);
}

void ExpectEveryCaseAgrees(const std::function<SessionOptions()>& gpu_options) {
  uint32_t seed = 1;
  for (const Case& c : AllGpuOpCases()) {
    const std::vector<Tensor> inputs = InputsOf(c, &seed);
    absl::StatusOr<std::vector<Tensor>> cpu =
        c.cpu_in_nhwc ? RunNhwcOnCpu(c, inputs)
                      : RunCase(c, "/device:CPU:0", SessionOptions(), inputs);
    absl::StatusOr<std::vector<Tensor>> gpu = RunCase(c, "/device:GPU:0", gpu_options(), inputs);
    const std::string what = Describe(c);
    // Every failing op reported, not only the first.
    if (!cpu.ok() || !gpu.ok()) {
      ADD_FAILURE() << what << ": CPU " << cpu.status() << ", GPU " << gpu.status();
      continue;
    }
    for (int k = 0; k < c.outputs; ++k) {
      const Tensor& a = (*cpu)[k];
      const Tensor& b = (*gpu)[k];
      if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
        ADD_FAILURE() << what << " output " << k << ": CPU " << a.shape().DebugString() << " "
                      << DataTypeString(a.dtype()) << ", GPU " << b.shape().DebugString() << " "
                      << DataTypeString(b.dtype());
        continue;
      }
      if (a.dtype() != DT_FLOAT) {
        EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0) << what;
        continue;
      }
      std::string why;
      EXPECT_TRUE(FloatsAgree(a, b, c.tol, &why)) << what << " output " << k << ": " << why;
    }
  }
}

bool FloatsAgree(const Tensor& want, const Tensor& got, double tol, std::string* why) {
  if (want.dtype() != DT_FLOAT || got.dtype() != DT_FLOAT || want.shape() != got.shape()) {
    *why = absl::StrCat("expected float ", want.shape().DebugString(), ", got ",
                        DataTypeString(got.dtype()), " ", got.shape().DebugString());
    return false;
  }
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const double x = want.flat<float>()[i], y = got.flat<float>()[i];
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
    } else {
      ok = std::fabs(x - y) <= tol * std::max(1.0, std::fabs(x));
    }
    if (!ok) {
      *why = absl::StrCat("element ", i, ": expected ", x, ", got ", y, " (tolerance ", tol,
                          " relative to max(1, |expected|))");
      return false;
    }
  }
  return true;
}

void ExpectModelOnGpu(const std::string& model, const RunMetadata& metadata) {
  static const std::set<std::string> kCompute = {"Conv2D",
                                                 "_FusedConv2D",
                                                 "DepthwiseConv2dNative",
                                                 "_FusedDepthwiseConv2dNative",
                                                 "MatMul",
                                                 "_FusedMatMul",
                                                 "BatchMatMulV2",
                                                 "Einsum",
                                                 "FusedBatchNormV3",
                                                 "MaxPool",
                                                 "AvgPool",
                                                 "Softmax",
                                                 "Mean"};
  ASSERT_GT(metadata.partition_graphs_size(), 0) << model << ": no partition graphs";
  std::set<std::string> on_gpu;
  bool has_loop = false;
  for (const GraphDef& part : metadata.partition_graphs()) {
    for (const NodeDef& n : part.node()) {
      has_loop |= n.op() == "Enter";
      const bool gpu = absl::StrContains(n.device(), "GPU:0");
      if (gpu) on_gpu.insert(n.op());
      auto t = n.attr().find("T");
      const bool is_float = t != n.attr().end() && t->second.type() == DT_FLOAT;
      EXPECT_FALSE(!gpu && is_float && kCompute.count(n.op()) > 0)
          << model << ": " << n.name() << " (" << n.op() << ") ran on " << n.device();
    }
  }
  if (has_loop) {
    for (const char* op : {"Enter", "Merge", "Switch"}) {
      EXPECT_EQ(on_gpu.count(op), 1u) << model << ": no " << op << " on the GPU";
    }
  }
}

}  // namespace testing
}  // namespace graphrun
