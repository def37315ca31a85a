#include "partition/partition.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace graphrun {
namespace {

using WireCompression = PartitionOptions::WireCompression;

// True for a non-empty [A-Za-z][A-Za-z0-9_]* (job names and device types).
bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool IsNumber(absl::string_view s) {
  int value = 0;
  return !s.empty() && absl::ascii_isdigit(static_cast<unsigned char>(s[0])) &&
         absl::SimpleAtoi(s, &value) && value >= 0;
}

// TYPE of a complete "/job:J/replica:R/task:T/device:TYPE:ID"; "" when
// `name` is not of that form (partial, legacy or malformed).
std::string DeviceTypeOfFullName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "/")) return "";
  const std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  if (parts.size() != 4) return "";
  absl::string_view job = parts[0], replica = parts[1], task = parts[2];
  absl::string_view device = parts[3];
  if (!absl::ConsumePrefix(&job, "job:") || !IsIdentifier(job)) return "";
  if (!absl::ConsumePrefix(&replica, "replica:") || !IsNumber(replica)) {
    return "";
  }
  if (!absl::ConsumePrefix(&task, "task:") || !IsNumber(task)) return "";
  if (!absl::ConsumePrefix(&device, "device:")) return "";
  const std::vector<absl::string_view> type_id = absl::StrSplit(device, ':');
  if (type_id.size() != 2 || !IsIdentifier(type_id[0]) ||
      !IsNumber(type_id[1])) {
    return "";
  }
  return std::string(type_id[0]);
}

std::string DefaultTaskOf(const std::string& device) {
  const size_t pos = device.find("/device:");
  return pos == std::string::npos ? device : device.substr(0, pos);
}

std::string TensorName(const Node& node, int output) {
  return output == 0 ? node.name() : absl::StrCat(node.name(), ":", output);
}

absl::Status NodeError(const Node& node, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(NodeLabel(node), ": ", message));
}

void SetType(NodeDef* def, const char* attr, DataType type) {
  (*def->mutable_attr())[attr].set_type(type);
}

// What Partition knows about one location.
struct Location {
  std::string task;
  bool is_cpu = false;
  int64_t incarnation = 1;
};

// One Send/Recv pair already made: TensorFlow's DupRecvKey.
struct DupKey {
  int src_id;
  int src_output;  // kControlSlot for control edges
  std::string dst_loc;
  bool recv_on_host;
  bool operator<(const DupKey& o) const {
    return std::tie(src_id, src_output, dst_loc, recv_on_host) <
           std::tie(o.src_id, o.src_output, o.dst_loc, o.recv_on_host);
  }
};

class Partitioner {
 public:
  Partitioner(const Graph& graph, const PartitionOptions& options)
      : graph_(graph), options_(options) {}

  absl::StatusOr<std::map<std::string, GraphDef>> Run(PartitionStats* stats);

 private:
  absl::Status LocateNodes();
  void NumberEdges();
  absl::Status PlaceNode(const Node& dst);
  // The input string the consumer `dst` (input `dst_input`) reads for the
  // cross-partition or cross-memory data edge `e`.
  absl::StatusOr<std::string> TransferData(const Edge& e, bool src_on_host,
                                           bool dst_on_host,
                                           std::vector<NodeDef*>* ref_recvs);
  // The control input ("^identity") `dst` gets for the control edge `e`.
  std::string TransferControl(const Edge& e);

  bool OnHost(const Node& node, bool is_output, int index) const;
  std::string NewName(absl::string_view prefix);
  NodeDef* AddNode(const std::string& loc, std::string name,
                   absl::string_view op);
  NodeDef* AddSend(const std::string& src_loc, const std::string& dst_loc,
                   const std::string& prefix, const std::string& tensor_name,
                   bool on_host, const std::string& input, DataType type);
  NodeDef* AddRecv(const std::string& src_loc, const std::string& dst_loc,
                   const std::string& prefix, const std::string& tensor_name,
                   bool on_host, DataType type);
  NodeDef* AddCast(const std::string& loc, const std::string& prefix,
                   const std::string& input, DataType from, DataType to,
                   bool truncate);

  const Graph& graph_;
  const PartitionOptions& options_;
  std::vector<std::string> loc_;               // by node id
  std::map<std::string, Location> locations_;  // by location name
  std::map<const Edge*, int> edge_number_;
  absl::flat_hash_set<std::string> names_;  // every name in use
  int64_t counter_ = 0;
  std::map<DupKey, std::string> dup_;  // -> the input consumers read
  std::map<std::string, GraphDef> parts_;
  PartitionStats stats_;
};

