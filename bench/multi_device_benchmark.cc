// Multi-device execution in one process (Session over --cpu_devices=N).
//
//   - BM_CrossDeviceEdge: a chain of 1000 Identity nodes, once on one device
//     and once alternating between two, run side by side in one loop; the
//     difference per hop is the cost of one Send/Recv pair (small tensor).
//     Graph optimizer OFF (SessionOptions::Optimize::kNone): with it on,
//     constant folding, common subexpressions and pruning reduce the
//     Const -> Identity chain to one Const, no Send/Recv pair is left and
//     the per-node and per-pair counters measure nothing.
//   - BM_BigTensorBetweenDevices: a fed 256 MB tensor read on another
//     device; a pointer handoff, so the step takes microseconds whatever
//     the size (effective GB/s reported).
//   - BM_Model/{mlp,cnn}/N: the fixture models exported by TensorFlow on N
//     virtual CPU devices: measured step time, the placer's prediction and
//     their ratio, and the speedup over one device (default optimizer, as
//     a user's Session runs them).
// Each benchmark reports an `optimizer` counter: 1 when its Sessions ran the
// default graph optimizer, 0 when it was off.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "runtime/step_costs.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

std::string Dev(int k) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", k); }

std::unique_ptr<Session> MustSession(
    const GraphDef& g, int cpu_devices,
    SessionOptions::Optimize optimize = SessionOptions::Optimize::kDefault) {
  SessionOptions options;
  options.cpu_devices = cpu_devices;
  options.optimize = optimize;
  auto s = Session::Create(g, options);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    std::abort();
  }
  return std::move(s).value();
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

GraphDef Chain(int n, bool alternate) {
  GraphDef g;
  NodeDef* c = g.add_node();
  c->set_name("c");
  c->set_op("Const");
  c->set_device(Dev(0));
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  Tensor::Scalar<float>(1).AsProtoField((*c->mutable_attr())["value"].mutable_tensor());
  std::string prev = "c";
  for (int i = 0; i < n; ++i) {
    NodeDef* x = g.add_node();
    x->set_name(absl::StrCat("i", i));
    x->set_op("Identity");
    x->set_device(Dev(alternate ? (i + 1) % 2 : 0));
    x->add_input(prev);
    (*x->mutable_attr())["T"].set_type(DT_FLOAT);
    prev = x->name();
  }
  return g;
}

