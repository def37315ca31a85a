// Tests for the element-wise math ops (cwise_ops.cc) and the activations in
// nn_activation_ops.cc: TensorFlow's signatures, type lists and defaults,
// and their shape functions run through InferenceContext.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/attr_slice.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

PartialShape S(std::vector<int64_t> dims) {
  return PartialShape(std::move(dims));
}
PartialShape Unknown() { return PartialShape(); }

const OpDef& Def(const std::string& name) {
  const OpDef* def = OpRegistry::Global()->Find(name);
  EXPECT_NE(def, nullptr) << name;
  static const OpDef* const empty = new OpDef();
  return def != nullptr ? *def : *empty;
}

std::vector<std::string> ArgNames(const std::vector<ArgDef>& args) {
  std::vector<std::string> names;
  for (const ArgDef& a : args) names.push_back(a.name);
  return names;
}

// The allowed values of type attr "T", in declaration order.
std::vector<DataType> AllowedT(const std::string& op) {
  const AttrDef* a = Def(op).FindAttr("T");
  EXPECT_NE(a, nullptr) << op;
  return a != nullptr ? a->allowed_types : std::vector<DataType>{};
}

std::vector<DataType> Types(std::initializer_list<DataType> t) { return t; }

// Output shapes ("[2,3]", "<unknown>") or "error: <message>" for `op` on
// these input shapes, with attrs at their defaults unless given.
std::string ShapeOf(const std::string& op, std::vector<PartialShape> inputs,
                    const AttrMap& attrs = {}) {
  const OpDef* def = OpRegistry::Global()->Find(op);
  if (def == nullptr || !def->shape_fn) return "no shape function";
  AttrSlice slice(&attrs, def);
  const size_t n = inputs.size();
  InferenceContext c(slice, std::move(inputs),
                     std::vector<const Tensor*>(n, nullptr),
                     std::vector<DataType>(n, DT_FLOAT), {DT_FLOAT});
  absl::Status s = def->shape_fn(&c);
  if (!s.ok()) return absl::StrCat("error: ", s.message());
  return c.output(0).DebugString();
}

const DataType kFloats[] = {DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE};
const DataType kFloatComplex[] = {DT_BFLOAT16, DT_HALF,      DT_FLOAT,
                                  DT_DOUBLE,   DT_COMPLEX64, DT_COMPLEX128};
const DataType kSigned[] = {DT_BFLOAT16,  DT_HALF,      DT_FLOAT, DT_DOUBLE,
                            DT_INT8,      DT_INT16,     DT_INT32, DT_INT64,
                            DT_COMPLEX64, DT_COMPLEX128};

template <size_t N>
std::vector<DataType> V(const DataType (&t)[N]) {
  return std::vector<DataType>(t, t + N);
}

TEST(CwiseOpsSpecTest, UnaryOpsHaveTensorFlowsTypeLists) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                         "Cosh", "Log1p", "Expm1"}) {
    EXPECT_EQ(AllowedT(op), V(kFloatComplex)) << op;
  }
  for (const char* op : {"Erf", "Erfc", "Floor", "Ceil", "Rint"}) {
    EXPECT_EQ(AllowedT(op), V(kFloats)) << op;
  }
  for (const char* op : {"Round", "Sign", "Reciprocal", "Inv"}) {
    EXPECT_EQ(AllowedT(op), V(kSigned)) << op;
  }
  for (const char* op : {"IsNan", "IsInf", "IsFinite"}) {
    EXPECT_EQ(AllowedT(op), V(kFloats)) << op;
    ASSERT_EQ(Def(op).outputs.size(), 1u);
    EXPECT_EQ(Def(op).outputs[0].type, DT_BOOL) << op;
  }
  EXPECT_EQ(ArgNames(Def("Erf").inputs), (std::vector<std::string>{"x"}));
  EXPECT_EQ(ArgNames(Def("Erf").outputs), (std::vector<std::string>{"y"}));
}

