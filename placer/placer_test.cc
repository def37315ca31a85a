#include "placer/placer.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

using ::absl::StrCat;

std::unique_ptr<Graph> Import(const std::string& text) {
  auto def = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(def.ok()) << def.status();
  auto g = ImportGraphDef(*def);
  EXPECT_TRUE(g.ok()) << g.status();
  return std::move(g).value();
}

std::string FloatConst(const std::string& name, int rows, int cols,
                       const std::string& extra = "") {
  return StrCat(R"(node { name: ")", name, R"(" op: "Const" )", extra,
                R"( attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {
      dim { size: )", rows, R"( } dim { size: )", cols,
                R"( } } float_val: 1 } } } })");
}

std::string Unary(const std::string& name, const std::string& op,
                  const std::string& input, const std::string& extra = "") {
  return StrCat(R"(node { name: ")", name, R"(" op: ")", op, R"(" input: ")",
                input, R"(" )", extra,
                R"( attr { key: "T" value { type: DT_FLOAT } } })");
}

std::string MatMul(const std::string& name, const std::string& a,
                   const std::string& b, const std::string& extra = "") {
  return StrCat(R"(node { name: ")", name, R"(" op: "MatMul" input: ")", a,
                R"(" input: ")", b, R"(" )", extra,
                R"( attr { key: "T" value { type: DT_FLOAT } } })");
}

// Every op runs on CPU; on GPU everything except `cpu_only`.
class Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    avail_ = FunctionAvailability([this](const Node& n, absl::string_view type) {
      return type == "CPU" || n.op() != cpu_only_;
    });
    options_.availability = avail_.get();
  }
  absl::StatusOr<Placement> PlaceOn(const Graph& g, const DeviceSet& d) {
    return Place(g, d, costs_, options_);
  }
  std::string cpu_only_ = "Neg";
  std::unique_ptr<KernelAvailability> avail_;
  PlacerOptions options_;
  CostModel costs_;
};

const char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
const char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

TEST_F(Fixture, OneDeviceTakesEverything) {
  auto g = Import(FloatConst("a", 4, 4) + MatMul("m", "a", "a"));
  DeviceSet d = LocalDeviceSet(1, 0);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->device, (std::vector<int>{0, 0}));
  EXPECT_EQ(p->reason[0], "only device");
  EXPECT_EQ(FormatPlacementLog(*g, d, *p),
            StrCat("a: (Const): ", kCpu0, " # only device\n", "m: (MatMul): ",
                   kCpu0, " # only device\n"));
}

