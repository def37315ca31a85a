#include "graph/lower_collectives.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

enum class Kind { kReduce, kGather, kSend, kRecv };

struct OpInfo {
  Kind kind;
  bool v2;  // keys as inputs (group_size, group_key, instance_key)
};

const OpInfo* Info(absl::string_view op) {
  static const auto* const kOps = new absl::flat_hash_map<std::string, OpInfo>{
      {"CollectiveReduceV2", {Kind::kReduce, true}},
      {"CollectiveGatherV2", {Kind::kGather, true}},
      {"CollectiveBcastSendV2", {Kind::kSend, true}},
      {"CollectiveBcastRecvV2", {Kind::kRecv, true}},
      {"CollectiveReduce", {Kind::kReduce, false}},
      {"CollectiveGather", {Kind::kGather, false}},
      {"CollectiveBcastSend", {Kind::kSend, false}},
      {"CollectiveBcastRecv", {Kind::kRecv, false}},
  };
  auto it = kOps->find(op);
  return it == kOps->end() ? nullptr : &it->second;
}

bool IsControl(const std::string& input) { return !input.empty() && input[0] == '^'; }

std::string NodeOf(const std::string& input) {
  std::string n = IsControl(input) ? input.substr(1) : input;
  const size_t colon = n.rfind(':');
  return colon == std::string::npos ? n : n.substr(0, colon);
}

// One member of a collective instance.
struct Member {
  NodeDef* def;
  const OpInfo* info;
  int64_t group_size = 0, group_key = 0, instance_key = 0;
  std::string data;  // the input carrying its tensor ("" for a receiver)
  std::vector<std::string> controls;
};

std::string Label(const Member& m) {
  return absl::StrCat(m.def->op(), " node '", m.def->name(), "' (group ", m.group_key,
                      ", instance ", m.instance_key, ")");
}

class Lowerer {
 public:
  explicit Lowerer(GraphDef* g) : g_(g) {
    for (NodeDef& n : *g_->mutable_node()) by_name_[n.name()] = &n;
  }

