#include "graph/graph.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/control_flow.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

bool IsListType(absl::string_view type) {
  return type.size() > 5 && type.substr(0, 5) == "list(";
}

absl::Status CheckAttrValue(const AttrDef& def, const AttrValue& v) {
  const std::string have = AttrValueTypeName(v);
  const bool want_list = IsListType(def.type);
  if (want_list) {
    if (v.value_case() != AttrValue::kList ||
        (have != "list" && have != def.type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", def.name, "' must be ", def.type, " but is ",
                       have.empty() ? "empty" : have));
    }
  } else if (have != def.type) {
    return absl::InvalidArgumentError(
        absl::StrCat("attr '", def.name, "' must be ", def.type, " but is ",
                     have.empty() ? "empty" : have));
  }
  auto type_allowed = [&](int t) {
    return def.allowed_types.empty() ||
           std::find(def.allowed_types.begin(), def.allowed_types.end(),
                     static_cast<DataType>(t)) != def.allowed_types.end();
  };
  auto allowed_names = [&] {
    std::vector<std::string> n;
    for (DataType t : def.allowed_types) n.push_back(DataTypeString(t));
    return absl::StrJoin(n, ", ");
  };
  if (def.type == "type" && !IsValidDataType(v.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("attr '", def.name, "' has invalid type value ", v.type()));
  }
  if (def.type == "type" && !type_allowed(v.type())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attr '", def.name, "' is ", DataTypeString(v.type()),
        ", which is not in the allowed types {", allowed_names(), "}"));
  }
  if (def.type == "type" && !IsValidDataType(v.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("attr '", def.name, "' has invalid type value ", v.type()));
  }
  if (def.type == "list(type)") {
    for (int t : v.list().type()) {
      if (!IsValidDataType(t)) {
        return absl::InvalidArgumentError(
            absl::StrCat("attr '", def.name, "' has invalid type value ", t));
      }
      if (!type_allowed(t)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attr '", def.name, "' has ", DataTypeString(static_cast<DataType>(t)),
            ", which is not in the allowed types {", allowed_names(), "}"));
      }
    }
  }
  if (!def.allowed_strings.empty()) {
    std::vector<std::string> values;
    if (def.type == "string") values.push_back(v.s());
    for (const auto& s : v.list().s()) values.push_back(s);
    for (const auto& s : values) {
      if (std::find(def.allowed_strings.begin(), def.allowed_strings.end(), s) ==
          def.allowed_strings.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attr '", def.name, "' is \"", s, "\", which is not one of {",
            absl::StrJoin(def.allowed_strings, ", "), "}"));
      }
    }
  }
  if (def.minimum.has_value()) {
    if (def.type == "int" && v.i() < *def.minimum) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attr '", def.name, "' is ", v.i(), ", below its minimum ", *def.minimum));
    }
    if (want_list) {
      const auto& l = v.list();
      const int64_t n = l.s_size() + l.i_size() + l.f_size() + l.b_size() +
                        l.type_size() + l.shape_size() + l.tensor_size() +
                        l.func_size();
      if (n < *def.minimum) {
        return absl::InvalidArgumentError(
            absl::StrCat("attr '", def.name, "' has ", n,
                         " values, fewer than its minimum ", *def.minimum));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status AppendArgTypes(const ArgDef& arg, const AttrSlice& attrs,
                            std::vector<DataType>* out) {
  std::vector<DataType> types;
  if (!arg.type_list_attr.empty()) {
    GR_RETURN_IF_ERROR(WithContext(attrs.Get(arg.type_list_attr, &types),
                                   absl::StrCat("arg '", arg.name, "'")));
  } else {
    DataType t = arg.type;
    if (!arg.type_attr.empty()) {
      GR_RETURN_IF_ERROR(WithContext(attrs.Get(arg.type_attr, &t),
                                     absl::StrCat("arg '", arg.name, "'")));
    }
    int64_t n = 1;
    if (!arg.number_attr.empty()) {
      GR_RETURN_IF_ERROR(WithContext(attrs.Get(arg.number_attr, &n),
                                     absl::StrCat("arg '", arg.name, "'")));
      if (n < 0 || n > (1 << 20)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "attr '", arg.number_attr, "' = ", n, " is not a valid count"));
      }
    }
    types.assign(n, t);
  }
  for (DataType t : types) out->push_back(arg.is_ref ? MakeRefType(t) : t);
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAttrs(const OpDef& op_def, const AttrMap& attrs) {
  for (const AttrDef& def : op_def.attrs) {
    auto it = attrs.find(def.name);
    if (it == attrs.end()) {
      if (!def.default_value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("missing attr '", def.name, "' (", def.type,
                         ") required by op ", op_def.name));
      }
      continue;
    }
    GR_RETURN_IF_ERROR(CheckAttrValue(def, it->second));
  }
  return absl::OkStatus();
}

