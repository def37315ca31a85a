#include "placer/task_moves.h"

#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

GraphDef Graph(const std::vector<std::pair<std::string, std::string>>& nodes) {
  GraphDef g;
  for (const auto& [name, device] : nodes) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op("NoOp");
    n->set_device(device);
  }
  return g;
}

TEST(MovesWithoutTest, LostTasksGoToTheRemainingInTurn) {
  // Tasks 0..3, 1 and 3 lost: 1 -> 0, 3 -> 2; 0 and 2 keep their index.
  absl::StatusOr<std::map<int, int>> m = MovesWithout({0, 1, 2, 3}, {3, 1}, false);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, (std::map<int, int>{{0, 0}, {1, 0}, {2, 2}, {3, 2}}));
}

TEST(MovesWithoutTest, RenumberedTasksCountFromZero) {
  // Tasks 0..2, 0 lost, renumbered: 1 -> 0, 2 -> 1, and 0's nodes to the
  // first remaining task, now 0.
  absl::StatusOr<std::map<int, int>> m = MovesWithout({0, 1, 2}, {0}, true);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, (std::map<int, int>{{0, 0}, {1, 0}, {2, 1}}));
}

TEST(MovesWithoutTest, RefusesWhenNoneRemainsOrTheTaskIsUnknown) {
  absl::StatusOr<std::map<int, int>> none = MovesWithout({0, 1}, {0, 1}, false);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("all 2 are gone"), std::string::npos);
  absl::StatusOr<std::map<int, int>> unknown = MovesWithout({0, 1}, {5}, false);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("task 5"), std::string::npos);
}

TEST(MoveTasksTest, MovesOnlyTheNamedJobAndTasks) {
  GraphDef g = Graph({{"a", "/job:worker/replica:0/task:1/device:CPU:0"},
                      {"b", "/job:worker/task:1"},
                      {"c", "/job:worker/task:0"},
                      {"d", "/job:ps/task:1"},
                      {"e", "/job:worker"},
                      {"f", ""}});
  FunctionDef* f = g.mutable_library()->add_function();
  NodeDef* inner = f->add_node_def();
  inner->set_name("inner");
  inner->set_device("/job:worker/task:1/device:CPU:0");
  absl::StatusOr<int> moved = MoveTasks(&g, {{"worker", {{0, 0}, {1, 0}}}});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, 3);
  EXPECT_EQ(g.node(0).device(), "/job:worker/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(g.node(1).device(), "/job:worker/task:0");
  EXPECT_EQ(g.node(2).device(), "/job:worker/task:0");
  EXPECT_EQ(g.node(3).device(), "/job:ps/task:1");  // another job
  EXPECT_EQ(g.node(4).device(), "/job:worker");     // no task named
  EXPECT_EQ(g.node(5).device(), "");
  EXPECT_EQ(g.library().function(0).node_def(0).device(),
            "/job:worker/task:0/device:CPU:0");
}

TEST(MoveTasksTest, ABadDeviceNamesTheNodeAndChangesNothing) {
  GraphDef g = Graph({{"a", "/job:worker/task:1"}, {"bad", "/job:worker/task:x"}});
  absl::StatusOr<int> moved = MoveTasks(&g, {{"worker", {{1, 0}}}});
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(moved.status().message().find("node 'bad'"), std::string::npos);
  EXPECT_EQ(g.node(0).device(), "/job:worker/task:1");
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
