// gen_ops: writes graph/cc/ops.h and ops.cc, one builder function per op
// registered in this binary (it links //graph:ops).
//
//   gen_ops <out ops.h> <out ops.cc>
//
// For each op not starting with "_" (and not "Const", which const.h covers):
//   - inputs become Output parameters; list inputs (N * T, type lists)
//     become absl::Span<const Output>;
//   - attrs inferred from the inputs (type attrs, list counts, type lists)
//     are left to NodeBuilder;
//   - other attrs without a default become positional parameters after the
//     inputs; attrs with a default go in an <Op>Attrs struct with chained
//     setters, passed last;
//   - returns Output (one output), std::vector<Output> (several or a list),
//     or Operation (none).
// Ops with a func attr that has no default are skipped (graphrun has no
// functions); the header lists them.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/op_registry.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/protos/types.pb.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace {

const std::set<std::string>& CppKeywords() {
  static const auto* k = new std::set<std::string>{
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "class",
      "compl", "const", "constexpr", "const_cast", "continue", "decltype",
      "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
      "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try",
      "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // Names the generated code itself uses.
      "scope", "attrs", "std", "absl", "graphrun", "cc"};
  return *k;
}

// A C++ identifier for `name` that is not a keyword and not in `used`.
std::string Identifier(const std::string& name, std::set<std::string>* used) {
  std::string id = name;
  if (CppKeywords().count(id) || absl::StartsWith(id, "gr_")) id += "_";
  while (used->count(id)) id += "_";
  used->insert(id);
  return id;
}

// "transpose_a" -> "TransposeA", "T" -> "T".
std::string CamelCase(const std::string& name) {
  std::string out;
  for (absl::string_view part : absl::StrSplit(name, '_', absl::SkipEmpty())) {
    std::string p(part);
    p[0] = absl::ascii_toupper(p[0]);
    out += p;
  }
  return out;
}

std::string CppType(const std::string& attr_type) {
  static const auto* m = new std::map<std::string, std::string>{
      {"int", "int64_t"},
      {"float", "float"},
      {"bool", "bool"},
      {"string", "std::string"},
      {"type", "DataType"},
      {"shape", "PartialShape"},
      {"tensor", "Tensor"},
      {"list(int)", "std::vector<int64_t>"},
      {"list(float)", "std::vector<float>"},
      {"list(bool)", "std::vector<bool>"},
      {"list(string)", "std::vector<std::string>"},
      {"list(type)", "std::vector<DataType>"},
      {"list(shape)", "std::vector<PartialShape>"},
      {"list(tensor)", "std::vector<Tensor>"},
  };
  auto it = m->find(attr_type);
  return it == m->end() ? "" : it->second;
}

// How a positional parameter of this attr type is passed.
std::string ParamType(const std::string& attr_type) {
  if (attr_type == "string") return "absl::string_view";
  std::string t = CppType(attr_type);
  if (t == "int64_t" || t == "float" || t == "bool" || t == "DataType") {
    return t;
  }
  return absl::StrCat("const ", t, "&");
}

std::string FloatLiteral(float f) {
  if (std::isnan(f)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(f)) {
    return f > 0 ? "std::numeric_limits<float>::infinity()"
                 : "-std::numeric_limits<float>::infinity()";
  }
  std::string s = absl::StrFormat("%.9g", f);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

std::string IntLiteral(int64_t i) {
  if (i == std::numeric_limits<int64_t>::min()) {
    return "std::numeric_limits<int64_t>::min()";
  }
  return absl::StrCat(i);
}

std::string StringLiteral(const std::string& s) {
  return absl::StrCat("\"", absl::CEscape(s), "\"");
}

std::string TypeLiteral(int t) {
  const std::string name = DataType_Name(static_cast<DataType>(t));
  return name.empty() ? absl::StrCat("static_cast<DataType>(", t, ")") : name;
}

std::string ShapeLiteral(const TensorShapeProto& proto) {
  auto shape = PartialShape::FromProto(proto);
  if (!shape.ok() || shape->unknown_rank()) return "PartialShape()";
  if (shape->rank() == 0) return "PartialShape::Scalar()";
  return absl::StrCat("PartialShape(std::vector<int64_t>{",
                      absl::StrJoin(shape->dims(), ", "), "})");
}

// The C++ initializer for a default value; "" when there is none we can
// write (tensors, funcs): such attrs become std::optional members.
std::string DefaultLiteral(const std::string& type, const AttrValue& v) {
  const auto& l = v.list();
  std::vector<std::string> items;
  if (type == "int") return IntLiteral(v.i());
  if (type == "float") return FloatLiteral(v.f());
  if (type == "bool") return v.b() ? "true" : "false";
  if (type == "string") return StringLiteral(v.s());
  if (type == "type") return TypeLiteral(v.type());
  if (type == "shape") return ShapeLiteral(v.shape());
  if (type == "list(int)") {
    for (int64_t i : l.i()) items.push_back(IntLiteral(i));
  } else if (type == "list(float)") {
    for (float f : l.f()) items.push_back(FloatLiteral(f));
  } else if (type == "list(bool)") {
    for (bool b : l.b()) items.push_back(b ? "true" : "false");
  } else if (type == "list(string)") {
    for (const std::string& s : l.s()) items.push_back(StringLiteral(s));
  } else if (type == "list(type)") {
    for (int t : l.type()) items.push_back(TypeLiteral(t));
  } else if (type == "list(shape)") {
    for (const auto& s : l.shape()) items.push_back(ShapeLiteral(s));
  } else {
    return "";
  }
  return absl::StrCat(CppType(type), "{", absl::StrJoin(items, ", "), "}");
}

bool IsFunc(const AttrDef& a) {
  return a.type == "func" || a.type == "list(func)";
}

bool IsListArg(const ArgDef& a) {
  return !a.number_attr.empty() || !a.type_list_attr.empty();
}

// "Output F(const Scope& scope, Output a, ...)" + tail, wrapped at 80
// columns with continuation lines aligned after the open parenthesis (or
// indented 4 when that is too deep).
std::string Declaration(const std::string& head,
                        const std::vector<std::string>& params,
                        const std::string& tail) {
  std::string line = absl::StrCat(head, "(");
  const size_t indent = line.size() <= 40 ? line.size() : 4;
  std::string out;
  bool line_empty = true;  // nothing after the indent / '(' yet
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string piece =
        absl::StrCat(params[i], i + 1 < params.size() ? "," : tail);
    if (!line_empty && line.size() + 1 + piece.size() > 80) {
      absl::StrAppend(&out, line, "\n");
      line = std::string(indent, ' ');
      line_empty = true;
    }
    absl::StrAppend(&line, line_empty ? "" : " ", piece);
    line_empty = false;
  }
  if (params.empty()) line += tail;
  return absl::StrCat(out, line);
}

