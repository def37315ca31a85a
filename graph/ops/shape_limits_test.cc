// Shape functions on sizes at the edge of int64: graphs whose shapes cannot
// exist (more than 2^48 elements, a size that does not fit an int64) are
// refused at import with an error naming the node, its op and what is too
// large; sizes just inside the limit still work. Every case goes through
// ImportGraphDef, as `graphrun inspect` and `graphrun run` do.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "graph/graph_io.h"
#include "graph/import.h"

namespace graphrun {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Text of a Const node holding an int64 vector (or a scalar when `scalar`).
std::string Int64Const(const std::string& name, std::vector<int64_t> values,
                       bool scalar = false) {
  std::string vals;
  for (int64_t v : values) absl::StrAppend(&vals, " int64_val: ", v);
  return absl::StrCat(
      "node { name: '", name, "' op: 'Const' ",
      "attr { key: 'dtype' value { type: DT_INT64 } } ",
      "attr { key: 'value' value { tensor { dtype: DT_INT64 tensor_shape { ",
      scalar ? "" : absl::StrCat("dim { size: ", values.size(), " }"), " }",
      vals, " } } } }\n");
}

std::string FloatConst(const std::string& name, std::vector<int64_t> shape) {
  std::string dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    absl::StrAppend(&dims, "dim { size: ", d, " } ");
    n *= d;
  }
  std::string vals;
  for (int64_t i = 0; i < n; ++i) absl::StrAppend(&vals, " float_val: 1");
  return absl::StrCat(
      "node { name: '", name, "' op: 'Const' ",
      "attr { key: 'dtype' value { type: DT_FLOAT } } ",
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { ",
      dims, "}", vals, " } } } }\n");
}

// A Placeholder of the given shape (-1 unknown).
std::string Placeholder(const std::string& name, std::vector<int64_t> shape,
                        const std::string& dtype = "DT_FLOAT") {
  std::string dims;
  for (int64_t d : shape) absl::StrAppend(&dims, "dim { size: ", d, " } ");
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' ",
                      "attr { key: 'dtype' value { type: ", dtype, " } } ",
                      "attr { key: 'shape' value { shape { ", dims,
                      "} } } }\n");
}

// A Placeholder of unknown rank.
std::string UnknownPlaceholder(const std::string& name) {
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' ",
                      "attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
}

// A node with inputs and type attrs ("T", "Tidx"...).
std::string Op(const std::string& name, const std::string& op,
               std::vector<std::string> inputs,
               std::vector<std::pair<std::string, std::string>> types,
               const std::string& extra_attrs = "") {
  std::string text = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const auto& in : inputs) absl::StrAppend(&text, " input: '", in, "'");
  for (const auto& [attr, type] : types) {
    absl::StrAppend(&text, " attr { key: '", attr, "' value { type: ", type,
                    " } }");
  }
  absl::StrAppend(&text, " ", extra_attrs, " }\n");
  return text;
}

absl::StatusOr<std::unique_ptr<Graph>> Import(const std::string& text) {
  auto def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return def.status();
  return ImportGraphDef(*def);
}

// Imports `text` and expects InvalidArgument whose message holds every
// fragment.
void ExpectRefused(const std::string& text,
                   const std::vector<std::string>& fragments) {
  auto g = Import(text);
  ASSERT_FALSE(g.ok()) << "imported, expected: "
                       << absl::StrJoin(fragments, " ... ");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument)
      << g.status();
  for (const auto& f : fragments) {
    EXPECT_NE(g.status().message().find(f), std::string::npos)
        << "error: " << g.status().message() << "\nexpected: " << f;
  }
}

// Imports `text` and returns the shape of `node`'s output 0.
std::string ShapeOf(const std::string& text, const std::string& node) {
  auto g = Import(text);
  if (!g.ok()) return absl::StrCat("error: ", g.status().message());
  const Node* n = (*g)->FindNode(node);
  if (n == nullptr) return "no such node";
  return n->output_shape(0).DebugString();
}

