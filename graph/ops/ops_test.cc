// Tests for the op definitions in graph/ops: every op is registered with
// TensorFlow's signature and defaults, and the shape functions compute the
// right shapes (or InvalidArgument) through InferenceContext.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "graph/attr_slice.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "graph/testing/shape_test_util.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrI;
using testing::AttrInts;
using testing::AttrS;
using testing::AttrShape;
using testing::AttrTensor;
using testing::AttrType;
using testing::ShapeRun;

// ---------------------------------------------------------------------------
// Helpers.

PartialShape S(std::vector<int64_t> dims) { return PartialShape(std::move(dims)); }
PartialShape Unknown() { return PartialShape(); }

Tensor I32(std::vector<int32_t> values) { return Tensor::FromVector(values); }
Tensor I32Scalar(int32_t v) {
  return Tensor::FromVector(std::vector<int32_t>{v}, TensorShape());
}
Tensor F32Scalar(float v) {
  return Tensor::FromVector(std::vector<float>{v}, TensorShape());
}



const OpDef& Def(const std::string& name) {
  const OpDef* def = OpRegistry::Global()->Find(name);
  EXPECT_NE(def, nullptr) << name;
  static const OpDef* const empty = new OpDef();
  return def != nullptr ? *def : *empty;
}

const AttrValue& Default(const std::string& op, const std::string& attr) {
  static const AttrValue* const none = new AttrValue();
  const AttrDef* a = Def(op).FindAttr(attr);
  EXPECT_NE(a, nullptr) << op << "." << attr;
  if (a == nullptr) return *none;
  EXPECT_TRUE(a->default_value.has_value()) << op << "." << attr;
  return a->default_value.has_value() ? *a->default_value : *none;
}

std::vector<std::string> ArgNames(const std::vector<ArgDef>& args) {
  std::vector<std::string> names;
  for (const ArgDef& a : args) names.push_back(a.name);
  return names;
}

