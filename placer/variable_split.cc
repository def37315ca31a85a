#include "placer/variable_split.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/types.h"

namespace graphrun {
namespace placer {
namespace {

struct InputRef {
  std::string node;
  int index = 0;
  bool control = false;
};

InputRef ParseInput(const std::string& in) {
  InputRef r;
  if (!in.empty() && in[0] == '^') {
    r.control = true;
    r.node = in.substr(1);
    return r;
  }
  const size_t colon = in.rfind(':');
  int index = 0;
  if (colon != std::string::npos && absl::SimpleAtoi(in.substr(colon + 1), &index)) {
    r.node = in.substr(0, colon);
    r.index = index;
  } else {
    r.node = in;
  }
  return r;
}

// A dense update (ResourceApply*, or Apply* of ref variables): where the
// variable and its slots are, and its gradient.
struct ApplyArgs {
  std::vector<int> state;
  int grad = -1;
};

std::optional<ApplyArgs> DenseApplyArgs(const std::string& op) {
  if (!absl::StartsWith(op, "ResourceApply") && !absl::StartsWith(op, "Apply")) {
    return std::nullopt;
  }
  absl::StatusOr<const OpDef*> def = OpRegistry::Global()->LookUp(op);
  if (!def.ok()) return std::nullopt;
  ApplyArgs a;
  int pos = 0;
  for (const ArgDef& arg : (*def)->inputs) {
    if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) return std::nullopt;
    if (arg.type == DT_RESOURCE || arg.is_ref) {
      a.state.push_back(pos);
    } else if (arg.name == "grad" || arg.name == "delta") {
      a.grad = pos;
    }
    ++pos;
  }
  if (a.grad < 0 || a.state.empty()) return std::nullopt;
  return a;
}

// Whether input `j` of `op` takes a ref (false where the op is unknown or
// a list comes first: lists never do).
bool InputIsRef(const std::string& op, int j) {
  absl::StatusOr<const OpDef*> def = OpRegistry::Global()->LookUp(op);
  if (!def.ok()) return false;
  int pos = 0;
  for (const ArgDef& arg : (*def)->inputs) {
    if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) return false;
    if (pos++ == j) return arg.is_ref;
  }
  return false;
}

// Assigns to a resource variable, or to a ref variable.
bool IsAssign(const std::string& op, bool ref) {
  if (ref) return op == "Assign" || op == "AssignAdd" || op == "AssignSub";
  return op == "AssignVariableOp" || op == "AssignAddVariableOp" || op == "AssignSubVariableOp";
}

bool IsInitializedCheck(const std::string& op, bool ref) {
  return op == (ref ? "IsVariableInitialized" : "VarIsInitializedOp");
}

std::string PartName(const std::string& variable, int k) {
  return absl::StrCat(variable, "/part_", k);
}

class Splitter {
 public:
  Splitter(const absl::flat_hash_set<std::string>& split, DataType dtype, std::vector<int64_t> rows)
      : split_(split), dtype_(dtype), rows_(std::move(rows)) {}

  int parts() const { return static_cast<int>(rows_.size()); }

  // Control inputs on a split variable wait for every part; `part` >= 0
  // maps colocations to that part, else to part 0.
  void CopyInputsAndClass(const NodeDef& from, NodeDef* to, int part) const {
    to->clear_input();
    for (const std::string& in : from.input()) {
      const InputRef r = ParseInput(in);
      if (r.control && split_.contains(r.node)) {
        for (int k = 0; k < parts(); ++k) to->add_input(absl::StrCat("^", PartName(r.node, k)));
      } else {
        to->add_input(in);
      }
    }
    RemapClass(to, part);
  }

  void RemapClass(NodeDef* n, int part) const {
    auto it = n->mutable_attr()->find("_class");
    if (it == n->mutable_attr()->end()) return;
    for (std::string& s : *it->second.mutable_list()->mutable_s()) {
      if (absl::StartsWith(s, "loc:@") && split_.contains(s.substr(5))) {
        s = absl::StrCat("loc:@", PartName(s.substr(5), part < 0 ? 0 : part));
      }
    }
  }

