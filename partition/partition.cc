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
#include "graph/control_flow.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "partition/wire_policy.h"

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
  // A gradient edge between tasks gets a transfer of its own (it may
  // travel lossy where the others do not).
  bool gradient = false;
  bool operator<(const DupKey& o) const {
    return std::tie(src_id, src_output, dst_loc, recv_on_host, gradient) <
           std::tie(o.src_id, o.src_output, o.dst_loc, o.recv_on_host, o.gradient);
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
  absl::StatusOr<std::string> TransferControl(const Edge& e);

  // While-loop frames cut across locations (TensorFlow's AddControlFlow,
  // with one change, see ControlLoopMerge).
  absl::Status FindLoops();
  // The frame a value of `src` lives in / a consumer `dst` reads in.
  const std::string& OutputFrame(const Node& src) const;
  const std::string& InputFrame(const Node& dst) const;
  // The frame that edge `e` stays inside, or "" (root, or it enters or
  // leaves a frame).
  std::string InFrameEdgeFrame(const Edge& e) const;
  // The Merge of the control loop that drives `frame` on `loc`, made on
  // first use.
  absl::StatusOr<std::string> ControlLoopMerge(const std::string& frame,
                                               const std::string& loc);
  // A location that sends values inside `frame` must run every iteration
  // even when all it holds there are loop invariants: unless it owns the
  // LoopCond, it gets a control loop too.
  absl::Status EnsureSenderIterates(const std::string& frame, const std::string& loc);

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
  // Loops only (empty otherwise): frames of the nodes, each frame's
  // LoopCond and the Enter whose input says whether the loop runs, and the
  // control loops made, by (frame, location).
  std::vector<ControlFlowInfo> cf_;
  std::map<std::string, const Node*> pivot_;
  std::map<std::string, const Node*> token_enter_;
  std::map<int, std::string> enter_frame_;  // Enter node id -> frame it opens
  std::map<std::pair<std::string, std::string>, std::string> control_loops_;
};

