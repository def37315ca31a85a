// Place() under device memory limits with a cost profile's persistent_bytes
// and unsupported entries: colocation groups placed as a unit, weights
// following their consumers, and the reasons and summary saying which plans
// failed and which single device can hold the graph.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "placer/placer.h"

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

// A [15] float tensor (60 bytes); sizes that matter come from profiles.
std::string Const15(const std::string& name) {
  return StrCat(R"(node { name: ")", name, R"(" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT
      tensor_shape { dim { size: 15 } } float_val: 1 } } } })");
}
std::string Placeholder15(const std::string& name) {
  return StrCat(R"(node { name: ")", name, R"(" op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 15 } } } } })");
}
std::string Relu(const std::string& name, const std::string& input,
                 const std::string& extra = "") {
  return StrCat(R"(node { name: ")", name, R"(" op: "Relu" input: ")", input,
                R"(" )", extra, R"( attr { key: "T" value { type: DT_FLOAT } } })");
}
std::string Add(const std::string& name, const std::string& a, const std::string& b) {
  return StrCat(R"(node { name: ")", name, R"(" op: "AddN" input: [")", a, R"(", ")",
                b, R"("] attr { key: "T" value { type: DT_FLOAT } }
                attr { key: "N" value { i: 2 } } })");
}

// CPU:0 with unlimited memory and GPU:0 with `gpu_bytes`.
DeviceSet CpuAndGpu(int64_t gpu_bytes) {
  auto d = ParseClusterDescription(StrCat(R"({"devices": [
      {"name": "/job:localhost/replica:0/task:0/device:CPU:0", "memory_bytes": 0},
      {"name": "/job:localhost/replica:0/task:0/device:GPU:0", "memory_bytes": )",
                                          gpu_bytes, "}]}"));
  EXPECT_TRUE(d.ok()) << d.status();
  return *std::move(d);
}

class PlacerMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    avail_ = FunctionAvailability([](const Node&, absl::string_view) { return true; });
    options_.availability = avail_.get();
  }
  void Profile(const std::string& json) {
    CostProfile profile;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &profile).ok()) << json;
    ASSERT_TRUE(costs_.AddProfile(profile).ok());
  }
  int Id(const Graph& g, const std::string& name) { return g.FindNode(name)->id(); }

  std::unique_ptr<KernelAvailability> avail_;
  PlacerOptions options_;
  CostModel costs_;
};

// The four-node case (scheduler_test has it on the abstract problem): the
// weight `c` (60 bytes) colocated with its consumer `m` (20-byte output),
// an input `x` (30-byte output, 3x faster on the GPU), `o` joining both; a
// GPU of 100 bytes holds the group or `x`, not both. The group goes to the
// CPU as a whole and `x` to the GPU: 3 ms, where the CPU alone takes 6 ms.
TEST_F(PlacerMemoryTest, ColocationGroupWithAMemoryLimitIsPlacedAsAUnit) {
  auto g = Import(Const15("c") +
                  Relu("m", "c", R"(attr { key: "_class" value { list { s: "loc:@c" } } })") +
                  Placeholder15("x") + Add("o", "m", "x"));
  Profile(R"({"nodes": [
    {"node": "c", "device": "CPU", "compute_us": 0, "persistent_bytes": 60},
    {"node": "m", "device": "CPU", "compute_us": 2000, "output_bytes": [20]},
    {"node": "m", "device": "GPU", "compute_us": 1000, "output_bytes": [20]},
    {"node": "x", "device": "CPU", "compute_us": 3000, "output_bytes": [30]},
    {"node": "x", "device": "GPU", "compute_us": 1000, "output_bytes": [30]},
    {"node": "o", "device": "CPU", "compute_us": 1000, "output_bytes": [4]},
    {"node": "o", "device": "GPU", "compute_us": 1000, "output_bytes": [4]}]})");
  const DeviceSet d = CpuAndGpu(100);
  auto p = Place(*g, d, costs_, options_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->device[Id(*g, "c")], 0);
  EXPECT_EQ(p->device[Id(*g, "m")], 0);
  EXPECT_EQ(p->device[Id(*g, "x")], 1);
  EXPECT_NEAR(p->predicted_step_time, 3e-3, 1e-5);
  EXPECT_LE(p->schedule.peak_memory[1], 100);
  EXPECT_EQ(p->schedule.plan, "heft");
}

