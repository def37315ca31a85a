#include "graph/op_registry.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/text_format.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr absl::string_view kAttrTypes[] = {
    "int", "float", "bool", "string", "type", "shape", "tensor", "func"};

bool IsKnownAttrType(absl::string_view type) {
  absl::string_view inner = type;
  if (absl::ConsumePrefix(&inner, "list(")) {
    if (!absl::ConsumeSuffix(&inner, ")")) return false;
  }
  for (absl::string_view t : kAttrTypes) {
    if (inner == t) return true;
  }
  return false;
}

// Turns a default written in the spec ("false", "DT_FLOAT", "'NHWC'",
// "[1, 1]", "{ unknown_rank: true }") into an AttrValue of `type`.
absl::StatusOr<AttrValue> ParseDefault(absl::string_view type,
                                       absl::string_view text) {
  std::string value(absl::StripAsciiWhitespace(text));
  // The spec writes strings in single quotes; text format wants double.
  for (char& c : value) {
    if (c == '\'') c = '"';
  }
  std::string field;
  absl::string_view inner = type;
  const bool is_list = absl::ConsumePrefix(&inner, "list(") &&
                       absl::ConsumeSuffix(&inner, ")");
  if (inner == "int") field = "i";
  else if (inner == "float") field = "f";
  else if (inner == "bool") field = "b";
  else if (inner == "string") field = "s";
  else if (inner == "type") field = "type";
  else if (inner == "shape") field = "shape";
  else if (inner == "tensor") field = "tensor";
  else return absl::InvalidArgumentError(absl::StrCat("no defaults for ", type));
  std::string proto_text;
  if (is_list) {
    proto_text = value == "[]" ? "list {}" : absl::StrCat("list { ", field, ": ", value, " }");
  } else {
    proto_text = absl::StrCat(field, ": ", value);
  }
  AttrValue out;
  if (!google::protobuf::TextFormat::ParseFromString(proto_text, &out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse default '", text, "' for type ", type));
  }
  return out;
}

absl::StatusOr<AttrDef> ParseAttrSpec(absl::string_view spec) {
  AttrDef attr;
  std::pair<absl::string_view, absl::string_view> name_rest =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  attr.name = std::string(absl::StripAsciiWhitespace(name_rest.first));
  absl::string_view rest = absl::StripAsciiWhitespace(name_rest.second);
  if (attr.name.empty() || rest.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("bad attr spec '", spec, "'"));
  }
  // Split off "= default" (outside braces/brackets/quotes).
  absl::string_view type_part = rest, default_part;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '\'') quoted = !quoted;
    if (quoted) continue;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == '=' && depth == 0 && (i == 0 || rest[i - 1] != '>')) {
      type_part = absl::StripAsciiWhitespace(rest.substr(0, i));
      default_part = absl::StripAsciiWhitespace(rest.substr(i + 1));
      break;
    }
  }
  // Minimum: "int >= 1", "list(type) >= 0".
  std::string type(type_part);
  if (size_t ge = type.find(">="); ge != std::string::npos) {
    int64_t min = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(type.substr(ge + 2)), &min)) {
      return absl::InvalidArgumentError(absl::StrCat("bad minimum in '", spec, "'"));
    }
    attr.minimum = min;
    type = std::string(absl::StripAsciiWhitespace(type.substr(0, ge)));
  }
  // Allowed values: "{float, double}" (types) or "{'SAME', 'VALID'}" (strings),
  // possibly inside list(...).
  absl::string_view t = type;
  bool is_list = false;
  if (absl::StartsWith(t, "list(") && absl::EndsWith(t, ")")) {
    is_list = true;
    t = t.substr(5, t.size() - 6);
  }
  if (absl::StartsWith(t, "{") && absl::EndsWith(t, "}")) {
    absl::string_view body = t.substr(1, t.size() - 2);
    bool strings = absl::StrContains(body, "'") || absl::StrContains(body, "\"");
    for (absl::string_view item : absl::StrSplit(body, ',', absl::SkipWhitespace())) {
      item = absl::StripAsciiWhitespace(item);
      if (strings) {
        attr.allowed_strings.push_back(std::string(item.substr(1, item.size() - 2)));
      } else {
        GR_ASSIGN_OR_RETURN(DataType dt, DataTypeFromString(item));
        attr.allowed_types.push_back(dt);
      }
    }
    std::string base = strings ? "string" : "type";
    type = is_list ? absl::StrCat("list(", base, ")") : base;
  }
  if (!IsKnownAttrType(type)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown attr type in '", spec, "'"));
  }
  attr.type = type;
  if (!default_part.empty()) {
    GR_ASSIGN_OR_RETURN(AttrValue v, ParseDefault(attr.type, default_part));
    attr.default_value = std::move(v);
  }
  return attr;
}