absl::StatusOr<std::map<std::string, GraphDef>> Partitioner::Run(
    PartitionStats* stats) {
  GR_RETURN_IF_ERROR(LocateNodes());
  GR_RETURN_IF_ERROR(FindLoops());
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
  // Inside a loop frame the recv runs once per iteration, when the
  // location's control loop starts that iteration.
  std::string loop_merge;
  const std::string frame = same_loc ? "" : InFrameEdgeFrame(e);
  if (!frame.empty()) {
    GR_ASSIGN_OR_RETURN(loop_merge, ControlLoopMerge(frame, dst_loc));
    GR_RETURN_IF_ERROR(EnsureSenderIterates(frame, src_loc));
  }
  const DataType type = BaseType(src_type);
  const Location& from = locations_.at(src_loc);
  const Location& to = locations_.at(dst_loc);
  const bool between_tasks = !same_loc && type == DT_FLOAT && from.task != to.task;
  const bool gradient = between_tasks && IsGradientInput(*e.dst, e.dst_input);
  const DupKey key{src.id(), e.src_output, dst_loc, dst_on_host, gradient};
  if (!is_ref) {
    auto it = dup_.find(key);
    if (it != dup_.end()) return it->second;
  }

  const bool lossy_edge = options_.compression != WireCompression::kNone && between_tasks &&
                          !src_on_host && !dst_on_host;
  const bool compress = lossy_edge && (gradient || !options_.gradients_only);
  const bool bf16 = options_.compression == WireCompression::kBf16Truncate;
  const DataType wire_type = compress ? (bf16 ? DT_BFLOAT16 : DT_HALF) : type;
  if (lossy_edge) {
    stats_.exact_edges += !compress;
    stats_.wire_log.push_back(absl::StrCat(
        "edge_", edge_number_.at(&e), "_", src.name(), " ", src_loc, " -> ", dst_loc, ": ",
        compress ? (bf16 ? "bf16" : "fp16") : "exact",
        gradient ? " (a gradient)" : " (not a gradient)"));
  }

  std::string send_input = TensorName(src, e.src_output);
  if (compress) {
    send_input = AddCast(src_loc, src.name(), send_input, DT_FLOAT, wire_type,
                         /*truncate=*/bf16)
                     ->name();
  }
  const std::string tensor_name =
      absl::StrCat("edge_", edge_number_.at(&e), "_", src.name());
  NodeDef* send = AddSend(src_loc, dst_loc, src.name(), tensor_name,
                          src_on_host, send_input, wire_type);
  NodeDef* recv = AddRecv(src_loc, dst_loc, src.name(), tensor_name,
                          dst_on_host, wire_type);
  if (gradient) {
    (*send->mutable_attr())[kGradientAttr].set_b(true);
    (*recv->mutable_attr())[kGradientAttr].set_b(true);
  }
  // A same-device pair: the recv must not be scheduled before the send.
  if (same_loc) recv->add_input(absl::StrCat("^", send->name()));
  if (!loop_merge.empty()) recv->add_input(absl::StrCat("^", loop_merge));
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

absl::StatusOr<std::string> Partitioner::TransferControl(const Edge& e) {
  const Node& src = *e.src;
  const std::string& src_loc = loc_[src.id()];
  const std::string& dst_loc = loc_[e.dst->id()];
  std::string loop_merge;
  const std::string frame = InFrameEdgeFrame(e);
  if (!frame.empty()) {
    GR_ASSIGN_OR_RETURN(loop_merge, ControlLoopMerge(frame, dst_loc));
    GR_RETURN_IF_ERROR(EnsureSenderIterates(frame, src_loc));
  }
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
  NodeDef* recv = AddRecv(src_loc, dst_loc, src.name(), tensor_name,
                          /*on_host=*/false, DT_FLOAT);
  if (!loop_merge.empty()) recv->add_input(absl::StrCat("^", loop_merge));
  NodeDef* identity = AddNode(dst_loc, NewName(src.name()), "Identity");
  identity->add_input(recv->name());
  SetType(identity, "T", DT_FLOAT);
  ++stats_.control_sends;
  std::string out = absl::StrCat("^", identity->name());
  dup_.emplace(key, out);
  return out;
}

absl::Status Partitioner::FindLoops() {
  if (!HasLoops(graph_)) return absl::OkStatus();
  GR_ASSIGN_OR_RETURN(cf_, BuildControlFlowInfo(graph_));
  for (const auto& node : graph_.nodes()) {
    const std::string& frame = cf_[node->id()].frame_name;
    if (IsLoopCond(*node)) pivot_.emplace(frame, node.get());
    if (IsEnter(*node)) {
      // The loop runs iff its loop variables are live: the first
      // non-constant Enter of each frame stands for them.
      std::string name;
      GR_RETURN_IF_ERROR(node->attrs().Get("frame_name", &name));
      bool constant = false;
      GR_RETURN_IF_ERROR(node->attrs().Get("is_constant", &constant));
      enter_frame_[node->id()] = name;
      auto it = token_enter_.find(name);
      if (it == token_enter_.end()) {
        token_enter_.emplace(name, node.get());
      } else if (!constant) {
        bool first_constant = false;
        GR_RETURN_IF_ERROR(it->second->attrs().Get("is_constant", &first_constant));
        if (first_constant) it->second = node.get();
      }
    }
  }
  // A NextIteration runs where the Merge it feeds runs (the value crosses
  // devices before it, not on the back edge), and a non-ref Enter where its
  // first consumer runs (its value then enters the frame on that device,
  // instead of a recv there waiting in every iteration for a value that
  // only iteration 0 has). TensorFlow moves them the same way.
  for (const auto& node : graph_.nodes()) {
    const bool movable = IsNextIteration(*node) ||
                         (IsEnter(*node) && node->num_outputs() == 1 &&
                          !IsRefType(node->output_type(0)));
    if (!movable) continue;
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControl()) {
        loc_[node->id()] = loc_[e->dst->id()];
        break;
      }
    }
  }
  return absl::OkStatus();
}

const std::string& Partitioner::OutputFrame(const Node& src) const {
  const ControlFlowInfo& ci = cf_[src.id()];
  if (IsEnter(src)) return enter_frame_.at(src.id());
  if (IsExit(src)) return cf_[ci.frame->id()].frame_name;
  return ci.frame_name;
}

const std::string& Partitioner::InputFrame(const Node& dst) const {
  return cf_[dst.id()].frame_name;
}

std::string Partitioner::InFrameEdgeFrame(const Edge& e) const {
  if (cf_.empty()) return "";
  const std::string& in = InputFrame(*e.dst);
  if (in.empty() || OutputFrame(*e.src) != in) return "";
  return in;
}

