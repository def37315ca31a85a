#include "placer/cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "graph/graph_io.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "placer/device_name.h"

namespace graphrun {
namespace placer {
namespace {

std::string Key(absl::string_view a, absl::string_view b) {
  return absl::StrCat(a, "\n", b);
}

// Ops that move or make no data worth timing (aliases, metadata, feeds).
bool IsFree(absl::string_view op) {
  static const auto* kFree = new absl::flat_hash_set<std::string>{
      "Const",      "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "Identity",
      "IdentityN",  "NoOp",        "StopGradient",           "Shape",
      "Size",       "Rank",        "Reshape",                "Squeeze",
      "ExpandDims", "_Arg",        "_Retval",                "_Send",
      "_Recv",      "_HostSend",   "_HostRecv"};
  return kFree->contains(op);
}

// Ops whose elementwise work is a transcendental function, ~10 flops each.
bool IsTranscendental(absl::string_view op) {
  static const auto* kOps = new absl::flat_hash_set<std::string>{
      "Exp", "Log", "Tanh", "Sigmoid", "Pow", "Softmax", "LogSoftmax", "Elu",
      "Rsqrt", "Sqrt"};
  return kOps->contains(op);
}

}  // namespace

int64_t HeldBytes(const NodeDef& def) {
  const auto& attrs = def.attr();
  const TensorShapeProto* shape = nullptr;
  DataType dtype = DT_INVALID;
  if (def.op() == "Const") {
    auto it = attrs.find("value");
    if (it == attrs.end() || !it->second.has_tensor()) return -1;
    shape = &it->second.tensor().tensor_shape();
    dtype = it->second.tensor().dtype();
  } else if (def.op() == "VariableV2" || def.op() == "Variable" ||
             def.op() == "VarHandleOp") {
    auto s = attrs.find("shape");
    auto t = attrs.find("dtype");
    if (s == attrs.end() || !s->second.has_shape() || t == attrs.end()) return -1;
    shape = &s->second.shape();
    dtype = t->second.type();
  } else {
    return -1;
  }
  if (shape->unknown_rank()) return -1;
  const int64_t elem = DataTypeSize(BaseType(dtype));
  if (elem <= 0) return -1;
  int64_t n = elem;
  for (const auto& dim : shape->dim()) {
    if (dim.size() < 0) return -1;
    if (dim.size() > 0 && n > (int64_t{1} << 50) / dim.size()) return -1;
    n *= dim.size();
  }
  return n;
}

int64_t CostModel::OutputBytes(const Node& node, int output) const {
  auto it = output_bytes_.find(node.name());
  if (it != output_bytes_.end() && output < static_cast<int>(it->second.size()) &&
      it->second[output] >= 0) {
    return it->second[output];
  }
  const PartialShape& shape = node.output_shape(output);
  const DataType dtype = node.output_type(output);
  const int64_t elem = std::max(1, DataTypeSize(dtype));
  if (shape.unknown_rank()) return elem * options_.unknown_dim;
  int64_t n = 1;
  for (int64_t d : shape.dims()) {
    n *= d < 0 ? options_.unknown_dim : d;
    if (n > (int64_t{1} << 50)) break;  // absurd shapes stay finite
  }
  return n * elem;
}

int64_t CostModel::TotalOutputBytes(const Node& node) const {
  int64_t total = 0;
  for (int i = 0; i < node.num_outputs(); ++i) total += OutputBytes(node, i);
  return total;
}

OpWork CostModel::Estimate(const Node& node) const {
  OpWork w;
  const std::string& op = node.op();
  if (IsFree(op)) return w;
  auto elems = [&](const PartialShape& s) -> double {
    if (s.unknown_rank()) return static_cast<double>(options_.unknown_dim);
    double n = 1;
    for (int64_t d : s.dims()) n *= d < 0 ? options_.unknown_dim : d;
    return n;
  };
  auto dim = [&](const PartialShape& s, int i) -> double {
    if (s.unknown_rank() || i < 0 || i >= s.rank()) return options_.unknown_dim;
    const int64_t d = s.dim(i);
    return d < 0 ? options_.unknown_dim : static_cast<double>(d);
  };
  // Input shapes are the producers' output shapes.
  std::vector<const PartialShape*> in(node.num_inputs(), nullptr);
  static const PartialShape kUnknown;
  for (const Edge* e : node.in_edges()) {
    if (e->IsControl()) continue;
    in[e->dst_input] = &e->src->output_shape(e->src_output);
  }
  for (auto& p : in) {
    if (p == nullptr) p = &kUnknown;
  }
  double out_elems = 0;
  for (int i = 0; i < node.num_outputs(); ++i) {
    out_elems += elems(node.output_shape(i));
    w.bytes += static_cast<double>(OutputBytes(node, i));
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    w.bytes += elems(*in[i]) * std::max(1, DataTypeSize(node.input_type(i)));
  }

  if (op == "MatMul" || op == "BatchMatMulV2" || op == "BatchMatMul") {
    // out = [..., m, n]; k from a's last (or first, when transposed) dim.
    const PartialShape& a = *in[0];
    bool ta = false;
    if (op == "MatMul") {
      node.attrs().Get("transpose_a", &ta).IgnoreError();
    } else {
      node.attrs().Get("adj_x", &ta).IgnoreError();
    }
    const int r = a.unknown_rank() ? 2 : a.rank();
    const double k = ta ? dim(a, r - 2) : dim(a, r - 1);
    w.flops = 2.0 * out_elems * k;
  } else if (op == "Conv2D") {
    // filter [kh, kw, in, out]
    const PartialShape& f = *in[1];
    w.flops = 2.0 * out_elems * dim(f, 0) * dim(f, 1) * dim(f, 2);
  } else if (op == "MaxPool" || op == "AvgPool") {
    std::vector<int64_t> ksize;
    double window = 1;
    if (node.attrs().Get("ksize", &ksize).ok()) {
      for (int64_t k : ksize) window *= static_cast<double>(k);
    }
    w.flops = out_elems * window;
  } else if (op == "FusedBatchNorm" || op == "FusedBatchNormV3") {
    w.flops = 5.0 * elems(*in[0]);
  } else if (op == "Sum" || op == "Mean" || op == "Max" || op == "Min" ||
             op == "Prod" || op == "ArgMax" || op == "ArgMin") {
    w.flops = elems(*in[0]);
  } else if (IsTranscendental(op)) {
    w.flops = 10.0 * out_elems;
  } else {
    w.flops = out_elems;
  }
  return w;
}

const CostModel::Samples* CostModel::Find(
    const absl::flat_hash_map<std::string, Samples>& map, absl::string_view key,
    const DeviceInfo& device) const {
  auto it = map.find(Key(key, device.name));
  if (it != map.end()) return &it->second;
  it = map.find(Key(key, device.type));
  if (it != map.end()) return &it->second;
  return nullptr;
}

double CostModel::ComputeTime(const Node& node, const DeviceInfo& device,
                              bool* measured) const {
  const Samples* s = Find(by_node_, node.name(), device);
  if (s == nullptr) s = Find(by_op_, node.op(), device);
  if (s == nullptr) {
    auto it = by_type_fallback_.find(Key(node.name(), device.type));
    if (it == by_type_fallback_.end()) it = by_type_fallback_.find(Key(node.op(), device.type));
    if (it != by_type_fallback_.end()) s = &it->second;
  }
  if (measured != nullptr) *measured = s != nullptr;
  if (s != nullptr) return s->Median();
  if (IsFree(node.op())) return 0;
  const OpWork w = Estimate(node);
  const double compute = device.peak_flops > 0 ? w.flops / device.peak_flops : 0;
  const double memory =
      device.memory_bandwidth > 0 ? w.bytes / device.memory_bandwidth : 0;
  return device.launch_overhead_s + std::max(compute, memory);
}

double CostModel::Samples::Median() const {
  if (seconds.empty()) return 0;
  std::vector<double> v = seconds;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double hi = v[mid];
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + mid));
}

