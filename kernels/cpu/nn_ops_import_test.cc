// Graphs with the convolution, pooling, image and loss ops imported as
// TensorFlow would write them: the shapes their shape functions infer, and
// the InvalidArgument errors, which name the node (and the attr at fault).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using ::testing::HasSubstr;

// A float placeholder of `dims` (-1 unknown); empty name list = unknown rank.
std::string Input(const std::string& name, const std::vector<int64_t>& dims,
                  const std::string& dtype = "DT_FLOAT") {
  std::string shape;
  for (int64_t d : dims) shape += absl::StrCat(" dim { size: ", d, " }");
  return absl::StrCat("node { name: '", name,
                      "' op: 'Placeholder' attr { key: 'dtype' value { type: ",
                      dtype, " } } attr { key: 'shape' value { shape {", shape,
                      " } } } }");
}

// An int32 constant vector.
std::string IntConst(const std::string& name, const std::vector<int>& values) {
  std::string vals;
  for (int v : values) vals += absl::StrCat(" int_val: ", v);
  return absl::StrCat(
      "node { name: '", name,
      "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { "
      "key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { ",
      values.size() == 1 ? "" : absl::StrCat("dim { size: ", values.size(), " }"),
      " }", vals, " } } } }");
}

std::string Ints(const std::string& name, const std::vector<int64_t>& v) {
  return absl::StrCat("attr { key: '", name, "' value { list { i: ",
                      absl::StrJoin(v, " i: "), " } } } ");
}
std::string Str(const std::string& name, const std::string& v) {
  return absl::StrCat("attr { key: '", name, "' value { s: '", v, "' } } ");
}
std::string Type(const std::string& name, const std::string& v = "DT_FLOAT") {
  return absl::StrCat("attr { key: '", name, "' value { type: ", v, " } } ");
}
std::string Bool(const std::string& name, bool v) {
  return absl::StrCat("attr { key: '", name, "' value { b: ",
                      v ? "true" : "false", " } } ");
}

std::string Op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& attrs) {
  std::string in;
  for (const std::string& i : inputs) in += absl::StrCat(" input: '", i, "'");
  return absl::StrCat("node { name: 'n' op: '", op, "'", in, " ", attrs, "}");
}

// Imports `text`; "[a];[b]" for node n's output shapes, or "error: ...".
std::string Shapes(const std::string& text) {
  auto def = ParseGraphDef(text, GraphFormat::kText);
  if (!def.ok()) return absl::StrCat("parse error: ", def.status().message());
  auto g = ImportGraphDef(*def);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    return absl::StrCat("error: ", g.status().message());
  }
  const Node* n = (*g)->FindNode("n");
  std::vector<std::string> parts;
  for (int i = 0; i < n->num_outputs(); ++i) {
    parts.push_back(n->output_shape(i).DebugString());
  }
  return absl::StrJoin(parts, ";");
}

TEST(ConvImportTest, Conv3D) {
  const std::string conv = Op(
      "Conv3D", {"x", "f"},
      Type("T") + Ints("strides", {1, 2, 1, 2, 1}) + Str("padding", "SAME"));
  EXPECT_EQ(Shapes(Input("x", {-1, 8, 7, 9, 4}) + Input("f", {3, 3, 3, 4, 16}) +
                   conv),
            "[?,4,7,5,16]");
  EXPECT_EQ(Shapes(Input("x", {2, 4, 8, 7, 9}) + Input("f", {2, 3, 3, 4, 6}) +
                   Op("Conv3D", {"x", "f"},
                        Type("T") + Ints("strides", {1, 1, 1, 1, 1}) +
                            Ints("dilations", {1, 1, 2, 1, 1}) +
                            Str("padding", "VALID") +
                            Str("data_format", "NCDHW"))),
            "[2,6,6,5,7]");
  const std::string bad_depth =
      Shapes(Input("x", {1, 8, 8, 8, 5}) + Input("f", {3, 3, 3, 4, 16}) + conv);
  EXPECT_THAT(bad_depth, HasSubstr("node 'n'"));
  EXPECT_THAT(bad_depth, HasSubstr("not a multiple"));
  const std::string bad_format = Shapes(
      Input("x", {1, 8, 8, 8, 4}) + Input("f", {3, 3, 3, 4, 16}) +
      Op("Conv3D", {"x", "f"},
           Type("T") + Ints("strides", {1, 1, 1, 1, 1}) +
               Str("padding", "SAME") + Str("data_format", "NHWC")));
  EXPECT_THAT(bad_format, HasSubstr("node 'n'"));
  EXPECT_THAT(bad_format, HasSubstr("data_format"));
}