absl::StatusOr<ArgDef> ParseArgSpec(absl::string_view spec,
                                    const std::vector<AttrDef>& attrs) {
  ArgDef arg;
  std::pair<absl::string_view, absl::string_view> name_rest =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  arg.name = std::string(absl::StripAsciiWhitespace(name_rest.first));
  absl::string_view type = absl::StripAsciiWhitespace(name_rest.second);
  if (arg.name.empty() || type.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("bad arg spec '", spec, "'"));
  }
  if (absl::ConsumePrefix(&type, "Ref(")) {
    if (!absl::ConsumeSuffix(&type, ")")) {
      return absl::InvalidArgumentError(absl::StrCat("bad Ref in '", spec, "'"));
    }
    arg.is_ref = true;
  }
  if (size_t star = type.find('*'); star != absl::string_view::npos) {
    arg.number_attr = std::string(absl::StripAsciiWhitespace(type.substr(0, star)));
    type = absl::StripAsciiWhitespace(type.substr(star + 1));
  }
  auto find = [&](absl::string_view n) -> const AttrDef* {
    for (const AttrDef& a : attrs) {
      if (a.name == n) return &a;
    }
    return nullptr;
  };
  if (!arg.number_attr.empty()) {
    const AttrDef* n = find(arg.number_attr);
    if (n == nullptr || n->type != "int") {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", spec, "' needs an int attr named ", arg.number_attr));
    }
  }
  if (const AttrDef* a = find(type)) {
    if (a->type == "type") {
      arg.type_attr = std::string(type);
    } else if (a->type == "list(type)" && arg.number_attr.empty()) {
      arg.type_list_attr = std::string(type);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "attr '", type, "' used in '", spec, "' is not a type attr"));
    }
  } else {
    GR_ASSIGN_OR_RETURN(arg.type, DataTypeFromString(type));
  }
  return arg;
}

std::string ArgString(const ArgDef& a) {
  std::string type = !a.type_attr.empty()        ? a.type_attr
                     : !a.type_list_attr.empty() ? a.type_list_attr
                                                 : DataTypeString(a.type);
  if (!a.number_attr.empty()) type = absl::StrCat(a.number_attr, " * ", type);
  if (a.is_ref) type = absl::StrCat("Ref(", type, ")");
  return absl::StrCat(a.name, ": ", type);
}

}  // namespace

const AttrDef* OpDef::FindAttr(absl::string_view attr_name) const {
  for (const AttrDef& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::string OpDef::Signature() const {
  std::vector<std::string> in, out, at;
  for (const auto& a : inputs) in.push_back(ArgString(a));
  for (const auto& a : outputs) out.push_back(ArgString(a));
  for (const auto& a : attrs) {
    std::string s = absl::StrCat(a.name, ": ", a.type);
    if (!a.allowed_types.empty()) {
      std::vector<std::string> names;
      for (DataType t : a.allowed_types) names.push_back(DataTypeString(t));
      absl::StrAppend(&s, " in {", absl::StrJoin(names, ", "), "}");
    }
    if (!a.allowed_strings.empty()) {
      absl::StrAppend(&s, " in {", absl::StrJoin(a.allowed_strings, ", "), "}");
    }
    at.push_back(s);
  }
  return absl::StrCat(name, "(", absl::StrJoin(in, ", "), ") -> (",
                      absl::StrJoin(out, ", "), ")",
                      at.empty() ? "" : "; attrs: ", absl::StrJoin(at, "; "));
}

OpDefBuilder::OpDefBuilder(std::string op_name) : name_(std::move(op_name)) {}
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  stateful_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  commutative_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}

absl::StatusOr<OpDef> OpDefBuilder::Build() const {
  OpDef def;
  def.name = name_;
  def.is_stateful = stateful_;
  def.is_commutative = commutative_;
  if (shape_fn_) {
    // Every op's outputs get the size check, whatever its function computed.
    def.shape_fn = [fn = shape_fn_](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(fn(c));
      return c->CheckOutputSizes();
    };
  }
  const std::string context = absl::StrCat("op ", name_);
  for (const auto& spec : attrs_) {
    auto a = ParseAttrSpec(spec);
    if (!a.ok()) return WithContext(a.status(), context);
    def.attrs.push_back(*std::move(a));
  }
  for (const auto& spec : inputs_) {
    auto a = ParseArgSpec(spec, def.attrs);
    if (!a.ok()) return WithContext(a.status(), context);
    def.inputs.push_back(*std::move(a));
  }
  for (const auto& spec : outputs_) {
    auto a = ParseArgSpec(spec, def.attrs);
    if (!a.ok()) return WithContext(a.status(), context);
    def.outputs.push_back(*std::move(a));
  }
  return def;
}

OpRegistry* OpRegistry::Global() {
  static OpRegistry* const registry = new OpRegistry();
  return registry;
}

absl::Status OpRegistry::Register(OpDef op_def) {
  std::string name = op_def.name;
  auto [it, inserted] =
      ops_.emplace(name, std::make_unique<OpDef>(std::move(op_def)));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("op '", name, "' is registered twice"));
  }
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view op_name) const {
  auto it = ops_.find(op_name);
  return it == ops_.end() ? nullptr : it->second.get();
}

absl::StatusOr<const OpDef*> OpRegistry::LookUp(absl::string_view op_name) const {
  if (const OpDef* def = Find(op_name)) return def;
  return absl::NotFoundError(
      absl::StrCat("Op type not registered '", op_name, "' in graphrun"));
}

std::vector<std::string> OpRegistry::ListOpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  return names;
}

namespace internal {
OpRegistrar::OpRegistrar(const OpDefBuilder& builder) {
  absl::StatusOr<OpDef> def = builder.Build();
  absl::Status s = def.ok() ? OpRegistry::Global()->Register(*std::move(def))
                            : def.status();
  if (!s.ok()) {
    std::fprintf(stderr, "graphrun: bad op registration: %s\n",
                 std::string(s.message()).c_str());
    std::abort();
  }
}
}  // namespace internal

}  // namespace graphrun
