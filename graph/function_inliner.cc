#include "graph/function_inliner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/import.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(what);
}

// The element type of a signature argument; `attrs` bind its type attr.
absl::StatusOr<DataType> ArgType(const proto::OpDef::ArgDef& arg,
                                 const AttrMap& attrs) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "argument '", arg.name(), "' is a list of tensors; graphrun inlines "
        "functions whose arguments and results are single tensors"));
  }
  if (arg.type() != DT_INVALID) return arg.type();
  auto it = attrs.find(arg.type_attr());
  if (arg.type_attr().empty() || it == attrs.end() ||
      it->second.value_case() != AttrValue::kType) {
    return Invalid(absl::StrCat("argument '", arg.name(), "' has type attr '",
                                arg.type_attr(), "', which the call does not set"));
  }
  return it->second.type();
}

// Binds attr placeholders ("$T" in a polymorphic body) to the call's attrs.
absl::Status BindPlaceholders(NodeDef* n, const AttrMap& attrs) {
  for (auto& [key, value] : *n->mutable_attr()) {
    if (value.value_case() != AttrValue::kPlaceholder) continue;
    auto it = attrs.find(value.placeholder());
    if (it == attrs.end()) {
      return Invalid(absl::StrCat("attr '", key, "' is the placeholder '",
                                  value.placeholder(), "', which the call does not bind"));
    }
    value = it->second;
  }
  return absl::OkStatus();
}

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return absl::ascii_isdigit(c); });
}

// Output arg name and tensor count of each output of a body node's op.
using OutputLayout = std::vector<std::pair<std::string, int64_t>>;

absl::StatusOr<OutputLayout> LayoutOf(const NodeDef& n, const FunctionMap& library,
                                      const OpRegistry& registry) {
  OutputLayout layout;
  if (auto f = library.find(n.op()); f != library.end()) {
    for (const auto& arg : f->second->signature().output_arg()) {
      if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "function '", n.op(), "' returns a list of tensors ('", arg.name(), "')"));
      }
      layout.emplace_back(arg.name(), 1);
    }
    return layout;
  }
  const OpDef* op = registry.Find(n.op());
  if (op == nullptr) {
    return Invalid(absl::StrCat("Op type not registered '", n.op(),
                                "': graphrun has no definition of this op"));
  }
  AttrSlice attrs(&n.attr(), op);
  for (const ArgDef& a : op->outputs) {
    int64_t count = 1;
    if (!a.number_attr.empty()) {
      GR_RETURN_IF_ERROR(attrs.Get(a.number_attr, &count));
    } else if (!a.type_list_attr.empty()) {
      std::vector<DataType> types;
      GR_RETURN_IF_ERROR(attrs.Get(a.type_list_attr, &types));
      count = static_cast<int64_t>(types.size());
    }
    layout.emplace_back(a.name, count);
  }
  return layout;
}

