#include "tests/fixture_manifest.h"

#include <memory>
#include <random>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "graph/status_macros.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace testing {

std::vector<FixtureModel> ReadFixtureManifest(const std::string& dir,
                                              const std::string& list) {
  std::vector<FixtureModel> models;
  std::ifstream in(dir + list);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    FixtureModel m;
    m.dir = dir;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    m.name = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
      std::pair<std::string, std::string> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (kv.first == "feeds") m.feeds = absl::StrSplit(kv.second, ',', absl::SkipEmpty());
      if (kv.first == "fetches") m.fetches = absl::StrSplit(kv.second, ',');
      if (kv.first == "form") m.form = kv.second;
      if (kv.first == "tol") {
        EXPECT_TRUE(absl::SimpleAtod(kv.second, &m.tol)) << line;
      }
      if (kv.first == "weights") m.has_weights = kv.second == "1";
      if (kv.first == "pbtxt") m.has_text = kv.second != "0";
      if (kv.first == "missing") m.missing = absl::StrSplit(kv.second, ',', absl::SkipEmpty());
    }
    models.push_back(std::move(m));
  }
  return models;
}

std::string FixtureNpyPath(const FixtureModel& model, const std::string& tensor) {
  return absl::StrCat(model.dir, model.name, ".",
                      absl::StrReplaceAll(tensor, {{"/", "__"}, {":", "_"}}), ".npy");
}

namespace {

uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t SplitMix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// A scale as fixture_weights.py writes it (float.hex(), e.g. 0x1.8p-3);
// strtof reads hexadecimal floats exactly.
bool ParseScale(const std::string& text, float* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtof(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(*out);
}

}  // namespace

std::vector<float> FixtureWeightValues(absl::string_view node_name, float scale,
                                       int64_t count) {
  const uint64_t h = Fnv1a64(node_name);
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    // Unsigned arithmetic wraps modulo 2^64, as the generator requires.
    const uint64_t z = SplitMix64(h + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull);
    // z >> 40 < 2^24 and the product with 2^-23 are exact in float, so the
    // only rounding is the final multiply, as in numpy's float32.
    const float unit = static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;
    values[i] = scale * unit;
  }
  return values;
}

absl::Status FillFixtureWeights(const std::string& weights_path, GraphDef* graph) {
  std::ifstream in(weights_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", weights_path));
  absl::flat_hash_map<std::string, float> scales;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.empty()) continue;
    float scale = 0;
    if (parts.size() != 2 || !ParseScale(parts[1], &scale)) {
      return absl::InvalidArgumentError(absl::StrCat(
          weights_path, ":", line_no, ": expected '<node name> <scale>', got '", line, "'"));
    }
    scales[parts[0]] = scale;
  }
  int64_t filled = 0;
  for (NodeDef& node : *graph->mutable_node()) {
    auto it = scales.find(node.name());
    if (it == scales.end()) continue;
    auto value = node.mutable_attr()->find("value");
    if (node.op() != "Const" || value == node.mutable_attr()->end() ||
        value->second.tensor().dtype() != DT_FLOAT) {
      return absl::InvalidArgumentError(absl::StrCat(
          weights_path, ": node '", node.name(), "' (", node.op(), ") is not a float Const"));
    }
    TensorProto* tensor = value->second.mutable_tensor();
    if (!tensor->tensor_content().empty() || tensor->float_val_size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          weights_path, ": Const '", node.name(), "' already has values"));
    }
    GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(tensor->tensor_shape()));
    std::vector<float> values = FixtureWeightValues(node.name(), it->second, shape.num_elements());
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());  // little-endian host
    tensor->set_tensor_content(std::move(bytes));
    ++filled;
  }
  if (filled != static_cast<int64_t>(scales.size())) {
    return absl::NotFoundError(absl::StrCat(weights_path, " lists ", scales.size(),
                                            " nodes but the graph has only ", filled,
                                            " of them"));
  }
  return absl::OkStatus();
}

