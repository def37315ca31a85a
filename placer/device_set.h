// The devices of a cluster and the links between them: the placer's view of
// where nodes can run and what moving a tensor costs. Built from a JSON
// cluster description (placer/CLUSTER_FORMAT.md, schema
// placer/protos/cluster.proto) or from local defaults; the placer turns it
// into the device side of a SchedProblem (scheduler.h).
//
// Thread-compatible: const methods may run concurrently.
#ifndef GRAPHRUN_PLACER_DEVICE_SET_H_
#define GRAPHRUN_PLACER_DEVICE_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placer/device_name.h"

namespace graphrun {
namespace placer {

// Defaults for what a description leaves out:
//          peak_flops    memory_bandwidth  launch overhead  memory_bytes
//   CPU    1e11 FLOP/s   2e10 B/s          1 us             16 GiB
//   GPU    5e13 FLOP/s   2e12 B/s          8 us             16 GiB
// Other types have no defaults: peak_flops and memory_bandwidth must be set.
//
// Default links, used for a pair of devices no explicit link covers:
//   same device                  0 s, free,       no compression
//   same task, both CPU          0 s, free        (shared memory)
//   same host, any other pair    10 us, 25e9 B/s  (PCIe-like)
//   different hosts              50 us, 1.25e9 B/s, compresses (network)
inline constexpr int64_t kDefaultMemoryBytes = int64_t{16} << 30;

struct DeviceInfo {
  std::string name;  // full canonical name
  DeviceName parsed;
  std::string type;              // "CPU", "GPU": the name's type
  int64_t memory_bytes = 0;      // 0 = unlimited
  double peak_flops = 0;         // FLOP/s
  double memory_bandwidth = 0;   // bytes/s
  double launch_overhead_s = 0;  // per kernel
  std::string host;              // devices on one host share memory / PCIe
};

struct LinkInfo {
  double latency_s = 0;
  double bandwidth = 0;     // bytes/s; 0 = free
  bool compresses = false;  // float32 tensors travel as fp16
};

// An explicit link between the devices matching `src` and those matching
// `dst`. Set fields override, unset ones keep the earlier value.
struct LinkRule {
  DeviceName src;
  DeviceName dst;
  std::optional<double> latency_s;
  std::optional<double> bandwidth;
  std::optional<bool> compresses;
  bool one_way = false;  // else it covers dst -> src as well
};

// A DeviceInfo of `type` with the defaults above (zeros for other types);
// name and host are left empty.
DeviceInfo DefaultDeviceInfo(absl::string_view type);

class DeviceSet {
 public:
  // Adds a device. Canonicalizes info.name and sets info.parsed from it;
  // fills an empty type from the name and an empty host with the task part
  // of the name. InvalidArgument naming the device when the name is not a
  // complete device name, the type disagrees with the name, the name is
  // already in the set, memory_bytes or launch_overhead_s is negative, or
  // peak_flops or memory_bandwidth is not positive.
  absl::Status AddDevice(DeviceInfo info);

  // Appends an explicit link; later links override earlier ones for the
  // pairs both cover. Never applies to a device and itself. InvalidArgument
  // when src or dst matches no device added so far, or latency or bandwidth
  // is negative or not finite.
  absl::Status AddLink(const LinkRule& link);

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }

  // Index of the device named `full_name` (any spelling that canonicalizes
  // to it, e.g. ".../gpu:0"); -1 when absent.
  int Find(absl::string_view full_name) const;

  // Indices of the devices `spec` matches, in order.
  std::vector<int> Matching(const DeviceName& spec) const;

  // Cost of moving data from device `src` to device `dst` (indices): the
  // default for the pair's class, overridden by the explicit links.
  LinkInfo Link(int src, int dst) const;

  bool SameTask(int a, int b) const;

  // Distinct device types in order of first appearance.
  std::vector<std::string> DeviceTypes() const;

 private:
  LinkInfo DefaultLink(int src, int dst) const;

  std::vector<DeviceInfo> devices_;
  absl::flat_hash_map<std::string, int> index_;
  std::vector<LinkRule> links_;
};

// Parses a JSON cluster description. `what` (a file name) starts every
// error. InvalidArgument naming the device or link index and the field for
// bad JSON, unknown fields, incomplete or duplicate device names, negative
// or non-finite numbers, a type that disagrees with the name, bad link
// specs and link specs that match no device, and an empty device list.
absl::StatusOr<DeviceSet> ParseClusterDescription(
    absl::string_view json, absl::string_view what = "cluster description");

// Reads and parses the file at `path`; errors from reading keep their code
// (NotFound, PermissionDenied).
absl::StatusOr<DeviceSet> LoadClusterDescription(const std::string& path);

// `cpu_devices` CPUs and `num_gpus` GPUs named prefix + "/device:CPU:i" /
// "/device:GPU:i", with the defaults above, on one host. Aborts when
// `prefix` is not a complete task name (a programmer error).
DeviceSet LocalDeviceSet(
    int cpu_devices, int num_gpus,
    const std::string& prefix = "/job:localhost/replica:0/task:0");

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_DEVICE_SET_H_