TEST_F(Fixture, BigMatMulGoesToTheGpuWithAReason) {
  auto g = Import(FloatConst("a", 2048, 2048) + MatMul("m", "a", "a"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const int m = g->FindNode("m")->id();
  EXPECT_EQ(d.devices()[p->device[m]].name, kGpu0);
  EXPECT_TRUE(absl::StrContains(p->reason[m], "cost: est. finish GPU:0")) << p->reason[m];
  EXPECT_TRUE(absl::StrContains(p->reason[m], "CPU:0")) << p->reason[m];
  const std::string log = FormatPlacementLog(*g, d, *p);
  EXPECT_TRUE(absl::StrContains(log, StrCat("m: (MatMul): ", kGpu0, " # "))) << log;
  EXPECT_GE(p->predicted_step_time, p->lower_bound.best());
  EXPECT_LE(p->predicted_step_time, p->best_single_device_time);
}

TEST_F(Fixture, NoGpuKernelKeepsTheNodeOnCpu) {
  auto g = Import(FloatConst("a", 8, 8) + Unary("n", "Neg", "a"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const int n = g->FindNode("n")->id();
  EXPECT_EQ(d.devices()[p->device[n]].type, "CPU");
  EXPECT_TRUE(absl::StrContains(p->reason[n], "no GPU kernel")) << p->reason[n];
}

// tensorflow#838: a large constant feeding a consumer with no GPU kernel.
// TensorFlow's first-feasible rule puts the constant on the GPU and copies
// it to the CPU on every step; the cost model moves nothing.
TEST_F(Fixture, LargeConstantFeedingCpuOnlyConsumerMovesNoBytes) {
  auto g = Import(FloatConst("big", 4096, 4096) + Unary("n", "Neg", "big"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->device[g->FindNode("big")->id()], p->device[g->FindNode("n")->id()]);
  EXPECT_EQ(p->schedule.transfer_bytes, 0);
  EXPECT_EQ(p->schedule.num_transfers, 0);
  EXPECT_TRUE(absl::StrContains(FormatPlacementSummary(*g, d, *p),
                                "cross-device tensors per step: 0 (0 B on the wire)"));

  // The same with the GPU listed first, where "first feasible device"
  // would pick it for the constant.
  auto gpu_first = ParseClusterDescription(R"({"devices": [
      {"name": "/job:localhost/replica:0/task:0/device:GPU:0"},
      {"name": "/job:localhost/replica:0/task:0/device:CPU:0"}]})");
  ASSERT_TRUE(gpu_first.ok()) << gpu_first.status();
  auto q = PlaceOn(*g, *gpu_first);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->device[g->FindNode("big")->id()], 1);
  EXPECT_EQ(q->schedule.transfer_bytes, 0);
}

TEST_F(Fixture, HostMemoryArgumentsMoveNoBytes) {
  // The GPU kernel of Reshape keeps its shape argument in host memory: the
  // shape computed on the CPU reaches it without a device transfer.
  auto host = FunctionAvailability(
      [](const Node&, absl::string_view) { return true; },
      [](const Node& n, int input, absl::string_view type) {
        return n.op() == "Reshape" && input == 1 && type == "GPU";
      });
  options_.availability = host.get();
  auto g = Import(FloatConst("a", 2048, 2048, R"(device: "/device:GPU:0")") +
                  R"(node { name: "shape" op: "Const" device: "/device:CPU:0"
                       attr { key: "dtype" value { type: DT_INT32 } }
                       attr { key: "value" value { tensor { dtype: DT_INT32
                         tensor_shape { dim { size: 1 } } int_val: -1 } } } }
                     node { name: "r" op: "Reshape" input: "a" input: "shape"
                       device: "/device:GPU:0"
                       attr { key: "T" value { type: DT_FLOAT } }
                       attr { key: "Tshape" value { type: DT_INT32 } } })");
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->schedule.num_transfers, 0);
  options_.availability = avail_.get();
  auto q = PlaceOn(*g, d);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->schedule.num_transfers, 1);
}

