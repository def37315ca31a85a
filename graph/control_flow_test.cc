// Malformed while-loop frames are refused at import, naming the frame and
// nodes; well-formed nested frames get the right frame per node.
#include "graph/control_flow.h"

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kHead[] = R"pb(
  node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }
  node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }
)pb";

std::string Enter(const std::string& name, const std::string& in, const std::string& frame) {
  return "node { name: '" + name + "' op: 'Enter' input: '" + in +
         "' attr { key: 'T' value { type: DT_INT32 } } attr { key: 'frame_name' value { s: '" +
         frame + "' } } }\n";
}
std::string Unary(const std::string& name, const std::string& op, const std::string& in,
                  bool typed = true) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + in + "' " +
         (typed ? "attr { key: 'T' value { type: DT_INT32 } } " : "") + "}\n";
}

absl::StatusOr<std::unique_ptr<Graph>> Import(const std::string& body) {
  auto def = ParseGraphDef(absl::StrReplaceAll(kHead + body, {{"'", "\""}}), GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def);
}

void ExpectRefused(const std::string& body, const std::string& want) {
  auto g = Import(body);
  ASSERT_FALSE(g.ok()) << body;
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(g.status().message(), want)) << g.status();
}

TEST(ControlFlowInfoTest, ExitWithoutEnter) {
  ExpectRefused(Unary("e", "Exit", "x"),
                "node 'e' (Exit): is not inside a while loop: no Enter opens its frame");
}

TEST(ControlFlowInfoTest, LoopCondOutsideALoop) {
  ExpectRefused(Unary("c", "LoopCond", "p", false),
                "node 'c' (LoopCond): is not inside a while loop");
}

TEST(ControlFlowInfoTest, NextIterationThatClosesNoLoop) {
  ExpectRefused(Unary("n", "NextIteration", "x"), "node 'n' (NextIteration): closes no loop");
}

TEST(ControlFlowInfoTest, NextIterationMustFeedAMerge) {
  ExpectRefused(Enter("en", "x", "f") + Unary("n", "NextIteration", "en") +
                    Unary("i", "Identity", "n"),
                "node 'n' (NextIteration): feeds node 'i' (Identity); a NextIteration must "
                "feed a Merge");
}

TEST(ControlFlowInfoTest, InputsFromDifferentFrames) {
  ExpectRefused(Enter("a", "x", "f1") + Enter("b", "x", "f2") +
                    "node { name: 'sum' op: 'AddV2' input: 'a' input: 'b' attr { key: 'T' "
                    "value { type: DT_INT32 } } }\n",
                "has inputs from different frames");
}

TEST(ControlFlowInfoTest, EntersOfOneFrameFromDifferentParents) {
  ExpectRefused(Enter("outer", "x", "o") + Enter("in1", "outer", "f") + Enter("in2", "x", "f"),
                "enters frame 'f' from");
}

TEST(ControlFlowInfoTest, NestedFramesAndExits) {
  auto g = Import(Enter("o", "x", "outer") + Enter("i", "o", "inner") +
                  Unary("body", "Identity", "i") + Unary("ie", "Exit", "body") +
                  Unary("oe", "Exit", "ie") + Unary("after", "Identity", "oe"));
  ASSERT_TRUE(g.ok()) << g.status();
  auto info = BuildControlFlowInfo(**g);
  ASSERT_TRUE(info.ok()) << info.status();
  auto frame_of = [&](const char* name) { return (*info)[(*g)->FindNode(name)->id()].frame_name; };
  EXPECT_EQ(frame_of("x"), "");
  EXPECT_EQ(frame_of("o"), "");        // an Enter runs in its parent frame
  EXPECT_EQ(frame_of("i"), "outer");
  EXPECT_EQ(frame_of("body"), "inner");
  EXPECT_EQ(frame_of("ie"), "inner");  // an Exit runs in the frame it leaves
  EXPECT_EQ(frame_of("oe"), "outer");
  EXPECT_EQ(frame_of("after"), "");
}

}  // namespace
}  // namespace graphrun
