// Conv2D, float32, NHWC, batch 2, on the shapes of the Keras fixtures in
// tests/fixtures/models (ResNet50, VGG16, InceptionV3, Xception at their
// fixture sizes) plus the first layers of VGG16 and ResNet50 at 224x224,
// three ways side by side:
//   eigen   graphrun's Conv2D kernel forced onto its im2col + Eigen GEMM path
//           (GRAPHRUN_CONV2D_LIBRARY=eigen), through a one-node Session, on
//           the CPU device's intra-op pool (one thread per core);
//   graphrun  the same Session with the kernel's default choice (oneDNN,
//           one single-threaded piece per pool thread; for a few output
//           pixels, the filter streamed once by skinny_gemm.h; for one
//           input channel and 4 or 8 filters, narrow_conv.h);
//   graphrun_onednn  the same, held to oneDNN (GRAPHRUN_CONV2D_LIBRARY=onednn);
//   onednn  oneDNN's convolution_forward called directly (nhwc in and out,
//           weights reordered once outside the timed loop; its OpenMP
//           threads, one per core).
//
//   ./bazelw run //bench:conv_benchmark -- --benchmark_repetitions=5
//
// Counter: GFLOP/s (2 * multiply-adds per second).
//
// On the shared 2-core Zen 5 (AVX-512) machines, best of 3, GFLOP/s: the
// Eigen path 26-143, the oneDNN path 42-237 (brgconv kernels), faster on 20
// of the 22 shapes (1.1-3.6x; the two small 1x1 ResNet50 convolutions with
// 8 and 128 output pixels were 0.74x and 0.91x). Called directly with its
// own OpenMP threads oneDNN did as well alone, but inside a graph its
// spinning OpenMP workers took the Eigen pool's cores (VGG16 step 2x
// slower than on Eigen); hence the single-threaded pieces of conv_onednn.h.
// Machine load from other users moves single runs by up to 2x: compare
// rows of one run only.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "dnnl.hpp"
#include "bench/conv_shape.h"
#include "graph/protos/graph.pb.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

using bench::ConvShape;

