// CostModel: how long a node takes on a device, and how many bytes its
// outputs hold.
//
// Two sources, measured first:
//   * measured costs from earlier runs (a cost profile, placer/protos/
//     cost_profile.proto, saved by `graphrun run --save_costs` and loaded by
//     `--costs`), by node name and device (exact name, then device type), or
//     by op and device for hand-written profiles; a time measured on one
//     device also prices the other devices of its type;
//   * an analytical roofline estimate: FLOPs and bytes touched from the
//     inferred shapes, time = launch overhead + max(FLOPs / peak FLOP/s,
//     bytes / memory bandwidth).
// Unknown dimensions (a batch of `?`) count as `unknown_dim`.
// A profile may also give the bytes a node holds for the whole step
// (persistent_bytes: weights, variables) and mark a node or op as having
// no kernel on a device or device type (unsupported).
//
// Thread-compatible: const methods may be called concurrently.
#ifndef GRAPHRUN_PLACER_COST_MODEL_H_
#define GRAPHRUN_PLACER_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "placer/device_set.h"
#include "placer/protos/cost_profile.pb.h"

namespace graphrun {
namespace placer {

// Work of one execution of a node.
struct OpWork {
  double flops = 0;
  double bytes = 0;  // read + written
};

struct CostModelOptions {
  // Size assumed for each unknown dimension.
  int64_t unknown_dim = 1;
};

// Bytes a node holds for the whole step by its definition: a Const its
// value's shape x dtype, a variable (VariableV2, Variable, VarHandleOp) the
// shape and dtype of its attrs; -1 for other ops and for unknown or
// malformed shapes. What `graphrun run --save_costs` writes as
// persistent_bytes.
int64_t HeldBytes(const NodeDef& def);

class CostModel {
 public:
  explicit CostModel(CostModelOptions options = {}) : options_(options) {}

  // The analytical work of `node` (0 for ops that move no data: Const,
  // Placeholder, Identity, NoOp, Reshape, Shape...).
  OpWork Estimate(const Node& node) const;

  // Bytes of output `i` from its inferred shape (measured bytes win).
  int64_t OutputBytes(const Node& node, int output) const;
  // Sum over outputs.
  int64_t TotalOutputBytes(const Node& node) const;

  // Seconds for one execution of `node` on `device`. Sets *measured (if
  // not null) to whether a profile entry supplied the figure.
  double ComputeTime(const Node& node, const DeviceInfo& device,
                     bool* measured = nullptr) const;

  // Records a measured run time (seconds) for a node on a device; several
  // calls for the same (node, device) keep their median.
  void AddMeasurement(absl::string_view node, absl::string_view op,
                      absl::string_view device, double seconds,
                      const std::vector<int64_t>& output_bytes = {});

  // Bytes `node` holds on its device for the whole step, from a profile
  // entry for the node, else for its op; -1 when no entry says.
  int64_t PersistentBytes(const Node& node) const;
  // Records persistent bytes for a node (or, with `node` empty, for every
  // node of `op`). ToProfile writes them on the node's entries.
  void SetPersistentBytes(absl::string_view node, absl::string_view op,
                          int64_t bytes);

  // Whether a profile marks `node` (by name or op, for the exact device
  // name or its type) as having no kernel on `device`.
  bool Unsupported(const Node& node, const DeviceInfo& device) const;
  // Marks a node (or, with `node` empty, every node of `op`) as having no
  // kernel on `device` (a full name or a device type).
  void MarkUnsupported(absl::string_view node, absl::string_view op,
                       absl::string_view device);

  // Adds every entry of `profile`. InvalidArgument, naming the entry, on a
  // time that is negative or not finite, an entry with neither node nor op,
  // a device that is neither a type ("GPU", any case) nor a full name (kept
  // canonical), a negative output_bytes or persistent_bytes, or an
  // unsupported entry that gives a time.
  absl::Status AddProfile(const CostProfile& profile);
  // The measured costs as a profile (one entry per node and device, with
  // the median over samples), sorted by node then device.
  CostProfile ToProfile() const;
  bool has_measurements() const {
    return !by_node_.empty() || !by_op_.empty() || !persistent_.empty() ||
           !unsupported_.empty();
  }

  // JSON files (protobuf's JSON mapping). Errors name the file.
  absl::Status LoadProfile(const std::string& path);
  absl::Status SaveProfile(const std::string& path,
                           absl::string_view description) const;

 private:
  struct Samples {
    std::string op;
    std::vector<double> seconds;
    std::vector<int64_t> output_bytes;
    double Median() const;
  };
  const Samples* Find(const absl::flat_hash_map<std::string, Samples>& map,
                      absl::string_view key, const DeviceInfo& device) const;

  CostModelOptions options_;
  // Keyed by "node\ndevice" and "op\ndevice"; device is a full name or type.
  absl::flat_hash_map<std::string, Samples> by_node_;
  absl::flat_hash_map<std::string, Samples> by_op_;
  // Measurements taken on a full device name, again under "key\ntype":
  // the last resort for other devices of the type.
  absl::flat_hash_map<std::string, Samples> by_type_fallback_;
  // Node name -> measured output bytes.
  absl::flat_hash_map<std::string, std::vector<int64_t>> output_bytes_;
  // "node\n" or "\nop" -> persistent bytes.
  absl::flat_hash_map<std::string, int64_t> persistent_;
  // Unsupported (node or op, device or type), keyed "node\ndevice" for
  // nodes and "\top\ndevice" for ops, with the op as written.
  absl::flat_hash_map<std::string, std::string> unsupported_;
};

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_COST_MODEL_H_
