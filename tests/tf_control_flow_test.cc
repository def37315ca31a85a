// Runs while loops and conds that TensorFlow exported (tests/fixtures/
// control_flow, made by make_control_flow_fixtures.py) and compares
// graphrun's results with TensorFlow's: v1 graphs (tf.compat.v1 with
// control flow v1), TF2 functions frozen by convert_variables_to_constants_v2
// (which lowers While/If to Enter/Merge/Switch/NextIteration/LoopCond/Exit),
// and the same functions in TF2's functional form (StatelessWhile/While/
// StatelessIf calling a function library), which graphrun lowers at import
// (graph/lower_functional.h).
#include <set>
#include <string>

#include "absl/strings/match.h"
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

// Fixtures whose ops are not all implemented yet (TensorList and
// TensorArray). They move to the passing set when their ops land.
const std::set<std::string>& NotYetSupported() {
  static const auto* s = new std::set<std::string>{
      "lstm.lowered",    "gru.lowered",    "bilstm.lowered",
      "lstm.functional", "gru.functional", "bilstm.functional",
      "dynamic_rnn_v1.v1"};
  return *s;
}

TEST(TfControlFlowTest, LoopsAndCondsMatchTensorFlow) {
  std::vector<testing::FixtureModel> models = testing::ReadFixtureManifest(kDir);
  ASSERT_GE(models.size(), 20u) << kDir << "MANIFEST is missing";
  std::set<std::string> forms;
  int ran = 0;
  for (const testing::FixtureModel& m : models) {
    if (NotYetSupported().count(m.name)) continue;
    SCOPED_TRACE(m.name);
    for (int parallel : {1, 0}) {
      SessionOptions options;
      options.inter_op_threads = parallel;  // one thread, then one per core
      absl::Status s = testing::RunFixture(m, options);
      EXPECT_TRUE(s.ok()) << s;
    }
    forms.insert(m.form);
    ++ran;
  }
  // while_count, while_tensor, while_nested, cond_in_loop, cond_plain and
  // cond_plain_false, each lowered, functional and v1.
  EXPECT_EQ(ran, 18);
  EXPECT_EQ(forms, (std::set<std::string>{"functional", "lowered", "v1"}));
}

// What is not implemented yet (TensorList and TensorArray ops, variant
// tensors) is refused, naming the node and its op (inside a function body,
// the function too), not a crash or a wrong answer. As those ops land these
// fixtures start to run; RunFixture then checks them against TensorFlow.
TEST(TfControlFlowTest, UnsupportedOpsAreNamed) {
  int seen = 0;
  for (const testing::FixtureModel& m : testing::ReadFixtureManifest(kDir)) {
    if (!NotYetSupported().count(m.name)) continue;
    SCOPED_TRACE(m.name);
    ++seen;
    absl::Status s = testing::RunFixture(m, SessionOptions());
    if (s.ok()) continue;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    const bool unregistered =
        absl::StrContains(s.message(), "Op type not registered 'TensorList") ||
        absl::StrContains(s.message(), "Op type not registered 'TensorArray");
    EXPECT_TRUE(unregistered || absl::StrContains(s.message(), "variant")) << s;
    if (unregistered && m.form == "functional") {
      EXPECT_TRUE(absl::StrContains(s.message(), "function '")) << s;
    }
  }
  EXPECT_EQ(seen, 7);
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
