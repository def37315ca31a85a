// Tests for CostModel's measured costs: LoadProfile (JSON files, the lookup
// order node/op x exact device/type, medians, output bytes, and every
// malformed-file error naming the file and entry) and SaveProfile round
// trips. The analytical estimate is covered by placer_test.
#include "placer/cost_model.h"

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr char kGpu1[] = "/job:localhost/replica:0/task:0/device:GPU:1";

// x: [4,4] float; mm = MatMul(x, x); relu = Relu(mm).
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 4 } dim { size: 4 } } } } }
  node { name: "mm" op: "MatMul" input: "x" input: "x"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "relu" op: "Relu" input: "mm" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

DeviceInfo Device(const std::string& name, const std::string& type) {
  DeviceInfo d = DefaultDeviceInfo(type);
  d.name = name;
  d.type = type;
  return d;
}

class CostModelProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto def = ParseGraphDef(kGraph, GraphFormat::kText);
    ASSERT_TRUE(def.ok()) << def.status();
    auto g = ImportGraphDef(*def);
    ASSERT_TRUE(g.ok()) << g.status();
    graph_ = *std::move(g);
  }

  // Writes `json` to a fresh file and returns its path.
  std::string File(const std::string& json) {
    const std::string path =
        absl::StrCat(::testing::TempDir(), "/profile_", ++files_, ".json");
    std::ofstream(path) << json;
    return path;
  }

  const Node& N(const std::string& name) { return *graph_->FindNode(name); }

  // ComputeTime in microseconds, and whether a profile entry supplied it.
  double Us(const CostModel& m, const std::string& node, const DeviceInfo& d,
            bool* measured = nullptr) {
    return m.ComputeTime(N(node), d, measured) * 1e6;
  }

  std::unique_ptr<Graph> graph_;
  int files_ = 0;
};

TEST_F(CostModelProfileTest, LookupOrderNodeThenOpAndExactDeviceThenType) {
  CostModel m;
  const std::string path = File(absl::StrCat(R"({"nodes": [
    {"node": "mm", "device": ")", kGpu0, R"(", "compute_us": 10},
    {"node": "mm", "device": "GPU", "compute_us": 20},
    {"op": "MatMul", "device": ")", kCpu0, R"(", "compute_us": 30},
    {"op": "Relu", "device": "gpu", "compute_us": 40},
    {"op": "Relu", "device": ")", kGpu1, R"(", "compute_us": 50}
  ]})"));
  ASSERT_TRUE(m.LoadProfile(path).ok()) << m.LoadProfile(path);
  const DeviceInfo gpu0 = Device(kGpu0, "GPU"), gpu1 = Device(kGpu1, "GPU");
  const DeviceInfo cpu0 = Device(kCpu0, "CPU");
  bool measured = false;
  EXPECT_DOUBLE_EQ(Us(m, "mm", gpu0, &measured), 10);  // node, exact name
  EXPECT_TRUE(measured);
  EXPECT_DOUBLE_EQ(Us(m, "mm", gpu1), 20);              // node, type
  EXPECT_DOUBLE_EQ(Us(m, "mm", cpu0), 30);              // op, exact name
  EXPECT_DOUBLE_EQ(Us(m, "relu", gpu0), 40);            // op, type ("gpu")
  EXPECT_DOUBLE_EQ(Us(m, "relu", gpu1), 50);            // op, exact beats type
  // Nothing for relu on a CPU: the analytical estimate, not a measurement.
  EXPECT_GT(Us(m, "relu", cpu0, &measured), 0);
  EXPECT_FALSE(measured);
  EXPECT_TRUE(m.has_measurements());
}

TEST_F(CostModelProfileTest, OneDeviceOfATypePricesTheOthersAndEntriesTakeTheMedian) {
  CostModel m;
  ASSERT_TRUE(m.LoadProfile(File(absl::StrCat(R"({"nodes": [
    {"node": "mm", "device": ")", kGpu0, R"(", "compute_us": 1},
    {"node": "mm", "device": ")", kGpu0, R"(", "compute_us": 9},
    {"node": "mm", "device": ")", kGpu0, R"(", "compute_us": 4},
    {"node": "relu", "device": "CPU", "compute_us": 2},
    {"node": "relu", "device": "CPU", "compute_us": 6}
  ]})")))
                  .ok());
  EXPECT_DOUBLE_EQ(Us(m, "mm", Device(kGpu0, "GPU")), 4);  // median of 1, 9, 4
  // Measured on GPU:0 only, it also prices GPU:1.
  EXPECT_DOUBLE_EQ(Us(m, "mm", Device(kGpu1, "GPU")), 4);
  EXPECT_DOUBLE_EQ(Us(m, "relu", Device(kCpu0, "CPU")), 4);  // (2 + 6) / 2
}

