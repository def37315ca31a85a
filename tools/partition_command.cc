#include "tools/partition_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"
#include "partition/const_copies.h"
#include "partition/partition.h"

namespace graphrun {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "graphrun partition: %s\n", s.ToString().c_str());
  return 1;
}

// "/job:localhost/replica:0/task:0/device:CPU:1" -> "job_localhost_replica_0_task_0_device_CPU_1"
std::string FileStem(const std::string& device) {
  std::string s = absl::StrReplaceAll(device, {{"/", "_"}, {":", "_"}});
  return s.empty() || s[0] != '_' ? s : s.substr(1);
}

}  // namespace

int PartitionCommand(const PartitionCommandArgs& args) {
  if (args.out_dir.empty()) {
    return Fail(absl::InvalidArgumentError("--out=DIR is required"));
  }
  PartitionOptions options;
  // The policies of `graphrun run`/`train` over workers: gradients (edges
  // into an optimizer update's gradient input fp16, the rest exact), all
  // (or fp16: every float edge fp16), bf16 (as gradients, in bfloat16), none.
  if (args.wire_compression == "fp16" || args.wire_compression == "all") {
    options.compression = PartitionOptions::WireCompression::kFp16;
  } else if (args.wire_compression == "gradients") {
    options.compression = PartitionOptions::WireCompression::kFp16;
    options.gradients_only = true;
  } else if (args.wire_compression == "bf16") {
    options.compression = PartitionOptions::WireCompression::kBf16Truncate;
    options.gradients_only = true;
  } else if (args.wire_compression != "none") {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--wire_compression must be gradients, all, none, bf16 or fp16, not '",
                     args.wire_compression, "'")));
  }
  auto placed = LoadAndPlace(args.place);
  if (!placed.ok()) return Fail(placed.status());
  const placer::DeviceSet& devices = placed->devices;
  const placer::Placement& placement = placed->placement;
  options.node_to_loc = [&](const Node& n) {
    return devices.devices()[placement.device[n.id()]].name;
  };
  for (const auto& d : devices.devices()) options.devices.push_back(d.name);
  PartitionStats stats;
  // As a step's partitions are made: Consts read on other tasks copied
  // there.
  auto parts = PartitionCopyingConsts(*placed->graph, options, &stats);
  if (!parts.ok()) return Fail(parts.status());

  struct stat st;
  if (stat(args.out_dir.c_str(), &st) != 0 && mkdir(args.out_dir.c_str(), 0755) != 0) {
    return Fail(absl::PermissionDeniedError(absl::StrCat(
        "cannot create --out directory ", args.out_dir, ": ", std::strerror(errno))));
  }
  std::cout << placed->notes;
  for (const auto& [device, def] : *parts) {
    const std::string path = absl::StrCat(args.out_dir, "/", FileStem(device), ".pbtxt");
    absl::Status s = WriteGraphDefFile(path, def, GraphFormat::kText);
    if (!s.ok()) return Fail(s);
    int sends = 0, recvs = 0;
    for (const NodeDef& n : def.node()) {
      sends += n.op() == "_Send" || n.op() == "_HostSend";
      recvs += n.op() == "_Recv" || n.op() == "_HostRecv";
    }
    std::cout << device << ": " << def.node_size() << " nodes (" << sends << " sends, "
              << recvs << " recvs) -> " << path << "\n";
  }
  for (const std::string& line : stats.wire_log) std::cout << "wire: " << line << "\n";
  std::cout << "cross-device transfers: " << stats.data_sends << " data, "
            << stats.control_sends << " control";
  if (stats.compressed_edges > 0 || stats.exact_edges > 0) {
    std::cout << ", " << stats.compressed_edges << " compressed (" << args.wire_compression
              << ")";
  }
  if (stats.exact_edges > 0) {
    std::cout << ", " << stats.exact_edges << " exact (not gradients)";
  }
  std::cout << "\n";
  const std::string dot = absl::StrCat(args.out_dir, "/placement.dot");
  absl::Status s = WriteFileAtomically(
      dot, placer::PlacementToDot(*placed->graph, devices, placement, placed->costs));
  if (!s.ok()) return Fail(s);
  std::cout << "wrote " << dot << " (cross-device edges in red)\n";
  return 0;
}

}  // namespace graphrun
