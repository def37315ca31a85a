// SaveVariables and RestoreVariables beside a Session: a checkpoint
// TensorFlow wrote (a sharded Saver's, two data shards) restores into ref
// and resource variables with TensorFlow's values; values assigned in one
// session survive a save and a restore into another; the checkpoint file
// names the newest save; a missing key, a shape that differs and a missing
// checkpoint fail naming the variable, key or file.
#include "runtime/saver.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

// 'a': a ref variable [3]; 'b': a resource variable [2]; 'init' assigns
// them 10, 20, 30 and 0.5, 0.25; 'read_a' and 'read_b' read them.
constexpr char kGraph[] = R"pb(
  node { name: 'a' op: 'VariableV2'
         attr { key: 'dtype' value { type: DT_FLOAT } }
         attr { key: 'shape' value { shape { dim { size: 3 } } } } }
  node { name: 'b' op: 'VarHandleOp'
         attr { key: 'dtype' value { type: DT_FLOAT } }
         attr { key: 'shape' value { shape { dim { size: 2 } } } }
         attr { key: 'shared_name' value { s: 'b' } } }
  node { name: 'va' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
         attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                              float_val: [10, 20, 30] } } } }
  node { name: 'vb' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
         attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: [0.5, 0.25] } } } }
  node { name: 'assign_a' op: 'Assign' input: 'a' input: 'va'
         attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'assign_b' op: 'AssignVariableOp' input: 'b' input: 'vb'
         attr { key: 'dtype' value { type: DT_FLOAT } } }
  node { name: 'init' op: 'NoOp' input: '^assign_a' input: '^assign_b' }
  node { name: 'read_a' op: 'Identity' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'read_b' op: 'ReadVariableOp' input: 'b'
         attr { key: 'dtype' value { type: DT_FLOAT } } }
)pb";

GraphDef Graph(const std::string& text = kGraph) {
  auto g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

std::unique_ptr<Session> NewSession(const GraphDef& g) {
  auto s = Session::Create(g);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

std::vector<float> Read(Session* s, const std::string& name) {
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {name}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return {};
  return std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end());
}

std::string Tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

TEST(SaverTest, RestoresTensorFlowsShardedCheckpoint) {
  const GraphDef g = Graph();
  auto s = NewSession(g);
  auto restored = RestoreVariables(g, s.get(), "graph/checkpoint/testdata/tf_sharded.ckpt");
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2);
  EXPECT_EQ(Read(s.get(), "read_a"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Read(s.get(), "read_b"), (std::vector<float>{-1.5f, 2.5f}));
}

TEST(SaverTest, StateSurvivesASaveAndARestoreIntoAnotherSession) {
  const GraphDef g = Graph();
  const std::string dir = Tmp("saver_round_trip");
  const std::string prefix = dir + "/model.ckpt";
  {
    auto s = NewSession(g);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
    auto saved = SaveVariables(g, s.get(), prefix);
    ASSERT_TRUE(saved.ok()) << saved.status();  // makes `dir`
    EXPECT_EQ(*saved, 2);
    ASSERT_TRUE(UpdateCheckpointState(prefix).ok());
  }
  auto latest = ResolveCheckpointPrefix(dir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, prefix);
  auto s = NewSession(g);
  auto restored = RestoreVariables(g, s.get(), dir);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(Read(s.get(), "read_a"), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(Read(s.get(), "read_b"), (std::vector<float>{0.5f, 0.25f}));
}

TEST(SaverTest, BadRestoresNameWhatIsWrong) {
  // 'a' is [4] here: the checkpoint's [3] does not fit.
  std::string text = kGraph;
  text.replace(text.find("size: 3"), 7, "size: 4");
  text.replace(text.find("size: 3"), 7, "size: 4");
  text.replace(text.find("[10, 20, 30]"), 12, "[10, 20, 30, 40]");
  const GraphDef wider = Graph(text);
  auto s = NewSession(wider);
  auto r = RestoreVariables(wider, s.get(), "graph/checkpoint/testdata/tf_sharded.ckpt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("variable a is float [4]"), std::string::npos) << r.status();

  // A checkpoint without 'b'.
  const GraphDef g = Graph();
  auto s2 = NewSession(g);
  r = RestoreVariables(g, s2.get(), "graph/checkpoint/testdata/tf_model.ckpt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_NE(r.status().message().find("tf_model.ckpt"), std::string::npos) << r.status();

  r = RestoreVariables(g, s2.get(), Tmp("no_such_checkpoint"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_checkpoint"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace graphrun
