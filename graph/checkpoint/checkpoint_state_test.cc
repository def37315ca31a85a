#include "graph/checkpoint/checkpoint_state.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/", name);
  std::string cmd = "mkdir -p " + dir;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

TEST(CheckpointStateTest, ReadsWhatTensorFlowSaverWrites) {
  const std::string dir = TestDir("tf_state");
  // Exactly what TF1 Saver wrote (training_facts.md 2.7).
  std::ofstream(dir + "/checkpoint") << "model_checkpoint_path: \"model.ckpt-3\"\n"
                                        "all_model_checkpoint_paths: \"model.ckpt-2\"\n"
                                        "all_model_checkpoint_paths: \"model.ckpt-3\"\n";
  auto state = ReadCheckpointState(dir);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->model_checkpoint_path(), "model.ckpt-3");
  ASSERT_EQ(state->all_model_checkpoint_paths_size(), 2);
  EXPECT_EQ(state->all_model_checkpoint_paths(0), "model.ckpt-2");
  auto latest = LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, dir + "/model.ckpt-3");
}

TEST(CheckpointStateTest, WriteThenReadRoundTrips) {
  const std::string dir = TestDir("round_trip");
  CheckpointState state;
  state.set_model_checkpoint_path("/abs/model.ckpt-10");
  state.add_all_model_checkpoint_paths("/abs/model.ckpt-10");
  ASSERT_TRUE(WriteCheckpointState(dir, state).ok());
  std::ifstream in(dir + "/checkpoint");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "model_checkpoint_path: \"/abs/model.ckpt-10\"\n"
            "all_model_checkpoint_paths: \"/abs/model.ckpt-10\"\n");
  auto latest = LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, "/abs/model.ckpt-10");
  // No temporary files left beside it.
  std::string cmd = "test $(ls -A " + dir + " | wc -l) -eq 1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(CheckpointStateTest, ErrorsAreClear) {
  const std::string dir = TestDir("errors");
  EXPECT_EQ(ReadCheckpointState(dir).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(dir + "/checkpoint") << "model_checkpoint_path: 3 garbage {";
  auto bad = ReadCheckpointState(dir);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find(dir + "/checkpoint"), std::string::npos);
  EXPECT_EQ(WriteCheckpointState(dir, CheckpointState()).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphrun
