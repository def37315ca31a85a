#include "graph/testing/shape_test_util.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/cc/node_builder.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace testing {

using cc::MakeAttrValue;

// Thin names over the C++ API's MakeAttrValue, the one place AttrValues
// are built.
AttrValue AttrB(bool v) { return MakeAttrValue(v); }
AttrValue AttrI(int64_t v) { return MakeAttrValue(v); }
AttrValue AttrF(float v) { return MakeAttrValue(v); }
AttrValue AttrS(const std::string& v) { return MakeAttrValue(absl::string_view(v)); }
AttrValue AttrType(DataType v) { return MakeAttrValue(v); }
AttrValue AttrInts(const std::vector<int64_t>& v) {
  return MakeAttrValue(absl::Span<const int64_t>(v));
}
AttrValue AttrTypes(const std::vector<DataType>& v) {
  return MakeAttrValue(absl::Span<const DataType>(v));
}
AttrValue AttrTensor(const Tensor& v) { return MakeAttrValue(v); }
AttrValue AttrShape(const std::vector<int64_t>& dims) { return MakeAttrValue(PartialShape(dims)); }

ShapeRun& ShapeRun::In(PartialShape shape) {
  shapes_.push_back(std::move(shape));
  return *this;
}

ShapeRun& ShapeRun::In(Tensor value) {
  consts_[static_cast<int>(shapes_.size())] = value;
  shapes_.push_back(PartialShape(value.shape()));
  return *this;
}

ShapeRun& ShapeRun::Attr(const std::string& name, AttrValue value) {
  attrs_[name] = std::move(value);
  return *this;
}

absl::StatusOr<std::vector<PartialShape>> ShapeRun::Run() const {
  GR_ASSIGN_OR_RETURN(const OpDef* def, OpRegistry::Global()->LookUp(op_));
  if (!def->shape_fn) return absl::InternalError("no shape function");
  AttrSlice slice(&attrs_, def);
  int num_outputs = 0;
  for (const ArgDef& out : def->outputs) {
    if (!out.number_attr.empty()) {
      int64_t n = 0;
      GR_RETURN_IF_ERROR(slice.Get(out.number_attr, &n));
      num_outputs += static_cast<int>(n);
    } else if (!out.type_list_attr.empty()) {
      std::vector<DataType> types;
      GR_RETURN_IF_ERROR(slice.Get(out.type_list_attr, &types));
      num_outputs += static_cast<int>(types.size());
    } else {
      ++num_outputs;
    }
  }
  std::vector<const Tensor*> tensors(shapes_.size(), nullptr);
  std::vector<DataType> types(shapes_.size(), DT_FLOAT);
  for (const auto& [i, t] : consts_) {
    tensors[i] = &t;
    types[i] = t.dtype();
  }
  InferenceContext c(slice, shapes_, tensors, types, std::vector<DataType>(num_outputs, DT_FLOAT));
  GR_RETURN_IF_ERROR(def->shape_fn(&c));
  return c.outputs();
}

std::string ShapeRun::Str() const {
  absl::StatusOr<std::vector<PartialShape>> out = Run();
  if (!out.ok()) return absl::StrCat("error: ", out.status().message());
  std::vector<std::string> parts;
  for (const PartialShape& s : *out) parts.push_back(s.DebugString());
  return absl::StrJoin(parts, ";");
}

std::string ShapeRun::Error() const {
  absl::Status s = Run().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

}  // namespace testing
}  // namespace graphrun
