// Runs graphs that TensorFlow exported (tests/fixtures, made by
// make_fixtures.py) and compares graphrun's results with TensorFlow's.
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/numbers.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/";

struct Model {
  std::string name;
  std::vector<std::string> feeds, fetches;
  double tol = 1e-5;
};

std::vector<Model> ReadManifest() {
  std::vector<Model> models;
  std::ifstream in(std::string(kDir) + "MANIFEST");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Model m;
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    m.name = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
      std::pair<std::string, std::string> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (kv.first == "feeds") m.feeds = absl::StrSplit(kv.second, ',');
      if (kv.first == "fetches") m.fetches = absl::StrSplit(kv.second, ',');
      if (kv.first == "tol") {
        EXPECT_TRUE(absl::SimpleAtod(kv.second, &m.tol));
      }
    }
    models.push_back(m);
  }
  return models;
}

std::string FixturePath(const std::string& model, const std::string& tensor) {
  return absl::StrCat(kDir, model, ".", absl::StrReplaceAll(tensor, {{"/", "__"}, {":", "_"}}),
                      ".npy");
}

// `graph` with node i pinned to /device:CPU:(i % 2), except nodes that
// ask to be colocated with another (they follow it).
GraphDef PinAlternately(const GraphDef& graph) {
  GraphDef pinned = graph;
  for (int i = 0; i < pinned.node_size(); ++i) {
    NodeDef* n = pinned.mutable_node(i);
    if (n->attr().count("_class") > 0) continue;
    n->set_device(absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i % 2));
  }
  return pinned;
}

TEST(TfFixturesTest, OutputsMatchTensorFlow) {
  std::vector<Model> models = ReadManifest();
  ASSERT_GE(models.size(), 3u) << "tests/fixtures/MANIFEST is missing";
  for (const Model& m : models) {
    SCOPED_TRACE(m.name);
    auto graph = ReadGraphDefFile(absl::StrCat(kDir, m.name, ".pb"));
    ASSERT_TRUE(graph.ok()) << graph.status();
    for (int cpu_devices : {1, 2}) {
      SCOPED_TRACE(absl::StrCat(cpu_devices, " CPU devices"));
      SessionOptions options;
      options.cpu_devices = cpu_devices;
      // Two devices: pin the nodes alternately, so the graph is cut into
      // two partitions joined by Send/Recv (the placer alone keeps a graph
      // this small on one device).
      const GraphDef def = cpu_devices == 1 ? *graph : PinAlternately(*graph);
      auto session = Session::Create(def, options);
      ASSERT_TRUE(session.ok()) << session.status();
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (const std::string& f : m.feeds) {
        auto t = ReadNpyFile(FixturePath(m.name, f));
        ASSERT_TRUE(t.ok()) << t.status();
        feeds.emplace_back(f, *t);
      }
      std::vector<Tensor> outputs;
      RunOptions run;
      run.set_output_partition_graphs(true);
      RunMetadata metadata;
      absl::Status s = (*session)->Run(run, feeds, m.fetches, {}, &outputs, &metadata);
      ASSERT_TRUE(s.ok()) << s;
      // It was cut: one partition per device, tensors crossing between them.
      ASSERT_EQ(metadata.partition_graphs_size(), cpu_devices);
      int sends = 0;
      for (const GraphDef& part : metadata.partition_graphs()) {
        for (const NodeDef& n : part.node()) sends += n.op() == "_Send";
      }
      if (cpu_devices == 1) {
        EXPECT_EQ(sends, 0);
      } else {
        EXPECT_GT(sends, 0);
        EXPECT_NE(metadata.partition_graphs(0).node(0).device(),
                  metadata.partition_graphs(1).node(0).device());
      }
      ASSERT_EQ(outputs.size(), m.fetches.size());
      for (size_t i = 0; i < m.fetches.size(); ++i) {
        auto want = ReadNpyFile(FixturePath(m.name, m.fetches[i]));
        ASSERT_TRUE(want.ok()) << want.status();
        std::string why;
        EXPECT_TRUE(testing::AllClose(outputs[i], *want, m.tol, m.tol, &why))
            << m.fetches[i] << ": " << why << "\n got " << outputs[i].DebugString(6)
            << "\nwant " << want->DebugString(6);
      }
      // A second run uses the cached plan and gives the same answer.
      std::vector<Tensor> again;
      ASSERT_TRUE((*session)->Run(feeds, m.fetches, {}, &again).ok());
      for (size_t i = 0; i < again.size(); ++i) {
        EXPECT_TRUE(testing::AllClose(again[i], outputs[i], 0, 0)) << m.fetches[i];
      }
    }
  }
}

}  // namespace
}  // namespace graphrun
