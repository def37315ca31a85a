// Tests for the shape functions in layout_shapes.cc and index_shapes.cc
// (padding, space/batch/depth moves, Roll, N-d gather/scatter, Where,
// scans, top-k, diagonal matrices, Unique, LinSpace...): output shapes from
// constant and unknown inputs, InvalidArgument for impossible ones, and an
// import that names the node whose constant paddings are bad.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attr_slice.h"
#include "graph/graph_io.h"
#include "graph/import.h"
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

PartialShape S(std::vector<int64_t> dims) {
  return PartialShape(std::move(dims));
}
PartialShape Unknown() { return PartialShape(); }

Tensor I32(std::vector<int32_t> v) { return Tensor::FromVector(v); }
Tensor I32Mat(std::vector<int32_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector(v, TensorShape({n / 2, 2}));
}
Tensor I32Scalar(int32_t v) { return Tensor::Scalar<int32_t>(v); }



bool Has(const std::string& s, const std::string& part) {
  return absl::StrContains(s, part);
}

TEST(PadShapeTest, ConstantAndUnknownPaddings) {
  EXPECT_EQ(ShapeRun("Pad").In(S({2, -1})).In(I32Mat({1, 2, 0, 3})).Str(),
            "[5,?]");
  EXPECT_EQ(ShapeRun("Pad").In(Unknown()).In(I32Mat({1, 2, 0, 3})).Str(),
            "[?,?]");
  EXPECT_EQ(ShapeRun("Pad").In(Unknown()).In(S({3, 2})).Str(), "[?,?,?]");
  EXPECT_EQ(ShapeRun("PadV2").In(S({2})).In(I32Mat({1, 1})).In(S({})).Str(),
            "[4]");
  EXPECT_TRUE(
      Has(ShapeRun("PadV2").In(S({2})).In(I32Mat({1, 1})).In(S({2})).Str(),
          "constant_values must have rank 0"));
  EXPECT_TRUE(Has(ShapeRun("Pad").In(S({2, 3})).In(I32Mat({0, 0})).Str(),
                  "must be the rank of the input"));
  EXPECT_TRUE(Has(ShapeRun("Pad").In(S({2})).In(S({1, 3})).Str(),
                  "matrix with 2 columns"));
  EXPECT_TRUE(Has(ShapeRun("Pad").In(S({2})).In(I32Mat({-1, 0})).Str(),
                  "Paddings must be non-negative"));
}

TEST(PadShapeTest, MirrorPadLimits) {
  auto mirror = [](const char* mode, std::vector<int32_t> pads) {
    return ShapeRun("MirrorPad")
        .In(S({3, -1}))
        .In(I32Mat(std::move(pads)))
        .Attr("mode", AttrS(mode))
        .Str();
  };
  EXPECT_EQ(mirror("REFLECT", {2, 2, 5, 5}), "[7,?]");
  EXPECT_TRUE(
      Has(mirror("REFLECT", {3, 0, 0, 0}),
          "paddings[0] = [3, 0] must be less than the dimension size 3"));
  EXPECT_EQ(mirror("SYMMETRIC", {3, 3, 0, 0}), "[9,?]");
  EXPECT_TRUE(Has(mirror("SYMMETRIC", {0, 4, 0, 0}), "must not exceed"));
}

TEST(LayoutShapeTest, Roll) {
  EXPECT_EQ(ShapeRun("Roll").In(S({2, 3})).In(I32({1})).In(I32({-1})).Str(),
            "[2,3]");
  EXPECT_TRUE(
      Has(ShapeRun("Roll").In(S({2, 3})).In(I32({1})).In(I32({2})).Str(),
          "Roll axis 2 is out of range"));
  EXPECT_TRUE(Has(ShapeRun("Roll").In(S({2, 3})).In(S({2})).In(S({1})).Str(),
                  "same size"));
  EXPECT_TRUE(Has(ShapeRun("Roll").In(S({})).In(S({})).In(S({})).Str(),
                  "1-D or higher"));
}

