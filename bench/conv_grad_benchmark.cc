// Conv2DBackpropInput and Conv2DBackpropFilter, float32, NHWC, on the
// shapes of a TensorFlow v1 MNIST-style CNN training step (two 5x5
// convolutions, 28x28x1 -> 8 and 14x14x8 -> 16 channels, batch 64, SAME,
// stride 1) plus a stride-2 and a VALID case, two ways side by side:
//   eigen     the kernels held to their pre-oneDNN paths
//             (GRAPHRUN_CONV2D_LIBRARY=eigen): Conv2DBackpropInput as GEMM +
//             col2im, Conv2DBackpropFilter as im2col + GEMM (or a direct
//             loop when small);
//   graphrun  the kernels' default choice: oneDNN's backward primitives,
//             one single-threaded piece per intra-op thread
//             (conv_onednn_backward.h), and for a filter gradient with few
//             input and output channels the narrow kernel (narrow_conv.h);
//   graphrun_onednn  the same without the narrow kernel
//             (GRAPHRUN_NARROW_CONV=0).
// Each through a one-node Session on the CPU device's intra-op pool.
//
//   ./bazelw run //bench:conv_grad_benchmark -- --benchmark_repetitions=3
//
// Counter: GFLOP/s (2 * multiply-adds per second). Machine load from other
// users moves single runs by up to 2x: compare rows of one run only.
//
// On the shared 2-core AVX-512 machine, median of 3, ms eigen -> graphrun:
//   Conv2DBackpropInput   14x14 8->16  3.64 -> 0.47   28x28 1->8  5.48 -> 0.92
//                         28x28 s2     3.61 -> 0.57   14x14 VALID 3.06 -> 0.31
//   Conv2DBackpropFilter  14x14 8->16  2.51 -> 0.30   28x28 1->8  5.50 -> 0.22
//                         28x28 s2     2.52 -> 0.35   14x14 VALID 1.28 -> 0.21
// (oneDNN's jit:avx512_core backward kernels, one piece of 32 images per
// thread.)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "bench/conv_shape.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

using bench::ConvShape;

const ConvShape kShapes[] = {
    {"cnn_conv2_14x14_5x5_8to16", 64, 14, 14, 8, 5, 5, 16, 1, true},
    {"cnn_conv1_28x28_5x5_1to8", 64, 28, 28, 1, 5, 5, 8, 1, true},
    {"28x28_5x5s2_8to16", 64, 28, 28, 8, 5, 5, 16, 2, true},
    {"14x14_5x5_valid_8to16", 64, 14, 14, 8, 5, 5, 16, 1, false},
};

Tensor RandomTensor(std::vector<int64_t> dims, unsigned seed) {
  Tensor t(DT_FLOAT, *TensorShape::FromDims(dims));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float* v = t.flat<float>().data();
  for (int64_t i = 0; i < t.NumElements(); ++i) v[i] = dist(gen);
  return t;
}

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  return n;
}

void AddPlaceholder(GraphDef* g, const std::string& name, DataType dtype) {
  (*AddNode(g, name, "Placeholder")->mutable_attr())["dtype"].set_type(dtype);
}

enum class Grad { kInput, kFilter };