// name: model, input HxWxC, filter, stride, padding.
const ConvShape kShapes[] = {
    {"vgg16_224_conv1_3x3_3to64", 2, 224, 224, 3, 3, 3, 64, 1, true},
    {"vgg16_224_conv2_3x3_64to64", 2, 224, 224, 64, 3, 3, 64, 1, true},
    {"resnet50_224_conv1_7x7s2_3to64", 2, 230, 230, 3, 7, 7, 64, 2, false},
    {"resnet50_38_conv1_7x7s2_3to64", 2, 38, 38, 3, 7, 7, 64, 2, false},
    {"resnet50_8_1x1_64to256", 2, 8, 8, 64, 1, 1, 256, 1, false},
    {"resnet50_8_3x3_64to64", 2, 8, 8, 64, 3, 3, 64, 1, true},
    {"resnet50_4_3x3_128to128", 2, 4, 4, 128, 3, 3, 128, 1, true},
    {"resnet50_2_3x3_256to256", 2, 2, 2, 256, 3, 3, 256, 1, true},
    {"resnet50_2_1x1_1024to256", 2, 2, 2, 1024, 1, 1, 256, 1, false},
    {"resnet50_8_1x1s2_256to512", 2, 8, 8, 256, 1, 1, 512, 2, false},
    {"vgg16_32_3x3_64to64", 2, 32, 32, 64, 3, 3, 64, 1, true},
    {"vgg16_16_3x3_128to128", 2, 16, 16, 128, 3, 3, 128, 1, true},
    {"vgg16_8_3x3_256to256", 2, 8, 8, 256, 3, 3, 256, 1, true},
    {"vgg16_4_3x3_512to512", 2, 4, 4, 512, 3, 3, 512, 1, true},
    {"vgg16_2_3x3_512to512", 2, 2, 2, 512, 3, 3, 512, 1, true},
    {"inceptionv3_75_3x3s2_3to32", 2, 75, 75, 3, 3, 3, 32, 2, false},
    {"inceptionv3_35_3x3_32to64", 2, 35, 35, 32, 3, 3, 64, 1, true},
    {"inceptionv3_7_5x5_48to64", 2, 7, 7, 48, 5, 5, 64, 1, true},
    {"inceptionv3_3_1x1_768to192", 2, 3, 3, 768, 1, 1, 192, 1, true},
    {"inceptionv3_3_1x7_160to160", 2, 3, 3, 160, 1, 7, 160, 1, true},
    {"xception_33_1x1_64to128", 2, 33, 33, 64, 1, 1, 128, 1, false},
    {"xception_5_1x1_728to728", 2, 5, 5, 728, 1, 1, 728, 1, false},
    // bench/side_by_side.py's VGG-style CNN: its first layer, batch 8.
    {"vgg_cnn_64_3x3_3to32", 8, 64, 64, 3, 3, 3, 32, 1, true},
    {"stem_64_3x3_3to16", 8, 64, 64, 3, 3, 3, 16, 1, true},
    // The text CNN fixture's Conv1D (a 1-row Conv2D), batch 2.
    {"text_cnn_1x32_1x5_64to128", 2, 1, 32, 64, 1, 5, 128, 1, false},
    // The small CNN of bench/train_vs_tensorflow.py, batch 64.
    {"cnn_conv1_28x28_5x5_1to8", 64, 28, 28, 1, 5, 5, 8, 1, true},
    {"cnn_conv2_14x14_5x5_8to16", 64, 14, 14, 8, 5, 5, 16, 1, true},
    // Few output pixels: the last stages at the fixtures' sizes, where the
    // cost is reading the filter (skinny_gemm.h), and pixel counts around
    // kSkinnyMaxRows.
    {"resnet50_1_1x1_1024to2048", 2, 1, 1, 1024, 1, 1, 2048, 1, false},
    {"resnet50_1_1x1_2048to512", 2, 1, 1, 2048, 1, 1, 512, 1, false},
    {"resnet50_1_3x3_512to512", 2, 1, 1, 512, 3, 3, 512, 1, true},
    {"resnet50_2_3x3s2_256to256", 2, 2, 2, 256, 3, 3, 256, 2, true},
    {"pixels4_1x1_1024to1024", 1, 2, 2, 1024, 1, 1, 1024, 1, false},
    {"pixels8_1x1_1024to1024", 2, 2, 2, 1024, 1, 1, 1024, 1, false},
    {"pixels12_1x1_1024to1024", 3, 2, 2, 1024, 1, 1, 1024, 1, false},
    {"pixels16_1x1_1024to1024", 1, 4, 4, 1024, 1, 1, 1024, 1, false},
    {"pixels32_1x1_1024to1024", 2, 4, 4, 1024, 1, 1, 1024, 1, false},
};