int64_t CostModel::PersistentBytes(const Node& node) const {
  auto it = persistent_.find(Key(node.name(), ""));
  if (it == persistent_.end()) it = persistent_.find(Key("", node.op()));
  return it == persistent_.end() ? -1 : it->second;
}

void CostModel::SetPersistentBytes(absl::string_view node, absl::string_view op,
                                   int64_t bytes) {
  persistent_[node.empty() ? Key("", op) : Key(node, "")] = bytes;
}

bool CostModel::Unsupported(const Node& node, const DeviceInfo& device) const {
  if (unsupported_.empty()) return false;
  for (const std::string* d : {&device.name, &device.type}) {
    if (unsupported_.contains(Key(node.name(), *d)) ||
        unsupported_.contains(Key(absl::StrCat("\t", node.op()), *d))) {
      return true;
    }
  }
  return false;
}

void CostModel::MarkUnsupported(absl::string_view node, absl::string_view op,
                                absl::string_view device) {
  unsupported_[node.empty() ? Key(absl::StrCat("\t", op), device)
                            : Key(node, device)] = std::string(op);
}

void CostModel::AddMeasurement(absl::string_view node, absl::string_view op,
                               absl::string_view device, double seconds,
                               const std::vector<int64_t>& output_bytes) {
  auto& map = node.empty() ? by_op_ : by_node_;
  Samples& s = map[Key(node.empty() ? op : node, device)];
  s.op = std::string(op);
  s.seconds.push_back(seconds);
  // A time measured on one device of a type stands for the others of that
  // type (a profile from CPU:0 also prices CPU:1), unless they have their
  // own entries.
  const size_t at = device.rfind("/device:");
  if (at != absl::string_view::npos) {
    absl::string_view type = device.substr(at + 8);
    type = type.substr(0, type.find(':'));
    if (!type.empty()) {
      Samples& by_type = by_type_fallback_[Key(node.empty() ? op : node, type)];
      by_type.op = std::string(op);
      by_type.seconds.push_back(seconds);
    }
  }
  if (!output_bytes.empty()) {
    s.output_bytes = output_bytes;
    if (!node.empty()) output_bytes_[std::string(node)] = output_bytes;
  }
}

