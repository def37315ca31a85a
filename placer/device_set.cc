#include "placer/device_set.h"

#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "graph/check.h"
#include "graph/graph_io.h"
#include "graph/status_macros.h"
#include "placer/protos/cluster.pb.h"

namespace graphrun {
namespace placer {
namespace {

constexpr double kMicro = 1e-6;

// InvalidArgument "`field` must be >= 0 (or > 0 when `positive`)" unless
// `value` is finite and in range.
absl::Status CheckNumber(double value, absl::string_view field, bool positive) {
  if (std::isfinite(value) && (positive ? value > 0 : value >= 0)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be a finite number ",
                   positive ? ">" : ">=", " 0, got ", value));
}

// A link field that is set must be a finite number >= 0.
absl::Status CheckLinkField(const std::optional<double>& value,
                            absl::string_view field) {
  return value.has_value() ? CheckNumber(*value, field, /*positive=*/false)
                           : absl::OkStatus();
}

absl::StatusOr<DeviceInfo> DeviceFromProto(const DeviceDescription& desc) {
  absl::StatusOr<std::string> name = CanonicalizeDeviceName(desc.name());
  if (!name.ok()) return WithContext(name.status(), "name");
  GR_ASSIGN_OR_RETURN(DeviceName parsed, ParseDeviceName(*name));
  DeviceInfo info = DefaultDeviceInfo(parsed.type);
  if (info.peak_flops == 0 &&
      (!desc.has_peak_flops() || !desc.has_memory_bandwidth())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device type '", parsed.type,
        "' has no defaults; give peak_flops and memory_bandwidth"));
  }
  info.name = *name;
  info.type = absl::AsciiStrToUpper(desc.type());
  info.host = desc.host();
  if (desc.has_memory_bytes()) {
    GR_RETURN_IF_ERROR(CheckNumber(static_cast<double>(desc.memory_bytes()),
                                   "memory_bytes", /*positive=*/false));
    info.memory_bytes = desc.memory_bytes();
  }
  if (desc.has_peak_flops()) {
    GR_RETURN_IF_ERROR(
        CheckNumber(desc.peak_flops(), "peak_flops", /*positive=*/true));
    info.peak_flops = desc.peak_flops();
  }
  if (desc.has_memory_bandwidth()) {
    GR_RETURN_IF_ERROR(CheckNumber(desc.memory_bandwidth(), "memory_bandwidth",
                                   /*positive=*/true));
    info.memory_bandwidth = desc.memory_bandwidth();
  }
  if (desc.has_launch_overhead_us()) {
    GR_RETURN_IF_ERROR(CheckNumber(desc.launch_overhead_us(),
                                   "launch_overhead_us", /*positive=*/false));
    info.launch_overhead_s = desc.launch_overhead_us() * kMicro;
  }
  return info;
}

absl::StatusOr<LinkRule> LinkFromProto(const LinkDescription& desc) {
  LinkRule link;
  absl::StatusOr<DeviceName> src = ParseDeviceName(desc.src());
  if (!src.ok()) return WithContext(src.status(), "src");
  absl::StatusOr<DeviceName> dst = ParseDeviceName(desc.dst());
  if (!dst.ok()) return WithContext(dst.status(), "dst");
  link.src = *std::move(src);
  link.dst = *std::move(dst);
  if (desc.has_latency_us()) {
    GR_RETURN_IF_ERROR(CheckNumber(desc.latency_us(), "latency_us",
                                   /*positive=*/false));
    link.latency_s = desc.latency_us() * kMicro;
  }
  if (desc.has_bandwidth()) {
    GR_RETURN_IF_ERROR(
        CheckNumber(desc.bandwidth(), "bandwidth", /*positive=*/false));
    link.bandwidth = desc.bandwidth();
  }
  if (desc.has_compress()) link.compresses = desc.compress();
  link.one_way = desc.one_way();
  return link;
}

}  // namespace

DeviceInfo DefaultDeviceInfo(absl::string_view type) {
  DeviceInfo info;
  info.type = absl::AsciiStrToUpper(type);
  if (info.type == "CPU") {
    info.memory_bytes = kDefaultMemoryBytes;
    info.peak_flops = 1e11;
    info.memory_bandwidth = 2e10;
    info.launch_overhead_s = 1e-6;
  } else if (info.type == "GPU") {
    info.memory_bytes = kDefaultMemoryBytes;
    info.peak_flops = 5e13;
    info.memory_bandwidth = 2e12;
    info.launch_overhead_s = 8e-6;
  }
  return info;
}

absl::Status DeviceSet::AddDevice(DeviceInfo info) {
  const std::string context = absl::StrCat("device '", info.name, "'");
  absl::StatusOr<std::string> name = CanonicalizeDeviceName(info.name);
  if (!name.ok()) return name.status();
  GR_ASSIGN_OR_RETURN(info.parsed, ParseDeviceName(*name));
  info.name = *std::move(name);
  if (info.type.empty()) info.type = info.parsed.type;
  if (absl::AsciiStrToUpper(info.type) != info.parsed.type) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, ": type '", info.type, "' disagrees with the name's type '",
        info.parsed.type, "'"));
  }
  info.type = info.parsed.type;
  if (index_.contains(info.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat(context, ": duplicate device (also device ",
                     index_.at(info.name), ")"));
  }
  absl::Status status = CheckNumber(static_cast<double>(info.memory_bytes),
                                    "memory_bytes", /*positive=*/false);
  if (status.ok()) {
    status = CheckNumber(info.peak_flops, "peak_flops", /*positive=*/true);
  }
  if (status.ok()) {
    status = CheckNumber(info.memory_bandwidth, "memory_bandwidth",
                         /*positive=*/true);
  }
  if (status.ok()) {
    status = CheckNumber(info.launch_overhead_s, "launch_overhead_s",
                         /*positive=*/false);
  }
  if (!status.ok()) return WithContext(status, context);
  if (info.host.empty()) info.host = TaskName(info.parsed);
  index_[info.name] = size();
  devices_.push_back(std::move(info));
  return absl::OkStatus();
}

