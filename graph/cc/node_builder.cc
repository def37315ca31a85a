#include "graph/cc/node_builder.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/import.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace cc {
namespace {

template <typename T, typename Add>
AttrValue ListAttr(absl::Span<const T> values, Add add) {
  AttrValue out;
  AttrValue::ListValue* list = out.mutable_list();  // set even when empty
  for (const T& v : values) add(list, v);
  return out;
}

bool InGraph(const Graph& graph, const Node* node) {
  return node->id() >= 0 && node->id() < graph.num_nodes() &&
         graph.node(node->id()) == node;
}

// A data edge from `have` may feed an input of type `want`: equal, or a
// ref output into a non-ref input of its base type (as Graph::AddEdge).
bool CanFeed(DataType have, DataType want) {
  return have == want ||
         (IsRefType(have) && !IsRefType(want) && BaseType(have) == want);
}

}  // namespace

AttrValue MakeAttrValue(int64_t v) {
  AttrValue out;
  out.set_i(v);
  return out;
}
AttrValue MakeAttrValue(float v) {
  AttrValue out;
  out.set_f(v);
  return out;
}
AttrValue MakeAttrValue(bool v) {
  AttrValue out;
  out.set_b(v);
  return out;
}
AttrValue MakeAttrValue(absl::string_view v) {
  AttrValue out;
  out.set_s(std::string(v));
  return out;
}
AttrValue MakeAttrValue(DataType v) {
  AttrValue out;
  out.set_type(v);
  return out;
}
AttrValue MakeAttrValue(const PartialShape& v) {
  AttrValue out;
  *out.mutable_shape() = v.AsProto();
  return out;
}
AttrValue MakeAttrValue(const TensorShape& v) {
  AttrValue out;
  v.AsProto(out.mutable_shape());
  return out;
}
AttrValue MakeAttrValue(const Tensor& v) {
  AttrValue out;
  if (v.NumElements() > 1) {
    v.AsProtoTensorContent(out.mutable_tensor());
  } else {
    v.AsProtoField(out.mutable_tensor());
  }
  return out;
}
AttrValue MakeAttrValue(absl::Span<const int64_t> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, int64_t x) { l->add_i(x); });
}
AttrValue MakeAttrValue(absl::Span<const int32_t> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, int32_t x) { l->add_i(x); });
}
AttrValue MakeAttrValue(absl::Span<const float> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, float x) { l->add_f(x); });
}
AttrValue MakeAttrValue(const std::vector<bool>& v) {
  AttrValue out;
  AttrValue::ListValue* list = out.mutable_list();
  for (bool b : v) list->add_b(b);
  return out;
}
AttrValue MakeAttrValue(absl::Span<const DataType> v) {
  return ListAttr(v,
                  [](AttrValue::ListValue* l, DataType x) { l->add_type(x); });
}
AttrValue MakeAttrValue(absl::Span<const std::string> v) {
  return ListAttr(
      v, [](AttrValue::ListValue* l, const std::string& x) { l->add_s(x); });
}
AttrValue MakeAttrValue(absl::Span<const PartialShape> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, const PartialShape& x) {
    *l->add_shape() = x.AsProto();
  });
}
AttrValue MakeAttrValue(absl::Span<const TensorShape> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, const TensorShape& x) {
    x.AsProto(l->add_shape());
  });
}
AttrValue MakeAttrValue(absl::Span<const Tensor> v) {
  return ListAttr(v, [](AttrValue::ListValue* l, const Tensor& x) {
    *l->add_tensor() = MakeAttrValue(x).tensor();
  });
}

NodeBuilder::NodeBuilder(absl::string_view name, absl::string_view op_name,
                         const OpRegistry* registry)
    : name_(name), op_name_(op_name), registry_(registry) {}