TEST_F(PlacerMemoryTest, PersistentBytesOfAnyNodeCountAgainstMemory) {
  // `v` holds 80 bytes for the step (a variable's buffer, say): on a GPU
  // of 100 bytes it leaves no room for `u` next to it.
  auto g = Import(Placeholder15("v") + Relu("u", "v"));
  Profile(R"({"nodes": [
    {"node": "v", "device": "GPU", "compute_us": 1, "output_bytes": [8],
     "persistent_bytes": "80"},
    {"node": "v", "device": "CPU", "compute_us": 1, "output_bytes": [8]},
    {"node": "u", "device": "GPU", "compute_us": 1, "output_bytes": [16]},
    {"node": "u", "device": "CPU", "compute_us": 5, "output_bytes": [16]}]})");
  EXPECT_EQ(costs_.PersistentBytes(*g->FindNode("v")), 80);
  EXPECT_EQ(costs_.PersistentBytes(*g->FindNode("u")), -1);
  auto roomy = Place(*g, CpuAndGpu(200), costs_, options_);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_EQ(roomy->device, (std::vector<int>{1, 1}));
  EXPECT_EQ(roomy->schedule.peak_memory[1], 80 + 8 + 16);
  auto tight = Place(*g, CpuAndGpu(100), costs_, options_);
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_LE(tight->schedule.peak_memory[1], 100);
  EXPECT_NE(tight->device, (std::vector<int>{1, 1}));
}

TEST_F(PlacerMemoryTest, UnsupportedEntriesKeepNodesOffADevice) {
  auto g = Import(Placeholder15("x") + Relu("r", "x") + Relu("s", "r"));
  Profile(R"({"nodes": [
    {"node": "r", "device": "GPU", "unsupported": true},
    {"op": "Relu", "device": "/job:localhost/replica:0/task:0/device:GPU:1",
     "unsupported": true},
    {"op": "Relu", "device": "GPU", "compute_us": 1},
    {"op": "Relu", "device": "CPU", "compute_us": 100}]})");
  DeviceSet d = LocalDeviceSet(1, 2);
  auto p = Place(*g, d, costs_, options_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(d.devices()[p->device[Id(*g, "r")]].type, "CPU");
  EXPECT_TRUE(absl::StrContains(p->reason[Id(*g, "r")], "unsupported on GPU in the cost profile"))
      << p->reason[Id(*g, "r")];
  // `s` may use GPU:0 but not GPU:1.
  EXPECT_EQ(d.devices()[p->device[Id(*g, "s")]].name,
            "/job:localhost/replica:0/task:0/device:GPU:0");

  // A request for the device the profile rules out is an error naming why.
  auto pinned = Import(Placeholder15("x") +
                       Relu("r", "x", R"(device: "/device:GPU:0")"));
  auto err = Place(*pinned, d, costs_, options_);
  ASSERT_FALSE(err.ok());
  EXPECT_TRUE(absl::StrContains(err.status().message(),
                                "the cost profile marks it unsupported there"))
      << err.status();
}