bool Allows(const std::string& op, const std::string& attr, DataType t) {
  const AttrDef* a = Def(op).FindAttr(attr);
  if (a == nullptr) return false;
  for (DataType x : a->allowed_types) {
    if (x == t) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Registration and specs.

const char* const kAllOps[] = {
    // array_ops.cc
    "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN",
    "StopGradient", "Reshape", "Transpose", "Shape", "Size", "Rank", "Fill",
    "ZerosLike", "OnesLike", "Pack", "Unpack", "ConcatV2", "Split", "Slice",
    "StridedSlice", "Squeeze", "ExpandDims", "Tile", "Gather", "GatherV2",
    "OneHot", "Range", "Select", "SelectV2", "Cast", "BroadcastTo",
    // math_ops.cc
    "Add", "AddV2", "AddN", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "Neg",
    "Abs", "Maximum", "Minimum", "Pow", "Square", "Sqrt", "Rsqrt", "Exp",
    "Log", "Tanh", "Sigmoid", "MatMul", "BatchMatMulV2", "Sum", "Mean", "Max",
    "Min", "Prod", "ArgMax", "ArgMin", "Less", "LessEqual", "Greater",
    "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
    "LogicalNot",
    // nn_ops.cc
    "Relu", "Relu6", "Elu", "Softmax", "LogSoftmax", "BiasAdd", "Conv2D",
    "MaxPool", "AvgPool", "FusedBatchNorm", "FusedBatchNormV3",
    // control_ops.cc
    "NoOp", "_Send", "_Recv", "_HostSend", "_HostRecv",
};

TEST(OpsRegistrationTest, EveryOpIsRegisteredWithAShapeFunction) {
  int count = 0;
  for (const char* name : kAllOps) {
    const OpDef* def = OpRegistry::Global()->Find(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->name, name);
    EXPECT_TRUE(static_cast<bool>(def->shape_fn)) << name;
    ++count;
  }
  EXPECT_EQ(count, 85);
  EXPECT_GE(OpRegistry::Global()->ListOpNames().size(), 85u);
}

TEST(OpsSpecTest, MatMul) {
  const OpDef& d = Def("MatMul");
  EXPECT_EQ(ArgNames(d.inputs), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ArgNames(d.outputs), (std::vector<std::string>{"product"}));
  EXPECT_EQ(d.inputs[0].type_attr, "T");
  EXPECT_EQ(Default("MatMul", "transpose_a").value_case(), AttrValue::kB);
  EXPECT_FALSE(Default("MatMul", "transpose_a").b());
  EXPECT_FALSE(Default("MatMul", "transpose_b").b());
  for (DataType t : {DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT32,
                     DT_INT64, DT_COMPLEX64, DT_COMPLEX128}) {
    EXPECT_TRUE(Allows("MatMul", "T", t)) << DataTypeString(t);
  }
  EXPECT_FALSE(Allows("MatMul", "T", DT_BOOL));
  EXPECT_FALSE(Allows("MatMul", "T", DT_STRING));
}

TEST(OpsSpecTest, Conv2D) {
  EXPECT_EQ(Default("Conv2D", "data_format").s(), "NHWC");
  EXPECT_TRUE(Default("Conv2D", "use_cudnn_on_gpu").b());
  const AttrValue& dilations = Default("Conv2D", "dilations");
  EXPECT_EQ(std::vector<int64_t>(dilations.list().i().begin(),
                                 dilations.list().i().end()),
            (std::vector<int64_t>{1, 1, 1, 1}));
  const AttrValue& pads = Default("Conv2D", "explicit_paddings");
  EXPECT_EQ(pads.value_case(), AttrValue::kList);
  EXPECT_EQ(pads.list().i_size(), 0);
  const AttrDef* padding = Def("Conv2D").FindAttr("padding");
  ASSERT_NE(padding, nullptr);
  EXPECT_EQ(padding->type, "string");
  EXPECT_EQ(padding->allowed_strings,
            (std::vector<std::string>{"SAME", "VALID", "EXPLICIT"}));
  EXPECT_FALSE(padding->default_value.has_value());
  const AttrDef* strides = Def("Conv2D").FindAttr("strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->type, "list(int)");
  EXPECT_FALSE(strides->default_value.has_value());
  EXPECT_EQ(Def("Conv2D").FindAttr("data_format")->allowed_strings,
            (std::vector<std::string>{"NHWC", "NCHW"}));
  EXPECT_EQ(ArgNames(Def("Conv2D").inputs),
            (std::vector<std::string>{"input", "filter"}));
}

TEST(OpsSpecTest, DefaultsOfOtherOps) {
  EXPECT_TRUE(Default("Placeholder", "shape").shape().unknown_rank());
  EXPECT_EQ(Default("Squeeze", "squeeze_dims").value_case(), AttrValue::kList);
  EXPECT_EQ(Default("Squeeze", "squeeze_dims").list().i_size(), 0);
  EXPECT_EQ(Def("Squeeze").FindAttr("squeeze_dims")->minimum.value_or(-1), 0);
  EXPECT_FALSE(Default("Sum", "keep_dims").b());
  EXPECT_EQ(Default("Mean", "Tidx").type(), DT_INT32);
  EXPECT_EQ(Default("ArgMax", "output_type").type(), DT_INT64);
  EXPECT_EQ(Default("ArgMin", "output_type").type(), DT_INT64);
  EXPECT_FALSE(Default("Cast", "Truncate").b());
  EXPECT_EQ(Default("GatherV2", "batch_dims").i(), 0);
  EXPECT_TRUE(Default("Gather", "validate_indices").b());
  EXPECT_TRUE(Default("Equal", "incompatible_shape_error").b());
  EXPECT_TRUE(Default("NotEqual", "incompatible_shape_error").b());
  EXPECT_EQ(Default("OneHot", "axis").i(), -1);
  EXPECT_EQ(Default("OneHot", "TI").type(), DT_INT64);
  EXPECT_EQ(Default("Range", "Tidx").type(), DT_INT32);
  EXPECT_EQ(Default("Reshape", "Tshape").type(), DT_INT32);
  EXPECT_EQ(Default("Shape", "out_type").type(), DT_INT32);
  EXPECT_EQ(Default("Pack", "axis").i(), 0);
  EXPECT_EQ(Default("BiasAdd", "data_format").s(), "NHWC");
  EXPECT_EQ(Default("MaxPool", "T").type(), DT_FLOAT);
  EXPECT_EQ(Default("AvgPool", "data_format").s(), "NHWC");
  EXPECT_FLOAT_EQ(Default("FusedBatchNormV3", "epsilon").f(), 0.0001f);
  EXPECT_FLOAT_EQ(Default("FusedBatchNorm", "exponential_avg_factor").f(), 1);
  EXPECT_TRUE(Default("FusedBatchNormV3", "is_training").b());
  EXPECT_FALSE(Default("BatchMatMulV2", "adj_x").b());
  for (const char* mask : {"begin_mask", "end_mask", "ellipsis_mask",
                           "new_axis_mask", "shrink_axis_mask"}) {
    EXPECT_EQ(Default("StridedSlice", mask).i(), 0) << mask;
  }
  EXPECT_FALSE(Def("StridedSlice").FindAttr("Index")->default_value.has_value());
}

TEST(OpsSpecTest, ListArgsAndFlags) {
  EXPECT_EQ(Def("Pack").inputs[0].number_attr, "N");
  EXPECT_EQ(Def("Pack").FindAttr("N")->minimum.value_or(-1), 1);
  EXPECT_EQ(Def("ConcatV2").FindAttr("N")->minimum.value_or(-1), 2);
  EXPECT_EQ(Def("Unpack").outputs[0].number_attr, "num");
  EXPECT_EQ(Def("Split").outputs[0].number_attr, "num_split");
  EXPECT_EQ(Def("IdentityN").inputs[0].type_list_attr, "T");
  EXPECT_EQ(Def("AddN").inputs[0].number_attr, "N");
  EXPECT_TRUE(Def("AddV2").is_commutative);
  EXPECT_TRUE(Def("Equal").is_commutative);
  EXPECT_FALSE(Def("Sub").is_commutative);
  EXPECT_EQ(Def("Less").outputs[0].type, DT_BOOL);
  EXPECT_EQ(Def("Rank").outputs[0].type, DT_INT32);
  EXPECT_EQ(Def("FusedBatchNorm").outputs.size(), 5u);
  EXPECT_EQ(Def("FusedBatchNormV3").outputs.size(), 6u);
  EXPECT_EQ(Def("FusedBatchNormV3").inputs[1].type_attr, "U");
  EXPECT_EQ(Def("Cast").outputs[0].type_attr, "DstT");
  EXPECT_TRUE(Def("NoOp").inputs.empty());
  EXPECT_TRUE(Def("NoOp").outputs.empty());
}

TEST(OpsSpecTest, SendRecv) {
  for (const char* op : {"_Send", "_HostSend"}) {
    const OpDef& d = Def(op);
    EXPECT_TRUE(d.is_stateful) << op;
    EXPECT_TRUE(d.outputs.empty()) << op;
    ASSERT_EQ(d.inputs.size(), 1u) << op;
    EXPECT_EQ(d.inputs[0].type_attr, "T") << op;
  }
  for (const char* op : {"_Recv", "_HostRecv"}) {
    const OpDef& d = Def(op);
    EXPECT_TRUE(d.is_stateful) << op;
    EXPECT_TRUE(d.inputs.empty()) << op;
    ASSERT_EQ(d.outputs.size(), 1u) << op;
    EXPECT_EQ(d.outputs[0].type_attr, "tensor_type") << op;
  }
  for (const char* op : {"_Send", "_Recv", "_HostSend", "_HostRecv"}) {
    const OpDef& d = Def(op);
    EXPECT_EQ(d.FindAttr("tensor_name")->type, "string") << op;
    EXPECT_EQ(d.FindAttr("send_device")->type, "string") << op;
    EXPECT_EQ(d.FindAttr("send_device_incarnation")->type, "int") << op;
    EXPECT_EQ(d.FindAttr("recv_device")->type, "string") << op;
    EXPECT_FALSE(Default(op, "client_terminated").b()) << op;
  }
}

// ---------------------------------------------------------------------------
// Shape functions.

TEST(OpsShapeTest, Broadcasting) {
  EXPECT_EQ(ShapeRun("Add").In(S({2, 1, 3})).In(S({4, 1})).Str(), "[2,4,3]");
  EXPECT_EQ(ShapeRun("Mul").In(S({})).In(S({5})).Str(), "[5]");
  EXPECT_EQ(ShapeRun("AddV2").In(S({5})).In(S({})).Str(), "[5]");
  EXPECT_EQ(ShapeRun("Sub").In(S({-1, 3})).In(S({4, 1})).Str(), "[4,3]");
  EXPECT_EQ(ShapeRun("Maximum").In(S({-1})).In(S({-1})).Str(), "[?]");
  EXPECT_EQ(ShapeRun("RealDiv").In(S({2, -1})).In(S({1, 5})).Str(), "[2,5]");
  EXPECT_EQ(ShapeRun("Less").In(Unknown()).In(S({3})).Str(), "<unknown>");
  EXPECT_EQ(ShapeRun("LogicalAnd").In(S({3, 1})).In(S({1, 4})).Str(), "[3,4]");
  EXPECT_EQ(ShapeRun("Add").In(S({2, 3})).In(S({4})).Error(),
            "Dimensions must be equal, but are 3 and 4 for Add with input "
            "shapes [2,3], [4]");
}

TEST(OpsShapeTest, EqualityIncompatibleShapes) {
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Equal").In(S({2})).In(S({3})).Error(), "2 and 3"));
  EXPECT_EQ(ShapeRun("NotEqual")
                .In(S({2}))
                .In(S({3}))
                .Attr("incompatible_shape_error", AttrB(false))
                .Str(),
            "<unknown>");
  EXPECT_EQ(ShapeRun("Equal").In(S({2, 1})).In(S({3})).Str(), "[2,3]");
}

TEST(OpsShapeTest, UnaryAndAddN) {
  EXPECT_EQ(ShapeRun("Tanh").In(S({2, -1})).Str(), "[2,?]");
  EXPECT_EQ(ShapeRun("Cast").In(S({7})).Str(), "[7]");
  EXPECT_EQ(ShapeRun("AddN").In(S({-1, 3})).In(S({2, -1})).In(Unknown()).Str(),
            "[2,3]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("AddN").In(S({2, 3})).In(S({2, 4})).Error(), "same shape"));
}

TEST(OpsShapeTest, MatMul) {
  EXPECT_EQ(ShapeRun("MatMul").In(S({2, 3})).In(S({3, 5})).Str(), "[2,5]");
  EXPECT_EQ(ShapeRun("MatMul")
                .In(S({3, 2}))
                .In(S({3, 5}))
                .Attr("transpose_a", AttrB(true))
                .Str(),
            "[2,5]");
  EXPECT_EQ(ShapeRun("MatMul")
                .In(S({2, 3}))
                .In(S({5, 3}))
                .Attr("transpose_b", AttrB(true))
                .Str(),
            "[2,5]");
  EXPECT_EQ(ShapeRun("MatMul").In(S({-1, 3})).In(Unknown()).Str(), "[?,?]");
  EXPECT_EQ(ShapeRun("MatMul").In(S({2, 3})).In(S({4, 5})).Error(),
            "Dimensions must be equal, but are 3 and 4 for MatMul with input "
            "shapes [2,3], [4,5]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("MatMul").In(S({3})).In(S({3, 5})).Error(), "rank 2"));
}

TEST(OpsShapeTest, BatchMatMulV2) {
  EXPECT_EQ(
      ShapeRun("BatchMatMulV2").In(S({2, 1, 3, 4})).In(S({5, 4, 6})).Str(),
      "[2,5,3,6]");
  EXPECT_EQ(ShapeRun("BatchMatMulV2")
                .In(S({7, 4, 3}))
                .In(S({6, 4}))
                .Attr("adj_x", AttrB(true))
                .Attr("adj_y", AttrB(true))
                .Str(),
            "[7,3,6]");
  EXPECT_EQ(ShapeRun("BatchMatMulV2").In(S({-1, 2, 3})).In(S({3, 4})).Str(),
            "[?,2,4]");
  EXPECT_FALSE(ShapeRun("BatchMatMulV2").In(S({2, 3, 4})).In(S({3, 4, 5}))
                   .Error().empty());
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("BatchMatMulV2").In(S({2, 3, 4})).In(S({2, 5, 6})).Error(),
      "4 and 5"));
}

TEST(OpsShapeTest, Reshape) {
  EXPECT_EQ(ShapeRun("Reshape").In(S({2, 3})).In(I32({-1, 2})).Str(), "[3,2]");
  EXPECT_EQ(ShapeRun("Reshape").In(S({2, 3, 4})).In(I32({4, -1})).Str(),
            "[4,6]");
  EXPECT_EQ(ShapeRun("Reshape").In(S({2, 3})).In(I32({6})).Str(), "[6]");
  EXPECT_EQ(ShapeRun("Reshape").In(S({-1, 3})).In(I32({-1, 2})).Str(), "[?,2]");
  EXPECT_EQ(ShapeRun("Reshape").In(S({2, 3})).In(S({3})).Str(), "[?,?,?]");
  EXPECT_EQ(ShapeRun("Reshape").In(S({2, 3})).In(I32({4, 2})).Error(),
            "Cannot reshape a tensor with 6 elements to shape [4,2] (8 "
            "elements) for Reshape with input shapes [2,3], [2]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Reshape").In(S({2, 3})).In(I32({-1, 4})).Error(),
      "Cannot reshape a tensor with 6 elements"));
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Reshape").In(S({2, 3})).In(I32({-1, -1})).Error(),
      "Only one input size may be -1"));
}