absl::StatusOr<GraphDef> LoadFixtureGraph(const FixtureModel& m, FixtureGraphFile file) {
  const std::string prefix = absl::StrCat(m.dir, m.name);
  GraphDef graph;
  if (file == FixtureGraphFile::kText && m.has_text) {
    GR_ASSIGN_OR_RETURN(graph, ReadGraphDefFile(prefix + ".pbtxt", GraphFormat::kText));
  } else {
    GR_ASSIGN_OR_RETURN(graph, ReadGraphDefFile(prefix + ".pb", GraphFormat::kBinary));
    if (file == FixtureGraphFile::kText) {
      GR_ASSIGN_OR_RETURN(std::string text, SerializeGraphDef(graph, GraphFormat::kText));
      GR_ASSIGN_OR_RETURN(graph, ParseGraphDef(text, GraphFormat::kText, prefix + ".pb as text"));
    }
  }
  if (m.has_weights) GR_RETURN_IF_ERROR(FillFixtureWeights(prefix + ".weights", &graph));
  return graph;
}

namespace {

// True for nodes that make or carry TensorLists (DT_VARIANT) or resources.
bool HandlesVariantsOrResources(const NodeDef& n) {
  if (n.op().rfind("TensorList", 0) == 0 || n.op().rfind("TensorArray", 0) == 0) return true;
  auto t = n.attr().find("T");
  return t != n.attr().end() &&
         (t->second.type() == DT_VARIANT || t->second.type() == DT_RESOURCE);
}

std::function<void(GraphDef*)> PinToTasks(std::function<int(int node_index)> task_of) {
  return [task_of](GraphDef* graph) {
    for (int i = 0; i < graph->node_size(); ++i) {
      NodeDef* n = graph->mutable_node(i);
      if (n->attr().count("_class") > 0 || HandlesVariantsOrResources(*n)) continue;
      n->set_device(absl::StrCat("/job:worker/task:", task_of(i)));
    }
  };
}

}  // namespace

std::function<void(GraphDef*)> PinToRandomTasks(int tasks, uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return PinToTasks([rng, tasks](int) { return static_cast<int>((*rng)() % tasks); });
}

std::function<void(GraphDef*)> PinToTasksAlternately(int tasks) {
  return PinToTasks([tasks](int i) { return i % tasks; });
}

void PinAlternately(GraphDef* graph) {
  for (int i = 0; i < graph->node_size(); ++i) {
    NodeDef* n = graph->mutable_node(i);
    if (n->attr().count("_class") > 0) continue;
    n->set_device(absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i % 2));
  }
}

absl::Status RunFixture(const FixtureModel& m, const SessionOptions& options,
                        RunMetadata* metadata, const std::function<void(GraphDef*)>& edit,
                        FixtureGraphFile file) {
  return RunFixtureIn(
      m, [&](const GraphDef& graph) { return Session::Create(graph, options); }, metadata, edit,
      file);
}

absl::Status RunFixtureIn(const FixtureModel& m, const SessionFactory& make,
                          RunMetadata* metadata, const std::function<void(GraphDef*)>& edit,
                          FixtureGraphFile file) {
  auto graph = LoadFixtureGraph(m, file);
  if (!graph.ok()) return graph.status();
  if (edit) edit(&*graph);
  auto session = make(*graph);
  if (!session.ok()) return session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& f : m.feeds) {
    auto t = ReadNpyFile(FixtureNpyPath(m, f));
    if (!t.ok()) return t.status();
    feeds.emplace_back(f, *std::move(t));
  }
  RunOptions run_options;
  if (metadata != nullptr) run_options.set_output_partition_graphs(true);
  std::vector<Tensor> outputs;
  absl::Status s = (*session)->Run(run_options, feeds, m.fetches, {}, &outputs, metadata);
  if (!s.ok()) return s;
  EXPECT_EQ(outputs.size(), m.fetches.size());
  for (size_t i = 0; i < m.fetches.size() && i < outputs.size(); ++i) {
    auto want = ReadNpyFile(FixtureNpyPath(m, m.fetches[i]));
    if (!want.ok()) return want.status();
    std::string why;
    EXPECT_TRUE(AllClose(outputs[i], *want, m.tol, m.tol, &why))
        << m.name << " " << m.fetches[i] << ": " << why << "\n got "
        << outputs[i].DebugString(6) << "\nwant " << want->DebugString(6);
  }
  // A second run uses the cached plan and gives the same answer.
  std::vector<Tensor> again;
  s = (*session)->Run(feeds, m.fetches, {}, &again);
  if (!s.ok()) return s;
  for (size_t i = 0; i < again.size() && i < outputs.size(); ++i) {
    EXPECT_TRUE(AllClose(again[i], outputs[i], 0, 0)) << m.name << " " << m.fetches[i];
  }
  return absl::OkStatus();
}

}  // namespace testing
}  // namespace graphrun