TEST_F(PlacerMemoryTest, ReasonsAndSummarySayWhichPlansFailed) {
  // `a` (60-byte output, fastest on the GPU) is placed first and takes the
  // GPU; `b` can only run there and holds 50 bytes: every list-scheduled
  // spread plan runs out of GPU memory at `b`. The plan with everything
  // else on the CPU fits.
  auto g = Import(Placeholder15("a") +
                  StrCat(R"(node { name: "b" op: "Placeholder" device: "/device:GPU:0"
                      attr { key: "dtype" value { type: DT_FLOAT } }
                      attr { key: "shape" value { shape { dim { size: 15 } } } } })") +
                  Add("c", "a", "b"));
  Profile(R"({"nodes": [
    {"node": "a", "device": "CPU", "compute_us": 3000, "output_bytes": [60]},
    {"node": "a", "device": "GPU", "compute_us": 1000, "output_bytes": [60]},
    {"node": "b", "device": "GPU", "compute_us": 1000, "output_bytes": [0],
     "persistent_bytes": 50},
    {"node": "c", "device": "CPU", "compute_us": 10, "output_bytes": [4]},
    {"node": "c", "device": "GPU", "compute_us": 10, "output_bytes": [4]}]})");
  const DeviceSet d = CpuAndGpu(100);
  auto p = Place(*g, d, costs_, options_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->schedule.plan, "mostly-one-device");
  EXPECT_EQ(p->device, (std::vector<int>{0, 1, 0}));
  const std::string& why = p->reason[Id(*g, "a")];
  EXPECT_TRUE(absl::StrContains(why, "no spread plan fits (heft, peft, lookahead: "
                                     "node 'b' (Placeholder) fits on no device"))
      << why;
  EXPECT_TRUE(absl::StrContains(why, "the mostly-one-device plan")) << why;
  EXPECT_FALSE(absl::StrContains(why, "beats spreading")) << why;
  const std::string summary = FormatPlacementSummary(*g, d, *p);
  EXPECT_TRUE(absl::StrContains(summary, "plans tried:\n  heft: failed: node 'b'")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "  mostly on CPU:0: 3.01 ms")) << summary;
  // `b` is pinned to the GPU, which cannot hold `a` and `b` together.
  EXPECT_TRUE(absl::StrContains(summary, "no single device can hold the graph (GPU:0 "))
      << summary;
}

TEST_F(PlacerMemoryTest, BestSingleDeviceIsOneThatHoldsTheGraph) {
  auto g = Import(Placeholder15("x") + Relu("r1", "x") + Relu("r2", "r1"));
  Profile(R"({"nodes": [
    {"node": "x", "device": "CPU", "compute_us": 0, "output_bytes": [4]},
    {"node": "r1", "device": "GPU", "compute_us": 1, "output_bytes": [4],
     "persistent_bytes": 60},
    {"node": "r1", "device": "CPU", "compute_us": 100, "output_bytes": [4]},
    {"node": "r2", "device": "GPU", "compute_us": 1, "output_bytes": [4],
     "persistent_bytes": 60},
    {"node": "r2", "device": "CPU", "compute_us": 100, "output_bytes": [4]}]})");
  // The GPU runs everything in 2 us but needs 120 bytes of its 100.
  const DeviceSet d = CpuAndGpu(100);
  auto p = Place(*g, d, costs_, options_);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->best_single_device, 0);
  EXPECT_EQ(p->fastest_device_too_small, 1);
  EXPECT_GE(p->fastest_device_too_small_needs, 120);
  const std::string summary = FormatPlacementSummary(*g, d, *p);
  EXPECT_TRUE(absl::StrContains(summary, "best single device: CPU:0 at ")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "(GPU:0 would take 2.0 us but cannot hold the "
                                         "graph: needs "))
      << summary;
  EXPECT_LE(p->predicted_step_time, p->best_single_device_time);

  // With 100 bytes on the CPU too, no device holds the graph alone, but a
  // plan that splits it fits.
  auto both = ParseClusterDescription(R"({"devices": [
      {"name": "/job:localhost/replica:0/task:0/device:CPU:0", "memory_bytes": 100},
      {"name": "/job:localhost/replica:0/task:0/device:GPU:0", "memory_bytes": 100}]})");
  ASSERT_TRUE(both.ok());
  auto split = Place(*g, *both, costs_, options_);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->best_single_device, -1);
  EXPECT_LE(split->schedule.peak_memory[0], 100);
  EXPECT_LE(split->schedule.peak_memory[1], 100);
  EXPECT_TRUE(absl::StrContains(FormatPlacementSummary(*g, *both, *split),
                                "no single device can hold the graph (GPU:0 would take"))
      << FormatPlacementSummary(*g, *both, *split);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