absl::Status ComputeArgTypes(const OpDef& op_def, const AttrSlice& attrs,
                             std::vector<DataType>* input_types,
                             std::vector<DataType>* output_types) {
  input_types->clear();
  output_types->clear();
  for (const ArgDef& a : op_def.inputs) {
    GR_RETURN_IF_ERROR(AppendArgTypes(a, attrs, input_types));
  }
  for (const ArgDef& a : op_def.outputs) {
    GR_RETURN_IF_ERROR(AppendArgTypes(a, attrs, output_types));
  }
  return absl::OkStatus();
}

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input == i) return e;
  }
  return nullptr;
}

Graph::Graph() = default;

absl::StatusOr<Node*> Graph::AddNode(NodeDef def, const OpDef* op_def) {
  if (by_name_.contains(def.name())) {
    return absl::InvalidArgumentError(
        absl::StrCat("duplicate node name '", def.name(), "'"));
  }
  auto node = std::make_unique<Node>();
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = std::move(def);
  node->op_def_ = op_def;
  if (op_def != nullptr) {
    GR_RETURN_IF_ERROR(ValidateAttrs(*op_def, node->def_.attr()));
    GR_RETURN_IF_ERROR(ComputeArgTypes(*op_def, node->attrs(),
                                       &node->input_types_,
                                       &node->output_types_));
  }
  node->output_shapes_.assign(node->output_types_.size(), PartialShape());
  Node* raw = node.get();
  by_name_[raw->name()] = raw;
  nodes_.push_back(std::move(node));
  return raw;
}

absl::StatusOr<const Edge*> Graph::AddEdge(Node* src, int src_output,
                                           Node* dst, int dst_input) {
  if (src->op_def() != nullptr &&
      (src_output < 0 || src_output >= src->num_outputs())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", src->name(), "' (", src->op(), ") has ", src->num_outputs(),
        " outputs; there is no output ", src_output));
  }
  if (dst->op_def() != nullptr &&
      (dst_input < 0 || dst_input >= dst->num_inputs())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", dst->name(), "' (", dst->op(), ") has ", dst->num_inputs(),
        " inputs; there is no input ", dst_input));
  }
  if (src->op_def() != nullptr && dst->op_def() != nullptr) {
    const DataType have = src->output_type(src_output);
    const DataType want = dst->input_type(dst_input);
    // A ref output may feed a non-ref input of the same base type.
    const bool ok = have == want || (IsRefType(have) && !IsRefType(want) &&
                                     BaseType(have) == want);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", dst_input, " of node '", dst->name(), "' (", dst->op(),
          ") expects ", DataTypeString(want), " but '", src->name(), ":",
          src_output, "' (", src->op(), ") produces ", DataTypeString(have)));
    }
  }
  auto edge = std::make_unique<Edge>(Edge{src, src_output, dst, dst_input});
  const Edge* e = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  return e;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  auto edge = std::make_unique<Edge>(Edge{src, kControlSlot, dst, kControlSlot});
  const Edge* e = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  return e;
}