  absl::Status Run() {
    std::map<std::pair<int64_t, int64_t>, std::vector<Member>> instances;
    for (NodeDef& n : *g_->mutable_node()) {
      const OpInfo* info = Info(n.op());
      if (info == nullptr || n.attr().contains(kRunTimeCollectiveAttr)) continue;
      absl::StatusOr<Member> m = Describe(&n, info);
      // Keys computed at run time: the member meets the others then.
      if (m.status().code() == absl::StatusCode::kFailedPrecondition) continue;
      if (!m.ok()) return m.status();
      instances[{m->group_key, m->instance_key}].push_back(*std::move(m));
    }
    absl::flat_hash_map<int64_t, int64_t> group_sizes;
    for (auto& [key, members] : instances) {
      auto [it, fresh] = group_sizes.emplace(key.first, members[0].group_size);
      if (!fresh && it->second != members[0].group_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            Label(members[0]), ": group size ", members[0].group_size, ", but group ", key.first,
            " has size ", it->second, " elsewhere in the graph"));
      }
      // Members in other clients' graphs: they all meet at run time.
      if (static_cast<int64_t>(members.size()) < members[0].group_size) continue;
      GR_RETURN_IF_ERROR(Lower(&members));
    }
    for (NodeDef& n : added_) *g_->add_node() = std::move(n);
    return absl::OkStatus();
  }

 private:
  // A key input: a Const integer scalar, possibly behind Identity nodes.
  absl::StatusOr<int64_t> ConstInput(const NodeDef& n, int index, const char* what) {
    std::string name = n.input(index);
    for (int hops = 0; hops < 8; ++hops) {
      auto it = by_name_.find(NodeOf(name));
      if (it == by_name_.end()) break;
      const NodeDef& src = *it->second;
      if (src.op() == "Identity" && src.input_size() > 0 && !IsControl(src.input(0))) {
        name = src.input(0);
        continue;
      }
      if (src.op() != "Const" || !src.attr().contains("value")) break;
      GR_ASSIGN_OR_RETURN(Tensor t, Tensor::FromProto(src.attr().at("value").tensor()));
      if (t.NumElements() != 1) break;
      if (t.dtype() == DT_INT32) return int64_t{t.flat<int32_t>()[0]};
      if (t.dtype() == DT_INT64) return t.flat<int64_t>()[0];
      break;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        n.op(), " node '", n.name(), "': its ", what, " (input ", index, ", '", n.input(index),
        "') is not a constant"));
  }

  absl::StatusOr<Member> Describe(NodeDef* n, const OpInfo* info) {
    Member m{n, info};
    std::vector<std::string> data;
    for (const std::string& in : n->input()) (IsControl(in) ? m.controls : data).push_back(in);
    const int first_key = info->kind == Kind::kRecv ? 0 : 1;
    if (info->v2) {
      if (static_cast<int>(data.size()) < first_key + 3 + (info->kind == Kind::kRecv ? 1 : 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(n->op(), " node '", n->name(), "': too few inputs"));
      }
      GR_ASSIGN_OR_RETURN(m.group_size, ConstInput(*n, first_key, "group_size"));
      GR_ASSIGN_OR_RETURN(m.group_key, ConstInput(*n, first_key + 1, "group_key"));
      GR_ASSIGN_OR_RETURN(m.instance_key, ConstInput(*n, first_key + 2, "instance_key"));
    } else {
      for (auto [attr, out] : {std::pair<const char*, int64_t*>{"group_size", &m.group_size},
                               {"group_key", &m.group_key},
                               {"instance_key", &m.instance_key}}) {
        auto it = n->attr().find(attr);
        if (it == n->attr().end()) {
          return absl::InvalidArgumentError(
              absl::StrCat(n->op(), " node '", n->name(), "': no attr '", attr, "'"));
        }
        *out = it->second.i();
      }
    }
    if (info->kind != Kind::kRecv) {
      if (data.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(Label(m), ": no input"));
      }
      m.data = data[0];
    }
    if (m.group_size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(m), ": group size ", m.group_size, " is not positive"));
    }
    return m;
  }

  std::string Attr(const Member& m, const char* name) {
    auto it = m.def->attr().find(name);
    return it == m.def->attr().end() ? std::string() : it->second.s();
  }

  NodeDef* Add(const std::string& name, const std::string& op, const std::string& device) {
    added_.emplace_back();
    NodeDef* n = &added_.back();
    n->set_name(absl::StrCat(scope_, name));
    n->set_op(op);
    n->set_device(device);
    return n;
  }

  static void SetType(NodeDef* n, const char* attr, DataType t) {
    (*n->mutable_attr())[attr].set_type(t);
  }

  // The member's tensor, behind an Identity that waits for its control
  // inputs when it has any.
  std::string Contribution(const Member& m, int rank) {
    if (m.controls.empty()) return m.data;
    NodeDef* gate = Add(absl::StrCat("in_", rank), "Identity", m.def->device());
    gate->add_input(m.data);
    for (const std::string& c : m.controls) gate->add_input(c);
    SetType(gate, "T", m.def->attr().at("T").type());
    return gate->name();
  }

  // Rewrites a member in place as `op` (Identity or Reshape) of `inputs`.
  static void Replace(Member* m, const std::string& op, std::vector<std::string> inputs,
                      DataType t) {
    NodeDef* n = m->def;
    std::vector<std::string> controls = m->controls;
    n->set_op(op);
    n->clear_input();
    n->clear_attr();
    for (const std::string& in : inputs) n->add_input(in);
    for (const std::string& c : controls) n->add_input(c);
    SetType(n, "T", t);
  }

  absl::Status Lower(std::vector<Member>* members) {
    // Ranks: device names in string order; `first` is rank 0.
    std::sort(members->begin(), members->end(), [](const Member& a, const Member& b) {
      return CollectiveRankBefore(a.def->device(), b.def->device());
    });
    const Member& first = (*members)[0];
    const std::string what = Label(first);
    std::vector<std::string> names;
    for (const Member& m : *members) names.push_back(absl::StrCat("'", m.def->name(), "'"));
    if (static_cast<int64_t>(members->size()) != first.group_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the group has ", first.group_size, " members but the graph holds ",
          members->size(), " of this instance (", absl::StrJoin(names, ", "),
          ")"));
    }
    const Kind kind = first.info->kind == Kind::kRecv ? Kind::kSend : first.info->kind;
    DataType t = DT_INVALID;
    int senders = 0;
    for (size_t r = 0; r < members->size(); ++r) {
      const Member& m = (*members)[r];
      const Kind k = m.info->kind == Kind::kRecv ? Kind::kSend : m.info->kind;
      if (k != kind || m.group_size != first.group_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " and ", Label(m), " share an instance but are different collectives"));
      }
      if (r > 0 && m.def->device() == (*members)[r - 1].def->device()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": members ", absl::StrJoin(names, ", "), " must run on different devices; '",
            m.def->name(), "' and '", (*members)[r - 1].def->name(), "' both ask for '",
            m.def->device(), "'"));
      }
      auto type = m.def->attr().find("T");
      if (type == m.def->attr().end()) {
        return absl::InvalidArgumentError(absl::StrCat(Label(m), ": no attr 'T'"));
      }
      if (r > 0 && type->second.type() != t) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": members of the instance have different types (",
            DataTypeString(t), " and ", DataTypeString(type->second.type()), " at '",
            m.def->name(), "')"));
      }
      t = type->second.type();
      if (m.info->kind == Kind::kSend) ++senders;
      if (kind == Kind::kReduce && (Attr(m, "merge_op") != Attr(first, "merge_op") ||
                                    Attr(m, "final_op") != Attr(first, "final_op"))) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": members of the instance merge differently ('", m.def->name(), "' has ",
            Attr(m, "merge_op"), "/", Attr(m, "final_op"), ", '", first.def->name(), "' ",
            Attr(first, "merge_op"), "/", Attr(first, "final_op"), ")"));
      }
    }
    scope_ = absl::StrCat("graphrun_collective/g", first.group_key, "_i", first.instance_key, "/");
    const std::string& device0 = (*members)[0].def->device();
    std::vector<std::string> inputs;
    if (kind != Kind::kSend) {
      for (size_t r = 0; r < members->size(); ++r) {
        inputs.push_back(Contribution((*members)[r], static_cast<int>(r)));
      }
    }
    std::string result;
    if (kind == Kind::kReduce) {
      GR_ASSIGN_OR_RETURN(result, Reduce(first, inputs, t, device0));
    } else if (kind == Kind::kGather) {
      NodeDef* axis = Add("axis", "Const", device0);
      SetType(axis, "dtype", DT_INT32);
      TensorProto* v = (*axis->mutable_attr())["value"].mutable_tensor();
      v->set_dtype(DT_INT32);
      v->add_int_val(0);
      NodeDef* concat = Add("concat", "ConcatV2", device0);
      for (const std::string& in : inputs) concat->add_input(in);
      concat->add_input(axis->name());
      SetType(concat, "T", t);
      SetType(concat, "Tidx", DT_INT32);
      (*concat->mutable_attr())["N"].set_i(static_cast<int64_t>(inputs.size()));
      result = concat->name();
    } else {
      if (senders != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": a broadcast needs exactly one sender, the instance has ", senders, " (",
            absl::StrJoin(names, ", "), ")"));
      }
      for (size_t r = 0; r < members->size(); ++r) {
        if ((*members)[r].info->kind == Kind::kSend) {
          result = Contribution((*members)[r], static_cast<int>(r));
        }
      }
      for (size_t r = 0; r < members->size(); ++r) {
        Member& m = (*members)[r];
        if (m.info->kind == Kind::kSend) continue;
        GR_RETURN_IF_ERROR(LowerReceiver(&m, r, result, t));
      }
    }
    for (Member& m : *members) {
      if (m.info->kind != Kind::kRecv) Replace(&m, "Identity", {result}, t);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Reduce(const Member& first, const std::vector<std::string>& inputs,
                                     DataType t, const std::string& device) {
    const std::string merge = Attr(first, "merge_op"), final_op = Attr(first, "final_op");
    std::string result;
    if (merge == "Add") {
      NodeDef* sum = Add("merge", "AddN", device);
      for (const std::string& in : inputs) sum->add_input(in);
      SetType(sum, "T", t);
      (*sum->mutable_attr())["N"].set_i(static_cast<int64_t>(inputs.size()));
      result = sum->name();
    } else if (merge == "Mul" || merge == "Min" || merge == "Max") {
      const char* op = merge == "Mul" ? "Mul" : merge == "Min" ? "Minimum" : "Maximum";
      result = inputs[0];
      for (size_t r = 1; r < inputs.size(); ++r) {
        NodeDef* step = Add(absl::StrCat("merge_", r), op, device);
        step->add_input(result);
        step->add_input(inputs[r]);
        SetType(step, "T", t);
        result = step->name();
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(first), ": merge_op '", merge, "' is none of Add, Mul, Min, Max"));
    }
    if (final_op == "Div") {
      NodeDef* size = Add("group_size", "Const", device);
      SetType(size, "dtype", DT_INT32);
      TensorProto* v = (*size->mutable_attr())["value"].mutable_tensor();
      v->set_dtype(DT_INT32);
      v->add_int_val(static_cast<int32_t>(first.group_size));
      NodeDef* cast = Add("group_size_cast", "Cast", device);
      cast->add_input(size->name());
      SetType(cast, "SrcT", DT_INT32);
      SetType(cast, "DstT", t);
      NodeDef* div = Add("final", "Div", device);
      div->add_input(result);
      div->add_input(cast->name());
      SetType(div, "T", t);
      result = div->name();
    } else if (final_op != "Id") {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(first), ": final_op '", final_op, "' is neither Id nor Div"));
    }
    return result;
  }

  // A receiver: the sender's tensor in the receiver's shape.
  absl::Status LowerReceiver(Member* m, size_t rank, const std::string& sent, DataType t) {
    std::string shape;
    DataType tshape = DT_INT32;
    if (m->info->v2) {
      shape = m->def->input(3);
      if (auto it = m->def->attr().find("Tshape"); it != m->def->attr().end()) {
        tshape = it->second.type();
      }
    } else {
      auto it = m->def->attr().find("shape");
      if (it == m->def->attr().end()) {
        return absl::InvalidArgumentError(absl::StrCat(Label(*m), ": no attr 'shape'"));
      }
      NodeDef* c = Add(absl::StrCat("shape_", rank), "Const", m->def->device());
      SetType(c, "dtype", DT_INT64);
      TensorProto* v = (*c->mutable_attr())["value"].mutable_tensor();
      v->set_dtype(DT_INT64);
      v->mutable_tensor_shape()->add_dim()->set_size(it->second.shape().dim_size());
      for (const auto& d : it->second.shape().dim()) v->add_int64_val(d.size());
      shape = c->name();
      tshape = DT_INT64;
    }
    Replace(m, "Reshape", {sent, shape}, t);
    SetType(m->def, "Tshape", tshape);
    return absl::OkStatus();
  }

  GraphDef* g_;
  absl::flat_hash_map<std::string, NodeDef*> by_name_;
  std::deque<NodeDef> added_;  // stable addresses as nodes are added
  std::string scope_;
};

}  // namespace

