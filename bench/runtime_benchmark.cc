// Runtime overheads and kernel efficiency through the Session, side by side
// with the same work done directly, so ratios are measured in one run:
//   - executor overhead: a serial chain of trivial nodes (ns/node) and a
//     1 -> N -> 1 fan-out/fan-in (ns/node), both with the graph optimizer
//     OFF (SessionOptions::Optimize::kNone): its default passes (constant
//     folding, common subexpressions, pruning) reduce a Const followed by
//     Identity/AddN nodes to one Const, which would leave a one-node step
//     and a meaningless ns/node;
//   - Session::Run fixed cost on a one-node graph (p50, µs);
//   - MatMul n x n through the Session vs the same Gemm call made directly;
//   - peak memory of a step vs the bytes its tensors add up to.
// Every benchmark that runs a Session reports an `optimizer` counter: 1 when
// the step ran through the default graph optimizer, 0 when it was off.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "graph/protos/graph.pb.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& i : inputs) n->add_input(i);
  return n;
}

void SetType(NodeDef* n, const char* attr, DataType t) { (*n->mutable_attr())[attr].set_type(t); }

NodeDef* AddScalarConst(GraphDef* g, const std::string& name, float v) {
  NodeDef* c = AddNode(g, name, "Const");
  SetType(c, "dtype", DT_FLOAT);
  Tensor::Scalar<float>(v).AsProtoField((*c->mutable_attr())["value"].mutable_tensor());
  return c;
}

NodeDef* AddPlaceholder(GraphDef* g, const std::string& name) {
  NodeDef* p = AddNode(g, name, "Placeholder");
  SetType(p, "dtype", DT_FLOAT);
  return p;
}

// `optimize` = kNone for graphs the optimizer would fold away (the executor
// overhead benchmarks); sets the `optimizer` counter to say which ran.
std::unique_ptr<Session> NewSession(
    benchmark::State& state, const GraphDef& g,
    SessionOptions::Optimize optimize = SessionOptions::Optimize::kDefault) {
  SessionOptions options;
  options.optimize = optimize;
  state.counters["optimizer"] = optimize == SessionOptions::Optimize::kNone ? 0 : 1;
  auto s = Session::Create(g, options);
  if (!s.ok()) {
    fprintf(stderr, "%s\n", s.status().ToString().c_str());
    abort();
  }
  return std::move(s).value();
}