// One Conv2DBackpropInput (sizes, filter, out_backprop fed) or
// Conv2DBackpropFilter (input, sizes, out_backprop fed) node; `library` is
// the GRAPHRUN_CONV2D_LIBRARY the kernel is built under.
void BM_ConvGrad(benchmark::State& state, const ConvShape& s, Grad grad, const char* library,
                 const char* narrow) {
  GraphDef g;
  AddPlaceholder(&g, "sizes", DT_INT32);
  AddPlaceholder(&g, "a", DT_FLOAT);
  AddPlaceholder(&g, "dy", DT_FLOAT);
  NodeDef* conv =
      AddNode(&g, "conv", grad == Grad::kInput ? "Conv2DBackpropInput" : "Conv2DBackpropFilter");
  if (grad == Grad::kInput) {
    conv->add_input("sizes");
    conv->add_input("a");
  } else {
    conv->add_input("a");
    conv->add_input("sizes");
  }
  conv->add_input("dy");
  auto& attr = *conv->mutable_attr();
  attr["T"].set_type(DT_FLOAT);
  for (int64_t v : {int64_t{1}, s.stride, s.stride, int64_t{1}}) {
    attr["strides"].mutable_list()->add_i(v);
  }
  attr["padding"].set_s(s.same ? "SAME" : "VALID");
  attr["data_format"].set_s("NHWC");

  const std::vector<int64_t> in_dims = {s.batch, s.rows, s.cols, s.in_depth};
  const std::vector<int64_t> filter_dims = {s.filter_rows, s.filter_cols, s.in_depth, s.out_depth};
  const std::vector<int64_t>& sized = grad == Grad::kInput ? in_dims : filter_dims;
  const Tensor sizes = Tensor::FromVector(std::vector<int32_t>(sized.begin(), sized.end()));
  const Tensor a = grad == Grad::kInput ? RandomTensor(filter_dims, 2) : RandomTensor(in_dims, 1);
  const Tensor dy = RandomTensor({s.batch, s.OutRows(), s.OutCols(), s.out_depth}, 3);
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"sizes", sizes}, {"a", a}, {"dy", dy}};

  // Kernels read it when they are built, at the first Run.
  setenv("GRAPHRUN_CONV2D_LIBRARY", library, 1);
  setenv("GRAPHRUN_NARROW_CONV", narrow, 1);
  auto session = Session::Create(g, SessionOptions());
  std::vector<Tensor> out;
  absl::Status warm_up =
      session.ok() ? (*session)->Run(feeds, {"conv"}, {}, &out) : session.status();
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  unsetenv("GRAPHRUN_NARROW_CONV");
  if (!warm_up.ok()) {
    state.SkipWithError(warm_up.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status st = (*session)->Run(feeds, {"conv"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.Flops() / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// MaxPoolGrad (2x2, stride 2, SAME) on the CNN's two pooled activations:
// orig_input, orig_output and the gradient fed. With `relu`, the ReluGrad
// of the pooling's input after it, as the CNN's gradient graph has it:
// two kernels (the optimizer off) or the optimizer's one _FusedMaxPoolGrad.
enum class PoolGrad { kAlone, kThenReluGrad, kFused };
void BM_MaxPoolGrad(benchmark::State& state, int64_t size, int64_t depth, PoolGrad form) {
  GraphDef g;
  for (const char* name : {"x", "y", "dy"}) AddPlaceholder(&g, name, DT_FLOAT);
  NodeDef* n = AddNode(&g, "pool_grad", "MaxPoolGrad");
  for (const char* in : {"x", "y", "dy"}) n->add_input(in);
  if (form == PoolGrad::kAlone) {
    n->set_name("grad");
  } else {
    NodeDef* relu_grad = AddNode(&g, "grad", "ReluGrad");
    relu_grad->add_input("pool_grad");
    relu_grad->add_input("x");
    (*relu_grad->mutable_attr())["T"].set_type(DT_FLOAT);
  }
  auto& attr = *n->mutable_attr();
  attr["T"].set_type(DT_FLOAT);
  for (int64_t v : {1, 2, 2, 1}) attr["ksize"].mutable_list()->add_i(v);
  for (int64_t v : {1, 2, 2, 1}) attr["strides"].mutable_list()->add_i(v);
  attr["padding"].set_s("SAME");
  attr["data_format"].set_s("NHWC");
  const int64_t out = (size + 1) / 2;
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x", RandomTensor({64, size, size, depth}, 1)},
      {"y", RandomTensor({64, out, out, depth}, 2)},
      {"dy", RandomTensor({64, out, out, depth}, 3)}};
  SessionOptions options;
  if (form == PoolGrad::kThenReluGrad) options.optimize = SessionOptions::Optimize::kNone;
  auto session = Session::Create(g, options);
  std::vector<Tensor> result;
  for (auto _ : state) {
    absl::Status st = (*session)->Run(feeds, {"grad"}, {}, &result);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
}

// BiasAddGrad (NHWC) on the CNN's first convolution's output gradient.
void BM_BiasAddGrad(benchmark::State& state) {
  GraphDef g;
  AddPlaceholder(&g, "dy", DT_FLOAT);
  NodeDef* n = AddNode(&g, "grad", "BiasAddGrad");
  n->add_input("dy");
  (*n->mutable_attr())["T"].set_type(DT_FLOAT);
  (*n->mutable_attr())["data_format"].set_s("NHWC");
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"dy", RandomTensor({64, 28, 28, 8}, 1)}};
  auto session = Session::Create(g, SessionOptions());
  std::vector<Tensor> result;
  for (auto _ : state) {
    absl::Status st = (*session)->Run(feeds, {"grad"}, {}, &result);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
}

int RegisterAll() {
  benchmark::RegisterBenchmark("BM_BiasAddGrad/cnn_conv1_28x28x8", BM_BiasAddGrad)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  for (const auto& [name, form] : {std::pair{"", PoolGrad::kAlone},
                                    std::pair{"_then_relu_grad", PoolGrad::kThenReluGrad},
                                    std::pair{"_fused_relu_grad", PoolGrad::kFused}}) {
    benchmark::RegisterBenchmark(absl::StrCat("BM_MaxPoolGrad/cnn_pool1_28x28x8", name).c_str(),
                                 BM_MaxPoolGrad, 28, 8, form)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(absl::StrCat("BM_MaxPoolGrad/cnn_pool2_14x14x16", name).c_str(),
                                 BM_MaxPoolGrad, 14, 16, form)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  for (const ConvShape& s : kShapes) {
    for (Grad grad : {Grad::kInput, Grad::kFilter}) {
      const char* op = grad == Grad::kInput ? "BM_Conv2DBackpropInput" : "BM_Conv2DBackpropFilter";
      struct Variant {
        const char* label;
        const char* library;
        const char* narrow;
      };
      for (const Variant& v : {Variant{"eigen", "eigen", "0"}, Variant{"graphrun", "auto", "1"},
                               Variant{"graphrun_onednn", "auto", "0"}}) {
        benchmark::RegisterBenchmark(absl::StrCat(op, "/", s.name, "/", v.label).c_str(),
                                     BM_ConvGrad, s, grad, v.library, v.narrow)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
  return 0;
}
const int registered = RegisterAll();

}  // namespace
}  // namespace graphrun

BENCHMARK_MAIN();