TEST(ConvImportTest, Conv2DWithDilationsExplicitPaddingAndNchw) {
  EXPECT_EQ(Shapes(Input("x", {1, 3, 20, 18}) + Input("f", {3, 3, 3, 8}) +
                   Op("Conv2D", {"x", "f"},
                        Type("T") + Ints("strides", {1, 1, 2, 2}) +
                            Ints("dilations", {1, 1, 2, 2}) +
                            Str("padding", "EXPLICIT") +
                            Ints("explicit_paddings", {0, 0, 0, 0, 1, 2, 3, 0}) +
                            Str("data_format", "NCHW"))),
            "[1,8,10,9]");
  const std::string bad = Shapes(
      Input("x", {1, 20, 18, 3}) + Input("f", {3, 3, 3, 8}) +
      Op("Conv2D", {"x", "f"},
           Type("T") + Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME") +
               Str("data_format", "NCDHW")));
  EXPECT_THAT(bad, HasSubstr("node 'n'"));
  EXPECT_THAT(bad, HasSubstr("attr 'data_format'"));
}

TEST(ConvImportTest, Conv2DBackpropInput) {
  const std::string attrs =
      Type("T") + Ints("strides", {1, 2, 2, 1}) + Str("padding", "SAME");
  EXPECT_EQ(Shapes(IntConst("s", {4, 16, 16, 8}) + Input("f", {3, 3, 8, 32}) +
                   Input("g", {4, 8, 8, 32}) +
                   Op("Conv2DBackpropInput", {"s", "f", "g"}, attrs)),
            "[4,16,16,8]");
  // Only the spatial sizes: batch from out_backprop, depth from the filter.
  EXPECT_EQ(Shapes(IntConst("s", {16, 16}) + Input("f", {3, 3, 8, 32}) +
                   Input("g", {-1, 8, 8, 32}) +
                   Op("Conv2DBackpropInput", {"s", "f", "g"}, attrs)),
            "[?,16,16,8]");
  EXPECT_EQ(Shapes(Input("s", {4}, "DT_INT32") + Input("f", {3, 3, 8, 32}) +
                   Input("g", {4, 8, 8, 32}) +
                   Op("Conv2DBackpropInput", {"s", "f", "g"}, attrs)),
            "[?,?,?,?]");
  const std::string bad = Shapes(
      IntConst("s", {4, 16, 16, 8}) + Input("f", {3, 3, 8, 32}) +
      Input("g", {4, 8, 8, 16}) +
      Op("Conv2DBackpropInput", {"s", "f", "g"}, attrs));
  EXPECT_THAT(bad, HasSubstr("node 'n'"));
  EXPECT_THAT(bad, HasSubstr("Dimensions must be equal"));
}

TEST(PoolImportTest, Pool3D) {
  const std::string attrs = Type("T") + Ints("ksize", {1, 2, 2, 2, 1}) +
                            Ints("strides", {1, 2, 2, 2, 1});
  EXPECT_EQ(Shapes(Input("x", {-1, 9, 8, 7, 3}) +
                   Op("MaxPool3D", {"x"}, attrs + Str("padding", "SAME"))),
            "[?,5,4,4,3]");
  EXPECT_EQ(Shapes(Input("x", {-1, 9, 8, 7, 3}) +
                   Op("AvgPool3D", {"x"}, attrs + Str("padding", "VALID"))),
            "[?,4,4,3,3]");
  const std::string bad = Shapes(
      Input("x", {1, 9, 8, 7, 3}) +
      Op("AvgPool3D", {"x"},
           Type("T") + Ints("ksize", {1, 2, 2, 2, 2}) +
               Ints("strides", {1, 2, 2, 2, 1}) + Str("padding", "SAME")));
  EXPECT_THAT(bad, HasSubstr("node 'n'"));
  EXPECT_THAT(bad, HasSubstr("batch or depth"));
}