TEST(LayoutShapeTest, SpaceToBatchAndBack) {
  EXPECT_EQ(ShapeRun("SpaceToBatchND")
                .In(S({2, 3, 4, 5}))
                .In(I32({2, 2}))
                .In(I32Mat({1, 0, 1, 1}))
                .Str(),
            "[8,2,3,5]");
  EXPECT_EQ(ShapeRun("SpaceToBatchND")
                .In(S({-1, 3, 4, 5}))
                .In(I32({2, 2}))
                .In(S({2, 2}))
                .Str(),
            "[?,?,?,5]");
  EXPECT_TRUE(
      Has(ShapeRun("SpaceToBatchND")
              .In(S({1, 3, 4}))
              .In(I32({2}))
              .In(I32Mat({0, 0}))
              .Str(),
          "padded_shape[0] = 3 is not divisible by block_shape[0] = 2"));
  EXPECT_EQ(ShapeRun("BatchToSpaceND")
                .In(S({8, 2, 3, 5}))
                .In(I32({2, 2}))
                .In(I32Mat({1, 0, 1, 1}))
                .Str(),
            "[2,3,4,5]");
  EXPECT_TRUE(Has(ShapeRun("BatchToSpaceND")
                      .In(S({3, 2}))
                      .In(I32({2}))
                      .In(I32Mat({0, 0}))
                      .Str(),
                  "not divisible by the product of block_shape"));
  EXPECT_TRUE(Has(ShapeRun("BatchToSpaceND")
                      .In(S({2, 2}))
                      .In(I32({1}))
                      .In(I32Mat({2, 1}))
                      .Str(),
                  "exceed the uncropped size 2"));
  EXPECT_EQ(
      ShapeRun("BatchToSpaceND").In(Unknown()).In(I32({2})).In(S({1, 2})).Str(),
      "<unknown>");
}

TEST(LayoutShapeTest, DepthAndSpace) {
  EXPECT_EQ(ShapeRun("DepthToSpace")
                .In(S({1, 2, 3, 8}))
                .Attr("block_size", AttrI(2))
                .Str(),
            "[1,4,6,2]");
  EXPECT_EQ(ShapeRun("DepthToSpace")
                .In(S({1, 8, 2, -1}))
                .Attr("block_size", AttrI(2))
                .Attr("data_format", AttrS("NCHW"))
                .Str(),
            "[1,2,4,?]");
  EXPECT_EQ(ShapeRun("SpaceToDepth")
                .In(S({1, 4, 6, 2}))
                .Attr("block_size", AttrI(2))
                .Str(),
            "[1,2,3,8]");
  EXPECT_TRUE(Has(ShapeRun("SpaceToDepth")
                      .In(S({1, 3, 6, 2}))
                      .Attr("block_size", AttrI(2))
                      .Str(),
                  "Input height 3 must be divisible by 2"));
  EXPECT_TRUE(Has(ShapeRun("DepthToSpace")
                      .In(S({1, 2, 3, 6}))
                      .Attr("block_size", AttrI(2))
                      .Str(),
                  "Input depth 6 must be divisible by 4"));
  EXPECT_TRUE(Has(ShapeRun("DepthToSpace")
                      .In(S({1, 2, 3, 8}))
                      .Attr("block_size", AttrI(2))
                      .Attr("data_format", AttrS("NCHW_VECT_C"))
                      .Str(),
                  "data_format 'NCHW_VECT_C' is not supported"));
}

TEST(IndexShapeTest, GatherScatterWhere) {
  EXPECT_EQ(ShapeRun("GatherNd").In(S({2, 3, 4})).In(S({5, 6, 2})).Str(),
            "[5,6,4]");
  EXPECT_EQ(ShapeRun("GatherNd").In(S({2, 3})).In(S({5, -1})).Str(),
            "<unknown>");
  EXPECT_TRUE(Has(ShapeRun("GatherNd").In(S({2})).In(S({1, 2})).Str(),
                  "indices.shape[-1] must be <= params.rank"));
  EXPECT_EQ(
      ShapeRun("ScatterNd").In(S({4, 1})).In(S({4, 3})).In(I32({8, 3})).Str(),
      "[8,3]");
  EXPECT_EQ(ShapeRun("ScatterNd").In(S({4, 1})).In(S({4, 3})).In(S({2})).Str(),
            "[?,?]");
  EXPECT_TRUE(Has(
      ShapeRun("ScatterNd").In(S({4, 1})).In(S({4, 2})).In(I32({8, 3})).Str(),
      "updates must have shape"));
  EXPECT_EQ(ShapeRun("Where").In(S({2, -1, 4})).Str(), "[?,3]");
  EXPECT_EQ(ShapeRun("Where").In(Unknown()).Str(), "[?,?]");
}