struct Generated {
  std::string header;
  std::string source;
};

// Appends op `op` to `gen`; returns false if the op cannot be generated.
bool GenerateOp(const OpDef& op, Generated* gen) {
  std::set<std::string> inferred;
  for (const ArgDef& a : op.inputs) {
    if (!a.type_attr.empty()) inferred.insert(a.type_attr);
    if (!a.type_list_attr.empty()) inferred.insert(a.type_list_attr);
    if (!a.number_attr.empty()) inferred.insert(a.number_attr);
  }
  std::vector<const AttrDef*> required, optional;
  for (const AttrDef& a : op.attrs) {
    if (inferred.count(a.name)) continue;
    if (IsFunc(a)) {
      if (!a.default_value.has_value()) return false;
      continue;  // left at its default
    }
    if (CppType(a.type).empty()) return false;
    (a.default_value.has_value() ? optional : required).push_back(&a);
  }

  const std::string attrs_struct = absl::StrCat(op.name, "Attrs");
  std::string return_type = "Output";
  std::string empty_return = "Output()";
  std::string finish = ".output(0)";
  if (op.outputs.empty()) {
    return_type = "Operation";
    empty_return = "Operation()";
    finish = "";
  } else if (op.outputs.size() > 1 || IsListArg(op.outputs[0])) {
    return_type = "std::vector<Output>";
    empty_return = "{}";
    finish = ".outputs()";
  }

  std::string& h = gen->header;
  absl::StrAppend(&h, "// ", op.Signature(), "\n");

  // The Attrs struct.
  std::vector<std::string> optional_members;
  if (!optional.empty()) {
    absl::StrAppend(&h, "struct ", attrs_struct, " {\n");
    std::set<std::string> used;
    for (const AttrDef* a : optional) used.insert(CamelCase(a->name));
    for (const AttrDef* a : optional) {
      const std::string setter = CamelCase(a->name);
      const std::string member = Identifier(a->name, &used);
      optional_members.push_back(member);
      const std::string literal = DefaultLiteral(a->type, *a->default_value);
      const std::string type =
          literal.empty()
              ? absl::StrCat("std::optional<", CppType(a->type), ">")
              : CppType(a->type);
      if (literal.empty()) {
        absl::StrAppend(&h, "  ", type, " ", member,
                        ";  // unset: the op's default\n");
      } else {
        absl::StrAppend(&h, "  ", type, " ", member, " = ", literal, ";\n");
      }
      const std::string cpp = CppType(a->type);
      const bool scalar = cpp == "int64_t" || cpp == "float" || cpp == "bool" ||
                          cpp == "DataType";
      absl::StrAppend(
          &h, "  ", attrs_struct, "& ", setter, "(", cpp, " v) {\n    ", member,
          " = ", scalar ? "v" : "std::move(v)", ";\n    return *this;\n  }\n");
    }
    absl::StrAppend(&h, "};\n");
  }

  // The function.
  std::set<std::string> used;
  std::vector<std::string> params = {"const Scope& scope"};
  std::vector<std::string> input_names, required_names;
  for (const ArgDef& a : op.inputs) {
    input_names.push_back(Identifier(a.name, &used));
    params.push_back(
        absl::StrCat(IsListArg(a) ? "absl::Span<const Output> " : "Output ",
                     input_names.back()));
  }
  for (const AttrDef* a : required) {
    required_names.push_back(Identifier(a->name, &used));
    params.push_back(
        absl::StrCat(ParamType(a->type), " ", required_names.back()));
  }
  std::vector<std::string> decl_params = params, def_params = params;
  if (!optional.empty()) {
    decl_params.push_back(absl::StrCat("const ", attrs_struct, "& attrs = {}"));
    def_params.push_back(absl::StrCat("const ", attrs_struct, "& attrs"));
  }
  absl::StrAppend(
      &h,
      Declaration(absl::StrCat(return_type, " ", op.name), decl_params, ");"),
      "\n\n");

  std::string& s = gen->source;
  absl::StrAppend(
      &s,
      Declaration(absl::StrCat(return_type, " ", op.name), def_params, ") {"),
      "\n");
  absl::StrAppend(&s, "  if (!scope.ok()) return ", empty_return, ";\n");
  absl::StrAppend(
      &s, "  NodeBuilder gr_builder(\n      scope.GetUniqueNameForOp(\"",
      op.name, "\"), \"", op.name, "\");\n");
  for (const std::string& in : input_names) {
    absl::StrAppend(&s, "  gr_builder.Input(", in, ");\n");
  }
  for (size_t i = 0; i < required.size(); ++i) {
    absl::StrAppend(&s, "  gr_builder.Attr(\"", required[i]->name, "\", ",
                    required_names[i], ");\n");
  }
  for (size_t i = 0; i < optional.size(); ++i) {
    const std::string& m = optional_members[i];
    if (DefaultLiteral(optional[i]->type, *optional[i]->default_value)
            .empty()) {
      absl::StrAppend(&s, "  if (attrs.", m, ".has_value()) {\n    ",
                      "gr_builder.Attr(\"", optional[i]->name, "\", *attrs.", m,
                      ");\n  }\n");
    } else {
      absl::StrAppend(&s, "  gr_builder.Attr(\"", optional[i]->name,
                      "\", attrs.", m, ");\n");
    }
  }
  absl::StrAppend(&s, "  return gr_builder.Finalize(scope)", finish,
                  ";\n}\n\n");
  return true;
}

