// Runs while loops and conds that TensorFlow exported (tests/fixtures/
// control_flow, made by make_control_flow_fixtures.py) and compares
// graphrun's results with TensorFlow's: v1 graphs (tf.compat.v1 with
// control flow v1), TF2 functions frozen by convert_variables_to_constants_v2
// (which lowers While/If to Enter/Merge/Switch/NextIteration/LoopCond/Exit),
// and the same functions in TF2's functional form (StatelessWhile/While/
// StatelessIf calling a function library), which graphrun lowers at import
// (graph/lower_functional.h). The RNN fixtures carry their sequences in
// TensorLists (Keras, TF2) and TensorArrays (dynamic_rnn, v1).
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/control_flow/";

TEST(TfControlFlowTest, LoopsAndCondsMatchTensorFlow) {
  std::vector<testing::FixtureModel> models = testing::ReadFixtureManifest(kDir);
  ASSERT_GE(models.size(), 20u) << kDir << "MANIFEST is missing";
  std::set<std::string> forms;
  int ran = 0;
  for (const testing::FixtureModel& m : models) {
    SCOPED_TRACE(m.name);
    for (int parallel : {1, 0}) {
      SessionOptions options;
      options.inter_op_threads = parallel;  // one thread, then one per core
      absl::Status s = testing::RunFixture(m, options);
      EXPECT_TRUE(s.ok()) << s;
    }
    // Cut in two: every other node on a second device, so loops run with
    // control loops on both (loop_partition_test covers random cuts).
    SessionOptions two;
    two.cpu_devices = 2;
    two.allow_soft_placement = true;  // resource colocation beats a pin
    RunMetadata metadata;
    absl::Status s = testing::RunFixture(m, two, &metadata, testing::PinAlternately);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(metadata.partition_graphs_size(), 2);
    forms.insert(m.form);
    ++ran;
  }
  // while_count, while_tensor, while_nested, cond_in_loop, cond_plain and
  // cond_plain_false, each lowered, functional and v1; Keras LSTM, GRU and
  // bidirectional LSTM (TensorList loops), lowered and functional; and v1
  // dynamic_rnn (TensorArray loop).
  EXPECT_EQ(ran, 25);
  EXPECT_EQ(forms, (std::set<std::string>{"functional", "lowered", "v1"}));
}

// The text form of a TF2 graph with a function library (as TensorFlow
// writes it) parses into the same message as the binary form, and runs.
TEST(TfControlFlowTest, FunctionalTextFormParsesAndRuns) {
  const std::string base = absl::StrCat(kDir, "while_count.functional");
  auto text = ReadGraphDefFile(base + ".pbtxt");
  ASSERT_TRUE(text.ok()) << text.status();
  auto binary = ReadGraphDefFile(base + ".pb");
  ASSERT_TRUE(binary.ok()) << binary.status();
  ASSERT_GT(text->library().function_size(), 0);
  EXPECT_EQ(SerializeDeterministically(*text), SerializeDeterministically(*binary));

  auto session = Session::Create(*text, SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const char* feed : {"n", "x"}) {
    auto t = ReadNpyFile(absl::StrCat(base, ".", feed, "_0.npy"));
    ASSERT_TRUE(t.ok()) << t.status();
    feeds.emplace_back(absl::StrCat(feed, ":0"), *std::move(t));
  }
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(feeds, {"Identity:0", "Identity_1:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    auto want = ReadNpyFile(absl::StrCat(base, ".Identity", i == 0 ? "" : "_1", "_0.npy"));
    ASSERT_TRUE(want.ok()) << want.status();
    std::string why;
    EXPECT_TRUE(testing::AllClose(out[i], *want, 1e-5, 1e-5, &why)) << i << ": " << why;
  }
}

}  // namespace
}  // namespace graphrun