std::vector<float> RandomValues(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

Tensor RandomTensor(std::vector<int64_t> dims, unsigned seed) {
  Tensor t(DT_FLOAT, *TensorShape::FromDims(dims));
  std::vector<float> v = RandomValues(t.NumElements(), seed);
  std::copy(v.begin(), v.end(), t.flat<float>().data());
  return t;
}

void SetFlops(benchmark::State& state, const ConvShape& s) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      s.Flops() / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// x (fed) and a Const filter into one Conv2D node; `library` is the
// GRAPHRUN_CONV2D_LIBRARY the kernel is built under.
void BM_Graphrun(benchmark::State& state, const ConvShape& s,
                 const char* library) {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  NodeDef* f = g.add_node();
  f->set_name("f");
  f->set_op("Const");
  (*f->mutable_attr())["dtype"].set_type(DT_FLOAT);
  RandomTensor({s.filter_rows, s.filter_cols, s.in_depth, s.out_depth}, 2)
      .AsProtoTensorContent((*f->mutable_attr())["value"].mutable_tensor());
  NodeDef* conv = g.add_node();
  conv->set_name("conv");
  conv->set_op("Conv2D");
  conv->add_input("x");
  conv->add_input("f");
  auto& attr = *conv->mutable_attr();
  attr["T"].set_type(DT_FLOAT);
  for (int64_t v : {int64_t{1}, s.stride, s.stride, int64_t{1}}) {
    attr["strides"].mutable_list()->add_i(v);
  }
  attr["padding"].set_s(s.same ? "SAME" : "VALID");
  attr["data_format"].set_s("NHWC");

  // Kernels read it when they are built, at the first Run.
  setenv("GRAPHRUN_CONV2D_LIBRARY", library, 1);
  auto session = Session::Create(g, SessionOptions());
  Tensor input = RandomTensor({s.batch, s.rows, s.cols, s.in_depth}, 1);
  std::vector<Tensor> out;
  absl::Status warm_up = session.ok()
                             ? (*session)->Run({{"x", input}}, {"conv"}, {}, &out)
                             : session.status();
  unsetenv("GRAPHRUN_CONV2D_LIBRARY");
  if (!warm_up.ok()) {
    state.SkipWithError(warm_up.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status st = (*session)->Run({{"x", input}}, {"conv"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  SetFlops(state, s);
}

// oneDNN's convolution_forward, nhwc in and out, weights pre-reordered.
void BM_OneDNN(benchmark::State& state, const ConvShape& s) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const int64_t oh = s.OutRows(), ow = s.OutCols();
  // oneDNN names dimensions NCHW whatever the memory layout.
  dnnl::memory::dims src_dims = {s.batch, s.in_depth, s.rows, s.cols};
  dnnl::memory::dims w_dims = {s.out_depth, s.in_depth, s.filter_rows,
                               s.filter_cols};
  dnnl::memory::dims dst_dims = {s.batch, s.out_depth, oh, ow};
  dnnl::memory::dims strides = {s.stride, s.stride};
  dnnl::memory::dims pad_l = {s.PadBefore(s.rows, s.filter_rows, oh),
                              s.PadBefore(s.cols, s.filter_cols, ow)};
  dnnl::memory::dims pad_r = {s.PadAfter(s.rows, s.filter_rows, oh),
                              s.PadAfter(s.cols, s.filter_cols, ow)};
  dnnl::memory::desc src_md(src_dims, dt::f32, tag::nhwc);
  dnnl::memory::desc dst_md(dst_dims, dt::f32, tag::nhwc);
  dnnl::memory::desc w_any(w_dims, dt::f32, tag::any);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      src_md, w_any, dst_md, strides, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, engine);
  dnnl::convolution_forward conv(pd);

  std::vector<float> src = RandomValues(s.batch * s.rows * s.cols * s.in_depth, 1);
  // TensorFlow's filter layout [rows, cols, in, out] is oneDNN's hwio.
  std::vector<float> filter = RandomValues(
      s.filter_rows * s.filter_cols * s.in_depth * s.out_depth, 2);
  std::vector<float> dst(s.batch * oh * ow * s.out_depth);
  dnnl::memory src_mem(src_md, engine, src.data());
  dnnl::memory dst_mem(dst_md, engine, dst.data());
  dnnl::memory user_w(dnnl::memory::desc(w_dims, dt::f32, tag::hwio), engine,
                      filter.data());
  dnnl::memory w_mem = user_w;
  if (pd.weights_desc() != user_w.get_desc()) {
    w_mem = dnnl::memory(pd.weights_desc(), engine);
    dnnl::reorder(user_w, w_mem).execute(stream, user_w, w_mem);
    stream.wait();
  }
  state.SetLabel(pd.impl_info_str());
  for (auto _ : state) {
    conv.execute(stream, {{DNNL_ARG_SRC, src_mem},
                          {DNNL_ARG_WEIGHTS, w_mem},
                          {DNNL_ARG_DST, dst_mem}});
    stream.wait();
  }
  SetFlops(state, s);
}

int RegisterAll() {
  for (const ConvShape& s : kShapes) {
    benchmark::RegisterBenchmark(absl::StrCat("Conv2D/", s.name, "/eigen").c_str(),
                                 BM_Graphrun, s, "eigen")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(absl::StrCat("Conv2D/", s.name, "/graphrun").c_str(),
                                 BM_Graphrun, s, "auto")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(
        absl::StrCat("Conv2D/", s.name, "/graphrun_onednn").c_str(), BM_Graphrun, s,
        "onednn")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(absl::StrCat("Conv2D/", s.name, "/onednn").c_str(),
                                 BM_OneDNN, s)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return 0;
}
const int registered = RegisterAll();

}  // namespace
}  // namespace graphrun

BENCHMARK_MAIN();