// c -> Identity x N -> fetch. Optimizer off: with it on, constant folding,
// common subexpressions and pruning turn the chain into one Const and
// nothing of the executor is measured.
void BM_SerialChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  GraphDef g;
  AddScalarConst(&g, "c", 1.f);
  std::string prev = "c";
  for (int i = 0; i < n; ++i) {
    std::string name = absl::StrCat("id", i);
    SetType(AddNode(&g, name, "Identity", {prev}), "T", DT_FLOAT);
    prev = name;
  }
  auto session = NewSession(state, g, SessionOptions::Optimize::kNone);
  std::vector<Tensor> out;
  // The first Run builds the step's plan; keep it out of the timing.
  if (!session->Run({}, {prev}, {}, &out).ok()) state.SkipWithError("run failed");
  for (auto _ : state) {
    if (!session->Run({}, {prev}, {}, &out).ok()) state.SkipWithError("run failed");
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SerialChain)->Arg(10000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// src -> N parallel Identity -> AddN -> fetch. Optimizer off, for the same
// reason as BM_SerialChain (the whole graph folds into one Const).
void BM_FanOutFanIn(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  GraphDef g;
  AddScalarConst(&g, "src", 1.f);
  NodeDef* sum = nullptr;
  std::vector<std::string> mids;
  for (int i = 0; i < n; ++i) {
    std::string name = absl::StrCat("mid", i);
    SetType(AddNode(&g, name, "Identity", {"src"}), "T", DT_FLOAT);
    mids.push_back(name);
  }
  sum = AddNode(&g, "sum", "AddN", mids);
  SetType(sum, "T", DT_FLOAT);
  (*sum->mutable_attr())["N"].set_i(n);
  auto session = NewSession(state, g, SessionOptions::Optimize::kNone);
  std::vector<Tensor> out;
  // The first Run builds the step's plan; keep it out of the timing.
  if (!session->Run({}, {"sum"}, {}, &out).ok()) state.SkipWithError("run failed");
  for (auto _ : state) {
    if (!session->Run({}, {"sum"}, {}, &out).ok()) state.SkipWithError("run failed");
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      n + 2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FanOutFanIn)->Arg(1000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Fixed cost of Session::Run: one Const, fetched. Reports the median.
void BM_SessionRunOneNode(benchmark::State& state) {
  GraphDef g;
  AddScalarConst(&g, "c", 3.f);
  auto session = NewSession(state, g);
  std::vector<Tensor> out;
  std::vector<double> us;
  us.reserve(1 << 20);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    absl::Status s = session->Run({}, {"c"}, {}, &out);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) state.SkipWithError("run failed");
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[us.size() * 99 / 100];
}
BENCHMARK(BM_SessionRunOneNode)->UseRealTime();

// Same, with a feed: x -> Identity -> fetch.
void BM_SessionRunFeedFetch(benchmark::State& state) {
  GraphDef g;
  AddPlaceholder(&g, "x");
  SetType(AddNode(&g, "y", "Identity", {"x"}), "T", DT_FLOAT);
  auto session = NewSession(state, g);
  std::vector<Tensor> out;
  Tensor x = Tensor::Scalar<float>(1.f);
  std::vector<double> us;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    absl::Status s = session->Run({{"x", x}}, {"y"}, {}, &out);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) state.SkipWithError("run failed");
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
}
BENCHMARK(BM_SessionRunFeedFetch)->UseRealTime();

Tensor RandomMatrix(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  auto v = t.flat<float>();
  uint32_t s = 12345;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
  return t;
}

// mm = a x b, both fed.
GraphDef MatMulGraph() {
  GraphDef g;
  AddPlaceholder(&g, "a");
  AddPlaceholder(&g, "b");
  SetType(AddNode(&g, "mm", "MatMul", {"a", "b"}), "T", DT_FLOAT);
  return g;
}

// a (fed) x b (fed) through the Session.
void BM_MatMulSession(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto session = NewSession(state, MatMulGraph());
  Tensor a = RandomMatrix(n), b = RandomMatrix(n);
  std::vector<Tensor> out;
  for (auto _ : state) {
    if (!session->Run({{"a", a}, {"b", b}}, {"mm"}, {}, &out).ok()) state.SkipWithError("run failed");
  }
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMulSession)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same library call the MatMul kernel makes, on a pool of the same size.
void BM_MatMulDirect(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = NumSchedulableCpus();
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  Tensor a = RandomMatrix(n), b = RandomMatrix(n);
  Tensor c(DT_FLOAT, TensorShape({n, n}));
  for (auto _ : state) {
    Gemm<float>(&device, false, false, n, n, n, a.flat<float>().data(), b.flat<float>().data(),
                c.flat<float>().data());
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMulDirect)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// The products of an MLP 784-256-256-10 training step at batch 64, each
// as the gradient graph writes it: forward x W, the weight gradient
// x^T dY (transpose_a) and the input gradient dY W^T (transpose_b).
void BM_MlpStepGemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0;
  const int threads = state.range(5) > 0 ? static_cast<int>(state.range(5)) : NumSchedulableCpus();
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  Tensor a(DT_FLOAT, TensorShape({ta ? k : m, ta ? m : k}));
  Tensor b(DT_FLOAT, TensorShape({tb ? n : k, tb ? k : n}));
  for (Tensor* t : {&a, &b}) {
    float* v = t->flat<float>().data();
    for (int64_t i = 0; i < t->NumElements(); ++i) v[i] = static_cast<float>(i % 7) * 0.1f;
  }
  Tensor c(DT_FLOAT, TensorShape({m, n}));
  for (auto _ : state) {
    Gemm<float>(&device, ta, tb, m, n, k, a.flat<float>().data(), b.flat<float>().data(),
                c.flat<float>().data());
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * m * n * k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MlpStepGemm)
    ->ArgNames({"m", "n", "k", "ta", "tb", "threads"})
    ->Args({64, 256, 784, 0, 0, 0})   // x W0
    ->Args({784, 256, 64, 1, 0, 0})   // x^T dH1: W0's gradient
    ->Args({64, 256, 256, 0, 0, 0})   // h1 W1
    ->Args({256, 256, 64, 1, 0, 0})   // h1^T dH2: W1's gradient
    ->Args({64, 256, 256, 0, 1, 0})   // dH2 W1^T
    ->Args({64, 256, 784, 0, 0, 1})   // the same on one thread
    ->Args({784, 256, 64, 1, 0, 1})
    ->Args({64, 256, 256, 0, 0, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Session and direct call alternating in one loop, so both see the same
// machine: ratio = median direct time / median Session time (goal >= 0.95).
void BM_MatMulSessionVsDirect(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto session = NewSession(state, MatMulGraph());
  const int threads = NumSchedulableCpus();
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  Tensor a = RandomMatrix(n), b = RandomMatrix(n);
  std::vector<Tensor> out;
  std::vector<double> session_s, direct_s;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    if (!session->Run({{"a", a}, {"b", b}}, {"mm"}, {}, &out).ok()) state.SkipWithError("run failed");
    auto t1 = std::chrono::steady_clock::now();
    Tensor c(DT_FLOAT, TensorShape({n, n}));
    auto t2 = std::chrono::steady_clock::now();
    Gemm<float>(&device, false, false, n, n, n, a.flat<float>().data(), b.flat<float>().data(),
                c.flat<float>().data());
    benchmark::DoNotOptimize(c.raw_data());
    auto t3 = std::chrono::steady_clock::now();
    session_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    direct_s.push_back(std::chrono::duration<double>(t3 - t2).count());
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  const double ms = median(session_s), md = median(direct_s);
  const double flops = 2.0 * n * n * n;
  state.counters["session_GFLOPs"] = flops / ms * 1e-9;
  state.counters["direct_GFLOPs"] = flops / md * 1e-9;
  state.counters["ratio"] = md / ms;
}
BENCHMARK(BM_MatMulSessionVsDirect)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// One thread, no pool: the per-core figure the threaded runs are measured
// against (parallel efficiency = threaded / (cores x this)).
void BM_MatMulDirectOneThread(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = RandomMatrix(n), b = RandomMatrix(n);
  Tensor c(DT_FLOAT, TensorShape({n, n}));
  for (auto _ : state) {
    Gemm<float>(nullptr, false, false, n, n, n, a.flat<float>().data(),
                b.flat<float>().data(), c.flat<float>().data());
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMulDirectOneThread)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// x [1024,1024] -> 16 alternating Relu/Neg -> fetch: peak bytes of the step
// against the sum of every tensor it made. Freed-after-last-use plus in-place
// forwarding keep the peak near two tensors.
void BM_PeakMemoryChain(benchmark::State& state) {
  const int depth = 16;
  GraphDef g;
  AddPlaceholder(&g, "x");
  std::string prev = "x";
  for (int i = 0; i < depth; ++i) {
    std::string name = absl::StrCat("op", i);
    SetType(AddNode(&g, name, i % 2 ? "Neg" : "Relu", {prev}), "T", DT_FLOAT);
    prev = name;
  }
  auto session = NewSession(state, g);
  Device* device = session->devices()[0];
  std::vector<Tensor> out;
  double peak = 0;
  for (auto _ : state) {
    Tensor x = RandomMatrix(1024);
    device->ResetAllocatorPeak();
    const int64_t before = device->allocator_stats().bytes_in_use;
    std::vector<std::pair<std::string, Tensor>> feeds{{"x", std::move(x)}};
    if (!session->Run(feeds, {prev}, {}, &out).ok()) state.SkipWithError("run failed");
    peak = static_cast<double>(device->allocator_stats().peak_bytes_in_use - before);
  }
  const double tensor = 1024.0 * 1024 * 4;
  state.counters["peak_MB"] = peak / 1e6;
  state.counters["sum_of_tensors_MB"] = tensor * depth / 1e6;
  state.counters["peak_over_sum"] = peak / (tensor * depth);
}
BENCHMARK(BM_PeakMemoryChain)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace
}  // namespace graphrun
