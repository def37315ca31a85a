#include "tests/fixture_manifest.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace testing {

std::vector<FixtureModel> ReadFixtureManifest(const std::string& dir) {
  std::vector<FixtureModel> models;
  std::ifstream in(dir + "MANIFEST");
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
      if (kv.first == "tol") EXPECT_TRUE(absl::SimpleAtod(kv.second, &m.tol)) << line;
    }
    models.push_back(std::move(m));
  }
  return models;
}

std::string FixtureNpyPath(const FixtureModel& model, const std::string& tensor) {
  return absl::StrCat(model.dir, model.name, ".",
                      absl::StrReplaceAll(tensor, {{"/", "__"}, {":", "_"}}), ".npy");
}

void PinAlternately(GraphDef* graph) {
  for (int i = 0; i < graph->node_size(); ++i) {
    NodeDef* n = graph->mutable_node(i);
    if (n->attr().count("_class") > 0) continue;
    n->set_device(absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i % 2));
  }
}

absl::Status RunFixture(const FixtureModel& m, const SessionOptions& options,
                        RunMetadata* metadata, const std::function<void(GraphDef*)>& edit) {
  auto graph = ReadGraphDefFile(absl::StrCat(m.dir, m.name, ".pb"));
  if (!graph.ok()) return graph.status();
  if (edit) edit(&*graph);
  auto session = Session::Create(*graph, options);
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