TEST(IndexShapeTest, ScansTopKAndSequences) {
  EXPECT_EQ(ShapeRun("Cumsum").In(S({2, 3})).In(I32Scalar(-1)).Str(), "[2,3]");
  EXPECT_TRUE(Has(ShapeRun("Cumprod").In(S({2, 3})).In(I32Scalar(2)).Str(),
                  "Expected scan axis in the range [-2, 2), but got 2"));
  EXPECT_EQ(ShapeRun("TopKV2").In(S({4, 10})).In(I32Scalar(3)).Str(),
            "[4,3];[4,3]");
  EXPECT_EQ(ShapeRun("TopKV2").In(S({4, -1})).In(S({})).Str(), "[4,?];[4,?]");
  EXPECT_TRUE(Has(ShapeRun("TopKV2").In(S({4, 2})).In(I32Scalar(3)).Str(),
                  "input must have last dimension >= k = 3 but is 2"));
  EXPECT_TRUE(Has(ShapeRun("TopKV2").In(S({4, 2})).In(I32Scalar(-1)).Str(),
                  "k must be non-negative"));
  EXPECT_EQ(ShapeRun("LinSpace").In(S({})).In(S({})).In(I32Scalar(7)).Str(),
            "[7]");
  EXPECT_EQ(ShapeRun("LinSpace").In(S({})).In(S({})).In(S({})).Str(), "[?]");
  EXPECT_TRUE(
      Has(ShapeRun("LinSpace").In(S({})).In(S({})).In(I32Scalar(0)).Str(),
          "num > 0"));
  EXPECT_EQ(ShapeRun("Bucketize").In(S({2, -1})).Str(), "[2,?]");
  EXPECT_EQ(ShapeRun("Unique").In(S({5})).Str(), "[?];[5]");
  EXPECT_TRUE(Has(ShapeRun("Unique").In(S({5, 2})).Str(), "must have rank 1"));
  EXPECT_EQ(ShapeRun("InvertPermutation").In(S({4})).Str(), "[4]");
  EXPECT_EQ(ShapeRun("BroadcastArgs").In(S({3})).In(S({5})).Str(), "[5]");
  EXPECT_EQ(ShapeRun("BroadcastArgs").In(S({3})).In(S({-1})).Str(), "[?]");
  EXPECT_EQ(ShapeRun("EnsureShape")
                .In(S({-1, 3}))
                .Attr("shape", AttrShape({2, -1}))
                .Str(),
            "[2,3]");
  EXPECT_TRUE(Has(
      ShapeRun("EnsureShape").In(S({2, 3})).Attr("shape", AttrShape({2, 4})).Str(),
      "is not compatible with the expected shape [2,4]"));
  EXPECT_EQ(ShapeRun("PreventGradient").In(S({2})).Str(), "[2]");
  EXPECT_EQ(ShapeRun("Snapshot").In(S({-1})).Str(), "[?]");
}

