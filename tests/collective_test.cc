// TensorFlow's collective ops (graph/lower_collectives.h) on graphs that
// TensorFlow built and ran (tests/fixtures/collective): every reduce, gather
// and broadcast of ops.pbtxt over 2 CPU devices and four.pbtxt over 4 gives
// TensorFlow's values; a training graph with one tower per device whose
// gradients are averaged by CollectiveReduceV2 gives TensorFlow's losses and
// final variables, the towers' variables bit-identical. Graphs graphrun
// cannot run as one graph fail naming the node, group and instance.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/lower_collectives.h"
#include "graph/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

using ::testing::HasSubstr;

constexpr char kDir[] = "tests/fixtures/collective/";

Tensor Npy(const std::string& name) {
  absl::StatusOr<Tensor> t = ReadNpyFile(absl::StrCat(kDir, name, ".npy"));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

GraphDef Graph(const std::string& name) {
  absl::StatusOr<GraphDef> g = ReadGraphDefFile(absl::StrCat(kDir, name, ".pbtxt"));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : GraphDef();
}

std::unique_ptr<Session> MakeSession(const GraphDef& g, int devices) {
  SessionOptions so;
  so.cpu_devices = devices;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(g, so);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// Equal within `rtol` (0: bit for bit), float or int32.
void ExpectMatches(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape().DebugString(), want.shape().DebugString()) << what;
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    if (got.dtype() == DT_INT32) {
      ASSERT_EQ(got.flat<int32_t>()[i], want.flat<int32_t>()[i]) << what << " element " << i;
      continue;
    }
    const double g = got.flat<float>()[i], w = want.flat<float>()[i];
    if (rtol == 0) ASSERT_EQ(g, w) << what << " element " << i;
    else ASSERT_LE(std::abs(g - w), 1e-7 + rtol * std::abs(w)) << what << " element " << i;
  }
}

TEST(CollectiveTest, EveryOpOnTwoDevicesGivesTensorFlowsValues) {
  GraphDef g = Graph("ops");
  std::unique_ptr<Session> s = MakeSession(g, 2);
  ASSERT_NE(s, nullptr);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const char* f : {"a0", "a1", "i0", "i1", "b"}) feeds.push_back({f, Npy(absl::StrCat("ops.", f))});
  std::vector<std::string> fetches = {"bsend", "brecv", "v1bsend", "v1brecv"};
  for (int r = 0; r < 2; ++r) {
    for (const char* f : {"sum", "mean", "prod", "imax", "imean", "min", "gather", "v1mean",
                          "v1gather"}) {
      fetches.push_back(absl::StrCat(f, r));
    }
  }
  std::vector<Tensor> none;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &none).ok());
  std::vector<Tensor> out;
  absl::Status st = s->Run(feeds, fetches, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  // Two members: every merge is one operation, as in TensorFlow's ring.
  for (size_t i = 0; i < fetches.size(); ++i) {
    ExpectMatches(out[i], Npy(absl::StrCat("ops.", fetches[i])), 0, fetches[i]);
  }
}

TEST(CollectiveTest, FourDevicesRankByDeviceName) {
  GraphDef g = Graph("four");
  std::unique_ptr<Session> s = MakeSession(g, 4);
  ASSERT_NE(s, nullptr);
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  for (int r = 0; r < 4; ++r) {
    feeds.push_back({absl::StrCat("x", r), Npy(absl::StrCat("four.x", r))});
    feeds.push_back({absl::StrCat("g", r), Npy(absl::StrCat("four.g", r))});
    fetches.push_back(absl::StrCat("mean", r));
    fetches.push_back(absl::StrCat("gather", r));
  }
  std::vector<Tensor> out;
  absl::Status st = s->Run(feeds, fetches, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  for (size_t i = 0; i < fetches.size(); ++i) {
    // TensorFlow's ring adds the four in another order than rank order.
    ExpectMatches(out[i], Npy(absl::StrCat("four.", fetches[i])), i % 2 == 0 ? 1e-6 : 0,
                  fetches[i]);
  }
  // Every member holds the same value.
  for (int r = 1; r < 4; ++r) ExpectMatches(out[2 * r], out[0], 0, "mean replicas");
}

TEST(CollectiveTest, TowersTrainedWithAveragedGradientsMatchTensorFlow) {
  std::unique_ptr<Session> s = MakeSession(Graph("train"), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> none;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &none).ok());
  const Tensor x0 = Npy("train_x0"), x1 = Npy("train_x1"), y0 = Npy("train_y0"),
               y1 = Npy("train_y1"), l0 = Npy("train_loss0"), l1 = Npy("train_loss1");
  auto row = [](const Tensor& t, int64_t step) {
    TensorShape shape = t.shape();
    shape.RemoveDim(0);
    return *t.Slice(step, step + 1).Reshaped(shape);
  };
  for (int step = 0; step < 10; ++step) {
    std::vector<Tensor> out;
    absl::Status st = s->Run({{"tower_0/x0", row(x0, step)}, {"tower_0/y0", row(y0, step)},
                              {"tower_1/x1", row(x1, step)}, {"tower_1/y1", row(y1, step)}},
                             {"tower_0/loss0", "tower_1/loss1"}, {"train"}, &out);
    ASSERT_TRUE(st.ok()) << st;
    ExpectMatches(out[0], row(l0, step), 1e-5, absl::StrCat("loss0 at step ", step));
    ExpectMatches(out[1], row(l1, step), 1e-5, absl::StrCat("loss1 at step ", step));
  }
  for (const char* v : {"w0", "b0", "w1"}) {
    std::vector<Tensor> got;
    ASSERT_TRUE(s->Run({}, {absl::StrCat("tower_0/", v, "/Read/ReadVariableOp"),
                           absl::StrCat("tower_1/", v, "/Read/ReadVariableOp")}, {}, &got)
                    .ok());
    ExpectMatches(got[0], Npy(absl::StrCat("train_final__tower_0__", v)), 1e-5, v);
    ExpectMatches(got[1], got[0], 0, absl::StrCat(v, ": tower 1 against tower 0"));
  }
}