  NodeDef* AddConst(GraphDef* out, const std::string& name, const std::vector<int64_t>& values,
                    bool scalar) const {
    NodeDef* c = out->add_node();
    c->set_name(name);
    c->set_op("Const");
    (*c->mutable_attr())["dtype"].set_type(DT_INT32);
    TensorProto* t = (*c->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(DT_INT32);
    if (!scalar) t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int_val(static_cast<int32_t>(v));
    return c;
  }

  // NAME/split: `value` cut into the parts' rows.
  std::string AddSplit(GraphDef* out, const std::string& base, const std::string& value) const {
    AddConst(out, base + "/rows", rows_, false);
    AddConst(out, base + "/axis", {0}, true);
    NodeDef* s = out->add_node();
    s->set_name(base + "/split");
    s->set_op("SplitV");
    s->add_input(value);
    s->add_input(base + "/rows");
    s->add_input(base + "/axis");
    (*s->mutable_attr())["num_split"].set_i(parts());
    (*s->mutable_attr())["T"].set_type(dtype_);
    (*s->mutable_attr())["Tlen"].set_type(DT_INT32);
    return s->name();
  }

  // `n` becomes a NoOp waiting for its parts (n/part_K).
  void BecomeNoOp(NodeDef* n) const {
    const std::string name = n->name();
    n->Clear();
    n->set_name(name);
    n->set_op("NoOp");
    for (int k = 0; k < parts(); ++k) n->add_input(absl::StrCat("^", PartName(name, k)));
  }

  void EmitVariable(const NodeDef& v, GraphDef* out) const {
    for (int k = 0; k < parts(); ++k) {
      NodeDef* p = out->add_node();
      *p = v;
      p->set_name(PartName(v.name(), k));
      auto* attrs = p->mutable_attr();
      (*attrs)["shape"].mutable_shape()->mutable_dim(0)->set_size(rows_[k]);
      auto shared = attrs->find("shared_name");
      if (shared != attrs->end() && !shared->second.s().empty()) {
        shared->second.set_s(PartName(shared->second.s(), k));
      }
      (*attrs)[kPartOfAttr].set_s(v.name());
      CopyInputsAndClass(v, p, k);
    }
  }

  void EmitRead(const NodeDef& r, GraphDef* out) const {
    for (int k = 0; k < parts(); ++k) {
      NodeDef* p = out->add_node();
      *p = r;
      p->set_name(PartName(r.name(), k));
      CopyInputsAndClass(r, p, k);
      p->set_input(0, PartName(ParseInput(r.input(0)).node, k));
    }
    AddConst(out, r.name() + "/axis", {0}, true);
    NodeDef* c = out->add_node();
    c->set_name(r.name());
    c->set_op("ConcatV2");
    for (int k = 0; k < parts(); ++k) c->add_input(PartName(r.name(), k));
    c->add_input(r.name() + "/axis");
    (*c->mutable_attr())["N"].set_i(parts());
    (*c->mutable_attr())["T"].set_type(dtype_);
    (*c->mutable_attr())["Tidx"].set_type(DT_INT32);
  }

  // A ConcatV2 of the parts of the ref variable `variable` for `reader`'s
  // input `j` (waiting as the reader does); returns its name.
  std::string AddValue(GraphDef* out, const NodeDef& reader, int j,
                       const std::string& variable) const {
    const std::string base = absl::StrCat(reader.name(), "/graphrun_value_", j);
    AddConst(out, base + "/axis", {0}, true);
    NodeDef* c = out->add_node();
    c->set_name(base);
    c->set_op("ConcatV2");
    for (int k = 0; k < parts(); ++k) c->add_input(PartName(variable, k));
    c->add_input(base + "/axis");
    for (const std::string& in : reader.input()) {
      const InputRef r = ParseInput(in);
      if (!r.control) continue;
      if (split_.contains(r.node)) {
        for (int k = 0; k < parts(); ++k) c->add_input(absl::StrCat("^", PartName(r.node, k)));
      } else {
        c->add_input(in);
      }
    }
    (*c->mutable_attr())["N"].set_i(parts());
    (*c->mutable_attr())["T"].set_type(dtype_);
    (*c->mutable_attr())["Tidx"].set_type(DT_INT32);
    return base;
  }

  // An assign (value_input 1) or an update (its gradient at value_input,
  // its split variables at `resources`).
  void EmitPerPart(const NodeDef& n, int value_input, const std::vector<int>& resources,
                   GraphDef* out) const {
    const std::string split = AddSplit(out, n.name(), n.input(value_input));
    for (int k = 0; k < parts(); ++k) {
      NodeDef* p = out->add_node();
      *p = n;
      p->set_name(PartName(n.name(), k));
      CopyInputsAndClass(n, p, k);
      for (int i : resources) p->set_input(i, PartName(ParseInput(n.input(i)).node, k));
      p->set_input(value_input, absl::StrCat(split, ":", k));
    }
    NodeDef* noop = out->add_node();
    noop->set_name(n.name());
    BecomeNoOp(noop);
  }

 private:
  const absl::flat_hash_set<std::string>& split_;
  DataType dtype_;
  std::vector<int64_t> rows_;
};

}  // namespace

absl::StatusOr<SplitResult> SplitVariables(GraphDef* graph,
                                           const std::vector<std::string>& variables,
                                           int parts) {
  if (parts < 2) {
    return absl::InvalidArgumentError(absl::StrCat("splitting a variable into ", parts,
                                                   " parts: at least 2"));
  }
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < graph->node_size(); ++i) index[graph->node(i).name()] = i;
  absl::flat_hash_set<std::string> split;
  SplitResult result;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> dims;
  bool ref = false;  // VariableV2 rather than VarHandleOp
  for (const std::string& name : variables) {
    auto it = index.find(name);
    if (it == index.end() || (graph->node(it->second).op() != "VarHandleOp" &&
                              graph->node(it->second).op() != "VariableV2")) {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a variable"));
    }
    const NodeDef& v = graph->node(it->second);
    if (split.empty()) {
      ref = v.op() == "VariableV2";
    } else if ((v.op() == "VariableV2") != ref) {
      result.why_not = absl::StrCat(name, " is not the same kind of variable as ", variables.front());
      return result;
    }
    auto t = v.attr().find("dtype");
    auto s = v.attr().find("shape");
    std::vector<int64_t> d;
    if (s != v.attr().end() && !s->second.shape().unknown_rank()) {
      for (const auto& dim : s->second.shape().dim()) d.push_back(dim.size());
    }
    bool known = !d.empty();
    for (int64_t x : d) known = known && x >= 0;
    if (t == v.attr().end() || !known) {
      result.why_not = absl::StrCat(name, " has no fully known shape of rank 1 or more");
      return result;
    }
    if (dtype == DT_INVALID) {
      dtype = t->second.type();
      dims = d;
    } else if (t->second.type() != dtype || d != dims) {
      result.why_not = absl::StrCat(name, " differs in dtype or shape from ", variables.front());
      return result;
    }
    for (int k = 0; k < parts; ++k) {
      if (index.contains(PartName(name, k))) {
        result.why_not = absl::StrCat("the graph has a node named ", PartName(name, k));
        return result;
      }
    }
    split.insert(name);
  }
  if (dims.empty() || dims[0] < parts) {
    result.why_not = absl::StrCat("its first dimension has fewer than ", parts, " rows");
    return result;
  }

