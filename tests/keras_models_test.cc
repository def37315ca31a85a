// Runs the Keras models of tests/fixtures/models/MANIFEST (applications, a
// BERT-style encoder, text models; frozen by make_model_fixtures.py) from
// their binary and their text graphs on one CPU device and compares their
// logits and probabilities with TensorFlow's. Models graphrun cannot run yet
// are listed in PENDING; their files are only checked to load.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/models/";

using testing::FixtureGraphFile;
using testing::FixtureModel;

struct ModelCase {
  FixtureModel model;
  FixtureGraphFile file;
};

std::vector<ModelCase> Cases() {
  std::vector<ModelCase> cases;
  for (const FixtureModel& m : testing::ReadFixtureManifest(kDir)) {
    for (FixtureGraphFile file : {FixtureGraphFile::kBinary, FixtureGraphFile::kText}) {
      cases.push_back({m, file});
    }
  }
  return cases;
}

class KerasModelsTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(KerasModelsTest, MatchesTensorFlow) {
  const ModelCase& c = GetParam();
  SessionOptions options;
  options.cpu_devices = 1;
  absl::Status s = testing::RunFixture(c.model, options, nullptr, nullptr, c.file);
  EXPECT_TRUE(s.ok()) << c.model.name << ": " << s;
}

INSTANTIATE_TEST_SUITE_P(
    Manifest, KerasModelsTest, ::testing::ValuesIn(Cases()),
    [](const ::testing::TestParamInfo<ModelCase>& info) {
      return absl::StrCat(info.param.model.name,
                          info.param.file == FixtureGraphFile::kText ? "_text" : "_binary");
    });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KerasModelsTest);

TEST(KerasModelsManifestTest, ListsModels) {
  std::vector<FixtureModel> models = testing::ReadFixtureManifest(kDir);
  EXPECT_GE(models.size(), 1u) << kDir << "MANIFEST is missing or empty";
  for (const FixtureModel& m : models) {
    EXPECT_TRUE(m.has_weights) << m.name;
    EXPECT_EQ(m.fetches.size(), 2u) << m.name << ": logits and probabilities";
  }
}

// Pending models' files are whole: both graph files parse and their weights
// fill, so a model can move to MANIFEST as soon as its ops land.
TEST(KerasModelsManifestTest, PendingModelsLoad) {
  for (const FixtureModel& m : testing::ReadFixtureManifest(kDir, "PENDING")) {
    EXPECT_FALSE(m.missing.empty()) << m.name << ": no missing= field in PENDING";
    for (FixtureGraphFile file : {FixtureGraphFile::kBinary, FixtureGraphFile::kText}) {
      auto graph = testing::LoadFixtureGraph(m, file);
      EXPECT_TRUE(graph.ok()) << m.name << ": " << graph.status();
    }
  }
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Bit patterns from tests/fixtures/models/fixture_weights.py (numpy; the same
// from a plain-integer Python version of the formula):
//   values("block/conv/kernel", np.float32(0.125), 5).view(np.uint32)
//   values("", np.float32(3.0), 2).view(np.uint32)
TEST(FixtureWeightValuesTest, MatchesThePythonGenerator) {
  const std::vector<uint32_t> want = {0x3d757670u, 0xbd0f84c0u, 0x3db98cccu, 0x3d850e08u, 0xbc5ba870u};
  std::vector<float> got = testing::FixtureWeightValues("block/conv/kernel", 0.125f, 5);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(Bits(got[i]), want[i]) << i;
  const std::vector<uint32_t> want_empty = {0x3fca8474u, 0xc027ecb9u};
  got = testing::FixtureWeightValues("", 3.0f, 2);
  ASSERT_EQ(got.size(), want_empty.size());
  for (size_t i = 0; i < want_empty.size(); ++i) EXPECT_EQ(Bits(got[i]), want_empty[i]) << i;
}

TEST(FixtureWeightValuesTest, StayWithinTheScale) {
  for (float v : testing::FixtureWeightValues("x", 0.5f, 10000)) {
    EXPECT_GE(v, -0.5f);
    EXPECT_LT(v, 0.5f);
  }
}

// A graph with one stripped float Const `w` [2, 3] and one int Const `k`.
GraphDef StrippedGraph() {
  GraphDef graph;
  NodeDef* w = graph.add_node();
  w->set_name("w");
  w->set_op("Const");
  TensorProto* t = (*w->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(2);
  t->mutable_tensor_shape()->add_dim()->set_size(3);
  NodeDef* k = graph.add_node();
  k->set_name("k");
  k->set_op("Const");
  (*k->mutable_attr())["value"].mutable_tensor()->set_dtype(DT_INT32);
  return graph;
}

std::string WriteWeights(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
  std::ofstream(path) << text;
  return path;
}

TEST(FillFixtureWeightsTest, FillsTheListedConsts) {
  GraphDef graph = StrippedGraph();
  ASSERT_TRUE(testing::FillFixtureWeights(WriteWeights("ok.weights", "w 0x1.8p-1\n"), &graph).ok());
  const std::string& content = graph.node(0).attr().at("value").tensor().tensor_content();
  std::vector<float> want = testing::FixtureWeightValues("w", 0.75f, 6);
  ASSERT_EQ(content.size(), 6 * sizeof(float));
  EXPECT_EQ(std::memcmp(content.data(), want.data(), content.size()), 0);
}

TEST(FillFixtureWeightsTest, RefusesBadSidecars) {
  GraphDef graph = StrippedGraph();
  absl::Status s = testing::FillFixtureWeights(WriteWeights("a.weights", "nope 0x1p0\n"), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  s = testing::FillFixtureWeights(WriteWeights("b.weights", "w\n"), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = testing::FillFixtureWeights(WriteWeights("c.weights", "w zero\n"), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = testing::FillFixtureWeights(WriteWeights("d.weights", "k 0x1p0\n"), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'k'"), std::string::npos) << s;
  s = testing::FillFixtureWeights(WriteWeights("missing/e.weights", ""), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  // A Const that already has values was not stripped: refuse to overwrite.
  ASSERT_TRUE(testing::FillFixtureWeights(WriteWeights("f.weights", "w 0x1p0\n"), &graph).ok());
  s = testing::FillFixtureWeights(WriteWeights("f.weights", "w 0x1p0\n"), &graph);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace graphrun