TEST(OpsShapeTest, Reductions) {
  EXPECT_EQ(ShapeRun("Sum").In(S({2, 3, 4})).In(I32({1})).Str(), "[2,4]");
  EXPECT_EQ(ShapeRun("Mean")
                .In(S({2, 3, 4}))
                .In(I32({-1}))
                .Attr("keep_dims", AttrB(true))
                .Str(),
            "[2,3,1]");
  EXPECT_EQ(ShapeRun("Max").In(S({2, 3, 4})).In(I32({0, -1})).Str(), "[3]");
  EXPECT_EQ(ShapeRun("Prod").In(S({2, -1})).In(I32Scalar(0)).Str(), "[?]");
  EXPECT_EQ(ShapeRun("Min")
                .In(S({2, 3, 4}))
                .In(S({1}))
                .Attr("keep_dims", AttrB(true))
                .Str(),
            "[?,?,?]");
  EXPECT_EQ(ShapeRun("Sum").In(S({2, 3, 4})).In(S({1})).Str(), "<unknown>");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Sum").In(S({2, 3})).In(I32({2})).Error(),
      "Invalid reduction dimension 2"));
}

TEST(OpsShapeTest, ArgMax) {
  EXPECT_EQ(ShapeRun("ArgMax").In(S({2, 3, 4})).In(I32Scalar(-2)).Str(),
            "[2,4]");
  EXPECT_EQ(ShapeRun("ArgMin").In(S({2, 3})).In(S({})).Str(), "[?]");
  EXPECT_EQ(ShapeRun("ArgMax").In(S({5})).In(I32Scalar(0)).Str(), "[]");
  EXPECT_FALSE(
      ShapeRun("ArgMax").In(S({2, 3})).In(I32Scalar(2)).Error().empty());
}