constexpr char kHeaderStart[] =
    R"(// GENERATED by //graph/cc:gen_ops from the ops registered in //graph:ops.
// Do not edit; change the op registrations or graph/cc/gen_ops.cc instead.
//
// One builder per op, TensorFlow's names: inputs first, then the attrs
// that have no default and cannot be inferred from the inputs, then an
// optional <Op>Attrs struct with chained setters for the attrs that have
// defaults. Errors are recorded in the scope (see scope.h); a failed
// builder returns an empty Output / vector / Operation.
//
//   Output y = MatMul(scope, a, b, MatMulAttrs().TransposeA(true));
//   Output x = Placeholder(scope.WithOpName("x"), DT_FLOAT,
//                          PlaceholderAttrs().Shape(PartialShape({-1, 784})));
//
// Each function's comment is the op's signature.
#ifndef GRAPHRUN_GRAPH_CC_OPS_H_
#define GRAPHRUN_GRAPH_CC_OPS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/cc/scope.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"

namespace graphrun {
namespace cc {

)";

constexpr char kHeaderEnd[] = R"(}  // namespace cc
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CC_OPS_H_
)";

constexpr char kSourceStart[] =
    R"(// GENERATED by //graph/cc:gen_ops. Do not edit.
#include "graph/cc/ops.h"

#include "graph/cc/node_builder.h"

namespace graphrun {
namespace cc {

)";

constexpr char kSourceEnd[] = R"(}  // namespace cc
}  // namespace graphrun
)";

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: gen_ops <ops.h> <ops.cc>\n";
    return 2;
  }
  const OpRegistry* registry = OpRegistry::Global();
  Generated gen;
  gen.header = kHeaderStart;
  gen.source = kSourceStart;
  std::vector<std::string> skipped;
  for (const std::string& name : registry->ListOpNames()) {
    if (absl::StartsWith(name, "_")) continue;
    if (name == "Const") continue;  // graph/cc/const.h
    if (!GenerateOp(*registry->Find(name), &gen)) skipped.push_back(name);
  }
  if (!skipped.empty()) {
    absl::StrAppend(&gen.header, "// Not generated (function or unsupported ",
                    "attrs): ", absl::StrJoin(skipped, ", "), "\n\n");
  }
  gen.header += kHeaderEnd;
  gen.source += kSourceEnd;
  for (const auto& [path, text] :
       {std::pair<const char*, const std::string*>{argv[1], &gen.header},
        {argv[2], &gen.source}}) {
    std::ofstream out(path);
    out << *text;
    if (!out) {
      std::cerr << "gen_ops: cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) { return graphrun::Main(argc, argv); }