absl::Status Graph::UpdateEdge(Node* new_src, int new_src_output, Node* dst,
                               int dst_input) {
  auto edge_it = std::find_if(edges_.begin(), edges_.end(), [&](const auto& e) {
    return e->dst == dst && e->dst_input == dst_input && !e->IsControl();
  });
  if (edge_it == edges_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("node '", dst->name(), "' (", dst->op(),
                                                   ") has no edge into input ", dst_input));
  }
  Edge* old = edge_it->get();
  // Checks slots and types by adding the new edge, then drops the old one
  // (the new edge takes its place among dst's in-edges).
  auto added = AddEdge(new_src, new_src_output, dst, dst_input);
  if (!added.ok()) return added.status();
  dst->in_edges_.pop_back();
  *std::find(dst->in_edges_.begin(), dst->in_edges_.end(), old) = *added;
  std::vector<const Edge*>& outs = old->src->out_edges_;
  outs.erase(std::find(outs.begin(), outs.end(), old));
  edges_.erase(std::find_if(edges_.begin(), edges_.end(),
                            [old](const auto& e) { return e.get() == old; }));
  // The NodeDef's data inputs come first, in slot order.
  dst->def_.set_input(dst_input, new_src_output == 0
                                     ? new_src->name()
                                     : absl::StrCat(new_src->name(), ":", new_src_output));
  return absl::OkStatus();
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void Graph::set_output_shapes(Node* node, std::vector<PartialShape> shapes) {
  node->output_shapes_ = std::move(shapes);
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  const int n = num_nodes();
  std::vector<int> pending(n, 0);
  // A loop's back edges (out of NextIteration) do not order anything: the
  // value they carry belongs to the next iteration.
  for (const auto& node : nodes_) {
    for (const Edge* e : node->in_edges()) {
      if (!IsNextIteration(*e->src)) ++pending[node->id()];
    }
  }
  std::deque<Node*> ready;
  for (const auto& node : nodes_) {
    if (pending[node->id()] == 0) ready.push_back(node.get());
  }
  std::vector<Node*> order;
  order.reserve(n);
  while (!ready.empty()) {
    Node* node = ready.front();
    ready.pop_front();
    order.push_back(node);
    if (IsNextIteration(*node)) continue;
    for (const Edge* e : node->out_edges()) {
      if (--pending[e->dst->id()] == 0) ready.push_back(e->dst);
    }
  }
  if (static_cast<int>(order.size()) == n) return order;

  // Every remaining node has a pending input from another remaining node:
  // walk backwards along such inputs until a node repeats; that's a cycle.
  Node* start = nullptr;
  for (const auto& node : nodes_) {
    if (pending[node->id()] > 0) {
      start = node.get();
      break;
    }
  }
  std::vector<int> seen_at(n, -1);
  std::vector<Node*> path;
  Node* cur = start;
  while (seen_at[cur->id()] < 0) {
    seen_at[cur->id()] = static_cast<int>(path.size());
    path.push_back(cur);
    for (const Edge* e : cur->in_edges()) {
      if (pending[e->src->id()] > 0 && !IsNextIteration(*e->src)) {
        cur = e->src;
        break;
      }
    }
  }
  // path[seen_at[cur]..] walks the cycle backwards; print it forwards,
  // starting from its node that comes first in the graph.
  std::vector<Node*> cycle(path.begin() + seen_at[cur->id()], path.end());
  std::reverse(cycle.begin(), cycle.end());
  auto first = std::min_element(cycle.begin(), cycle.end(),
                                [](Node* a, Node* b) { return a->id() < b->id(); });
  std::rotate(cycle.begin(), first, cycle.end());
  std::vector<std::string> names;
  for (Node* node : cycle) names.push_back(node->name());
  names.push_back(names.front());
  return absl::InvalidArgumentError(absl::StrCat(
      "graph has a cycle: ", absl::StrJoin(names, " -> "), " (",
      n - static_cast<int>(order.size()), " nodes cannot run)"));
}

GraphDef Graph::ToGraphDef() const {
  GraphDef out = meta_;
  out.mutable_node()->Reserve(num_nodes());
  for (const auto& node : nodes_) *out.add_node() = node->def();
  return out;
}

}  // namespace graphrun