TEST(OpsShapeTest, ConcatV2) {
  EXPECT_EQ(ShapeRun("ConcatV2").In(S({2, 3})).In(S({2, 5})).In(I32Scalar(1))
                .Str(),
            "[2,8]");
  EXPECT_EQ(ShapeRun("ConcatV2").In(S({2, 3})).In(S({2, 5})).In(I32Scalar(-1))
                .Str(),
            "[2,8]");
  EXPECT_EQ(ShapeRun("ConcatV2").In(S({-1, 3})).In(S({2, -1})).In(I32Scalar(0))
                .Str(),
            "[?,3]");
  EXPECT_EQ(ShapeRun("ConcatV2").In(S({1, 3})).In(S({2, 3})).In(S({1, -1}))
                .In(I32Scalar(0)).Str(),
            "[4,3]");
  EXPECT_EQ(ShapeRun("ConcatV2").In(S({2, 3})).In(Unknown()).In(S({})).Str(),
            "[?,?]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("ConcatV2").In(S({2, 3})).In(S({2, 3, 1})).In(I32Scalar(0))
          .Error(),
      "Ranks of all input tensors should match"));
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("ConcatV2").In(S({2, 3})).In(S({3, 3})).In(I32Scalar(1))
          .Error(),
      "Dimension 0 in both shapes must be equal"));
  EXPECT_FALSE(ShapeRun("ConcatV2").In(S({2, 3})).In(S({2, 3}))
                   .In(I32Scalar(2)).Error().empty());
}

TEST(OpsShapeTest, PackAndUnpack) {
  EXPECT_EQ(ShapeRun("Pack").In(S({2, 3})).In(S({2, 3})).In(S({2, -1})).Str(),
            "[3,2,3]");
  EXPECT_EQ(ShapeRun("Pack").In(S({2, 3})).In(S({2, 3})).Attr("axis", AttrI(-1))
                .Str(),
            "[2,3,2]");
  EXPECT_EQ(ShapeRun("Pack").In(S({})).In(S({})).Str(), "[2]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Pack").In(S({2, 3})).In(S({3})).Error(),
      "Shapes of all inputs must match"));
  EXPECT_EQ(ShapeRun("Unpack").In(S({2, 3})).Attr("num", AttrI(2)).Str(),
            "[3];[3]");
  EXPECT_EQ(ShapeRun("Unpack").In(S({2, 3})).Attr("num", AttrI(3))
                .Attr("axis", AttrI(1)).Str(),
            "[2];[2];[2]");
  EXPECT_FALSE(ShapeRun("Unpack").In(S({2, 3})).Attr("num", AttrI(3)).Error()
                   .empty());
}

TEST(OpsShapeTest, Split) {
  EXPECT_EQ(ShapeRun("Split").In(I32Scalar(1)).In(S({2, 6}))
                .Attr("num_split", AttrI(3)).Str(),
            "[2,2];[2,2];[2,2]");
  EXPECT_EQ(ShapeRun("Split").In(S({})).In(S({2, 6}))
                .Attr("num_split", AttrI(2)).Str(),
            "[?,?];[?,?]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Split").In(I32Scalar(0)).In(S({4, 6}))
          .Attr("num_split", AttrI(3)).Error(),
      "evenly divisible by 3 but is 4"));
}