TEST_F(CostModelProfileTest, OutputBytesReplaceTheInferredSize) {
  CostModel m;
  EXPECT_EQ(m.OutputBytes(N("mm"), 0), 4 * 4 * 4);  // [4,4] float
  ASSERT_TRUE(m.LoadProfile(File(R"({"nodes": [
    {"node": "mm", "device": "CPU", "compute_us": 1, "output_bytes": ["1000"]}
  ]})")).ok());
  EXPECT_EQ(m.OutputBytes(N("mm"), 0), 1000);
  EXPECT_EQ(m.OutputBytes(N("relu"), 0), 64);
}

TEST_F(CostModelProfileTest, SaveThenLoadKeepsEveryEntry) {
  CostModel m;
  m.AddMeasurement("mm", "MatMul", kGpu0, 3e-6, {64});
  m.AddMeasurement("mm", "MatMul", kGpu0, 5e-6, {64});
  m.AddMeasurement("", "Relu", "CPU", 7e-6);
  const std::string path = absl::StrCat(::testing::TempDir(), "/saved.json");
  ASSERT_TRUE(m.SaveProfile(path, "two nodes").ok());
  CostModel loaded;
  ASSERT_TRUE(loaded.LoadProfile(path).ok());
  EXPECT_EQ(loaded.ToProfile().nodes_size(), 2);
  EXPECT_DOUBLE_EQ(Us(loaded, "mm", Device(kGpu0, "GPU")), 4);
  EXPECT_DOUBLE_EQ(Us(loaded, "relu", Device(kCpu0, "CPU")), 7);
}

TEST_F(CostModelProfileTest, PersistentBytesAndUnsupportedEntries) {
  CostModel m;
  ASSERT_TRUE(m.LoadProfile(File(absl::StrCat(R"({"nodes": [
    {"node": "x", "device": "CPU", "compute_us": 1, "persistent_bytes": "4096"},
    {"node": "mm", "device": "GPU", "unsupported": true, "persistent_bytes": 12},
    {"op": "Relu", "device": ")", kGpu1, R"(", "unsupported": true},
    {"op": "Relu", "device": "CPU", "compute_us": 3, "persistent_bytes": 7}
  ]})")))
                  .ok());
  EXPECT_EQ(m.PersistentBytes(N("x")), 4096);
  EXPECT_EQ(m.PersistentBytes(N("mm")), 12);
  EXPECT_EQ(m.PersistentBytes(N("relu")), 7);  // by op
  const DeviceInfo gpu0 = Device(kGpu0, "GPU"), gpu1 = Device(kGpu1, "GPU");
  const DeviceInfo cpu0 = Device(kCpu0, "CPU");
  EXPECT_TRUE(m.Unsupported(N("mm"), gpu0));    // node, type
  EXPECT_TRUE(m.Unsupported(N("mm"), gpu1));
  EXPECT_FALSE(m.Unsupported(N("mm"), cpu0));
  EXPECT_FALSE(m.Unsupported(N("relu"), gpu0));
  EXPECT_TRUE(m.Unsupported(N("relu"), gpu1));  // op, exact name
  EXPECT_FALSE(m.Unsupported(N("x"), gpu1));
  // An unsupported entry gives no time: mm on a GPU is not "measured".
  bool measured = true;
  m.ComputeTime(N("mm"), gpu0, &measured);
  EXPECT_FALSE(measured);

  // Saved and loaded again, every field survives.
  const std::string path = absl::StrCat(::testing::TempDir(), "/persistent.json");
  ASSERT_TRUE(m.SaveProfile(path, "fields").ok());
  CostModel loaded;
  ASSERT_TRUE(loaded.LoadProfile(path).ok()) << loaded.LoadProfile(path);
  EXPECT_EQ(loaded.PersistentBytes(N("x")), 4096);
  EXPECT_EQ(loaded.PersistentBytes(N("mm")), 12);
  EXPECT_EQ(loaded.PersistentBytes(N("relu")), 7);
  EXPECT_TRUE(loaded.Unsupported(N("mm"), gpu0));
  EXPECT_TRUE(loaded.Unsupported(N("relu"), gpu1));
  EXPECT_FALSE(loaded.Unsupported(N("relu"), gpu0));
  EXPECT_EQ(loaded.ToProfile().DebugString(), m.ToProfile().DebugString());
}