std::string Tile(int64_t input_len, int64_t multiple) {
  return FloatConst("x", {input_len}) + Int64Const("m", {multiple}) +
         Op("t", "Tile", {"x", "m"}, {{"T", "DT_FLOAT"},
                                       {"Tmultiples", "DT_INT64"}});
}

TEST(ShapeLimitsTest, Tile) {
  ExpectRefused(Tile(4, int64_t{1} << 62),
                {"node 't' (Tile)", "Tile output dimension 0 is too large",
                 "4 * 4611686018427387904"});
  ExpectRefused(Tile(4, kMax), {"node 't' (Tile)", "too large"});
  // 2^46 * 4 = 2^48 is the largest size there is; one more multiple is not.
  EXPECT_EQ(ShapeOf(Tile(4, int64_t{1} << 46), "t"), "[281474976710656]");
  ExpectRefused(Tile(4, (int64_t{1} << 46) + 1), {"node 't' (Tile)"});
  EXPECT_EQ(ShapeOf(Tile(4, 0), "t"), "[0]");
  // Dims that are each in range but whose product is not.
  ExpectRefused(Placeholder("x", {1 << 20, 1 << 20}) +
                    Int64Const("m", {1 << 10, 1 << 10}) +
                    Op("t", "Tile", {"x", "m"},
                       {{"T", "DT_FLOAT"}, {"Tmultiples", "DT_INT64"}}),
                {"node 't' (Tile)",
                 "Tile output shape [1073741824,1073741824] is too large"});
}

std::string Range(int64_t start, int64_t limit, int64_t delta) {
  return Int64Const("s", {start}, true) + Int64Const("l", {limit}, true) +
         Int64Const("d", {delta}, true) +
         Op("r", "Range", {"s", "l", "d"}, {{"Tidx", "DT_INT64"}});
}

TEST(ShapeLimitsTest, RangeInt64) {
  ExpectRefused(Range(kMin, kMax, 1),
                {"node 'r' (Range)",
                 "Range from -9223372036854775808 to 9223372036854775807 by "
                 "1 is too large: 18446744073709551615 elements"});
  ExpectRefused(Range(kMax, kMin, -1), {"node 'r' (Range)", "too large"});
  // Steps of |INT64_MIN| and INT64_MAX, counted exactly: INT64_MAX, -1;
  // INT64_MAX alone; INT64_MIN, -1, INT64_MAX - 1.
  EXPECT_EQ(ShapeOf(Range(kMax, kMin, kMin), "r"), "[2]");
  EXPECT_EQ(ShapeOf(Range(kMax, -1, kMin), "r"), "[1]");
  EXPECT_EQ(ShapeOf(Range(kMin, kMax, kMax), "r"), "[3]");
  // Past 2^53 the doubles agree; the order is still checked exactly.
  ExpectRefused(Range((int64_t{1} << 62) + 1, int64_t{1} << 62, 1),
                {"node 'r' (Range)", "Requires start <= limit"});
  EXPECT_EQ(ShapeOf(Range(0, int64_t{1} << 48, 1), "r"), "[281474976710656]");
  ExpectRefused(Range(0, (int64_t{1} << 48) + 1, 1), {"too large"});
}

std::string Fill(std::vector<int64_t> dims) {
  return Int64Const("dims", dims) + FloatConst("v", {}) +
         Op("f", "Fill", {"dims", "v"},
            {{"T", "DT_FLOAT"}, {"index_type", "DT_INT64"}});
}

TEST(ShapeLimitsTest, Fill) {
  ExpectRefused(Fill({2000000000, 2000000000, 2000000000}),
                {"node 'f' (Fill)",
                 "shape [2000000000,2000000000,2000000000] is too large"});
  ExpectRefused(Fill({kMax}), {"node 'f' (Fill)", "too large"});
  // A 0 dim does not make room for the others: [0, 2^40, 2^40] would
  // overflow any stride computed from it.
  ExpectRefused(Fill({0, int64_t{1} << 40, int64_t{1} << 40}),
                {"node 'f' (Fill)", "too large"});
  EXPECT_EQ(ShapeOf(Fill({0, int64_t{1} << 48}), "f"), "[0,281474976710656]");
  // A dims input of unknown values but 2^40 entries: a rank no shape has.
  ExpectRefused(Placeholder("dims", {int64_t{1} << 40}, "DT_INT64") +
                    FloatConst("v", {}) +
                    Op("f", "Fill", {"dims", "v"},
                       {{"T", "DT_FLOAT"}, {"index_type", "DT_INT64"}}),
                {"node 'f' (Fill)", "rank out of range"});
}

