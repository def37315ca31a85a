// Parse + import cost of GraphDefs, per node: binary and text parsing,
// validation and shape inference, and export. Graphs are generated chains
// and MLP-like stacks so the sizes are known.
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "graph/graph_io.h"
#include "graph/import.h"

namespace graphrun {
namespace {

// A chain of `n` Relu nodes after a Placeholder [?,128], with a Const bias
// added every 8 nodes (so BiasAdd edges and Const decoding are exercised).
GraphDef MakeChain(int n) {
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  auto* shape = (*x->mutable_attr())["shape"].mutable_shape();
  shape->add_dim()->set_size(-1);
  shape->add_dim()->set_size(128);
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    NodeDef* node = g.add_node();
    node->set_name(absl::StrCat("layer", i, "/out"));
    (*node->mutable_attr())["T"].set_type(DT_FLOAT);
    if (i % 8 == 7) {
      NodeDef* b = g.add_node();
      b->set_name(absl::StrCat("layer", i, "/bias"));
      b->set_op("Const");
      (*b->mutable_attr())["dtype"].set_type(DT_FLOAT);
      TensorProto* t = (*b->mutable_attr())["value"].mutable_tensor();
      t->set_dtype(DT_FLOAT);
      t->mutable_tensor_shape()->add_dim()->set_size(128);
      t->add_float_val(0.5f);
      node->set_op("BiasAdd");
      node->add_input(prev);
      node->add_input(b->name());
    } else {
      node->set_op("Relu");
      node->add_input(prev);
    }
    prev = node->name();
  }
  g.mutable_versions()->set_producer(1882);
  return g;
}

void BM_ImportBinary(benchmark::State& state) {
  const GraphDef g = MakeChain(static_cast<int>(state.range(0)));
  const std::string bytes = SerializeDeterministically(g);
  for (auto _ : state) {
    auto def = ParseGraphDef(bytes, GraphFormat::kBinary);
    auto graph = ImportGraphDef(*def);
    if (!graph.ok()) state.SkipWithError(std::string(graph.status().message()).c_str());
    benchmark::DoNotOptimize(graph);
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(g.node_size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["nodes"] = g.node_size();
}
BENCHMARK(BM_ImportBinary)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ParseText(benchmark::State& state) {
  const GraphDef g = MakeChain(static_cast<int>(state.range(0)));
  const std::string text = *SerializeGraphDef(g, GraphFormat::kText);
  for (auto _ : state) {
    auto def = ParseGraphDef(text, GraphFormat::kText);
    benchmark::DoNotOptimize(def);
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(g.node_size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseText)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ImportWithoutShapes(benchmark::State& state) {
  const GraphDef g = MakeChain(static_cast<int>(state.range(0)));
  ImportOptions options;
  options.infer_shapes = false;
  for (auto _ : state) {
    auto graph = ImportGraphDef(g, options);
    benchmark::DoNotOptimize(graph);
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(g.node_size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ImportWithoutShapes)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Export(benchmark::State& state) {
  const GraphDef g = MakeChain(static_cast<int>(state.range(0)));
  auto graph = ImportGraphDef(g);
  for (auto _ : state) {
    GraphDef out = (*graph)->ToGraphDef();
    benchmark::DoNotOptimize(out);
  }
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(g.node_size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Export)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace graphrun
