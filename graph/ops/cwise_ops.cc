// Element-wise ops: unary math, binary arithmetic with broadcasting,
// comparisons and logic, AddN and ClipByValue. Names, inputs, outputs and
// attrs are TensorFlow's (core/ops/math_ops.cc); type lists follow
// TensorFlow 2.x, which accepts everything 1.15 does. Matrix products and
// reductions are in math_ops.cc.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::BroadcastBinaryShapeFor;
using op_shapes::ShapeError;

// TensorFlow's "numbertype" and "realnumbertype" expanded.
using op_shapes::kNumberTypes;
constexpr char kRealNumberTypes[] =
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
    "uint32, uint64";
// BINARY_MORE in TensorFlow's math_ops.cc.
constexpr char kBinaryMoreTypes[] =
    "bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128";
constexpr char kAddTypes[] =
    "bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
    "complex64, complex128, string";
constexpr char kAddV2Types[] =
    "bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, "
    "int16, int32, int64, complex64, complex128";
constexpr char kMinMaxTypes[] =
    "bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
    "uint32, int64, uint64";
// Also the types of Round, Sign, Reciprocal and Inv.
constexpr char kSignedTypes[] =
    "bfloat16, half, float, double, int8, int16, int32, int64, complex64, "
    "complex128";
constexpr char kFloatTypes[] = "bfloat16, half, float, double";
constexpr char kFloatComplexTypes[] =
    "bfloat16, half, float, double, complex64, complex128";

// "T: {<types>}".
std::string TypeAttr(const char* types) {
  return absl::StrCat("T: {", types, "}");
}

absl::Status AddNShape(InferenceContext* c) {
  PartialShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    auto m = InferenceContext::Merge(merged, c->input(i));
    if (!m.ok()) {
      return ShapeError(*c, "AddN",
                        absl::StrCat("All inputs to AddN must have the same "
                                     "shape, but inputs[", i, "] has shape ",
                                     c->input(i).DebugString()));
    }
    merged = *std::move(m);
  }
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

// Equal/NotEqual: broadcasting, or an unknown shape when the shapes do not
// broadcast and incompatible_shape_error is false (the result is then a
// scalar at run time).
ShapeFn EqualityShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    bool incompatible_shape_error = true;
    GR_RETURN_IF_ERROR(
        c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
    auto out = op_shapes::BroadcastShapes(*c, op, c->input(0), c->input(1));
    if (!out.ok()) {
      if (incompatible_shape_error) return out.status();
      c->set_output(0, PartialShape());
      return absl::OkStatus();
    }
    c->set_output(0, *std::move(out));
    return absl::OkStatus();
  };
}

}  // namespace

// --- Element-wise binary arithmetic (broadcasting). ---

REGISTER_OP("Add")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kAddTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Add"));

REGISTER_OP("AddV2")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kAddV2Types))
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("AddV2"));

REGISTER_OP("Sub")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Sub"));

REGISTER_OP("Mul")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("Mul"));

REGISTER_OP("RealDiv")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("RealDiv"));

REGISTER_OP("Div")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Div"));

REGISTER_OP("FloorDiv")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("FloorDiv"));

REGISTER_OP("FloorMod")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("FloorMod"));

REGISTER_OP("Maximum")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kMinMaxTypes))
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("Maximum"));

REGISTER_OP("Minimum")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kMinMaxTypes))
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("Minimum"));

REGISTER_OP("Pow")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr("bfloat16, float, half, double, int8, int16, int32, int64, "
                   "complex64, complex128"))
    .SetShapeFn(BroadcastBinaryShapeFor("Pow"));

REGISTER_OP("TruncateDiv")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kBinaryMoreTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("TruncateDiv"));

REGISTER_OP("TruncateMod")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr("T: {int32, int64, bfloat16, half, float, double}")
    .SetShapeFn(BroadcastBinaryShapeFor("TruncateMod"));

REGISTER_OP("SquaredDifference")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, "
          "complex128}")
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("SquaredDifference"));

REGISTER_OP("Atan2")
    .Input("y: T").Input("x: T").Output("z: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Atan2"));

// DivNoNan and MulNoNan give 0 where y == 0; Xlogy, Xlog1py and Xdivy give
// 0 where x == 0, whatever the other operand (NaN and Inf included).
REGISTER_OP("DivNoNan")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("DivNoNan"));

REGISTER_OP("MulNoNan")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("MulNoNan"));

REGISTER_OP("Xlogy")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Xlogy"));

REGISTER_OP("Xlog1py")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Xlog1py"));

REGISTER_OP("Xdivy")
    .Input("x: T").Input("y: T").Output("z: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Xdivy"));

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr(absl::StrCat("T: {", kNumberTypes, ", variant}"))
    .SetIsCommutative()
    .SetShapeFn(AddNShape);

// The output has t's shape; each bound is a scalar or has t's shape (the
// kernel checks: TensorFlow's shape function leaves the bounds alone).
REGISTER_OP("ClipByValue")
    .Input("t: T")
    .Input("clip_value_min: T")
    .Input("clip_value_max: T")
    .Output("output: T")
    .Attr(TypeAttr(kNumberTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

// --- Element-wise unary. ---

REGISTER_OP("Neg")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kSignedTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Abs")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr("bfloat16, half, float, double, int8, int16, int32, int64"))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Square")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr("bfloat16, half, float, double, int8, int16, int32, int64, "
                   "uint8, uint16, uint32, uint64, complex64, complex128"))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Sqrt")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Rsqrt")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Exp")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Log")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Tanh")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Sigmoid")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Log1p")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Expm1")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Sin")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Cos")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Tan")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Asin")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Acos")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Atan")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Sinh")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Cosh")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatComplexTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Erf")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Erfc")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Floor")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Ceil")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

// Round and Rint round half to even; Round leaves integers unchanged.
REGISTER_OP("Round")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kSignedTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Rint")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Sign")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kSignedTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Reciprocal")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kSignedTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("Inv")
    .Input("x: T").Output("y: T")
    .Attr(TypeAttr(kSignedTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("IsNan")
    .Input("x: T").Output("y: bool")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("IsInf")
    .Input("x: T").Output("y: bool")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("IsFinite")
    .Input("x: T").Output("y: bool")
    .Attr(TypeAttr(kFloatTypes))
    .SetShapeFn(shape_fns::UnchangedShape);

// --- Comparisons and logic. ---

REGISTER_OP("Less")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr(TypeAttr(kRealNumberTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Less"));

REGISTER_OP("LessEqual")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr(TypeAttr(kRealNumberTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("LessEqual"));

REGISTER_OP("Greater")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr(TypeAttr(kRealNumberTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("Greater"));

REGISTER_OP("GreaterEqual")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr(TypeAttr(kRealNumberTypes))
    .SetShapeFn(BroadcastBinaryShapeFor("GreaterEqual"));

REGISTER_OP("Equal")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetIsCommutative()
    .SetShapeFn(EqualityShapeFor("Equal"));

REGISTER_OP("NotEqual")
    .Input("x: T").Input("y: T").Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetIsCommutative()
    .SetShapeFn(EqualityShapeFor("NotEqual"));

REGISTER_OP("LogicalAnd")
    .Input("x: bool").Input("y: bool").Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("LogicalAnd"));

REGISTER_OP("LogicalOr")
    .Input("x: bool").Input("y: bool").Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryShapeFor("LogicalOr"));

REGISTER_OP("LogicalNot")
    .Input("x: bool").Output("y: bool")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