bool IsCollectiveOp(absl::string_view op) { return Info(op) != nullptr; }

bool HasCollectiveOps(const GraphDef& graph_def) {
  for (const NodeDef& n : graph_def.node()) {
    if (IsCollectiveOp(n.op())) return true;
  }
  return false;
}

namespace {

// (job, replica, task, type, id) of a device name; false when a part does
// not parse.
struct RankKey {
  std::string job, type;
  int64_t replica = -1, task = -1, id = -1;
  bool operator<(const RankKey& o) const {
    return std::tie(job, replica, task, type, id) <
           std::tie(o.job, o.replica, o.task, o.type, o.id);
  }
};

bool ParseRankKey(absl::string_view name, RankKey* key) {
  for (absl::string_view part : absl::StrSplit(name, '/', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(part, ':');
    if (f.size() == 2 && f[0] == "job") {
      key->job = std::string(f[1]);
    } else if (f.size() == 2 && f[0] == "replica") {
      if (!absl::SimpleAtoi(f[1], &key->replica)) return false;
    } else if (f.size() == 2 && f[0] == "task") {
      if (!absl::SimpleAtoi(f[1], &key->task)) return false;
    } else if (f.size() == 3 && f[0] == "device") {
      key->type = std::string(f[1]);
      if (!absl::SimpleAtoi(f[2], &key->id)) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool CollectiveRankBefore(absl::string_view a, absl::string_view b) {
  RankKey ka, kb;
  if (ParseRankKey(a, &ka) && ParseRankKey(b, &kb)) {
    if (ka < kb) return true;
    if (kb < ka) return false;
  }
  return a < b;
}

absl::StatusOr<GraphDef> LowerCollectiveOps(const GraphDef& graph_def) {
  GraphDef out = graph_def;
  Lowerer lowerer(&out);
  GR_RETURN_IF_ERROR(lowerer.Run());
  return out;
}

}  // namespace graphrun
