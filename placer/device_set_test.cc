#include "placer/device_set.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kLocal[] = "/job:localhost/replica:0/task:0";

DeviceName Spec(absl::string_view name) {
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(name);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : DeviceName();
}

void ExpectLink(const LinkInfo& link, double latency_s, double bandwidth,
                bool compresses) {
  EXPECT_DOUBLE_EQ(link.latency_s, latency_s);
  EXPECT_DOUBLE_EQ(link.bandwidth, bandwidth);
  EXPECT_EQ(link.compresses, compresses);
}

DeviceSet MustParse(absl::string_view json) {
  absl::StatusOr<DeviceSet> set = ParseClusterDescription(json, "test.json");
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? *std::move(set) : DeviceSet();
}

// Expects InvalidArgument whose message contains every one of `parts`.
void ExpectError(absl::string_view json,
                 std::initializer_list<absl::string_view> parts) {
  absl::StatusOr<DeviceSet> set = ParseClusterDescription(json, "test.json");
  ASSERT_FALSE(set.ok()) << json;
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("test.json: "));
  for (absl::string_view part : parts) {
    EXPECT_THAT(set.status().message(), HasSubstr(part)) << json;
  }
}

TEST(ClusterDescriptionTest, TwoGpuExample) {
  absl::StatusOr<DeviceSet> set =
      LoadClusterDescription("placer/examples/cluster_2gpu.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->size(), 3);
  const DeviceInfo& cpu = set->devices()[0];
  EXPECT_EQ(cpu.name, absl::StrCat(kLocal, "/device:CPU:0"));
  EXPECT_EQ(cpu.type, "CPU");
  EXPECT_EQ(cpu.memory_bytes, int64_t{64} << 30);
  EXPECT_DOUBLE_EQ(cpu.peak_flops, 2e11);
  EXPECT_DOUBLE_EQ(cpu.memory_bandwidth, 5e10);
  EXPECT_DOUBLE_EQ(cpu.launch_overhead_s, 1e-6);  // default
  EXPECT_EQ(cpu.host, kLocal);
  const DeviceInfo& gpu1 = set->devices()[2];
  EXPECT_EQ(gpu1.parsed.id, 1);
  EXPECT_DOUBLE_EQ(gpu1.peak_flops, 1.4e13);
  EXPECT_DOUBLE_EQ(gpu1.launch_overhead_s, 5e-6);

  EXPECT_THAT(set->DeviceTypes(), ElementsAre("CPU", "GPU"));
  EXPECT_THAT(set->Matching(Spec("GPU")), ElementsAre(1, 2));
  EXPECT_EQ(set->Find(absl::StrCat(kLocal, "/device:GPU:1")), 2);
  EXPECT_EQ(set->Find(absl::StrCat(kLocal, "/gpu:1")), 2);
  EXPECT_EQ(set->Find(absl::StrCat(kLocal, "/device:GPU:2")), -1);
  EXPECT_EQ(set->Find("GPU:1"), -1);

  ExpectLink(set->Link(0, 1), 10e-6, 1.2e10, false);
  ExpectLink(set->Link(2, 0), 10e-6, 1.2e10, false);  // links are two-way
  ExpectLink(set->Link(1, 2), 5e-6, 5e10, false);
  ExpectLink(set->Link(1, 1), 0, 0, false);  // never on the diagonal
}

TEST(ClusterDescriptionTest, TwoWorkersExample) {
  absl::StatusOr<DeviceSet> set =
      LoadClusterDescription("placer/examples/cluster_2workers.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->size(), 4);
  // Defaults for the fields left out.
  const DeviceInfo& cpu1 = set->devices()[2];
  EXPECT_EQ(cpu1.memory_bytes, kDefaultMemoryBytes);
  EXPECT_DOUBLE_EQ(cpu1.peak_flops, 1e11);
  EXPECT_DOUBLE_EQ(cpu1.memory_bandwidth, 2e10);
  EXPECT_DOUBLE_EQ(cpu1.launch_overhead_s, 1e-6);
  EXPECT_EQ(cpu1.host, "/job:worker/replica:0/task:1");
  const DeviceInfo& gpu1 = set->devices()[3];
  EXPECT_EQ(gpu1.type, "GPU");
  EXPECT_EQ(gpu1.memory_bytes, kDefaultMemoryBytes);
  EXPECT_DOUBLE_EQ(gpu1.peak_flops, 5e13);
  EXPECT_DOUBLE_EQ(gpu1.memory_bandwidth, 2e12);
  EXPECT_DOUBLE_EQ(gpu1.launch_overhead_s, 8e-6);
  EXPECT_EQ(set->devices()[1].memory_bytes, int64_t{32} << 30);

  EXPECT_TRUE(set->SameTask(0, 1));
  EXPECT_FALSE(set->SameTask(1, 3));
  // Within a task: the default PCIe-like class.
  ExpectLink(set->Link(0, 1), 10e-6, 25e9, false);
  // Across tasks: the first link (it also turns compression off).
  ExpectLink(set->Link(0, 2), 100e-6, 1.25e9, false);
  ExpectLink(set->Link(3, 0), 100e-6, 1.25e9, false);
  // GPU to GPU: the second link overrides latency and bandwidth and keeps
  // compress=false from the first.
  ExpectLink(set->Link(1, 3), 20e-6, 1.2e10, false);
  ExpectLink(set->Link(3, 1), 20e-6, 1.2e10, false);
}

TEST(ClusterDescriptionTest, DefaultLinkClasses) {
  DeviceSet set = MustParse(R"({"devices": [
      {"name": "/job:a/replica:0/task:0/device:CPU:0"},
      {"name": "/job:a/replica:0/task:0/device:CPU:1"},
      {"name": "/job:a/replica:0/task:0/device:GPU:0"},
      {"name": "/job:a/replica:0/task:0/device:GPU:1"},
      {"name": "/job:a/replica:0/task:1/device:CPU:0"},
      {"name": "/job:a/replica:0/task:2/device:CPU:0", "host": "box"},
      {"name": "/job:a/replica:0/task:3/device:GPU:0", "host": "box"}]})");
  ASSERT_EQ(set.size(), 7);
  ExpectLink(set.Link(0, 0), 0, 0, false);          // same device
  ExpectLink(set.Link(0, 1), 0, 0, false);          // shared memory
  ExpectLink(set.Link(0, 2), 10e-6, 25e9, false);   // CPU <-> GPU
  ExpectLink(set.Link(3, 2), 10e-6, 25e9, false);   // GPU <-> GPU
  ExpectLink(set.Link(0, 4), 50e-6, 1.25e9, true);  // network
  ExpectLink(set.Link(4, 3), 50e-6, 1.25e9, true);
  // Different tasks on one host: PCIe-like, not the network.
  EXPECT_EQ(set.devices()[5].host, "box");
  ExpectLink(set.Link(5, 6), 10e-6, 25e9, false);
  EXPECT_FALSE(set.SameTask(5, 6));
}