TEST(IndexShapeTest, BandAndDiagonals) {
  EXPECT_EQ(
      ShapeRun("MatrixBandPart").In(S({2, 3, 4})).In(S({})).In(S({})).Str(),
      "[2,3,4]");
  EXPECT_TRUE(
      Has(ShapeRun("MatrixBandPart").In(S({3})).In(S({})).In(S({})).Str(),
          "at least 2"));
  EXPECT_EQ(ShapeRun("MatrixDiag").In(S({2, 3})).Str(), "[2,3,3]");
  // MatrixDiagV3: k = [-1, 1], 3 diagonals of length 3 -> 3x3 (or rows
  // given, columns inferred).
  EXPECT_EQ(ShapeRun("MatrixDiagV3")
                .In(S({5, 3, 3}))
                .In(I32({-1, 1}))
                .In(I32Scalar(-1))
                .In(I32Scalar(-1))
                .In(S({}))
                .Str(),
            "[5,3,3]");
  EXPECT_EQ(ShapeRun("MatrixDiagV3")
                .In(S({2}))
                .In(I32Scalar(1))
                .In(I32Scalar(3))
                .In(I32Scalar(-1))
                .In(S({}))
                .Str(),
            "[3,3]");
  EXPECT_EQ(ShapeRun("MatrixDiagV3")
                .In(S({2}))
                .In(S({}))
                .In(S({}))
                .In(S({}))
                .In(S({}))
                .Str(),
            "<unknown>");
  EXPECT_TRUE(Has(ShapeRun("MatrixDiagV3")
                      .In(S({2, 3}))
                      .In(I32({-1, 1}))
                      .In(I32Scalar(-1))
                      .In(I32Scalar(-1))
                      .In(S({}))
                      .Str(),
                  "must equal the number of diagonals (3)"));
  EXPECT_EQ(ShapeRun("MatrixDiagPartV3")
                .In(S({7, 3, 4}))
                .In(I32({-2, 1}))
                .In(S({}))
                .Str(),
            "[7,4,3]");
  EXPECT_EQ(ShapeRun("MatrixDiagPartV3")
                .In(S({3, 4}))
                .In(I32Scalar(2))
                .In(S({}))
                .Str(),
            "[2]");
  EXPECT_TRUE(Has(ShapeRun("MatrixDiagPartV3")
                      .In(S({3, 4}))
                      .In(I32Scalar(4))
                      .In(S({}))
                      .Str(),
                  "diagonal index 4 is out of bounds"));
  EXPECT_TRUE(Has(ShapeRun("MatrixDiagPartV3")
                      .In(S({3, 4}))
                      .In(I32({1, 0}))
                      .In(S({}))
                      .Str(),
                  "must not be greater than upper_diag_index"));
}

// A graph with a float input `x` of `shape` and `op` applied to it with a
// constant int32 second input `c` of `values` ([n, 2] when `pairs`).
std::string PadGraph(const std::string& op, const std::string& extra_attrs,
                     std::vector<int64_t> shape, std::vector<int32_t> values) {
  std::string dims, vals;
  for (int64_t d : shape) absl::StrAppend(&dims, "dim { size: ", d, " } ");
  for (int32_t v : values) absl::StrAppend(&vals, " int_val: ", v);
  return absl::StrCat(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: "
      "DT_FLOAT } } attr { key: 'shape' value { shape { ",
      dims, "} } } }\n",
      "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: "
      "DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 "
      "tensor_shape { dim { size: ",
      values.size() / 2, " } dim { size: 2 } }", vals, " } } } }\n",
      "node { name: 'padded' op: '", op,
      "' input: 'x' input: 'c' attr { key: "
      "'T' value { type: DT_FLOAT } } ",
      extra_attrs, " }\n");
}

absl::Status ImportText(const std::string& text) {
  absl::StatusOr<GraphDef> def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def).status();
}

TEST(PadShapeTest, ImportNamesTheNodeWithBadPaddings) {
  EXPECT_TRUE(ImportText(PadGraph("Pad", "", {2, 3}, {1, 1, 0, 2})).ok());
  absl::Status s = ImportText(PadGraph("Pad", "", {2, 3}, {1, 1, -1, 2}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Has(std::string(s.message()), "node 'padded' (Pad)")) << s;
  EXPECT_TRUE(Has(std::string(s.message()), "Paddings must be non-negative"))
      << s;
  const std::string reflect = "attr { key: 'mode' value { s: 'REFLECT' } }";
  EXPECT_TRUE(
      ImportText(PadGraph("MirrorPad", reflect, {2, 3}, {1, 1, 2, 2})).ok());
  s = ImportText(PadGraph("MirrorPad", reflect, {2, 3}, {2, 0, 0, 0}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(Has(std::string(s.message()), "node 'padded' (MirrorPad)")) << s;
  EXPECT_TRUE(Has(std::string(s.message()),
                  "must be less than the dimension "
                  "size 2"))
      << s;
}

}  // namespace
}  // namespace graphrun
