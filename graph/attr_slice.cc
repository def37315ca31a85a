#include "graph/attr_slice.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

const char* CaseName(AttrValue::ValueCase c) {
  switch (c) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kList: return "list";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    default: return "empty";
  }
}

}  // namespace

std::string AttrValueTypeName(const AttrValue& v) {
  if (v.value_case() != AttrValue::kList) {
    return v.value_case() == AttrValue::VALUE_NOT_SET ? "" : CaseName(v.value_case());
  }
  const auto& l = v.list();
  if (l.s_size()) return "list(string)";
  if (l.i_size()) return "list(int)";
  if (l.f_size()) return "list(float)";
  if (l.b_size()) return "list(bool)";
  if (l.type_size()) return "list(type)";
  if (l.shape_size()) return "list(shape)";
  if (l.tensor_size()) return "list(tensor)";
  if (l.func_size()) return "list(func)";
  return "list";  // empty list: any list type
}

std::string AttrValueSummary(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return absl::StrCat("\"", v.s(), "\"");
    case AttrValue::kI: return absl::StrCat(v.i());
    case AttrValue::kF: return absl::StrCat(v.f());
    case AttrValue::kB: return v.b() ? "true" : "false";
    case AttrValue::kType: return DataTypeString(v.type());
    case AttrValue::kShape: {
      auto s = PartialShape::FromProto(v.shape());
      return s.ok() ? s->DebugString() : "<bad shape>";
    }
    case AttrValue::kTensor: {
      auto s = PartialShape::FromProto(v.tensor().tensor_shape());
      return absl::StrCat("<", DataTypeString(v.tensor().dtype()), " tensor ",
                          s.ok() ? s->DebugString() : "<bad shape>", ">");
    }
    case AttrValue::kList: {
      const auto& l = v.list();
      std::vector<std::string> items;
      for (const auto& x : l.s()) items.push_back(absl::StrCat("\"", x, "\""));
      for (auto x : l.i()) items.push_back(absl::StrCat(x));
      for (auto x : l.f()) items.push_back(absl::StrCat(x));
      for (auto x : l.b()) items.push_back(x ? "true" : "false");
      for (auto x : l.type()) items.push_back(DataTypeString(static_cast<DataType>(x)));
      for (const auto& x : l.shape()) {
        auto s = PartialShape::FromProto(x);
        items.push_back(s.ok() ? s->DebugString() : "<bad shape>");
      }
      if (l.tensor_size()) items.push_back(absl::StrCat(l.tensor_size(), " tensors"));
      for (const auto& x : l.func()) items.push_back(x.name());
      return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    case AttrValue::kFunc: return absl::StrCat("func ", v.func().name());
    case AttrValue::kPlaceholder: return absl::StrCat("$", v.placeholder());
    default: return "<empty>";
  }
}

const AttrValue* AttrSlice::Find(absl::string_view name) const {
  if (attrs_ != nullptr) {
    auto it = attrs_->find(std::string(name));
    if (it != attrs_->end()) return &it->second;
  }
  if (op_def_ != nullptr) {
    if (const AttrDef* def = op_def_->FindAttr(name)) {
      if (def->default_value.has_value()) return &*def->default_value;
    }
  }
  return nullptr;
}

absl::StatusOr<const AttrValue*> AttrSlice::FindOrError(
    absl::string_view name, AttrValue::ValueCase want) const {
  const AttrValue* v = Find(name);
  if (v == nullptr) {
    return absl::NotFoundError(absl::StrCat("no attr named '", name, "'"));
  }
  if (v->value_case() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attr '", name, "' has type ", CaseName(v->value_case()),
        ", expected ", CaseName(want)));
  }
  return v;
}

#define GR_ATTR_GETTER(TYPE, CASE, EXPR)                                   \
  absl::Status AttrSlice::Get(absl::string_view name, TYPE* value) const { \
    GR_ASSIGN_OR_RETURN(const AttrValue* v, FindOrError(name, CASE));      \
    *value = EXPR;                                                         \
    return absl::OkStatus();                                               \
  }

GR_ATTR_GETTER(int64_t, AttrValue::kI, v->i())
GR_ATTR_GETTER(int32_t, AttrValue::kI, static_cast<int32_t>(v->i()))
GR_ATTR_GETTER(float, AttrValue::kF, v->f())
GR_ATTR_GETTER(bool, AttrValue::kB, v->b())
GR_ATTR_GETTER(std::string, AttrValue::kS, v->s())
GR_ATTR_GETTER(DataType, AttrValue::kType, v->type())
GR_ATTR_GETTER(std::vector<int64_t>, AttrValue::kList,
               std::vector<int64_t>(v->list().i().begin(), v->list().i().end()))
GR_ATTR_GETTER(std::vector<int32_t>, AttrValue::kList,
               std::vector<int32_t>(v->list().i().begin(), v->list().i().end()))
GR_ATTR_GETTER(std::vector<float>, AttrValue::kList,
               std::vector<float>(v->list().f().begin(), v->list().f().end()))
GR_ATTR_GETTER(std::vector<std::string>, AttrValue::kList,
               std::vector<std::string>(v->list().s().begin(), v->list().s().end()))
#undef GR_ATTR_GETTER

absl::Status AttrSlice::Get(absl::string_view name,
                            std::vector<DataType>* value) const {
  GR_ASSIGN_OR_RETURN(const AttrValue* v, FindOrError(name, AttrValue::kList));
  value->clear();
  for (int t : v->list().type()) value->push_back(static_cast<DataType>(t));
  return absl::OkStatus();
}

absl::Status AttrSlice::Get(absl::string_view name, PartialShape* value) const {
  GR_ASSIGN_OR_RETURN(const AttrValue* v, FindOrError(name, AttrValue::kShape));
  GR_ASSIGN_OR_RETURN(*value, PartialShape::FromProto(v->shape()));
  return absl::OkStatus();
}

absl::Status AttrSlice::Get(absl::string_view name, Tensor* value) const {
  GR_ASSIGN_OR_RETURN(const AttrValue* v, FindOrError(name, AttrValue::kTensor));
  GR_ASSIGN_OR_RETURN(*value, Tensor::FromProto(v->tensor()));
  return absl::OkStatus();
}

}  // namespace graphrun