TEST(ClusterDescriptionTest, LaterLinksOverrideEarlierOnes) {
  DeviceSet set = MustParse(R"({
    "devices": [
      {"name": "/job:w/replica:0/task:0/device:GPU:0"},
      {"name": "/job:w/replica:0/task:1/device:GPU:0"},
      {"name": "/job:w/replica:0/task:2/device:GPU:0"}],
    "links": [
      {"src": "GPU", "dst": "GPU", "latencyUs": 1, "bandwidth": 1e9},
      {"src": "/job:w/task:0", "dst": "/task:1", "bandwidth": 2e9,
       "one_way": true},
      {"src": "/task:2", "dst": "", "compress": true}]})");
  // No link sets compress between tasks 0 and 1: the network default stays.
  ExpectLink(set.Link(0, 1), 1e-6, 2e9, true);  // second link, one way
  ExpectLink(set.Link(1, 0), 1e-6, 1e9, true);
  ExpectLink(set.Link(2, 0), 1e-6, 1e9, true);  // third link, both ways
  ExpectLink(set.Link(1, 2), 1e-6, 1e9, true);
}

TEST(ClusterDescriptionTest, TypeAndZeroValues) {
  DeviceSet set = MustParse(R"({"devices": [
      {"name": "/job:a/replica:0/task:0/gpu:0", "type": "gpu",
       "memory_bytes": "0", "launch_overhead_us": 0},
      {"name": "/job:a/replica:0/task:0/device:TPU:0", "peak_flops": 1e14,
       "memory_bandwidth": 1e12}]})");
  ASSERT_EQ(set.size(), 2);
  EXPECT_EQ(set.devices()[0].name, "/job:a/replica:0/task:0/device:GPU:0");
  EXPECT_EQ(set.devices()[0].type, "GPU");
  EXPECT_EQ(set.devices()[0].memory_bytes, 0);  // explicit 0: unlimited
  EXPECT_EQ(set.devices()[0].launch_overhead_s, 0);
  EXPECT_EQ(set.devices()[1].type, "TPU");
  EXPECT_EQ(set.devices()[1].memory_bytes, 0);
  EXPECT_THAT(set.DeviceTypes(), ElementsAre("GPU", "TPU"));
}