absl::StatusOr<std::map<std::string, GraphDef>> Partitioner::Run(
    PartitionStats* stats) {
  GR_RETURN_IF_ERROR(LocateNodes());
  NumberEdges();
  for (const auto& node : graph_.nodes()) names_.insert(node->name());
  for (const auto& node : graph_.nodes()) {
    GR_RETURN_IF_ERROR(PlaceNode(*node));
  }
  for (auto& [loc, def] : parts_) {
    *def.mutable_versions() = graph_.versions();
    if (graph_.library().function_size() > 0 ||
        graph_.library().gradient_size() > 0) {
      *def.mutable_library() = graph_.library();
    }
  }
  if (stats != nullptr) *stats = stats_;
  return std::move(parts_);
}

absl::Status Partitioner::LocateNodes() {
  const std::set<std::string> known(options_.devices.begin(),
                                    options_.devices.end());
  loc_.resize(graph_.num_nodes());
  for (const auto& node : graph_.nodes()) {
    std::string loc = options_.node_to_loc ? options_.node_to_loc(*node)
                                           : node->def().device();
    if (loc.empty()) return NodeError(*node, "has no assigned device");
    auto it = locations_.find(loc);
    if (it == locations_.end()) {
      const std::string type = DeviceTypeOfFullName(loc);
      if (type.empty()) {
        return NodeError(
            *node, absl::StrCat("is assigned to '", loc,
                                "', which is not a complete device name "
                                "(/job:J/replica:R/task:T/device:TYPE:ID)"));
      }
      if (!known.empty() && known.count(loc) == 0) {
        return NodeError(*node, absl::StrCat("is assigned to '", loc,
                                             "', which is not one of the ",
                                             known.size(), " known devices"));
      }
      Location l;
      l.task = options_.task_of ? options_.task_of(loc) : DefaultTaskOf(loc);
      l.is_cpu = absl::EqualsIgnoreCase(type, "CPU");
      l.incarnation = static_cast<int64_t>(
          options_.get_incarnation ? options_.get_incarnation(loc) : 1);
      it = locations_.emplace(loc, std::move(l)).first;
    }
    loc_[node->id()] = std::move(loc);
  }
  return absl::OkStatus();
}

void Partitioner::NumberEdges() {
  int n = 0;
  for (const auto& node : graph_.nodes()) {
    for (const Edge* e : node->in_edges()) edge_number_[e] = n++;
  }
}

bool Partitioner::OnHost(const Node& node, bool is_output, int index) const {
  const std::string& loc = loc_[node.id()];
  if (!options_.host_memory || locations_.at(loc).is_cpu) return false;
  return options_.host_memory(node, is_output, index, loc);
}

std::string Partitioner::NewName(absl::string_view prefix) {
  std::string name;
  do {
    name = absl::StrCat(prefix, "/_", counter_++);
  } while (!names_.insert(name).second);
  return name;
}

NodeDef* Partitioner::AddNode(const std::string& loc, std::string name,
                              absl::string_view op) {
  NodeDef* def = parts_[loc].add_node();
  def->set_name(std::move(name));
  def->set_op(std::string(op));
  def->set_device(loc);
  return def;
}

NodeDef* Partitioner::AddSend(const std::string& src_loc,
                              const std::string& dst_loc,
                              const std::string& prefix,
                              const std::string& tensor_name, bool on_host,
                              const std::string& input, DataType type) {
  NodeDef* send =
      AddNode(src_loc, NewName(prefix), on_host ? "_HostSend" : "_Send");
  send->add_input(input);
  SetType(send, "T", type);
  auto& attr = *send->mutable_attr();
  attr["tensor_name"].set_s(tensor_name);
  attr["send_device"].set_s(src_loc);
  attr["send_device_incarnation"].set_i(locations_.at(src_loc).incarnation);
  attr["recv_device"].set_s(dst_loc);
  attr["client_terminated"].set_b(false);
  return send;
}

NodeDef* Partitioner::AddRecv(const std::string& src_loc,
                              const std::string& dst_loc,
                              const std::string& prefix,
                              const std::string& tensor_name, bool on_host,
                              DataType type) {
  NodeDef* recv =
      AddNode(dst_loc, NewName(prefix), on_host ? "_HostRecv" : "_Recv");
  SetType(recv, "tensor_type", type);
  auto& attr = *recv->mutable_attr();
  attr["tensor_name"].set_s(tensor_name);
  attr["send_device"].set_s(src_loc);
  attr["send_device_incarnation"].set_i(locations_.at(src_loc).incarnation);
  attr["recv_device"].set_s(dst_loc);
  attr["client_terminated"].set_b(false);
  return recv;
}