// TensorFlow's control loop for `frame` on `loc`: Enter -> Merge ->
// Switch(pred) -> NextIteration -> Merge, where pred is the frame's
// LoopCond (received from its location), so `loc` starts an iteration
// when the loop does and stops when it stops; the Merge gates every recv
// of the frame on `loc`. TensorFlow feeds the Enter from a constant (or
// the parent frame's control loop); here it is fed by a token made from
// the input of one of the frame's own Enters, so a loop that does not run
// (dead inputs: an untaken cond branch, the last iteration of an outer
// loop) starts no control loop and leaves no recv waiting.
absl::StatusOr<std::string> Partitioner::ControlLoopMerge(const std::string& frame,
                                                          const std::string& loc) {
  auto found = control_loops_.find({frame, loc});
  if (found != control_loops_.end()) return found->second;
  auto pivot_it = pivot_.find(frame);
  if (pivot_it == pivot_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "while-loop frame '", frame, "' spans devices but has no LoopCond: a loop cut "
        "across devices must have a pivot predicate"));
  }
  const Node& pivot = *pivot_it->second;
  const Node& enter = *token_enter_.at(frame);
  const Edge* enter_in = enter.input_edge(0);
  if (enter_in == nullptr) return NodeError(enter, "has no data input");
  const std::string prefix = absl::StrCat("_cloop/", frame);

  // The token: Const(float[0]) that is dead iff the Enter's input is, made
  // where that input is produced, in the frame around the loop.
  const Node& producer = *enter_in->src;
  const std::string& token_loc = loc_[producer.id()];
  NodeDef* probe = AddNode(token_loc, NewName(prefix), "Identity");
  probe->add_input(TensorName(producer, enter_in->src_output));
  SetType(probe, "T", BaseType(producer.output_type(enter_in->src_output)));
  NodeDef* token = AddNode(token_loc, NewName(prefix), "Const");
  token->add_input(absl::StrCat("^", probe->name()));
  SetType(token, "dtype", DT_FLOAT);
  TensorProto* value = (*token->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(DT_FLOAT);
  value->mutable_tensor_shape()->add_dim()->set_size(0);
  std::string enter_input = token->name();
  if (token_loc != loc) {
    const std::string tensor_name = NewName(absl::StrCat("cloop_token_", frame));
    AddSend(token_loc, loc, prefix, tensor_name, /*on_host=*/false, token->name(), DT_FLOAT);
    NodeDef* recv = AddRecv(token_loc, loc, prefix, tensor_name, /*on_host=*/false, DT_FLOAT);
    const std::string& outer = cf_[enter.id()].frame_name;
    if (!outer.empty()) {
      GR_ASSIGN_OR_RETURN(std::string outer_merge, ControlLoopMerge(outer, loc));
      recv->add_input(absl::StrCat("^", outer_merge));
    }
    enter_input = recv->name();
  }

  int64_t parallel = 10;
  GR_RETURN_IF_ERROR(enter.attrs().Get("parallel_iterations", &parallel));
  NodeDef* center = AddNode(loc, NewName(prefix), "Enter");
  center->add_input(enter_input);
  SetType(center, "T", DT_FLOAT);
  auto& attr = *center->mutable_attr();
  attr["frame_name"].set_s(frame);
  attr["is_constant"].set_b(false);
  attr["parallel_iterations"].set_i(parallel);
  NodeDef* merge = AddNode(loc, NewName(prefix), "Merge");
  const std::string next_name = NewName(prefix);
  merge->add_input(center->name());
  merge->add_input(next_name);
  SetType(merge, "T", DT_FLOAT);
  (*merge->mutable_attr())["N"].set_i(2);
  control_loops_[{frame, loc}] = merge->name();

  // The predicate of each iteration, from the LoopCond's location.
  std::string pred = pivot.name();
  if (loc_[pivot.id()] != loc) {
    // Switch reads its predicate on the host: where memory types are known,
    // the predicate lives in host memory off CPUs (as a GPU's Switch and
    // LoopCond keep it).
    const bool recv_on_host = options_.host_memory != nullptr && !locations_.at(loc).is_cpu;
    const bool send_on_host = OnHost(pivot, /*is_output=*/true, 0);
    const DupKey key{pivot.id(), 0, loc, recv_on_host};
    auto it = dup_.find(key);
    if (it != dup_.end()) {
      pred = it->second;
    } else {
      const std::string tensor_name = NewName(absl::StrCat("cloop_pred_", frame));
      AddSend(loc_[pivot.id()], loc, pivot.name(), tensor_name, send_on_host, pivot.name(),
              DT_BOOL);
      NodeDef* recv =
          AddRecv(loc_[pivot.id()], loc, pivot.name(), tensor_name, recv_on_host, DT_BOOL);
      recv->add_input(absl::StrCat("^", merge->name()));
      ++stats_.data_sends;
      pred = recv->name();
      dup_.emplace(key, pred);
    }
  }
  NodeDef* sw = AddNode(loc, NewName(prefix), "Switch");
  sw->add_input(merge->name());
  sw->add_input(pred);
  SetType(sw, "T", DT_FLOAT);
  NodeDef* next = AddNode(loc, next_name, "NextIteration");
  next->add_input(absl::StrCat(sw->name(), ":1"));
  SetType(next, "T", DT_FLOAT);
  ++stats_.control_loops;
  return merge->name();
}

absl::Status Partitioner::EnsureSenderIterates(const std::string& frame,
                                              const std::string& loc) {
  auto pivot = pivot_.find(frame);
  if (pivot != pivot_.end() && loc_[pivot->second->id()] == loc) return absl::OkStatus();
  return ControlLoopMerge(frame, loc).status();
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
      if (same_loc) {
        control_inputs.push_back(absl::StrCat("^", src.name()));
      } else {
        GR_ASSIGN_OR_RETURN(std::string in, TransferControl(*e));
        control_inputs.push_back(std::move(in));
      }
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