TEST(CwiseOpsSpecTest, BinaryOpsHaveTensorFlowsSignatures) {
  EXPECT_EQ(ArgNames(Def("Atan2").inputs),
            (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(AllowedT("Atan2"), V(kFloats));
  for (const char* op : {"Xlogy", "Xdivy", "Xlog1py", "DivNoNan", "MulNoNan"}) {
    EXPECT_EQ(ArgNames(Def(op).inputs), (std::vector<std::string>{"x", "y"}))
        << op;
    EXPECT_EQ(ArgNames(Def(op).outputs), (std::vector<std::string>{"z"})) << op;
    EXPECT_EQ(AllowedT(op), V(kFloatComplex)) << op;
    EXPECT_FALSE(Def(op).is_commutative) << op;
  }
  EXPECT_TRUE(Def("SquaredDifference").is_commutative);
  EXPECT_EQ(AllowedT("SquaredDifference"),
            Types({DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT32,
                   DT_INT64, DT_COMPLEX64, DT_COMPLEX128}));
  EXPECT_EQ(AllowedT("TruncateMod"), Types({DT_INT32, DT_INT64, DT_BFLOAT16,
                                            DT_HALF, DT_FLOAT, DT_DOUBLE}));
  EXPECT_EQ(AllowedT("TruncateDiv"), AllowedT("Sub"));
  EXPECT_EQ(
      ArgNames(Def("ClipByValue").inputs),
      (std::vector<std::string>{"t", "clip_value_min", "clip_value_max"}));
  // Both take TensorFlow's "numbertype".
  EXPECT_EQ(AllowedT("ClipByValue"), AllowedT("BiasAdd"));
  EXPECT_EQ(AllowedT("ClipByValue").size(), 19u);
}

TEST(CwiseOpsSpecTest, ActivationsAndBiasAddV1) {
  for (const char* op : {"Softplus", "Softsign", "Selu", "LeakyRelu"}) {
    EXPECT_EQ(ArgNames(Def(op).inputs), (std::vector<std::string>{"features"}))
        << op;
    EXPECT_EQ(ArgNames(Def(op).outputs),
              (std::vector<std::string>{"activations"}))
        << op;
    EXPECT_EQ(AllowedT(op), Types({DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE}))
        << op;
  }
  const AttrDef* alpha = Def("LeakyRelu").FindAttr("alpha");
  ASSERT_NE(alpha, nullptr);
  ASSERT_TRUE(alpha->default_value.has_value());
  EXPECT_FLOAT_EQ(alpha->default_value->f(), 0.2f);
  const AttrDef* t = Def("LeakyRelu").FindAttr("T");
  ASSERT_TRUE(t->default_value.has_value());
  EXPECT_EQ(t->default_value->type(), DT_FLOAT);
  EXPECT_EQ(ArgNames(Def("BiasAddV1").inputs),
            (std::vector<std::string>{"value", "bias"}));
  EXPECT_EQ(Def("BiasAddV1").FindAttr("data_format"), nullptr);
  EXPECT_EQ(AllowedT("BiasAddV1"), AllowedT("BiasAdd"));
}

TEST(CwiseOpsShapeTest, UnaryShapesAreUnchanged) {
  for (const char* op :
       {"Erf", "Sin", "Round", "Sign", "IsNan", "Softplus", "LeakyRelu"}) {
    EXPECT_EQ(ShapeOf(op, {S({2, -1, 3})}), "[2,?,3]") << op;
    EXPECT_EQ(ShapeOf(op, {Unknown()}), "<unknown>") << op;
  }
}

TEST(CwiseOpsShapeTest, BinaryOpsBroadcast) {
  for (const char* op :
       {"Atan2", "SquaredDifference", "Xlogy", "Xdivy", "Xlog1py", "DivNoNan",
        "MulNoNan", "TruncateDiv", "TruncateMod"}) {
    EXPECT_EQ(ShapeOf(op, {S({2, 1, 3}), S({4, 1})}), "[2,4,3]") << op;
    EXPECT_EQ(ShapeOf(op, {S({}), S({5})}), "[5]") << op;
    EXPECT_EQ(ShapeOf(op, {S({-1, 3}), S({4, 1})}), "[4,3]") << op;
    EXPECT_EQ(
        ShapeOf(op, {S({2, 3}), S({4})}),
        absl::StrCat("error: Dimensions must be equal, but are 3 and 4 for ",
                     op, " with input shapes [2,3], [4]"))
        << op;
  }
}

TEST(CwiseOpsShapeTest, ClipByValueKeepsTsShape) {
  EXPECT_EQ(ShapeOf("ClipByValue", {S({2, 3}), S({}), S({})}), "[2,3]");
  EXPECT_EQ(ShapeOf("ClipByValue", {S({-1, 3}), S({2, 3}), S({})}), "[?,3]");
}

TEST(CwiseOpsShapeTest, BiasAddV1) {
  EXPECT_EQ(ShapeOf("BiasAddV1", {S({2, -1, 5}), S({5})}), "[2,?,5]");
  EXPECT_EQ(ShapeOf("BiasAddV1", {S({2, -1}), S({7})}), "[2,7]");
  EXPECT_EQ(ShapeOf("BiasAddV1", {Unknown(), S({7})}), "<unknown>");
  EXPECT_TRUE(absl::StrContains(ShapeOf("BiasAddV1", {S({2, 4}), S({5})}),
                                "Dimensions must be equal, but are 4 and 5"));
  EXPECT_TRUE(
      absl::StartsWith(ShapeOf("BiasAddV1", {S({4}), S({4})}), "error: "));
  EXPECT_TRUE(absl::StartsWith(ShapeOf("BiasAddV1", {S({2, 4}), S({1, 4})}),
                               "error: "));
}

}  // namespace
}  // namespace graphrun