NodeDef* Partitioner::AddCast(const std::string& loc, const std::string& prefix,
                              const std::string& input, DataType from,
                              DataType to, bool truncate) {
  NodeDef* cast = AddNode(loc, NewName(prefix), "Cast");
  cast->add_input(input);
  SetType(cast, "SrcT", from);
  SetType(cast, "DstT", to);
  (*cast->mutable_attr())["Truncate"].set_b(truncate);
  return cast;
}

absl::StatusOr<std::string> Partitioner::TransferData(
    const Edge& e, bool src_on_host, bool dst_on_host,
    std::vector<NodeDef*>* ref_recvs) {
  const Node& src = *e.src;
  const Node& dst = *e.dst;
  const std::string& src_loc = loc_[src.id()];
  const std::string& dst_loc = loc_[dst.id()];
  const bool same_loc = src_loc == dst_loc;
  if (e.src_output >= src.num_outputs()) {
    return NodeError(dst, absl::StrCat("input ", e.dst_input, " comes from '",
                                       TensorName(src, e.src_output),
                                       "', whose type is unknown"));
  }
  const DataType src_type = src.output_type(e.src_output);
  if (e.dst_input < dst.num_inputs() &&
      IsRefType(dst.input_type(e.dst_input))) {
    return NodeError(
        dst,
        absl::StrCat("ref input ", e.dst_input,
                     " cannot be fed across devices or memory "
                     "spaces (from '",
                     TensorName(src, e.src_output), "' on ", src_loc, ")"));
  }
  const bool is_ref = IsRefType(src_type);
  const DupKey key{src.id(), e.src_output, dst_loc, dst_on_host};
  if (!is_ref) {
    auto it = dup_.find(key);
    if (it != dup_.end()) return it->second;
  }

  const DataType type = BaseType(src_type);
  const Location& from = locations_.at(src_loc);
  const Location& to = locations_.at(dst_loc);
  const bool compress = options_.compression != WireCompression::kNone &&
                        !same_loc && type == DT_FLOAT && !src_on_host &&
                        !dst_on_host && from.task != to.task;
  const bool bf16 = options_.compression == WireCompression::kBf16Truncate;
  const DataType wire_type = compress ? (bf16 ? DT_BFLOAT16 : DT_HALF) : type;

  std::string send_input = TensorName(src, e.src_output);
  if (compress) {
    send_input = AddCast(src_loc, src.name(), send_input, DT_FLOAT, wire_type,
                         /*truncate=*/bf16)
                     ->name();
  }
  const std::string tensor_name =
      absl::StrCat("edge_", edge_number_.at(&e), "_", src.name());
  const NodeDef* send = AddSend(src_loc, dst_loc, src.name(), tensor_name,
                                src_on_host, send_input, wire_type);
  NodeDef* recv = AddRecv(src_loc, dst_loc, src.name(), tensor_name,
                          dst_on_host, wire_type);
  // A same-device pair: the recv must not be scheduled before the send.
  if (same_loc) recv->add_input(absl::StrCat("^", send->name()));
  std::string out = recv->name();
  if (compress) {
    out = AddCast(dst_loc, src.name(), out, wire_type, DT_FLOAT,
                  /*truncate=*/false)
              ->name();
    ++stats_.compressed_edges;
  }
  ++stats_.data_sends;
  if (is_ref) {
    ref_recvs->push_back(recv);
  } else {
    dup_.emplace(key, out);
  }
  return out;
}