TEST(ClusterDescriptionTest, Errors) {
  ExpectError("{\"devices\": [", {"not a valid cluster description"});
  {
    absl::StatusOr<DeviceSet> set = ParseClusterDescription("{", "x.json");
    EXPECT_THAT(set.status().message(), ::testing::Not(HasSubstr("\n")));
  }
  ExpectError("", {"not a valid cluster description"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "speed": 3}]})",
              {"not a valid cluster description", "speed"});
  ExpectError(R"({"devices": []})", {"no devices"});
  ExpectError(
      R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0"},
                              {"name": "/job:a/device:GPU:0"}]})",
      {"devices[1]: name:", "/job:a/device:GPU:0", "missing replica, task"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:x"}]})",
              {"devices[0]: name:", "expected a device id"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "memory_bytes": -5}]})",
              {"devices[0]", "memory_bytes", "-5"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "peak_flops": 0}]})",
              {"devices[0]", "peak_flops", "> 0"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "memory_bandwidth": "NaN"}]})",
              {"devices[0]", "memory_bandwidth"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "launch_overhead_us": -1}]})",
              {"devices[0]", "launch_overhead_us"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                               "type": "GPU"}]})",
              {"devices[0]", "type 'GPU' disagrees", "'CPU'"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/device:TPU:0",
                               "peak_flops": 1e14}]})",
              {"devices[0]", "type 'TPU' has no defaults", "memory_bandwidth"});
  ExpectError(R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0"},
                              {"name": "/job:a/replica:0/task:0/device:CPU:0"}]})",
              {"devices[1]", "/job:a/replica:0/task:0/device:CPU:0",
               "duplicate device"});

  const std::string two_cpus = R"({"devices": [
      {"name": "/job:a/replica:0/task:0/cpu:0"},
      {"name": "/job:a/replica:0/task:1/cpu:0"}], "links": [)";
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "CPU"},
                            {"src": "/job:ps", "dst": "CPU"}]})",
              {"links[1]", "src '/job:ps' matches no device"});
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "GPU"}]})",
              {"links[0]", "dst '/device:GPU:*' matches no device"});
  ExpectError(two_cpus + R"({"src": "/job:", "dst": "CPU"}]})",
              {"links[0]: src:", "expected a job name"});
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "/task:x"}]})",
              {"links[0]: dst:", "expected a task number"});
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "CPU", "latency_us": -1}]})",
              {"links[0]", "latency_us"});
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "CPU", "bandwidth": -2}]})",
              {"links[0]", "bandwidth"});
  ExpectError(two_cpus + R"({"src": "CPU", "dst": "CPU", "cost": 1}]})",
              {"not a valid cluster description", "cost"});
}