  // Every use must be one the parts can stand in for. A ref variable's
  // assigns and updates pass its ref on: nothing may read that.
  absl::flat_hash_set<std::string> read;  // nodes whose outputs feed another
  for (const NodeDef& n : graph->node()) {
    for (const std::string& in : n.input()) {
      const InputRef r = ParseInput(in);
      if (!r.control) read.insert(r.node);
    }
  }
  for (const NodeDef& n : graph->node()) {
    if (split.contains(n.name())) continue;
    const std::optional<ApplyArgs> apply = DenseApplyArgs(n.op());
    for (int j = 0; j < n.input_size(); ++j) {
      const InputRef r = ParseInput(n.input(j));
      if (r.control || !split.contains(r.node)) continue;
      bool ok = false;
      if (apply.has_value()) {
        ok = !(ref && read.contains(n.name()));
        for (int p : apply->state) {
          ok = ok && p < n.input_size() && split.contains(ParseInput(n.input(p)).node);
        }
      } else if (j == 0 && IsAssign(n.op(), ref)) {
        ok = !(ref && read.contains(n.name()));
      } else if (j == 0 && IsInitializedCheck(n.op(), ref)) {
        ok = true;
      } else if (ref) {
        ok = !InputIsRef(n.op(), j);  // a read of its value
      } else {
        ok = j == 0 && n.op() == "ReadVariableOp";
      }
      if (!ok) {
        result.why_not =
            ref && read.contains(n.name()) && (apply.has_value() || IsAssign(n.op(), ref))
                ? absl::StrCat(n.name(), " (", n.op(), ") passes the ref of ", r.node,
                               " on to another node")
                : absl::StrCat(n.name(), " (", n.op(), ") uses ", r.node, " as its input ", j);
        return result;
      }
    }
  }

  for (int k = 0; k < parts; ++k) {
    result.rows.push_back(dims[0] / parts + (k < dims[0] % parts ? 1 : 0));
  }
  Splitter s(split, dtype, result.rows);
  GraphDef out;
  *out.mutable_versions() = graph->versions();
  *out.mutable_library() = graph->library();
  for (const NodeDef& n : graph->node()) {
    if (split.contains(n.name())) {
      s.EmitVariable(n, &out);
      continue;
    }
    const bool uses = n.input_size() > 0 && !ParseInput(n.input(0)).control &&
                      split.contains(ParseInput(n.input(0)).node);
    const std::optional<ApplyArgs> apply = DenseApplyArgs(n.op());
    if (uses && n.op() == (ref ? "Identity" : "ReadVariableOp")) {
      s.EmitRead(n, &out);
    } else if (uses && IsAssign(n.op(), ref)) {
      s.EmitPerPart(n, 1, {0}, &out);
    } else if (apply.has_value() && uses) {
      s.EmitPerPart(n, apply->grad, apply->state, &out);
    } else {
      // Values of a ref variable read here come from a concatenation.
      std::vector<std::pair<int, std::string>> values;
      for (int j = 0; j < n.input_size(); ++j) {
        const InputRef r = ParseInput(n.input(j));
        if (r.control || !split.contains(r.node)) continue;
        if (j == 0 && IsInitializedCheck(n.op(), ref)) {
          values.emplace_back(j, PartName(r.node, 0));
        } else {
          values.emplace_back(j, s.AddValue(&out, n, j, r.node));
        }
      }
      NodeDef* copy = out.add_node();
      *copy = n;
      s.CopyInputsAndClass(n, copy, -1);
      for (const auto& [j, name] : values) copy->set_input(j, name);
    }
  }
  *graph = std::move(out);
  result.split = true;
  return result;
}

}  // namespace placer
}  // namespace graphrun