TEST(OpsShapeTest, Conv2D) {
  auto conv = [](const std::string& padding) {
    return ShapeRun("Conv2D")
        .In(S({1, 224, 224, 3}))
        .In(S({7, 7, 3, 64}))
        .Attr("strides", AttrInts({1, 2, 2, 1}))
        .Attr("padding", AttrS(padding));
  };
  EXPECT_EQ(conv("SAME").Str(), "[1,112,112,64]");
  EXPECT_EQ(conv("VALID").Str(), "[1,109,109,64]");
  EXPECT_EQ(conv("VALID").Attr("dilations", AttrInts({1, 2, 2, 1})).Str(),
            "[1,106,106,64]");
  EXPECT_EQ(conv("EXPLICIT")
                .Attr("explicit_paddings", AttrInts({0, 0, 3, 3, 3, 3, 0, 0}))
                .Str(),
            "[1,112,112,64]");
  EXPECT_FALSE(conv("EXPLICIT").Error().empty());
  EXPECT_EQ(ShapeRun("Conv2D")
                .In(S({-1, 3, 32, 32}))
                .In(S({3, 3, 3, 8}))
                .Attr("strides", AttrInts({1, 1, 2, 2}))
                .Attr("padding", AttrS("SAME"))
                .Attr("data_format", AttrS("NCHW"))
                .Str(),
            "[?,8,16,16]");
  EXPECT_EQ(ShapeRun("Conv2D")
                .In(S({1, -1, 10, 3}))
                .In(Unknown())
                .Attr("strides", AttrInts({1, 1, 1, 1}))
                .Attr("padding", AttrS("VALID"))
                .Str(),
            "[1,?,?,?]");
  EXPECT_TRUE(absl::StrContains(ShapeRun("Conv2D")
                                    .In(S({1, 8, 8, 4}))
                                    .In(S({3, 3, 3, 8}))
                                    .Attr("strides", AttrInts({1, 1, 1, 1}))
                                    .Attr("padding", AttrS("SAME"))
                                    .Error(),
                                "not a multiple of input depth of filter"));
  EXPECT_TRUE(absl::StrContains(ShapeRun("Conv2D")
                                    .In(S({1, 8, 8, 3}))
                                    .In(S({3, 3, 3, 8}))
                                    .Attr("strides", AttrInts({1, 1, 1}))
                                    .Attr("padding", AttrS("SAME"))
                                    .Error(),
                                "4 values"));
}

TEST(OpsShapeTest, Pooling) {
  auto pool = [](const std::string& op, PartialShape in,
                 const std::string& padding) {
    return ShapeRun(op)
        .In(std::move(in))
        .Attr("ksize", AttrInts({1, 2, 2, 1}))
        .Attr("strides", AttrInts({1, 2, 2, 1}))
        .Attr("padding", AttrS(padding));
  };
  EXPECT_EQ(pool("MaxPool", S({1, 4, 4, 3}), "VALID").Str(), "[1,2,2,3]");
  EXPECT_EQ(pool("MaxPool", S({1, 5, 5, 3}), "SAME").Str(), "[1,3,3,3]");
  EXPECT_EQ(pool("MaxPool", S({1, 5, 5, 3}), "VALID").Str(), "[1,2,2,3]");
  EXPECT_EQ(pool("AvgPool", S({-1, 6, 6, 3}), "SAME").Str(), "[?,3,3,3]");
  EXPECT_EQ(pool("MaxPool", S({2, 3, 8, 8}), "VALID")
                .Attr("ksize", AttrInts({1, 1, 2, 2}))
                .Attr("strides", AttrInts({1, 1, 2, 2}))
                .Attr("data_format", AttrS("NCHW"))
                .Str(),
            "[2,3,4,4]");
  EXPECT_FALSE(pool("MaxPool", S({1, 4, 4}), "VALID").Error().empty());
}

TEST(OpsShapeTest, BiasAddSoftmaxBatchNorm) {
  EXPECT_EQ(ShapeRun("BiasAdd").In(S({2, -1, 5})).In(S({5})).Str(), "[2,?,5]");
  EXPECT_EQ(ShapeRun("BiasAdd").In(S({2, -1, 4, 4})).In(S({3}))
                .Attr("data_format", AttrS("NCHW")).Str(),
            "[2,3,4,4]");
  EXPECT_FALSE(ShapeRun("BiasAdd").In(S({2, 4})).In(S({5})).Error().empty());
  EXPECT_EQ(ShapeRun("Softmax").In(S({2, 10})).Str(), "[2,10]");
  EXPECT_FALSE(ShapeRun("LogSoftmax").In(S({})).Error().empty());
  EXPECT_EQ(ShapeRun("FusedBatchNormV3")
                .In(S({8, 4, 4, -1}))
                .In(S({16}))
                .In(S({16}))
                .In(S({0}))
                .In(S({0}))
                .Str(),
            "[8,4,4,16];[16];[16];[16];[16];<unknown>");
  EXPECT_FALSE(ShapeRun("FusedBatchNorm")
                   .In(S({8, 4, 4, 16}))
                   .In(S({16}))
                   .In(S({16}))
                   .In(S({0}))
                   .In(S({0}))
                   .Attr("is_training", AttrB(false))
                   .Error()
                   .empty());
}