TEST(HeldBytesTest, ConstantsAndVariables) {
  auto def = ParseGraphDef(R"pb(
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT
             tensor_shape { dim { size: 3 } dim { size: 5 } } float_val: 1 } } } }
    node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_DOUBLE } }
           attr { key: "shape" value { shape { dim { size: 7 } } } } }
    node { name: "h" op: "VarHandleOp" attr { key: "dtype" value { type: DT_INT8 } }
           attr { key: "shape" value { shape { dim { size: 2 } dim { size: 2 } } } } }
    node { name: "u" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING string_val: "x" } } } }
    node { name: "r" op: "Relu" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
  )pb", GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(HeldBytes(def->node(0)), 3 * 5 * 4);
  EXPECT_EQ(HeldBytes(def->node(1)), 7 * 8);
  EXPECT_EQ(HeldBytes(def->node(2)), 4);
  EXPECT_EQ(HeldBytes(def->node(3)), -1);  // unknown dimension
  EXPECT_EQ(HeldBytes(def->node(4)), -1);  // strings have no fixed size
  EXPECT_EQ(HeldBytes(def->node(5)), -1);  // not a constant or variable
}

TEST_F(CostModelProfileTest, BadFilesAreErrorsNamingFileAndEntry) {
  struct Case {
    const char* json;
    const char* fragment;
  };
  const Case cases[] = {
      {"not json", "is not valid JSON for the profile format"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": 1, "speed": 2}]})",
       "is not valid JSON"},  // unknown fields are errors
      {R"({"nodes": [{"device": "CPU", "compute_us": 1}]})",
       "entry 0 (node '', op ''): needs a node or an op"},
      {R"({"nodes": [{"node": "mm", "compute_us": 1}]})", "needs a device name or type"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": 1},
                     {"node": "mm", "device": "CPU", "compute_us": -1}]})",
       "entry 1 (node 'mm', op ''): compute_us must be a non-negative number"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": "NaN"}]})",
       "compute_us must be a non-negative number"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": "Infinity"}]})",
       "compute_us must be a non-negative number"},
      {R"({"nodes": [{"node": "mm", "device": "/job:a/job:b", "compute_us": 1}]})",
       "entry 0 (node 'mm', op ''): "},
      {R"({"nodes": [{"node": "mm", "device": "/job:worker/device:GPU:0", "compute_us": 1}]})",
       "device '/job:worker/device:GPU:0' must be a device type such as 'GPU' or a "
       "full name"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": 1,
                      "output_bytes": ["8", "-5"]}]})",
       "output_bytes[1] is -5, not >= 0"},
      {R"({"nodes": [{"node": "mm", "device": "CPU", "compute_us": 1,
                      "persistent_bytes": -1}]})",
       "persistent_bytes is -1, not >= 0"},
      {R"({"nodes": [{"node": "mm", "device": "GPU", "compute_us": 1,
                      "unsupported": true}]})",
       "an unsupported entry gives no compute_us"},
  };
  for (const Case& c : cases) {
    CostModel m;
    const std::string path = File(c.json);
    absl::Status s = m.LoadProfile(path);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.json << "\n" << s;
    EXPECT_TRUE(absl::StrContains(s.message(), path)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.fragment))
        << s << "\nexpected: " << c.fragment;
  }
  CostModel m;
  absl::Status missing = m.LoadProfile("/nonexistent/profile.json");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "/nonexistent/profile.json"));
  EXPECT_FALSE(m.has_measurements());
}

TEST_F(CostModelProfileTest, LegacyFullNamesAreCanonicalized) {
  CostModel m;
  ASSERT_TRUE(m.LoadProfile(File(R"({"nodes": [
    {"node": "mm", "device": "/job:localhost/replica:0/task:0/gpu:1", "compute_us": 8}
  ]})")).ok());
  bool measured = false;
  EXPECT_DOUBLE_EQ(Us(m, "mm", Device(kGpu1, "GPU"), &measured), 8);
  EXPECT_TRUE(measured);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