TEST_F(Fixture, ExplicitRequestIsHard) {
  auto g = Import(FloatConst("a", 2048, 2048) +
                  MatMul("m", "a", "a", R"(device: "/device:CPU:0")"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const int m = g->FindNode("m")->id();
  EXPECT_EQ(d.devices()[p->device[m]].name, kCpu0);
  EXPECT_TRUE(absl::StrContains(p->reason[m], "requested '/device:CPU:0'")) << p->reason[m];
}

TEST_F(Fixture, LegacyAndPartialRequests) {
  auto g = Import(FloatConst("a", 4, 4, R"(device: "/gpu:0")") +
                  MatMul("m", "a", "a", R"(device: "/job:localhost/device:CPU:*")"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(d.devices()[p->device[0]].name, kGpu0);
  EXPECT_EQ(d.devices()[p->device[1]].name, kCpu0);
}

TEST_F(Fixture, ImpossibleRequestNamesNodeGroupAndDevices) {
  auto g = Import(FloatConst("a", 4, 4) + Unary("n", "Neg", "a", R"(device: "/device:GPU:0")"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(p.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "cannot place node 'n' (Neg)")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "colocation group [n]")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, StrCat(kGpu0, " (node 'n': no GPU kernel for 'Neg')")))
      << msg;
  EXPECT_TRUE(absl::StrContains(msg, StrCat(kCpu0, " (does not match the request"))) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "allow_soft_placement")) << msg;

  options_.allow_soft_placement = true;
  auto soft = PlaceOn(*g, d);
  ASSERT_TRUE(soft.ok()) << soft.status();
  EXPECT_EQ(d.devices()[soft->device[1]].name, kCpu0);
  ASSERT_EQ(soft->warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(soft->warnings[0], "soft placement: node 'n'"))
      << soft->warnings[0];
}

TEST_F(Fixture, RequestForAMissingDevice) {
  auto g = Import(FloatConst("a", 4, 4, R"(device: "/device:GPU:3")"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "requesting '/device:GPU:3'"))
      << p.status();
  auto bad = Import(FloatConst("a", 4, 4, R"(device: "/device:GPU:x")"));
  auto q = PlaceOn(*bad, d);
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(absl::StrContains(q.status().message(), "node 'a' (Const) requests device"))
      << q.status();
}

TEST_F(Fixture, ColocationGroupsShareADevice) {
  auto g = Import(FloatConst("a", 2048, 2048) +
                  MatMul("m", "a", "a", R"(device: "/device:GPU:0")") +
                  Unary("x", "Relu", "m",
                        R"(attr { key: "_class" value { list { s: "loc:@a" } } })"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const int a = g->FindNode("a")->id(), x = g->FindNode("x")->id();
  EXPECT_EQ(p->device[a], p->device[x]);
  EXPECT_TRUE(absl::StrContains(p->reason[x], "colocated with 'a'")) << p->reason[x];
}

TEST_F(Fixture, ConflictingColocatedRequests) {
  auto g = Import(FloatConst("a", 4, 4, R"(device: "/device:GPU:0")") +
                  Unary("x", "Relu", "a",
                        R"(device: "/device:CPU:0" attr { key: "_class" value { list { s: "loc:@a" } } })"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "cannot colocate node 'x'")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "[a, x]")) << msg;
  options_.allow_soft_placement = true;
  auto soft = PlaceOn(*g, d);
  ASSERT_TRUE(soft.ok()) << soft.status();
  EXPECT_EQ(soft->device[0], soft->device[1]);
  EXPECT_FALSE(soft->warnings.empty());
}

// A replica_device_setter graph: the variable on a ps task, the forward
// pass and an Assign made under /job:worker. A MatMul reads the ref output
// by value (a float input) and stays on the worker; the Assign takes the
// ref and runs with the variable, its own request set aside, as in
// TensorFlow.
TEST_F(Fixture, RefConsumersFollowTheVariableAcrossTasks) {
  auto g = Import(R"(
    node { name: "v" op: "VariableV2" device: "/job:ps/task:1"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 4 } dim { size: 4 } } } } }
    node { name: "init" op: "Const" device: "/job:worker/task:0"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {
        dim { size: 4 } dim { size: 4 } } float_val: 1 } } } }
    node { name: "assign" op: "Assign" input: "v" input: "init" device: "/job:worker/task:0"
      attr { key: "T" value { type: DT_FLOAT } } })" +
                  MatMul("m", "init", "v", R"(device: "/job:worker/task:0")"));
  DeviceSet d;
  for (const char* name : {"/job:ps/replica:0/task:0/device:CPU:0",
                           "/job:ps/replica:0/task:1/device:CPU:0",
                           "/job:worker/replica:0/task:0/device:CPU:0"}) {
    DeviceInfo info = DefaultDeviceInfo("CPU");
    info.name = name;
    ASSERT_TRUE(d.AddDevice(info).ok());
  }
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const auto device_of = [&](const char* node) {
    return d.devices()[p->device[g->FindNode(node)->id()]].name;
  };
  EXPECT_EQ(device_of("v"), "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(device_of("assign"), "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(device_of("m"), "/job:worker/replica:0/task:0/device:CPU:0");
  bool noted = false;
  for (const std::string& w : p->warnings) {
    noted |= absl::StrContains(w, "node 'assign' requests '/job:worker/task:0' but takes a "
                                  "reference or resource from 'v'");
  }
  EXPECT_TRUE(noted);
}