namespace {

// A profile entry's device as the lookups spell it: a device type in upper
// case ("gpu" -> "GPU") or a canonical full name ("/gpu:0" style parts made
// "/device:GPU:0"). Anything else could never match a device: an error.
absl::StatusOr<std::string> ProfileDevice(const std::string& device) {
  absl::StatusOr<DeviceName> name = ParseDeviceName(device);
  if (!name.ok()) return name.status();
  if (IsCompleteDeviceName(*name)) return DeviceNameToString(*name);
  if (name->has_type && !name->has_job && !name->has_replica && !name->has_task &&
      !name->has_id) {
    return name->type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "device '", device, "' must be a device type such as 'GPU' or a full "
      "name /job:J/replica:R/task:T/device:TYPE:ID"));
}

}  // namespace

absl::Status CostModel::AddProfile(const CostProfile& profile) {
  for (int i = 0; i < profile.nodes_size(); ++i) {
    const NodeCost& c = profile.nodes(i);
    const std::string what = absl::StrCat("cost profile entry ", i, " (node '",
                                          c.node(), "', op '", c.op(), "')");
    if (c.node().empty() && c.op().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": needs a node or an op"));
    }
    if (c.device().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": needs a device name or type"));
    }
    if (!(c.compute_us() >= 0) || std::isinf(c.compute_us())) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": compute_us must be a non-negative number"));
    }
    if (c.unsupported() && c.compute_us() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": an unsupported entry gives no compute_us (the node cannot "
                "run there)"));
    }
    if (c.persistent_bytes() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": persistent_bytes is ", c.persistent_bytes(), ", not >= 0"));
    }
    absl::StatusOr<std::string> device = ProfileDevice(c.device());
    if (!device.ok()) return WithContext(device.status(), what);
    std::vector<int64_t> bytes(c.output_bytes().begin(), c.output_bytes().end());
    for (size_t j = 0; j < bytes.size(); ++j) {
      if (bytes[j] < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": output_bytes[", j, "] is ", bytes[j], ", not >= 0"));
      }
    }
    if (c.persistent_bytes() > 0) {
      SetPersistentBytes(c.node(), c.op(), c.persistent_bytes());
    }
    if (c.unsupported()) {
      MarkUnsupported(c.node(), c.op(), *device);
      if (!bytes.empty() && !c.node().empty()) output_bytes_[c.node()] = bytes;
      continue;
    }
    AddMeasurement(c.node(), c.op(), *device, c.compute_us() * 1e-6, bytes);
  }
  return absl::OkStatus();
}