NodeBuilder& NodeBuilder::Input(Output input) {
  inputs_.push_back(InputArg{{input}, /*is_list=*/false});
  return *this;
}
NodeBuilder& NodeBuilder::Input(absl::Span<const Output> inputs) {
  inputs_.push_back(
      InputArg{std::vector<Output>(inputs.begin(), inputs.end()), true});
  return *this;
}
NodeBuilder& NodeBuilder::ControlInput(Operation op) {
  control_inputs_.push_back(op);
  return *this;
}
NodeBuilder& NodeBuilder::ControlInputs(absl::Span<const Operation> ops) {
  control_inputs_.insert(control_inputs_.end(), ops.begin(), ops.end());
  return *this;
}
NodeBuilder& NodeBuilder::Device(absl::string_view device) {
  device_ = std::string(device);
  return *this;
}

NodeBuilder& NodeBuilder::Attr(absl::string_view name, AttrValue value) {
  attrs_[std::string(name)] = std::move(value);
  return *this;
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, int64_t v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, int v) {
  return Attr(name, MakeAttrValue(int64_t{v}));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, float v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, double v) {
  return Attr(name, MakeAttrValue(static_cast<float>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, bool v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, absl::string_view v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, const char* v) {
  return Attr(name, MakeAttrValue(absl::string_view(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, DataType v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, const PartialShape& v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, const TensorShape& v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name, const Tensor& v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<int64_t>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const int64_t>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<int>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const int32_t>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<float>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const float>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<bool>& v) {
  return Attr(name, MakeAttrValue(v));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<DataType>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const DataType>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<std::string>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const std::string>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<PartialShape>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const PartialShape>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<TensorShape>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const TensorShape>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               const std::vector<Tensor>& v) {
  return Attr(name, MakeAttrValue(absl::Span<const Tensor>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               std::initializer_list<int> v) {
  return Attr(name, MakeAttrValue(absl::Span<const int32_t>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               std::initializer_list<int64_t> v) {
  return Attr(name, MakeAttrValue(absl::Span<const int64_t>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               std::initializer_list<float> v) {
  return Attr(name, MakeAttrValue(absl::Span<const float>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               std::initializer_list<DataType> v) {
  return Attr(name, MakeAttrValue(absl::Span<const DataType>(v)));
}
NodeBuilder& NodeBuilder::Attr(absl::string_view name,
                               std::initializer_list<const char*> v) {
  return Attr(name, std::vector<std::string>(v.begin(), v.end()));
}

absl::Status NodeBuilder::Error(absl::StatusCode code,
                                absl::string_view message) const {
  return absl::Status(code,
                      absl::StrCat(op_name_, " '", name_, "': ", message));
}

absl::StatusOr<NodeDef> NodeBuilder::BuildNodeDef(const Graph& graph,
                                                  const OpDef& op_def) const {
  const auto invalid = absl::StatusCode::kInvalidArgument;
  if (!IsValidNodeName(name_)) {
    return Error(invalid,
                 "invalid node name: names match "
                 "[A-Za-z0-9.][A-Za-z0-9_.\\-/>]*");
  }
  if (graph.FindNode(name_) != nullptr) {
    return Error(invalid, "the graph already has a node with this name");
  }
  if (inputs_.size() != op_def.inputs.size()) {
    std::vector<std::string> names;
    for (const ArgDef& a : op_def.inputs) names.push_back(a.name);
    return Error(invalid,
                 absl::StrCat("the op takes ", op_def.inputs.size(),
                              " inputs (", absl::StrJoin(names, ", "), ") but ",
                              inputs_.size(), " were given"));
  }
  for (const auto& [attr_name, value] : attrs_) {
    if (op_def.FindAttr(attr_name) == nullptr && attr_name[0] != '_') {
      std::vector<std::string> names;
      for (const AttrDef& a : op_def.attrs) names.push_back(a.name);
      return Error(invalid, absl::StrCat("the op has no attr '", attr_name,
                                         "' (its attrs: ",
                                         absl::StrJoin(names, ", "), ")"));
    }
  }

  NodeDef def;
  def.set_name(name_);
  def.set_op(op_name_);
  def.set_device(device_);
  for (const auto& [attr_name, value] : attrs_) {
    (*def.mutable_attr())[attr_name] = value;
  }

  // Check the inputs and infer the attrs they determine. `inferred_from`
  // names the input that fixed each inferred type attr.
  std::map<std::string, std::string> inferred_from;
  auto set_attr = [&](const std::string& attr, AttrValue v) {
    (*def.mutable_attr())[attr] = std::move(v);
  };
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const ArgDef& arg = op_def.inputs[i];
    const InputArg& in = inputs_[i];
    const bool arg_is_list =
        !arg.number_attr.empty() || !arg.type_list_attr.empty();
    if (in.is_list && !arg_is_list) {
      return Error(invalid, absl::StrCat("input '", arg.name,
                                         "' takes one tensor, not a list of ",
                                         in.outputs.size()));
    }
    std::vector<DataType> types;
    for (size_t k = 0; k < in.outputs.size(); ++k) {
      const Output& o = in.outputs[k];
      const std::string what =
          arg_is_list ? absl::StrCat(arg.name, "[", k, "]") : arg.name;
      if (o.empty()) {
        return Error(invalid,
                     absl::StrCat("input '", what,
                                  "' is empty (the builder that made it "
                                  "failed; see the scope's status)"));
      }
      if (!InGraph(graph, o.node())) {
        return Error(invalid, absl::StrCat("input '", what, "' ('", o.name(),
                                           "') belongs to another graph"));
      }
      if (o.index() < 0 || o.index() >= o.node()->num_outputs()) {
        return Error(
            invalid,
            absl::StrCat("input '", what, "' refers to output ", o.index(),
                         " of ", NodeLabel(*o.node()), ", which has ",
                         o.node()->num_outputs(), " outputs"));
      }
      const DataType t = o.dtype();
      if (arg.is_ref && !IsRefType(t)) {
        return Error(invalid, absl::StrCat("input '", what,
                                           "' must be a reference tensor, "
                                           "got ",
                                           DataTypeString(t)));
      }
      types.push_back(BaseType(t));
    }
    if (!arg.number_attr.empty()) {
      const int64_t n = static_cast<int64_t>(types.size());
      if (const auto it = attrs_.find(arg.number_attr); it != attrs_.end()) {
        if (it->second.value_case() == AttrValue::kI && it->second.i() != n) {
          return Error(
              invalid,
              absl::StrCat("attr '", arg.number_attr, "' is ", it->second.i(),
                           " but input '", arg.name, "' has ", n, " tensors"));
        }
      } else {
        set_attr(arg.number_attr, MakeAttrValue(n));
      }
    }
    if (!arg.type_list_attr.empty()) {
      if (attrs_.find(arg.type_list_attr) == attrs_.end()) {
        set_attr(arg.type_list_attr,
                 MakeAttrValue(absl::Span<const DataType>(types)));
      }
    } else if (!arg.type_attr.empty()) {
      const std::string& attr = arg.type_attr;
      for (size_t k = 0; k < types.size(); ++k) {
        const std::string what =
            arg_is_list ? absl::StrCat(arg.name, "[", k, "]") : arg.name;
        if (const auto it = attrs_.find(attr); it != attrs_.end()) {
          if (it->second.value_case() == AttrValue::kType &&
              it->second.type() != types[k]) {
            return Error(
                invalid,
                absl::StrCat("input '", what, "' must have type ", attr, " = ",
                             DataTypeString(it->second.type()),
                             " (set as an attr), got ",
                             DataTypeString(types[k])));
          }
        } else if (const auto from = inferred_from.find(attr);
                   from != inferred_from.end()) {
          const DataType have = def.attr().at(attr).type();
          if (have != types[k]) {
            return Error(invalid,
                         absl::StrCat("inputs ", from->second, " and ", what,
                                      " must have the same type ", attr,
                                      ", got ", DataTypeString(have), " and ",
                                      DataTypeString(types[k])));
          }
        } else {
          inferred_from[attr] = what;
          set_attr(attr, MakeAttrValue(types[k]));
        }
      }
    }
  }

  // Declared defaults go into the NodeDef, as TensorFlow writes them.
  for (const AttrDef& a : op_def.attrs) {
    if (a.default_value.has_value() && def.attr().count(a.name) == 0) {
      set_attr(a.name, *a.default_value);
    }
  }
  absl::Status valid = ValidateAttrs(op_def, def.attr());
  if (!valid.ok()) return Error(invalid, valid.message());
  std::vector<DataType> in_types, out_types;
  valid = ComputeArgTypes(op_def, AttrSlice(&def.attr(), &op_def), &in_types,
                          &out_types);
  if (!valid.ok()) return Error(invalid, valid.message());

  // Fixed-type args and explicitly set attrs are checked here, input by
  // input, against the types the op now expects.
  size_t slot = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const ArgDef& arg = op_def.inputs[i];
    for (const Output& o : inputs_[i].outputs) {
      if (slot >= in_types.size()) break;  // count mismatch: reported below
      if (!CanFeed(o.dtype(), in_types[slot])) {
        return Error(invalid,
                     absl::StrCat("input '", arg.name, "' expects ",
                                  DataTypeString(in_types[slot]), " but '",
                                  o.name(), "' (", o.node()->op(), ") is ",
                                  DataTypeString(o.dtype())));
      }
      def.add_input(TensorId{o.node()->name(), o.index()}.ToString());
      ++slot;
    }
  }
  if (static_cast<size_t>(def.input_size()) != in_types.size() ||
      slot != in_types.size()) {
    return Error(invalid,
                 absl::StrCat("the op expects ", in_types.size(),
                              " input tensors but ", slot, " were given"));
  }

  absl::flat_hash_set<const Node*> seen;
  for (const Operation& op : control_inputs_) {
    if (op.empty()) {
      return Error(invalid,
                   "a control input is empty (the builder that made it "
                   "failed; see the scope's status)");
    }
    if (!InGraph(graph, op.node())) {
      return Error(invalid, absl::StrCat("control input '", op.name(),
                                         "' belongs to another graph"));
    }
    if (seen.insert(op.node()).second) {
      def.add_input(absl::StrCat("^", op.name()));
    }
  }
  return def;
}

absl::StatusOr<Node*> NodeBuilder::Finalize(Graph* graph) const {
  absl::StatusOr<const OpDef*> op_def = registry_->LookUp(op_name_);
  if (!op_def.ok()) {
    return Error(op_def.status().code(), op_def.status().message());
  }
  GR_ASSIGN_OR_RETURN(NodeDef def, BuildNodeDef(*graph, **op_def));
  absl::StatusOr<Node*> node = graph->AddNode(std::move(def), *op_def);
  if (!node.ok()) {
    return Error(node.status().code(), node.status().message());
  }
  // BuildNodeDef checked every slot and dtype, so the edges fit.
  int slot = 0;
  for (const InputArg& in : inputs_) {
    for (const Output& o : in.outputs) {
      absl::StatusOr<const Edge*> e =
          graph->AddEdge(o.node(), o.index(), *node, slot++);
      if (!e.ok()) return Error(e.status().code(), e.status().message());
    }
  }
  absl::flat_hash_set<const Node*> seen;
  for (const Operation& op : control_inputs_) {
    if (seen.insert(op.node()).second) {
      graph->AddControlEdge(op.node(), *node);
    }
  }
  return *node;
}

Operation NodeBuilder::Finalize(const Scope& scope) const {
  if (!scope.ok()) return Operation();
  NodeBuilder builder = *this;
  if (builder.device_.empty()) builder.device_ = scope.device();
  builder.ControlInputs(scope.control_deps());
  absl::StatusOr<Node*> node = builder.Finalize(scope.graph());
  scope.UpdateStatus(node.status());
  return node.ok() ? Operation(*node) : Operation();
}

}  // namespace cc
}  // namespace graphrun