TEST(ShapeLimitsTest, Reshape) {
  ExpectRefused(FloatConst("x", {2}) + Int64Const("s", {kMax, kMax}) +
                    Op("r", "Reshape", {"x", "s"},
                       {{"T", "DT_FLOAT"}, {"Tshape", "DT_INT64"}}),
                {"node 'r' (Reshape)", "Reshape target shape "
                 "[9223372036854775807,9223372036854775807] is too large"});
}

TEST(ShapeLimitsTest, ConcatV2) {
  const std::string inputs =
      Placeholder("a", {int64_t{1} << 47, 1}) +
      Placeholder("b", {int64_t{1} << 47, 1}) + Int64Const("axis", {0}, true);
  EXPECT_EQ(ShapeOf(inputs + Op("c", "ConcatV2", {"a", "b", "axis"},
                                {{"T", "DT_FLOAT"}, {"Tidx", "DT_INT64"}},
                                "attr { key: 'N' value { i: 2 } }"),
                    "c"),
            "[281474976710656,1]");
  ExpectRefused(
      inputs + Placeholder("z", {1, 1}) +
          Op("c", "ConcatV2", {"a", "b", "z", "axis"},
             {{"T", "DT_FLOAT"}, {"Tidx", "DT_INT64"}},
             "attr { key: 'N' value { i: 3 } }"),
      {"node 'c' (ConcatV2)",
       "ConcatV2 output dimension 0 is too large: 281474976710656 + 1"});
}

std::string Slice(std::vector<int64_t> begin, std::vector<int64_t> size) {
  return FloatConst("x", {10}) + Int64Const("b", begin) +
         Int64Const("s", size) +
         Op("sl", "Slice", {"x", "b", "s"},
            {{"T", "DT_FLOAT"}, {"Index", "DT_INT64"}});
}

TEST(ShapeLimitsTest, Slice) {
  EXPECT_EQ(ShapeOf(Slice({2}, {3}), "sl"), "[3]");
  // begin + size overflows int64: still "past the end", not a wrapped sum.
  ExpectRefused(Slice({int64_t{1} << 62}, {int64_t{1} << 62}),
                {"node 'sl' (Slice)"});
  ExpectRefused(Slice({5}, {kMax}), {"node 'sl' (Slice)", "Expected begin[0]"});
  // Size known, input dim unknown: the size alone must be possible.
  ExpectRefused(Placeholder("x", {-1}) + Int64Const("s", {kMax}) +
                    Placeholder("b", {1}, "DT_INT64") +
                    Op("sl", "Slice", {"x", "b", "s"},
                       {{"T", "DT_FLOAT"}, {"Index", "DT_INT64"}}),
                {"node 'sl' (Slice)", "too large"});
}

std::string StridedSlice(int64_t begin, int64_t end, int64_t stride) {
  return FloatConst("x", {10}) + Int64Const("b", {begin}) +
         Int64Const("e", {end}) + Int64Const("s", {stride}) +
         Op("ss", "StridedSlice", {"x", "b", "e", "s"},
            {{"T", "DT_FLOAT"}, {"Index", "DT_INT64"}});
}

TEST(ShapeLimitsTest, StridedSliceClampsExtremes) {
  // Out-of-range begin/end clamp to the dim, as in TensorFlow.
  EXPECT_EQ(ShapeOf(StridedSlice(kMin, kMax, 1), "ss"), "[10]");
  EXPECT_EQ(ShapeOf(StridedSlice(kMax, kMin, -1), "ss"), "[10]");
  EXPECT_EQ(ShapeOf(StridedSlice(kMin, kMax, kMax), "ss"), "[1]");
  EXPECT_EQ(ShapeOf(StridedSlice(kMax, kMin, kMin), "ss"), "[1]");
  EXPECT_EQ(ShapeOf(StridedSlice(0, 10, 3), "ss"), "[4]");
}

