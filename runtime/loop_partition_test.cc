// While loops cut across devices: random loop graphs (loop variables, a
// loop invariant, a cond inside the body, a nested loop) with every node
// pinned to a random device among 2-4 give the one-device result, and each
// device that receives values inside a loop runs a control loop.
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"
#include "runtime/session.h"
#include "runtime/testing/loop_graphs.h"

namespace graphrun {
namespace {

using testing::CountingLoop;
using testing::Enter;
using testing::FloatConst;
using testing::IntConst;
using testing::Op;

struct LoopGraph {
  std::string text;
  std::vector<std::string> fetches;
};

LoopGraph RandomLoopGraph(std::mt19937* rng) {
  auto pick = [rng](int n) { return static_cast<int>((*rng)() % n); };
  const int vars = 1 + pick(3);
  const int parallel = std::vector<int>{1, 2, 10}[pick(3)];
  const bool with_cond = pick(2) == 0;
  const bool with_inner = pick(2) == 0;
  LoopGraph g;
  std::string& s = g.text;
  s += IntConst("n", 1 + pick(5)) + IntConst("zero", 0) + FloatConst("w", 0.7f);
  s += CountingLoop("L", "zero", "n", parallel);
  s += Enter("L/enter_w", "w", "L", "DT_FLOAT", true, parallel);
  s += FloatConst("L/half", 0.5f, "L/id_i");
  g.fetches.push_back("L/exit_i");
  for (int k = 0; k < vars; ++k) {
    const std::string v = absl::StrCat("L/v", k);
    s += FloatConst(absl::StrCat("x", k), 0.3f * (k + 1) - 0.4f);
    s += Enter(v + "/enter", absl::StrCat("x", k), "L", "DT_FLOAT", false, parallel);
    s += Op(v + "/merge", "Merge", {v + "/enter", v + "/next"}, "DT_FLOAT");
    s += Op(v + "/switch", "Switch", {v + "/merge", "L/cond"}, "DT_FLOAT");
    s += Op(v + "/id", "Identity", {v + "/switch:1"}, "DT_FLOAT");
  }
  for (int k = 0; k < vars; ++k) {
    const std::string v = absl::StrCat("L/v", k);
    const std::string other =
        pick(2) == 0 ? "L/enter_w" : absl::StrCat("L/v", (k + 1) % vars, "/id");
    s += Op(v + "/mul", "Mul", {v + "/id", "L/half"}, "DT_FLOAT");
    s += Op(v + "/add", "AddV2", {v + "/mul", other}, "DT_FLOAT");
    s += Op(v + "/tanh", "Tanh", {v + "/add"}, "DT_FLOAT");
    std::string next = v + "/tanh";
    if (k == 0 && with_cond) {
      // i < 2 ? t : t * 0.5
      s += IntConst("L/c/two", 2, "L/id_i");
      s += Op("L/c/pred", "Less", {"L/id_i", "L/c/two"});
      s += Op("L/c/switch", "Switch", {next, "L/c/pred"}, "DT_FLOAT");
      s += Op("L/c/t", "Identity", {"L/c/switch:1"}, "DT_FLOAT");
      s += Op("L/c/f", "Identity", {"L/c/switch:0"}, "DT_FLOAT");
      s += Op("L/c/fh", "Mul", {"L/c/f", "L/half"}, "DT_FLOAT");
      s += Op("L/c/merge", "Merge", {"L/c/t", "L/c/fh"}, "DT_FLOAT");
      next = "L/c/merge";
    }
    if (k == vars - 1 && with_inner) {
      // Two inner iterations of v = v * 0.9 + w.
      s += IntConst("L/I/k0", 0, "L/id_i") + IntConst("L/I/m", 2, "L/id_i");
      s += CountingLoop("L/I", "L/I/k0", "L/I/m", parallel);
      s += Enter("L/I/enter_v", next, "L/I", "DT_FLOAT", false, parallel);
      s += Enter("L/I/enter_w", "L/enter_w", "L/I", "DT_FLOAT", true, parallel);
      s += Op("L/I/merge_v", "Merge", {"L/I/enter_v", "L/I/next_v"}, "DT_FLOAT");
      s += Op("L/I/switch_v", "Switch", {"L/I/merge_v", "L/I/cond"}, "DT_FLOAT");
      s += Op("L/I/id_v", "Identity", {"L/I/switch_v:1"}, "DT_FLOAT");
      s += FloatConst("L/I/c", 0.9f, "L/I/id_i");
      s += Op("L/I/mul", "Mul", {"L/I/id_v", "L/I/c"}, "DT_FLOAT");
      s += Op("L/I/add", "AddV2", {"L/I/mul", "L/I/enter_w"}, "DT_FLOAT");
      s += Op("L/I/next_v", "NextIteration", {"L/I/add"}, "DT_FLOAT");
      s += Op("L/I/exit_v", "Exit", {"L/I/switch_v"}, "DT_FLOAT");
      next = "L/I/exit_v";
    }
    s += Op(v + "/next", "NextIteration", {next}, "DT_FLOAT");
    s += Op(v + "/exit", "Exit", {v + "/switch"}, "DT_FLOAT");
    g.fetches.push_back(v + "/exit");
  }
  return g;
}

absl::Status RunLoop(const GraphDef& def, int devices, std::vector<Tensor>* out,
                 const std::vector<std::string>& fetches, RunMetadata* metadata) {
  SessionOptions options;
  options.cpu_devices = devices;
  auto session = Session::Create(def, options);
  if (!session.ok()) return session.status();
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  run_options.set_timeout_in_ms(60000);  // a hang fails instead of blocking
  return (*session)->Run(run_options, {}, fetches, {}, out, metadata);
}

TEST(LoopPartitionTest, RandomLoopsOnRandomDevicesMatchOneDevice) {
  int split_runs = 0;
  for (int seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    LoopGraph g = RandomLoopGraph(&rng);
    auto def = testing::LoopGraphDef(g.text);
    ASSERT_TRUE(def.ok()) << def.status();
    std::vector<Tensor> want;
    RunMetadata unused;
    absl::Status s = RunLoop(*def, 1, &want, g.fetches, &unused);
    ASSERT_TRUE(s.ok()) << s;

    const int devices = 2 + static_cast<int>(rng() % 3);
    for (NodeDef& n : *def->mutable_node()) {
      n.set_device(absl::StrCat("/device:CPU:", rng() % devices));
    }
    std::vector<Tensor> got;
    RunMetadata metadata;
    s = RunLoop(*def, devices, &got, g.fetches, &metadata);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      std::string why;
      EXPECT_TRUE(testing::AllClose(got[i], want[i], 0, 0, &why)) << g.fetches[i] << ": " << why;
    }
    int cloop_merges = 0, partitions = metadata.partition_graphs_size();
    for (const GraphDef& part : metadata.partition_graphs()) {
      for (const NodeDef& n : part.node()) {
        if (n.op() == "Merge" && absl::StartsWith(n.name(), "_cloop/")) ++cloop_merges;
        // Every recv of a value made inside the loop (not an Exit's)
        // waits for its device's control loop.
        if (n.op() == "_Recv" && absl::StartsWith(n.name(), "L/") &&
            !absl::StrContains(n.name(), "exit")) {
          bool gated = false;
          for (const std::string& in : n.input()) gated |= absl::StartsWith(in, "^_cloop/");
          EXPECT_TRUE(gated) << n.DebugString();
        }
      }
    }
    if (partitions > 1 && cloop_merges > 0) ++split_runs;
  }
  // Nearly every seed cuts its loop; make sure the property was exercised.
  EXPECT_GE(split_runs, 50);
}

// A loop whose inputs are dead (inside the untaken branch of a cond) and
// that is cut across devices finishes the step instead of leaving the other
// device's control loop waiting for a predicate that never comes.
TEST(LoopPartitionTest, DeadLoopAcrossDevicesDoesNotHang) {
  std::string s = testing::Placeholder("pred", "DT_BOOL") + IntConst("n", 3) +
                  IntConst("zero", 0);
  s += Op("sw", "Switch", {"zero", "pred"});
  s += Op("taken", "Identity", {"sw:1"});      // the loop runs when pred
  s += CountingLoop("L", "taken", "n", 10);
  s += Op("skip", "Identity", {"sw:0"});
  s += Op("result", "Merge", {"skip", "L/exit_i"});
  auto def = testing::LoopGraphDef(s);
  ASSERT_TRUE(def.ok()) << def.status();
  for (NodeDef& n : *def->mutable_node()) {
    n.set_device(absl::StartsWith(n.name(), "L/add") || n.name() == "L/one" ? "/device:CPU:1"
                                                                           : "/device:CPU:0");
  }
  SessionOptions options;
  options.cpu_devices = 2;
  auto session = Session::Create(*def, options);
  ASSERT_TRUE(session.ok()) << session.status();
  RunOptions run_options;
  run_options.set_timeout_in_ms(60000);
  for (bool pred : {true, false}) {
    std::vector<Tensor> out;
    absl::Status st = (*session)->Run(run_options, {{"pred", Tensor::Scalar<bool>(pred)}},
                                      {"result"}, {}, &out, nullptr);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(out[0].scalar<int32_t>(), pred ? 3 : 0);
  }
}

}  // namespace
}  // namespace graphrun