absl::StatusOr<InlinedFunction> Inline(const FunctionDef& f, const InlineSite& site,
                                       const FunctionMap& library,
                                       const OpRegistry& registry, NodeSink* sink) {
  const proto::OpDef& sig = f.signature();
  const AttrMap& attrs = *site.attrs;
  if (static_cast<int>(site.args.size()) != sig.input_arg_size()) {
    return Invalid(absl::StrCat("takes ", sig.input_arg_size(), " arguments but is given ",
                                site.args.size()));
  }
  auto add = [&](absl::string_view suffix, absl::string_view op) {
    NodeDef n;
    n.set_name(sink->UniqueName(absl::StrCat(site.prefix, "/", suffix)));
    n.set_op(std::string(op));
    n.set_device(site.device);
    return sink->Add(std::move(n));
  };
  // The gate every argument and every input-less body node waits for.
  std::string gate;
  if (site.control_inputs.size() == 1) {
    gate = site.control_inputs[0];
  } else if (site.control_inputs.size() > 1) {
    NodeDef* noop = add("input_control_node", "NoOp");
    for (const std::string& c : site.control_inputs) noop->add_input("^" + c);
    gate = noop->name();
  }
  absl::flat_hash_map<std::string, std::string> arg_nodes;
  std::string first_arg;
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const auto& arg = sig.input_arg(i);
    GR_ASSIGN_OR_RETURN(DataType type, ArgType(arg, attrs));
    NodeDef* id = add(absl::StrCat("input/", arg.name()), "Identity");
    id->add_input(site.args[i]);
    if (!gate.empty()) id->add_input("^" + gate);
    (*id->mutable_attr())["T"].set_type(type);
    if (!arg_nodes.emplace(arg.name(), id->name()).second) {
      return Invalid(absl::StrCat("two arguments are named '", arg.name(), "'"));
    }
    if (first_arg.empty()) first_arg = id->name();
  }
  // Constants and other source nodes join the call's frame or branch
  // through the gate, else through the first argument.
  const std::string source_gate = gate.empty() ? first_arg : gate;

  std::vector<NodeDef> body;
  std::vector<OutputLayout> layouts;
  absl::flat_hash_map<std::string, int> index;
  for (const NodeDef& n : f.node_def()) {
    if (!index.emplace(n.name(), static_cast<int>(body.size())).second) {
      return Invalid(absl::StrCat("two body nodes are named '", n.name(), "'"));
    }
    NodeDef copy = n;
    absl::Status bound = BindPlaceholders(&copy, attrs);
    if (!bound.ok()) return WithContext(bound, NodeLabel(n));
    absl::StatusOr<OutputLayout> layout = LayoutOf(copy, library, registry);
    if (!layout.ok()) return WithContext(layout.status(), NodeLabel(n));
    body.push_back(std::move(copy));
    layouts.push_back(*std::move(layout));
  }
  std::vector<std::string> names;
  for (const NodeDef& n : body) {
    names.push_back(sink->UniqueName(absl::StrCat(site.prefix, "/", n.name())));
  }

  // "arg", "node:out:k" and "^node" -> graph references.
  auto translate = [&](const std::string& ref) -> absl::StatusOr<std::string> {
    const bool control = absl::StartsWith(ref, "^");
    const std::vector<std::string> parts =
        absl::StrSplit(control ? absl::string_view(ref).substr(1) : ref, ':');
    auto unknown = [&] {
      return Invalid(absl::StrCat("input \"", ref,
                                  "\" names no node or argument of the function"));
    };
    if (auto a = arg_nodes.find(parts[0]); a != arg_nodes.end()) {
      if (control) return "^" + a->second;
      if (parts.size() == 1 || (parts.size() == 2 && parts[1] == "0")) return a->second;
      return Invalid(absl::StrCat("input \"", ref, "\": argument '", parts[0],
                                  "' is a single tensor"));
    }
    auto it = index.find(parts[0]);
    if (it == index.end()) return unknown();
    const std::string& target = names[it->second];
    if (control) return "^" + target;
    if (parts.size() == 1) return target;
    int k = 0;
    if (parts.size() == 2 && AllDigits(parts[1]) && absl::SimpleAtoi(parts[1], &k)) {
      return TensorId{target, k}.ToString();  // GraphDef syntax "node:k"
    }
    if (parts.size() > 3 || (parts.size() == 3 && (!AllDigits(parts[2]) ||
                                                    !absl::SimpleAtoi(parts[2], &k)))) {
      return Invalid(absl::StrCat("malformed input \"", ref, "\""));
    }
    int64_t offset = 0;
    for (const auto& [name, count] : layouts[it->second]) {
      if (name == parts[1]) {
        if (k >= count) {
          return Invalid(absl::StrCat("input \"", ref, "\": output '", name, "' of ",
                                      NodeLabel(f.node_def(it->second)), " has ", count,
                                      " tensors"));
        }
        return TensorId{target, static_cast<int>(offset + k)}.ToString();
      }
      offset += count;
    }
    return Invalid(absl::StrCat("input \"", ref, "\": ", NodeLabel(f.node_def(it->second)),
                                " has no output named '", parts[1], "'"));
  };

  for (size_t i = 0; i < body.size(); ++i) {
    NodeDef& n = body[i];
    const std::vector<std::string> inputs(n.input().begin(), n.input().end());
    n.clear_input();
    for (const std::string& ref : inputs) {
      absl::StatusOr<std::string> t = translate(ref);
      if (!t.ok()) return WithContext(t.status(), NodeLabel(n));
      n.add_input(*std::move(t));
    }
    if (n.input_size() == 0 && !source_gate.empty()) n.add_input("^" + source_gate);
    n.set_name(names[i]);
    if (n.device().empty()) n.set_device(site.device);
    if (auto cls = n.mutable_attr()->find("_class"); cls != n.mutable_attr()->end()) {
      AttrValue::ListValue kept;
      for (const std::string& s : cls->second.list().s()) {
        if (!absl::StartsWith(s, "loc:@")) {
          kept.add_s(s);
        } else if (auto t = index.find(s.substr(5)); t != index.end()) {
          kept.add_s("loc:@" + names[t->second]);
        }
      }
      if (kept.s_size() == 0) {
        n.mutable_attr()->erase(cls);
      } else {
        *cls->second.mutable_list() = std::move(kept);
      }
    }
    sink->Add(std::move(n));
  }

  InlinedFunction out;
  for (const auto& arg : sig.output_arg()) {
    GR_ASSIGN_OR_RETURN(DataType type, ArgType(arg, attrs));
    auto ret = f.ret().find(arg.name());
    if (ret == f.ret().end()) {
      return Invalid(absl::StrCat("result '", arg.name(), "' has no entry in ret"));
    }
    absl::StatusOr<std::string> value = translate(ret->second);
    if (!value.ok()) return WithContext(value.status(), absl::StrCat("ret '", arg.name(), "'"));
    NodeDef* id = add(absl::StrCat("output/", arg.name()), "Identity");
    id->add_input(*value);
    (*id->mutable_attr())["T"].set_type(type);
    out.outputs.push_back(id->name());
    out.output_types.push_back(type);
  }
  // Control outputs in signature order, then any others by name.
  std::vector<std::string> keys(sig.control_output().begin(), sig.control_output().end());
  std::vector<std::string> rest;
  for (const auto& [key, node] : f.control_ret()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) rest.push_back(key);
  }
  std::sort(rest.begin(), rest.end());
  keys.insert(keys.end(), rest.begin(), rest.end());
  for (const std::string& key : keys) {
    auto c = f.control_ret().find(key);
    if (c == f.control_ret().end()) continue;
    auto it = index.find(c->second);
    if (it == index.end()) {
      return Invalid(absl::StrCat("control_ret '", key, "' names '", c->second,
                                  "', which is not a body node"));
    }
    out.control_outputs.push_back(names[it->second]);
  }
  return out;
}

}  // namespace

absl::StatusOr<InlinedFunction> InlineFunctionBody(const FunctionDef& f,
                                                   const InlineSite& site,
                                                   const FunctionMap& library,
                                                   const OpRegistry& registry,
                                                   NodeSink* sink) {
  absl::StatusOr<InlinedFunction> out = Inline(f, site, library, registry, sink);
  if (!out.ok()) {
    return WithContext(out.status(),
                       absl::StrCat("function '", f.signature().name(), "'"));
  }
  return out;
}

}  // namespace graphrun