TEST(OpsShapeTest, Squeeze) {
  EXPECT_EQ(ShapeRun("Squeeze").In(S({1, 3, 1, 2})).Str(), "[3,2]");
  EXPECT_EQ(ShapeRun("Squeeze").In(S({1, 3, 1, 2}))
                .Attr("squeeze_dims", AttrInts({0})).Str(),
            "[3,1,2]");
  EXPECT_EQ(ShapeRun("Squeeze").In(S({1, 3, 1, 2}))
                .Attr("squeeze_dims", AttrInts({-2})).Str(),
            "[1,3,2]");
  EXPECT_EQ(ShapeRun("Squeeze").In(S({-1, 3}))
                .Attr("squeeze_dims", AttrInts({0})).Str(),
            "[3]");
  EXPECT_EQ(ShapeRun("Squeeze").In(S({-1, 3})).Str(), "<unknown>");
  EXPECT_EQ(ShapeRun("Squeeze").In(S({1, 3}))
                .Attr("squeeze_dims", AttrInts({1})).Error(),
            "Can not squeeze dim[1], expected a dimension of 1, got 3");
}

TEST(OpsShapeTest, ExpandDims) {
  EXPECT_EQ(ShapeRun("ExpandDims").In(S({2, 3})).In(I32Scalar(-1)).Str(),
            "[2,3,1]");
  EXPECT_EQ(ShapeRun("ExpandDims").In(S({2, 3})).In(I32Scalar(0)).Str(),
            "[1,2,3]");
  EXPECT_EQ(ShapeRun("ExpandDims").In(S({2, 3})).In(I32Scalar(-3)).Str(),
            "[1,2,3]");
  EXPECT_EQ(ShapeRun("ExpandDims").In(S({2, 3})).In(S({})).Str(), "[?,?,?]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("ExpandDims").In(S({2, 3})).In(I32Scalar(3)).Error(),
      "Tried to expand dim index 3"));
}

TEST(OpsShapeTest, Transpose) {
  EXPECT_EQ(ShapeRun("Transpose").In(S({2, 3, 4})).In(I32({2, 0, 1})).Str(),
            "[4,2,3]");
  EXPECT_EQ(ShapeRun("Transpose").In(Unknown()).In(I32({1, 0})).Str(),
            "[?,?]");
  EXPECT_EQ(ShapeRun("Transpose").In(S({2, 3})).In(S({2})).Str(), "[?,?]");
  EXPECT_FALSE(
      ShapeRun("Transpose").In(S({2, 3})).In(I32({0, 1, 2})).Error().empty());
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Transpose").In(S({2, 3})).In(I32({1, 1})).Error(),
      "not a permutation"));
}

TEST(OpsShapeTest, StridedSlice) {
  auto ss = [](std::vector<int32_t> b, std::vector<int32_t> e,
               std::vector<int32_t> s) {
    return ShapeRun("StridedSlice").In(S({10, 20})).In(I32(b)).In(I32(e))
        .In(I32(s));
  };
  EXPECT_EQ(ss({2, 0}, {8, 20}, {1, 1}).Str(), "[6,20]");
  EXPECT_EQ(ss({2}, {8}, {1}).Str(), "[6,20]");  // trailing dims kept
  EXPECT_EQ(ss({0}, {0}, {3}).Attr("begin_mask", AttrI(1))
                .Attr("end_mask", AttrI(1)).Str(),
            "[4,20]");  // x[::3]
  EXPECT_EQ(ss({3}, {4}, {1}).Attr("shrink_axis_mask", AttrI(1)).Str(),
            "[20]");  // x[3]
  EXPECT_EQ(ss({0}, {0}, {-1}).Attr("begin_mask", AttrI(1))
                .Attr("end_mask", AttrI(1)).Str(),
            "[10,20]");  // x[::-1]
  EXPECT_EQ(ss({-3}, {0}, {1}).Attr("end_mask", AttrI(1)).Str(),
            "[3,20]");  // x[-3:]
  EXPECT_EQ(ss({0, 5}, {0, 100}, {1, 1}).Attr("new_axis_mask", AttrI(1)).Str(),
            "[1,5,20]");  // x[newaxis, 5:100]
  EXPECT_EQ(ss({0, 1}, {0, 2}, {1, 1}).Attr("ellipsis_mask", AttrI(1))
                .Attr("shrink_axis_mask", AttrI(2)).Str(),
            "[10]");  // x[..., 1]
  EXPECT_EQ(ss({8}, {2}, {1}).Str(), "[0,20]");
  EXPECT_EQ(ShapeRun("StridedSlice").In(S({10, 20})).In(S({1})).In(S({1}))
                .In(S({1})).Str(),
            "<unknown>");
  EXPECT_TRUE(absl::StrContains(ss({0}, {1}, {0}).Error(), "non-zero"));
  EXPECT_TRUE(absl::StrContains(
      ss({12}, {13}, {1}).Attr("shrink_axis_mask", AttrI(1)).Error(),
      "out of bounds"));
}

TEST(OpsShapeTest, SliceGatherTile) {
  EXPECT_EQ(ShapeRun("Slice").In(S({4, 5})).In(I32({1, 2})).In(I32({2, -1}))
                .Str(),
            "[2,3]");
  EXPECT_FALSE(ShapeRun("Slice").In(S({4, 5})).In(I32({3, 0})).In(I32({2, 1}))
                   .Error().empty());
  EXPECT_EQ(ShapeRun("Gather").In(S({10, 4})).In(S({2, 3})).Str(), "[2,3,4]");
  EXPECT_EQ(ShapeRun("GatherV2").In(S({5, 10, 4})).In(S({7}))
                .In(I32Scalar(1)).Str(),
            "[5,7,4]");
  EXPECT_EQ(ShapeRun("GatherV2").In(S({5, 10, 4})).In(S({5, 7}))
                .In(I32Scalar(1)).Attr("batch_dims", AttrI(1)).Str(),
            "[5,7,4]");
  EXPECT_EQ(ShapeRun("GatherV2").In(S({5, 10, 4})).In(S({7})).In(S({})).Str(),
            "[?,?,?]");
  EXPECT_EQ(ShapeRun("Tile").In(S({2, -1})).In(I32({3, 2})).Str(), "[6,?]");
  EXPECT_FALSE(ShapeRun("Tile").In(S({2, 3})).In(I32({3})).Error().empty());
}