absl::Status DeviceSet::AddLink(const LinkRule& link) {
  if (Matching(link.src).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "src '", DeviceNameToString(link.src), "' matches no device"));
  }
  if (Matching(link.dst).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dst '", DeviceNameToString(link.dst), "' matches no device"));
  }
  GR_RETURN_IF_ERROR(CheckLinkField(link.latency_s, "latency_s"));
  GR_RETURN_IF_ERROR(CheckLinkField(link.bandwidth, "bandwidth"));
  links_.push_back(link);
  return absl::OkStatus();
}

int DeviceSet::Find(absl::string_view full_name) const {
  auto it = index_.find(full_name);
  if (it != index_.end()) return it->second;
  absl::StatusOr<std::string> canonical = CanonicalizeDeviceName(full_name);
  if (!canonical.ok()) return -1;
  it = index_.find(*canonical);
  return it == index_.end() ? -1 : it->second;
}

std::vector<int> DeviceSet::Matching(const DeviceName& spec) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (Matches(spec, devices_[i].parsed)) out.push_back(i);
  }
  return out;
}

LinkInfo DeviceSet::DefaultLink(int src, int dst) const {
  const DeviceInfo& a = devices_[src];
  const DeviceInfo& b = devices_[dst];
  if (src == dst) return LinkInfo{};
  if (SameTask(src, dst) && a.type == "CPU" && b.type == "CPU") {
    return LinkInfo{};  // shared memory
  }
  if (a.host == b.host) return LinkInfo{10 * kMicro, 25e9, false};  // PCIe
  return LinkInfo{50 * kMicro, 1.25e9, true};                       // network
}

LinkInfo DeviceSet::Link(int src, int dst) const {
  GR_CHECK(src >= 0 && src < size() && dst >= 0 && dst < size());
  LinkInfo info = DefaultLink(src, dst);
  if (src == dst) return info;
  const DeviceName& a = devices_[src].parsed;
  const DeviceName& b = devices_[dst].parsed;
  for (const LinkRule& link : links_) {
    const bool forward = Matches(link.src, a) && Matches(link.dst, b);
    const bool backward =
        !link.one_way && Matches(link.src, b) && Matches(link.dst, a);
    if (!forward && !backward) continue;
    if (link.latency_s) info.latency_s = *link.latency_s;
    if (link.bandwidth) info.bandwidth = *link.bandwidth;
    if (link.compresses) info.compresses = *link.compresses;
  }
  return info;
}

bool DeviceSet::SameTask(int a, int b) const {
  return placer::SameTask(devices_[a].parsed, devices_[b].parsed);
}

std::vector<std::string> DeviceSet::DeviceTypes() const {
  std::vector<std::string> types;
  for (const DeviceInfo& device : devices_) {
    bool seen = false;
    for (const std::string& type : types) seen = seen || type == device.type;
    if (!seen) types.push_back(device.type);
  }
  return types;
}

absl::StatusOr<DeviceSet> ParseClusterDescription(absl::string_view json,
                                                  absl::string_view what) {
  ClusterDescription cluster;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      std::string(json), &cluster, google::protobuf::util::JsonParseOptions());
  if (!parsed.ok()) {
    // Protobuf appends the offending text and a caret on later lines.
    const std::string message(parsed.message());
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid cluster description (JSON): ",
                     message.substr(0, message.find('\n'))));
  }
  if (cluster.devices().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": no devices (\"devices\" is empty)"));
  }
  DeviceSet set;
  for (int i = 0; i < cluster.devices_size(); ++i) {
    const std::string context = absl::StrCat(what, ": devices[", i, "]");
    absl::StatusOr<DeviceInfo> info = DeviceFromProto(cluster.devices(i));
    if (!info.ok()) return WithContext(info.status(), context);
    GR_RETURN_IF_ERROR(WithContext(set.AddDevice(*std::move(info)), context));
  }
  for (int i = 0; i < cluster.links_size(); ++i) {
    const std::string context = absl::StrCat(what, ": links[", i, "]");
    absl::StatusOr<LinkRule> link = LinkFromProto(cluster.links(i));
    if (!link.ok()) return WithContext(link.status(), context);
    GR_RETURN_IF_ERROR(WithContext(set.AddLink(*link), context));
  }
  return set;
}

absl::StatusOr<DeviceSet> LoadClusterDescription(const std::string& path) {
  GR_ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  return ParseClusterDescription(json, path);
}

DeviceSet LocalDeviceSet(int cpu_devices, int num_gpus,
                         const std::string& prefix) {
  DeviceSet set;
  for (int i = 0; i < cpu_devices + num_gpus; ++i) {
    const bool cpu = i < cpu_devices;
    DeviceInfo info = DefaultDeviceInfo(cpu ? "CPU" : "GPU");
    info.name = absl::StrCat(prefix, "/device:", info.type, ":",
                             cpu ? i : i - cpu_devices);
    const absl::Status status = set.AddDevice(std::move(info));
    GR_CHECK(status.ok());
  }
  return set;
}

}  // namespace placer
}  // namespace graphrun