CostProfile CostModel::ToProfile() const {
  CostProfile profile;
  auto persistent = [&](const std::string& key) -> int64_t {
    auto it = persistent_.find(key);
    return it == persistent_.end() ? 0 : it->second;
  };
  // Timed entries, then unsupported ones; each sorted by key. Persistent
  // bytes go on every entry of their node (or op).
  std::vector<std::pair<std::string, const Samples*>> entries;
  for (const auto& kv : by_node_) entries.emplace_back(kv.first, &kv.second);
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, s] : entries) {
    const size_t nl = key.find('\n');
    NodeCost* c = profile.add_nodes();
    c->set_node(key.substr(0, nl));
    c->set_op(s->op);
    c->set_device(key.substr(nl + 1));
    c->set_compute_us(s->Median() * 1e6);
    for (int64_t b : s->output_bytes) c->add_output_bytes(b);
    c->set_samples(static_cast<int64_t>(s->seconds.size()));
    c->set_persistent_bytes(persistent(Key(c->node(), "")));
  }
  std::vector<std::pair<std::string, const Samples*>> ops;
  for (const auto& kv : by_op_) ops.emplace_back(kv.first, &kv.second);
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, s] : ops) {
    const size_t nl = key.find('\n');
    NodeCost* c = profile.add_nodes();
    c->set_op(key.substr(0, nl));
    c->set_device(key.substr(nl + 1));
    c->set_compute_us(s->Median() * 1e6);
    c->set_samples(static_cast<int64_t>(s->seconds.size()));
    c->set_persistent_bytes(persistent(Key("", c->op())));
  }
  std::vector<std::pair<std::string, std::string>> unsupported(
      unsupported_.begin(), unsupported_.end());
  std::sort(unsupported.begin(), unsupported.end());
  for (const auto& [key, op] : unsupported) {
    const size_t nl = key.find('\n');
    NodeCost* c = profile.add_nodes();
    if (key[0] != '\t') {
      c->set_node(key.substr(0, nl));
      c->set_persistent_bytes(persistent(Key(c->node(), "")));
      auto bytes = output_bytes_.find(c->node());
      if (bytes != output_bytes_.end()) {
        for (int64_t b : bytes->second) c->add_output_bytes(b);
      }
    } else {
      c->set_persistent_bytes(persistent(Key("", op)));
    }
    c->set_op(op);
    c->set_device(key.substr(nl + 1));
    c->set_unsupported(true);
  }
  return profile;
}

absl::Status CostModel::LoadProfile(const std::string& path) {
  GR_ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  CostProfile profile;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &profile, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost profile ", path, " is not valid JSON for the profile format: ",
        status.ToString()));
  }
  return WithContext(AddProfile(profile), absl::StrCat("cost profile ", path));
}

absl::Status CostModel::SaveProfile(const std::string& path,
                                    absl::string_view description) const {
  CostProfile profile = ToProfile();
  profile.set_description(std::string(description));
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(profile, &json, options);
  if (!status.ok()) {
    return absl::InternalError(status.ToString());
  }
  return WriteFileAtomically(path, json);
}

}  // namespace placer
}  // namespace graphrun