TEST(OpsShapeTest, OneHot) {
  auto one_hot = [](PartialShape indices) {
    return ShapeRun("OneHot").In(std::move(indices)).In(I32Scalar(10))
        .In(F32Scalar(1)).In(F32Scalar(0));
  };
  EXPECT_EQ(one_hot(S({4})).Str(), "[4,10]");
  EXPECT_EQ(one_hot(S({4})).Attr("axis", AttrI(0)).Str(), "[10,4]");
  EXPECT_EQ(one_hot(S({2, 3})).Attr("axis", AttrI(1)).Str(), "[2,10,3]");
  EXPECT_EQ(ShapeRun("OneHot").In(S({4})).In(S({})).In(S({})).In(S({})).Str(),
            "[4,?]");
  EXPECT_TRUE(absl::StrContains(
      one_hot(S({4})).Attr("axis", AttrI(-2)).Error(), "axis must be >= -1"));
}

TEST(OpsShapeTest, ConstAndPlaceholders) {
  Tensor value = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5, 6},
                                    TensorShape({2, 3}));
  EXPECT_EQ(ShapeRun("Const").Attr("value", AttrTensor(value))
                .Attr("dtype", AttrType(DT_FLOAT)).Str(),
            "[2,3]");
  EXPECT_EQ(ShapeRun("Const").Attr("value", AttrTensor(I32Scalar(7)))
                .Attr("dtype", AttrType(DT_INT32)).Str(),
            "[]");
  EXPECT_TRUE(absl::StrContains(
      ShapeRun("Const").Attr("value", AttrTensor(value))
          .Attr("dtype", AttrType(DT_INT32)).Error(),
      "Type mismatch"));
  EXPECT_EQ(ShapeRun("Placeholder").Attr("dtype", AttrType(DT_FLOAT)).Str(),
            "<unknown>");
  AttrValue shape;
  shape.mutable_shape()->add_dim()->set_size(-1);
  shape.mutable_shape()->add_dim()->set_size(3);
  EXPECT_EQ(ShapeRun("Placeholder").Attr("dtype", AttrType(DT_FLOAT))
                .Attr("shape", shape).Str(),
            "[?,3]");
  EXPECT_EQ(ShapeRun("PlaceholderWithDefault").In(S({2, 3}))
                .Attr("shape", shape).Str(),
            "[?,3]");
  EXPECT_FALSE(ShapeRun("PlaceholderWithDefault").In(S({2, 4}))
                   .Attr("shape", shape).Error().empty());
}

TEST(OpsShapeTest, MiscArrayOps) {
  EXPECT_EQ(ShapeRun("Shape").In(S({2, -1, 3})).Str(), "[3]");
  EXPECT_EQ(ShapeRun("Shape").In(Unknown()).Str(), "[?]");
  EXPECT_EQ(ShapeRun("Size").In(S({2, 3})).Str(), "[]");
  EXPECT_EQ(ShapeRun("Rank").In(S({2, 3})).Str(), "[]");
  EXPECT_EQ(ShapeRun("Fill").In(I32({2, 3})).In(F32Scalar(0)).Str(), "[2,3]");
  EXPECT_EQ(ShapeRun("Fill").In(S({2})).In(S({})).Str(), "[?,?]");
  EXPECT_EQ(ShapeRun("Range").In(I32Scalar(0)).In(I32Scalar(10))
                .In(I32Scalar(3)).Str(),
            "[4]");
  EXPECT_EQ(ShapeRun("Range").In(F32Scalar(0)).In(F32Scalar(1))
                .In(F32Scalar(0.25f)).Str(),
            "[4]");
  EXPECT_EQ(ShapeRun("Range").In(S({})).In(S({})).In(S({})).Str(), "[?]");
  EXPECT_FALSE(ShapeRun("Range").In(I32Scalar(0)).In(I32Scalar(10))
                   .In(I32Scalar(0)).Error().empty());
  EXPECT_EQ(ShapeRun("Select").In(S({2})).In(S({2, 3})).In(S({-1, 3})).Str(),
            "[2,3]");
  EXPECT_FALSE(ShapeRun("Select").In(S({3})).In(S({2, 3})).In(S({2, 3}))
                   .Error().empty());
  EXPECT_EQ(ShapeRun("SelectV2").In(S({2, 1})).In(S({3})).In(S({})).Str(),
            "[2,3]");
  EXPECT_EQ(ShapeRun("BroadcastTo").In(S({3})).In(I32({2, 3})).Str(), "[2,3]");
  EXPECT_FALSE(
      ShapeRun("BroadcastTo").In(S({3})).In(I32({2, 4})).Error().empty());
  EXPECT_EQ(ShapeRun("IdentityN").In(S({2})).In(S({3, 4}))
                .Attr("T", [] {
                  AttrValue a;
                  a.mutable_list()->add_type(DT_FLOAT);
                  a.mutable_list()->add_type(DT_INT32);
                  return a;
                }())
                .Str(),
            "[2];[3,4]");
  EXPECT_EQ(ShapeRun("NoOp").Str(), "");
}