TEST(ClusterDescriptionTest, LoadErrorsNameTheFile) {
  absl::StatusOr<DeviceSet> set =
      LoadClusterDescription("placer/examples/no_such_cluster.json");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(set.status().message(), HasSubstr("no_such_cluster.json"));

  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp ? tmp : "/tmp", "/bad.json");
  std::ofstream(path)
      << R"({"devices": [{"name": "/job:a/replica:0/task:0/cpu:0",
                                           "memory_bytes": -1}]})";
  set = LoadClusterDescription(path);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(),
              HasSubstr(absl::StrCat(path, ": devices[0]")));
}

TEST(DeviceSetTest, AddDevice) {
  DeviceSet set;
  DeviceInfo gpu = DefaultDeviceInfo("GPU");
  gpu.name = "/job:a/replica:0/task:0/gpu:0";
  ASSERT_TRUE(set.AddDevice(gpu).ok());
  EXPECT_EQ(set.devices()[0].name, "/job:a/replica:0/task:0/device:GPU:0");
  EXPECT_EQ(set.devices()[0].host, "/job:a/replica:0/task:0");
  EXPECT_TRUE(IsCompleteDeviceName(set.devices()[0].parsed));

  absl::Status status = set.AddDevice(gpu);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("duplicate device"));

  gpu.name = "/job:a/device:GPU:1";
  status = set.AddDevice(gpu);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not a complete device name"));

  gpu.name = "/job:a/replica:0/task:0/device:GPU:1";
  gpu.memory_bandwidth = 0;
  status = set.AddDevice(gpu);
  EXPECT_THAT(status.message(), HasSubstr("memory_bandwidth"));
  EXPECT_THAT(status.message(), HasSubstr("device:GPU:1"));
  EXPECT_EQ(set.size(), 1);
}

TEST(DeviceSetTest, AddLinkNeedsMatchingDevices) {
  DeviceSet set = LocalDeviceSet(1, 0);
  LinkRule link;
  link.src = Spec("GPU");
  EXPECT_THAT(set.AddLink(link).message(), HasSubstr("matches no device"));
  link.src = Spec("CPU");
  link.latency_s = -1;
  EXPECT_THAT(set.AddLink(link).message(), HasSubstr("latency_s"));
}

TEST(DeviceSetTest, LocalDeviceSet) {
  DeviceSet set = LocalDeviceSet(2, 2);
  ASSERT_EQ(set.size(), 4);
  EXPECT_EQ(set.devices()[0].name, absl::StrCat(kLocal, "/device:CPU:0"));
  EXPECT_EQ(set.devices()[1].name, absl::StrCat(kLocal, "/device:CPU:1"));
  EXPECT_EQ(set.devices()[2].name, absl::StrCat(kLocal, "/device:GPU:0"));
  EXPECT_EQ(set.devices()[3].name, absl::StrCat(kLocal, "/device:GPU:1"));
  EXPECT_DOUBLE_EQ(set.devices()[0].peak_flops, 1e11);
  EXPECT_DOUBLE_EQ(set.devices()[3].peak_flops, 5e13);
  EXPECT_EQ(set.devices()[3].memory_bytes, kDefaultMemoryBytes);
  ExpectLink(set.Link(0, 1), 0, 0, false);
  ExpectLink(set.Link(1, 2), 10e-6, 25e9, false);
  ExpectLink(set.Link(2, 3), 10e-6, 25e9, false);
  EXPECT_THAT(set.Matching(Spec("/device:GPU:*")), ElementsAre(2, 3));
  EXPECT_THAT(set.DeviceTypes(), ElementsAre("CPU", "GPU"));

  DeviceSet worker = LocalDeviceSet(1, 0, "/job:worker/replica:0/task:3");
  EXPECT_EQ(worker.devices()[0].name,
            "/job:worker/replica:0/task:3/device:CPU:0");
  EXPECT_EQ(LocalDeviceSet(0, 0).size(), 0);
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