TEST(ImageImportTest, NonMaxSuppression) {
  const std::string scalars =
      IntConst("m", {10}) + Input("iou", {}) + Input("score", {}) +
      Input("sigma", {});
  EXPECT_EQ(Shapes(Input("b", {-1, 4}) + Input("s", {-1}) + scalars +
                   Op("NonMaxSuppressionV3", {"b", "s", "m", "iou", "score"},
                        Type("T") + Type("T_threshold"))),
            "[?]");
  EXPECT_EQ(Shapes(Input("b", {50, 4}) + Input("s", {50}) + scalars +
                   Op("NonMaxSuppressionV4", {"b", "s", "m", "iou", "score"},
                        Type("T") + Type("T_threshold") +
                            Bool("pad_to_max_output_size", true))),
            "[10];[]");
  EXPECT_EQ(Shapes(Input("b", {50, 4}) + Input("s", {50}) + scalars +
                   Op("NonMaxSuppressionV5",
                        {"b", "s", "m", "iou", "score", "sigma"}, Type("T"))),
            "[?];[?];[]");
  const std::string bad =
      Shapes(Input("b", {50, 5}) + Input("s", {50}) + scalars +
             Op("NonMaxSuppressionV3", {"b", "s", "m", "iou", "score"},
                  Type("T") + Type("T_threshold")));
  EXPECT_THAT(bad, HasSubstr("node 'n'"));
  EXPECT_THAT(bad, HasSubstr("Dimensions must be equal, but are 5 and 4"));
}

TEST(LossImportTest, LossesLrnAndBatchNorm) {
  EXPECT_EQ(Shapes(Input("f", {-1, 10}) + Input("l", {-1, 10}) +
                   Op("SoftmaxCrossEntropyWithLogits", {"f", "l"}, Type("T"))),
            "[?];[?,10]");
  EXPECT_EQ(Shapes(Input("f", {32, 10}) + Input("l", {10}) +
                   Op("SoftmaxCrossEntropyWithLogits", {"f", "l"}, Type("T"))),
            "[32];[32,10]");
  EXPECT_THAT(Shapes(Input("f", {32, 10}) + Input("l", {32, 9}) +
                     Op("SoftmaxCrossEntropyWithLogits", {"f", "l"}, Type("T"))),
              HasSubstr("node 'n'"));
  EXPECT_EQ(Shapes(Input("f", {-1, 10}) + Input("l", {32}, "DT_INT64") +
                   Op("SparseSoftmaxCrossEntropyWithLogits", {"f", "l"},
                        Type("T") + Type("Tlabels", "DT_INT64"))),
            "[32];[32,10]");
  EXPECT_THAT(Shapes(Input("f", {32, 10}) + Input("l", {32, 1}, "DT_INT64") +
                     Op("SparseSoftmaxCrossEntropyWithLogits", {"f", "l"},
                          Type("T") + Type("Tlabels", "DT_INT64"))),
              HasSubstr("rank 1"));
  EXPECT_EQ(Shapes(Input("x", {3, 4, 5}) + Op("L2Loss", {"x"}, Type("T"))), "[]");
  EXPECT_EQ(Shapes(Input("x", {2, 5, 5, 8}) + Op("LRN", {"x"}, Type("T"))),
            "[2,5,5,8]");
  EXPECT_THAT(Shapes(Input("x", {5, 8}) + Op("LRN", {"x"}, Type("T"))),
              HasSubstr("rank 4"));
  EXPECT_EQ(Shapes(Input("x", {2, 16, 5, 5}) + Input("s", {16}) +
                   Input("o", {16}) + Input("m", {16}) + Input("v", {16}) +
                   Op("FusedBatchNormV2", {"x", "s", "o", "m", "v"},
                        Type("T") + Type("U") + Bool("is_training", false) +
                            Str("data_format", "NCHW"))),
            "[2,16,5,5];[16];[16];[16];[16]");
  const std::string bad_format = Shapes(
      Input("x", {2, 16, 5, 5}) + Input("s", {16}) + Input("o", {16}) +
      Input("m", {16}) + Input("v", {16}) +
      Op("FusedBatchNormV2", {"x", "s", "o", "m", "v"},
           Type("T") + Type("U") + Str("data_format", "NDHWC")));
  EXPECT_THAT(bad_format, HasSubstr("node 'n'"));
  EXPECT_THAT(bad_format, HasSubstr("attr 'data_format'"));
}

}  // namespace
}  // namespace graphrun