// The error LowerCollectiveOps gives for `g`.
std::string LowerError(const GraphDef& g) {
  absl::StatusOr<GraphDef> lowered = LowerCollectiveOps(g);
  EXPECT_FALSE(lowered.ok());
  return lowered.ok() ? "" : std::string(lowered.status().message());
}

NodeDef* Find(GraphDef* g, const std::string& name) {
  for (NodeDef& n : *g->mutable_node()) {
    if (n.name() == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  static NodeDef none;
  return &none;
}

TEST(CollectiveTest, BadInstancesAreNamed) {
  const GraphDef ops = Graph("ops");
  {  // A member missing (between graphs): its instance is left for run
     // time, where a session of one process has no peers to meet and
     // says so, naming the node.
    GraphDef g;
    for (const NodeDef& n : ops.node()) {
      if (n.name() != "sum1") *g.add_node() = n;
    }
    absl::StatusOr<GraphDef> lowered = LowerCollectiveOps(g);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(Find(&*lowered, "sum0")->op(), "CollectiveReduceV2");
    EXPECT_NE(Find(&*lowered, "mean0")->op(), "CollectiveReduceV2");
    SessionOptions so;
    so.cpu_devices = 2;
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(g, so);
    ASSERT_TRUE(s.ok()) << s.status();
    std::vector<Tensor> out;
    absl::Status st = (*s)->Run({{"a0", Npy("ops.a0")}}, {"sum0"}, {}, &out);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("node 'sum0' (reduce of group 1, instance 1, execution 0, on "
                          "/job:localhost/replica:0/task:0/device:CPU:0): the graph holds only "
                          "some of the instance's 2 members"));
  }
  {  // Too many members.
    GraphDef g = ops;
    NodeDef* extra = g.add_node();
    *extra = *Find(&g, "sum1");
    extra->set_name("sum2");
    extra->set_device("/device:CPU:2");
    EXPECT_THAT(LowerError(g), HasSubstr("node 'sum0' (group 1, instance 1): the group has 2 "
                                         "members but the graph holds 3"));
  }
  {  // Both members on one device.
    GraphDef g = ops;
    Find(&g, "gather1")->set_device("/device:CPU:0");
    EXPECT_THAT(LowerError(g), HasSubstr("both ask for '/device:CPU:0'"));
  }
  {  // A key that is not a constant: the member meets at run time, and so
     // does the one it would have met.
    GraphDef g = ops;
    Find(&g, "mean1")->set_input(3, "i1");
    absl::StatusOr<GraphDef> lowered = LowerCollectiveOps(g);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(Find(&*lowered, "mean1")->op(), "CollectiveReduceV2");
    EXPECT_EQ(Find(&*lowered, "mean0")->op(), "CollectiveReduceV2");
  }
  {  // Members that disagree.
    GraphDef g = ops;
    (*Find(&g, "prod1")->mutable_attr())["merge_op"].set_s("Add");
    EXPECT_THAT(LowerError(g), HasSubstr("merge differently"));
    (*Find(&g, "prod0")->mutable_attr())["merge_op"].set_s("Xor");
    (*Find(&g, "prod1")->mutable_attr())["merge_op"].set_s("Xor");
    EXPECT_THAT(LowerError(g), HasSubstr("merge_op 'Xor' is none of Add, Mul, Min, Max"));
  }
  {  // Two senders.
    GraphDef g = ops;
    NodeDef* recv = Find(&g, "v1brecv");
    recv->set_op("CollectiveBcastSend");
    recv->add_input("a0");
    EXPECT_THAT(LowerError(g), HasSubstr("needs exactly one sender, the instance has 2"));
  }
  {  // A receiver whose shape holds another element count is refused, named.
    GraphDef g = ops;
    auto* dims = (*Find(&g, "v1brecv")->mutable_attr())["shape"].mutable_shape();
    dims->mutable_dim(0)->set_size(3);
    SessionOptions so;
    so.cpu_devices = 2;
    absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(g, so);
    absl::Status st = s.status();
    if (s.ok()) {
      std::vector<Tensor> out;
      st = (*s)->Run({{"b", Npy("ops.b")}}, {"v1brecv"}, {}, &out);
    }
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(std::string(st.message()), HasSubstr("v1brecv"));
  }
}

}  // namespace
}  // namespace graphrun