std::string Partitioner::TransferControl(const Edge& e) {
  const Node& src = *e.src;
  const std::string& src_loc = loc_[src.id()];
  const std::string& dst_loc = loc_[e.dst->id()];
  const DupKey key{src.id(), kControlSlot, dst_loc, false};
  auto it = dup_.find(key);
  if (it != dup_.end()) return it->second;

  NodeDef* dummy = AddNode(src_loc, NewName(src.name()), "Const");
  dummy->add_input(absl::StrCat("^", src.name()));
  SetType(dummy, "dtype", DT_FLOAT);
  TensorProto* value = (*dummy->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(DT_FLOAT);
  value->mutable_tensor_shape()->add_dim()->set_size(0);

  const std::string tensor_name =
      absl::StrCat("edge_", edge_number_.at(&e), "_", src.name());
  AddSend(src_loc, dst_loc, src.name(), tensor_name, /*on_host=*/false,
          dummy->name(), DT_FLOAT);
  const NodeDef* recv = AddRecv(src_loc, dst_loc, src.name(), tensor_name,
                                /*on_host=*/false, DT_FLOAT);
  NodeDef* identity = AddNode(dst_loc, NewName(src.name()), "Identity");
  identity->add_input(recv->name());
  SetType(identity, "T", DT_FLOAT);
  ++stats_.control_sends;
  std::string out = absl::StrCat("^", identity->name());
  dup_.emplace(key, out);
  return out;
}

// Drops the "loc:@x" entries of `def`'s _class attr whose x is not in
// partition `loc` (placement has already honoured colocation; a dangling
// reference would fail re-import).
void DropForeignColocation(const Graph& graph,
                           const std::vector<std::string>& node_loc,
                           const std::string& loc, NodeDef* def) {
  auto it = def->mutable_attr()->find("_class");
  if (it == def->mutable_attr()->end() || !it->second.has_list()) return;
  auto* entries = it->second.mutable_list()->mutable_s();
  entries->erase(std::remove_if(entries->begin(), entries->end(),
                                [&](const std::string& s) {
                                  absl::string_view target = s;
                                  if (!absl::ConsumePrefix(&target, "loc:@"))
                                    return false;
                                  const Node* n = graph.FindNode(target);
                                  return n == nullptr ||
                                         node_loc[n->id()] != loc;
                                }),
                 entries->end());
  if (entries->empty()) def->mutable_attr()->erase(it);
}

absl::Status Partitioner::PlaceNode(const Node& dst) {
  const std::string& dst_loc = loc_[dst.id()];
  int num_slots = dst.num_inputs();
  for (const Edge* e : dst.in_edges()) {
    if (!e->IsControl()) num_slots = std::max(num_slots, e->dst_input + 1);
  }
  std::vector<std::string> data_inputs(num_slots);
  std::vector<std::string> control_inputs;
  std::vector<NodeDef*> ref_recvs;
  for (const Edge* e : dst.in_edges()) {
    const Node& src = *e->src;
    const bool same_loc = loc_[src.id()] == dst_loc;
    if (e->IsControl()) {
      control_inputs.push_back(same_loc ? absl::StrCat("^", src.name())
                                        : TransferControl(*e));
      continue;
    }
    const bool src_on_host = OnHost(src, /*is_output=*/true, e->src_output);
    const bool dst_on_host = OnHost(dst, /*is_output=*/false, e->dst_input);
    if (same_loc && src_on_host == dst_on_host) {
      data_inputs[e->dst_input] = TensorName(src, e->src_output);
      continue;
    }
    GR_ASSIGN_OR_RETURN(data_inputs[e->dst_input],
                        TransferData(*e, src_on_host, dst_on_host, &ref_recvs));
  }
  const int missing = static_cast<int>(
      std::count(data_inputs.begin(), data_inputs.end(), std::string()));
  if (missing > 0) {
    return NodeError(dst, absl::StrCat("incomplete graph, missing ", missing,
                                       " of ", num_slots, " inputs"));
  }

  // A ref edge has read semantics: its recv waits for the other inputs.
  if (!ref_recvs.empty()) {
    std::set<std::string> ref_names;
    for (const NodeDef* recv : ref_recvs) ref_names.insert(recv->name());
    std::vector<std::string> others;
    for (const std::string& in : data_inputs) {
      const std::string node = in.substr(0, in.find(':'));
      if (ref_names.count(node) == 0 &&
          std::find(others.begin(), others.end(), node) == others.end()) {
        others.push_back(node);
      }
    }
    for (NodeDef* recv : ref_recvs) {
      for (const std::string& node : others) {
        recv->add_input(absl::StrCat("^", node));
      }
    }
  }

  NodeDef* def = parts_[dst_loc].add_node();
  *def = dst.def();
  def->set_device(dst_loc);
  def->clear_input();
  for (std::string& in : data_inputs) def->add_input(std::move(in));
  for (std::string& in : control_inputs) def->add_input(std::move(in));
  DropForeignColocation(graph_, loc_, dst_loc, def);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, GraphDef>> Partition(
    const Graph& graph, const PartitionOptions& options,
    PartitionStats* stats) {
  return Partitioner(graph, options).Run(stats);
}

std::string RendezvousKey(absl::string_view send_device, uint64_t incarnation,
                          absl::string_view recv_device,
                          absl::string_view tensor_name, uint64_t frame_id,
                          int64_t iter_id) {
  return CreateRendezvousKey(send_device, incarnation, recv_device, tensor_name,
                             frame_id, iter_id);
}

}  // namespace graphrun