TEST(ShapeLimitsTest, BroadcastAndMatMulProducts) {
  // Each dim is possible; the output's product of dims is not.
  ExpectRefused(Placeholder("a", {1 << 30, 1}) + Placeholder("b", {1, 1 << 30}) +
                    Op("sum", "AddV2", {"a", "b"}, {{"T", "DT_FLOAT"}}),
                {"node 'sum' (AddV2)",
                 "output 0 shape [1073741824,1073741824] is too large"});
  ExpectRefused(
      Placeholder("a", {1 << 30, 1}) + Placeholder("b", {1, 1 << 30}) +
          Op("mm", "MatMul", {"a", "b"}, {{"T", "DT_FLOAT"}}),
      {"node 'mm' (MatMul)", "too large"});
}

std::string Conv(const std::string& strides, const std::string& padding,
                 const std::string& explicit_paddings = "") {
  return Placeholder("x", {1, 8, 8, 1}) + Placeholder("w", {3, 3, 1, 1}) +
         Op("conv", "Conv2D", {"x", "w"}, {{"T", "DT_FLOAT"}},
            absl::StrCat("attr { key: 'strides' value { list { ", strides,
                         " } } } attr { key: 'padding' value { s: '", padding,
                         "' } } ", explicit_paddings));
}

TEST(ShapeLimitsTest, ConvWindowArithmetic) {
  const std::string huge_strides = absl::StrCat("i: 1 i: ", kMax, " i: ", kMax,
                                                " i: 1");
  EXPECT_EQ(ShapeOf(Conv(huge_strides, "SAME"), "conv"), "[1,1,1,1]");
  EXPECT_EQ(ShapeOf(Conv(huge_strides, "VALID"), "conv"), "[1,1,1,1]");
  EXPECT_EQ(ShapeOf(Conv("i: 1 i: 1 i: 1 i: 1", "VALID"), "conv"), "[1,6,6,1]");
  ExpectRefused(
      Conv("i: 1 i: 1 i: 1 i: 1", "EXPLICIT",
           absl::StrCat("attr { key: 'explicit_paddings' value { list { i: 0 "
                        "i: 0 i: ", kMax, " i: ", kMax, " i: 0 i: 0 i: 0 i: 0 "
                        "} } }")),
      {"node 'conv' (Conv2D)", "the padded input is too large"});
  ExpectRefused(
      Conv("i: 1 i: 1 i: 1 i: 1", "VALID",
           absl::StrCat("attr { key: 'dilations' value { list { i: 1 i: ",
                        kMax, " i: 1 i: 1 } } }")),
      {"node 'conv' (Conv2D)", "the dilated window is too large"});
}

TEST(ShapeLimitsTest, RanksReadFromLengths) {
  ExpectRefused(UnknownPlaceholder("x") +
                    Placeholder("p", {int64_t{1} << 40}, "DT_INT32") +
                    Op("tr", "Transpose", {"x", "p"},
                       {{"T", "DT_FLOAT"}, {"Tperm", "DT_INT32"}}),
                {"node 'tr' (Transpose)", "perm has 1099511627776 entries"});
  EXPECT_EQ(ShapeOf(UnknownPlaceholder("x") +
                        Placeholder("p", {3}, "DT_INT32") +
                        Op("tr", "Transpose", {"x", "p"},
                           {{"T", "DT_FLOAT"}, {"Tperm", "DT_INT32"}}),
                    "tr"),
            "[?,?,?]");
  ExpectRefused(UnknownPlaceholder("x") +
                    Placeholder("m", {int64_t{1} << 31}, "DT_INT32") +
                    Op("t", "Tile", {"x", "m"},
                       {{"T", "DT_FLOAT"}, {"Tmultiples", "DT_INT32"}}),
                {"node 't' (Tile)", "multiples has 2147483648 entries: rank "
                                    "out of range (at most 254)"});
}

}  // namespace
}  // namespace graphrun