// Optimizer off in both Sessions: see the comment at the top.
void BM_CrossDeviceEdge(benchmark::State& state) {
  const int n = 1000;
  constexpr auto kOff = SessionOptions::Optimize::kNone;
  auto one = MustSession(Chain(n, false), 2, kOff);
  auto two = MustSession(Chain(n, true), 2, kOff);
  const std::vector<std::string> fetch = {absl::StrCat("i", n - 1)};
  std::vector<Tensor> out;
  // The first Run of each builds its plan; keep it out of the timing.
  if (!one->Run({}, fetch, {}, &out).ok() || !two->Run({}, fetch, {}, &out).ok()) {
    state.SkipWithError("run failed");
    return;
  }
  std::vector<double> t_one, t_two;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    if (!one->Run({}, fetch, {}, &out).ok()) state.SkipWithError("run failed");
    auto t1 = std::chrono::steady_clock::now();
    if (!two->Run({}, fetch, {}, &out).ok()) state.SkipWithError("run failed");
    auto t2 = std::chrono::steady_clock::now();
    t_one.push_back(std::chrono::duration<double>(t1 - t0).count());
    t_two.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  const double one_s = Median(t_one), two_s = Median(t_two);
  state.counters["ns_per_node_one_device"] = one_s / n * 1e9;
  state.counters["ns_per_node_alternating"] = two_s / n * 1e9;
  state.counters["ns_per_send_recv"] = (two_s - one_s) / n * 1e9;
  state.counters["optimizer"] = 0;
}
BENCHMARK(BM_CrossDeviceEdge)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_BigTensorBetweenDevices(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const bool cross = state.range(1) != 0;
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  x->set_device(Dev(0));
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  NodeDef* y = g.add_node();
  y->set_name("y");
  y->set_op("Identity");
  y->set_device(Dev(cross ? 1 : 0));
  y->add_input("x");
  (*y->mutable_attr())["T"].set_type(DT_FLOAT);
  auto session = MustSession(g, 2);
  Tensor big(DT_FLOAT, TensorShape({bytes / 4}));
  std::vector<Tensor> out;
  for (auto _ : state) {
    if (!session->Run({{"x", big}}, {"y"}, {}, &out).ok()) state.SkipWithError("run failed");
    if (out[0].raw_data() != big.raw_data()) state.SkipWithError("the tensor was copied");
  }
  state.counters["effective_GBps"] = benchmark::Counter(
      static_cast<double>(bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["optimizer"] = 1;
}
BENCHMARK(BM_BigTensorBetweenDevices)
    ->ArgNames({"MB", "cross"})
    ->Args({256, 0})
    ->Args({256, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

struct Fixture {
  GraphDef graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
};

// tests/fixtures: the MANIFEST line "name feeds=a:0,... fetches=..." and
// its .pb / .npy files.
Fixture LoadFixture(const std::string& name) {
  const std::string dir = "tests/fixtures/";
  auto manifest = ReadFileToString(dir + "MANIFEST");
  auto graph = ReadGraphDefFile(dir + name + ".pb");
  if (!manifest.ok() || !graph.ok()) {
    std::fprintf(stderr, "cannot read fixture %s (run from the repository root or via "
                 "bazel run)\n", name.c_str());
    std::abort();
  }
  Fixture f;
  f.graph = *std::move(graph);
  for (absl::string_view line : absl::StrSplit(*manifest, '\n')) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.empty() || parts[0] != name) continue;
    for (const std::string& part : parts) {
      if (absl::StartsWith(part, "feeds=")) {
        for (absl::string_view feed : absl::StrSplit(part.substr(6), ',')) {
          std::vector<std::string> nk = absl::StrSplit(feed, ':');
          auto t = ReadNpyFile(absl::StrCat(dir, name, ".", nk[0], "_", nk[1], ".npy"));
          if (!t.ok()) std::abort();
          f.feeds.emplace_back(std::string(feed), *t);
        }
      } else if (absl::StartsWith(part, "fetches=")) {
        f.fetches = absl::StrSplit(part.substr(8), ',');
      }
    }
  }
  return f;
}

// Runs the graph on one device with tracing and writes each node's median
// time as a cost profile (what `graphrun run --save_costs` does).
std::string ProfileOnOneDevice(const Fixture& f, const std::string& name) {
  auto session = MustSession(f.graph, 1);
  StepCostRecorder costs(f.graph);
  std::vector<Tensor> out;
  for (int i = 0; i < 30; ++i) {
    RunOptions options;
    options.set_trace_level(RunOptions::FULL_TRACE);
    RunMetadata metadata;
    if (!session->Run(options, f.feeds, f.fetches, {}, &out, &metadata).ok()) std::abort();
    costs.Add(metadata.step_stats());
  }
  const std::string path = absl::StrCat("/tmp/graphrun_bench_", name, "_costs.json");
  if (!costs.costs().SaveProfile(path, "multi_device_benchmark").ok()) std::abort();
  return path;
}

void RunModel(benchmark::State& state, const std::string& name) {
  const int devices = static_cast<int>(state.range(0));
  const bool measured_costs = state.range(1) != 0;
  Fixture f = LoadFixture(name);
  SessionOptions options;
  options.cpu_devices = devices;
  if (measured_costs) options.cost_profile = ProfileOnOneDevice(f, name);
  auto created = Session::Create(f.graph, options);
  if (!created.ok()) {
    state.SkipWithError(created.status().ToString().c_str());
    return;
  }
  std::unique_ptr<Session> session = *std::move(created);
  auto single = MustSession(f.graph, 1);
  std::vector<Tensor> out;
  RunMetadata metadata;
  if (!session->Run(RunOptions(), f.feeds, f.fetches, {}, &out, &metadata).ok()) {
    state.SkipWithError("run failed");
    return;
  }
  std::vector<double> t_many, t_one;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    if (!session->Run(f.feeds, f.fetches, {}, &out).ok()) state.SkipWithError("run failed");
    auto t1 = std::chrono::steady_clock::now();
    if (!single->Run(f.feeds, f.fetches, {}, &out).ok()) state.SkipWithError("run failed");
    auto t2 = std::chrono::steady_clock::now();
    t_many.push_back(std::chrono::duration<double>(t1 - t0).count());
    t_one.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  const double measured = Median(t_many);
  const double predicted = metadata.placement().predicted_step_seconds();
  state.counters["step_us"] = measured * 1e6;
  state.counters["predicted_us"] = predicted * 1e6;
  state.counters["measured_over_predicted"] = predicted > 0 ? measured / predicted : 0;
  state.counters["speedup_vs_1_device"] = Median(t_one) / measured;
  state.counters["devices_used"] = metadata.placement().devices_size();
  state.counters["cross_tensors"] = metadata.placement().cross_device_tensors();
  state.counters["optimizer"] = 1;
}

void BM_ModelMlp(benchmark::State& state) { RunModel(state, "mlp"); }
void BM_ModelCnn(benchmark::State& state) { RunModel(state, "cnn"); }
// measured_costs=1: placed with a cost profile taken on one device first.
BENCHMARK(BM_ModelMlp)
    ->ArgNames({"cpu_devices", "measured_costs"})
    ->ArgsProduct({{1, 2, 4}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_ModelCnn)
    ->ArgNames({"cpu_devices", "measured_costs"})
    ->ArgsProduct({{1, 2, 4}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace graphrun