TEST_F(Fixture, ColocationWithoutAnyCommonKernelIsAnError) {
  auto g = Import(FloatConst("a", 4, 4, R"(device: "/device:GPU:0")") +
                  Unary("n", "Neg", "a",
                        R"(attr { key: "_class" value { list { s: "loc:@a" } } })"));
  DeviceSet d = LocalDeviceSet(1, 1);
  auto p = PlaceOn(*g, d);
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "[a, n]")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "no GPU kernel for 'Neg'")) << msg;
}

TEST_F(Fixture, DeviceMemoryLimitIsRespected) {
  // Four 64 MiB products on a GPU that holds 100 MB: the ones that do not
  // fit go to the CPU.
  auto d = ParseClusterDescription(R"({"devices": [
      {"name": "/job:localhost/replica:0/task:0/device:CPU:0", "memory_bytes": 8589934592},
      {"name": "/job:localhost/replica:0/task:0/device:GPU:0", "memory_bytes": 100000000}]})");
  ASSERT_TRUE(d.ok()) << d.status();
  std::string text = FloatConst("a", 4096, 1) + FloatConst("b", 1, 4096);
  for (int i = 0; i < 4; ++i) text += MatMul(StrCat("m", i), "a", "b");
  text += R"(node { name: "sum" op: "AddN" input: ["m0", "m1", "m2", "m3"]
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 4 } } })";
  auto g = Import(text);
  auto p = PlaceOn(*g, *d);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_LE(p->schedule.peak_memory[1], 100000000);
  int on_gpu = 0;
  for (int i = 0; i < 4; ++i) on_gpu += p->device[g->FindNode(StrCat("m", i))->id()] == 1;
  EXPECT_LE(on_gpu, 1);

  options_.respect_memory = false;
  auto unlimited = PlaceOn(*g, *d);
  ASSERT_TRUE(unlimited.ok());
  EXPECT_GT(unlimited->schedule.peak_memory[1], 100000000);
}

TEST_F(Fixture, MeasuredCostsOverrideTheModel) {
  auto g = Import(FloatConst("a", 2048, 2048) + MatMul("m", "a", "a"));
  DeviceSet d = LocalDeviceSet(1, 1);
  CostProfile profile;
  NodeCost* c = profile.add_nodes();
  c->set_node("m");
  c->set_device("GPU");
  c->set_compute_us(5e6);  // 5 s on the GPU: slower than the CPU's estimate
  ASSERT_TRUE(costs_.AddProfile(profile).ok());
  auto p = PlaceOn(*g, d);
  ASSERT_TRUE(p.ok()) << p.status();
  const int m = g->FindNode("m")->id();
  EXPECT_EQ(d.devices()[p->device[m]].type, "CPU");
  EXPECT_TRUE(absl::StrContains(p->reason[m], "measured cost")) << p->reason[m];
}

TEST_F(Fixture, DeterministicAndDot) {
  std::string text = FloatConst("a", 512, 512);
  for (int i = 0; i < 30; ++i) {
    text += MatMul(StrCat("m", i), i == 0 ? "a" : StrCat("m", (i * 7) % i), "a");
  }
  auto g = Import(text);
  DeviceSet d = LocalDeviceSet(2, 2);
  auto p1 = PlaceOn(*g, d);
  auto p2 = PlaceOn(*g, d);
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p1->device, p2->device);
  EXPECT_EQ(FormatPlacementLog(*g, d, *p1), FormatPlacementLog(*g, d, *p2));
  const std::string dot = PlacementToDot(*g, d, *p1, costs_);
  EXPECT_TRUE(absl::StartsWith(dot, "digraph placement {"));
  EXPECT_TRUE(absl::StrContains(dot, "\"m0\" [label=\"m0\\nMatMul\""));
  bool cross = false;
  for (const auto& n : g->nodes()) {
    for (const Edge* e : n->out_edges()) cross |= p1->device[n->id()] != p1->device[e->dst->id()];
  }
  EXPECT_EQ(cross, absl::StrContains(dot, "color=red"));
  // Summary names every device.
  const std::string summary = FormatPlacementSummary(*g, d, *p1);
  for (const char* dev : {"CPU:0", "CPU:1", "GPU:0", "GPU:1"}) {
    EXPECT_TRUE(absl::StrContains(summary, dev)) << summary;
  }
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