// TensorList ops: shapes come from the element_shape inputs and attrs
// (graphrun has no handle data).
TEST(OpsShapeTest, TensorListOps) {
  EXPECT_EQ(ShapeRun("TensorListReserve").In(I32({2, -1})).In(I32Scalar(3)).Str(), "[]");
  EXPECT_EQ(ShapeRun("TensorListReserve").In(I32Scalar(-1)).In(S({})).Str(), "[]");
  EXPECT_NE(ShapeRun("TensorListReserve").In(I32Scalar(4)).In(S({})).Error().find(
                "it must have value -1"),
            std::string::npos);
  EXPECT_EQ(ShapeRun("TensorListFromTensor").In(S({5, 2, 3})).In(I32({2, -1})).Str(), "[]");
  EXPECT_FALSE(
      ShapeRun("TensorListFromTensor").In(S({5, 2, 3})).In(I32({3})).Error().empty());
  EXPECT_EQ(ShapeRun("TensorListGetItem").In(S({})).In(S({})).In(I32({4, -1})).Str(),
            "[4,?]");
  EXPECT_EQ(ShapeRun("TensorListGetItem").In(S({})).In(S({})).In(I32Scalar(-1)).Str(),
            "<unknown>");
  EXPECT_EQ(ShapeRun("TensorListSetItem").In(S({})).In(S({})).In(S({4})).Str(), "[]");
  EXPECT_EQ(ShapeRun("TensorListStack").In(S({})).In(I32({4, 8})).Str(), "[?,4,8]");
  EXPECT_EQ(ShapeRun("TensorListStack").In(S({})).In(I32({4, 8}))
                .Attr("num_elements", AttrI(3)).Str(),
            "[3,4,8]");
  EXPECT_EQ(ShapeRun("TensorListStack").In(S({})).In(I32Scalar(-1)).Str(), "<unknown>");
  EXPECT_EQ(ShapeRun("TensorListGather").In(S({})).In(S({5})).In(I32({2})).Str(), "[5,2]");
  EXPECT_EQ(ShapeRun("TensorListLength").In(S({})).Str(), "[]");
  EXPECT_EQ(ShapeRun("TensorListPopBack").In(S({})).In(I32Scalar(-1)).Str(),
            "[];<unknown>");
  EXPECT_EQ(ShapeRun("TensorListConcatV2").In(S({})).In(I32({-1, 3})).In(S({0})).Str(),
            "[?,3];[?]");
  EXPECT_EQ(ShapeRun("TensorListConcat").In(S({})).Attr("element_shape", AttrShape({2, 3}))
                .Str(),
            "[?,3];[?]");
  EXPECT_EQ(Default("TensorListSetItem", "resize_if_index_out_of_bounds").b(), false);
  EXPECT_EQ(Default("TensorListStack", "num_elements").i(), -1);
}

TEST(OpsShapeTest, TensorArrayOps) {
  EXPECT_EQ(ShapeRun("TensorArrayV3").In(S({})).Str(), "[2];[]");
  EXPECT_FALSE(ShapeRun("TensorArrayV3").In(S({2})).Error().empty());
  EXPECT_EQ(ShapeRun("TensorArrayReadV3").In(S({2})).In(S({})).In(S({})).Str(), "<unknown>");
  EXPECT_EQ(ShapeRun("TensorArrayWriteV3").In(S({2})).In(S({})).In(S({3})).In(S({})).Str(),
            "[]");
  EXPECT_EQ(ShapeRun("TensorArrayGatherV3").In(S({2})).In(S({7})).In(S({}))
                .Attr("element_shape", AttrShape({2, 6})).Str(),
            "[7,2,6]");
  EXPECT_EQ(ShapeRun("TensorArrayGatherV3").In(S({2})).In(S({7})).In(S({})).Str(),
            "<unknown>");
  EXPECT_FALSE(ShapeRun("TensorArrayGatherV3").In(S({3})).In(S({7})).In(S({}))
                   .Error().empty());
  EXPECT_EQ(ShapeRun("TensorArrayScatterV3").In(S({2})).In(S({7})).In(S({7, 3})).In(S({}))
                .Str(),
            "[]");
  EXPECT_EQ(ShapeRun("TensorArrayConcatV3").In(S({2})).In(S({})).Str(), "<unknown>;[?]");
  EXPECT_EQ(ShapeRun("TensorArraySizeV3").In(S({2})).In(S({})).Str(), "[]");
  EXPECT_EQ(Default("TensorArrayV3", "clear_after_read").b(), true);
  EXPECT_EQ(Default("TensorArrayV3", "dynamic_size").b(), false);
  EXPECT_TRUE(Def("TensorArrayV3").is_stateful);
}

TEST(OpsShapeTest, ReverseV2AllAnyAssert) {
  EXPECT_EQ(ShapeRun("ReverseV2").In(S({2, -1, 3})).In(I32({0, -1})).Str(), "[2,?,3]");
  EXPECT_NE(ShapeRun("ReverseV2").In(S({2, 3})).In(I32({2})).Error().find(
                "'axis'[0] = 2 is out of valid range [0, 1]"),
            std::string::npos);
  EXPECT_NE(ShapeRun("ReverseV2").In(S({2, 3})).In(I32({1, -1})).Error().find(
                "axis 1 specified more than once."),
            std::string::npos);
  EXPECT_EQ(ShapeRun("All").In(S({2, 3})).In(I32({1})).Str(), "[2]");
  EXPECT_EQ(ShapeRun("Any").In(S({2, 3})).In(I32({1})).Attr("keep_dims", AttrB(true)).Str(),
            "[2,1]");
  EXPECT_TRUE(Def("Assert").is_stateful);
  EXPECT_EQ(Default("Assert", "summarize").i(), 3);
}

}  // namespace
}  // namespace graphrun
