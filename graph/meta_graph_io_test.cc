// Reads the MetaGraphDef that TensorFlow 2.21 exported for a tiny v1
// training graph (graph/testdata/make_meta_graph_fixtures.py), in binary and
// text form, and checks what a trainer takes from it.
#include "graph/meta_graph_io.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kBinary[] = "graph/testdata/tiny_train.meta";
constexpr char kText[] = "graph/testdata/tiny_train.meta.txt";

std::string TempPath(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

struct ExpectedVariable {
  std::string name;
  std::string initializer;
  bool trainable;
};

// The variables of the fixture in the order Python created them: the dense
// layer's two, Adam's beta powers, then Adam's m and v slots.
const std::vector<ExpectedVariable>& ExpectedVariables() {
  static const auto* vars = new std::vector<ExpectedVariable>{
      {"dense/kernel:0", "dense/kernel/Assign", true},
      {"dense/bias:0", "dense/bias/Assign", true},
      {"beta1_power:0", "beta1_power/Assign", false},
      {"beta2_power:0", "beta2_power/Assign", false},
      {"dense/kernel/Adam:0", "dense/kernel/Adam/Assign", false},
      {"dense/kernel/Adam_1:0", "dense/kernel/Adam_1/Assign", false},
      {"dense/bias/Adam:0", "dense/bias/Adam/Assign", false},
      {"dense/bias/Adam_1:0", "dense/bias/Adam_1/Assign", false},
  };
  return *vars;
}

void CheckFixture(const MetaGraphDef& meta) {
  absl::StatusOr<TrainingMetaGraph> train = ExtractTrainingMetaGraph(meta);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_THAT(train->train_op_names, ElementsAre("train"));

  ASSERT_TRUE(train->has_saver_def);
  EXPECT_EQ(train->saver_def.filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(train->saver_def.save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(train->saver_def.restore_op_name(), "save/restore_all");
  EXPECT_EQ(train->saver_def.max_to_keep(), 5);
  EXPECT_EQ(train->saver_def.version(), SaverDef::V2);

  const auto& expected = ExpectedVariables();
  ASSERT_EQ(train->variables.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const MetaGraphVariable& var = train->variables[i];
    SCOPED_TRACE(var.variable_name);
    EXPECT_EQ(var.variable_name, expected[i].name);
    EXPECT_EQ(var.initializer_name, expected[i].initializer);
    EXPECT_TRUE(var.is_resource);
    EXPECT_EQ(var.trainable, expected[i].trainable);
    const std::string op = var.variable_name.substr(0, var.variable_name.size() - 2);
    EXPECT_EQ(var.snapshot_name, absl::StrCat(op, "/Read/ReadVariableOp:0"));
    EXPECT_THAT(var.initial_value_name, HasSubstr(absl::StrCat(op, "/Initializer/")));
  }
  ASSERT_EQ(train->trainable_variables.size(), 2u);
  EXPECT_EQ(train->trainable_variables[0].variable_name, "dense/kernel:0");
  EXPECT_EQ(train->trainable_variables[1].variable_name, "dense/bias:0");
  EXPECT_TRUE(train->signature_defs.empty());

  EXPECT_EQ(meta.meta_info_def().tensorflow_version(), "2.21.0");
  EXPECT_GT(meta.meta_info_def().stripped_op_list().op_size(), 10);

  // Every node the trainer and the saver name is in a graph that imports.
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(train->graph_def);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<std::string> names = {
      "train", "init", "loss", "save/restore_all", "save/Const", "save/control_dependency"};
  for (const MetaGraphVariable& var : train->variables) names.push_back(var.initializer_name);
  for (const std::string& name : names) {
    bool found = false;
    for (const NodeDef& node : train->graph_def.node()) found |= node.name() == name;
    EXPECT_TRUE(found) << name;
  }
}

TEST(MetaGraphIoTest, ReadsBinaryMetaFile) {
  absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(kBinary);
  ASSERT_TRUE(meta.ok()) << meta.status();
  CheckFixture(*meta);
}

TEST(MetaGraphIoTest, ReadsTextMetaFile) {
  absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(kText);
  ASSERT_TRUE(meta.ok()) << meta.status();
  CheckFixture(*meta);
}

TEST(MetaGraphIoTest, BinaryAndTextAgree) {
  absl::StatusOr<MetaGraphDef> binary = ReadMetaGraphFile(kBinary);
  absl::StatusOr<MetaGraphDef> text = ReadMetaGraphFile(kText);
  ASSERT_TRUE(binary.ok() && text.ok());
  // Nothing in TensorFlow's output was left as an unknown field.
  EXPECT_TRUE(binary->GetReflection()->GetUnknownFields(*binary).empty());
  EXPECT_EQ(SerializeDeterministically(*binary), SerializeDeterministically(*text));
}

TEST(MetaGraphIoTest, TruncatedFileFailsNamingIt) {
  absl::StatusOr<std::string> data = ReadFileToString(kBinary);
  ASSERT_TRUE(data.ok()) << data.status();
  const std::string path = TempPath("truncated.meta");
  ASSERT_TRUE(WriteFileAtomically(path, data->substr(0, data->size() / 2)).ok());
  absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(path);
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(meta.status().message(), HasSubstr(path));
  EXPECT_THAT(meta.status().message(), HasSubstr("truncated or corrupt"));
}

TEST(MetaGraphIoTest, MalformedTextFailsNamingFileAndLine) {
  const std::string path = TempPath("bad.meta.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "saver_def {\n  no_such_field: 1\n}\n").ok());
  absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(path);
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(meta.status().message(), HasSubstr(path));
  EXPECT_THAT(meta.status().message(), HasSubstr("line 2"));
}

TEST(MetaGraphIoTest, MissingFileIsNotFound) {
  const std::string path = TempPath("no_such.meta");
  absl::StatusOr<MetaGraphDef> meta = ReadMetaGraphFile(path);
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(meta.status().message(), HasSubstr(path));
}

TEST(MetaGraphIoTest, CollectionOfWrongKindIsInvalid) {
  MetaGraphDef meta;
  (*meta.mutable_collection_def())["variables"].mutable_node_list()->add_value("w");
  absl::StatusOr<TrainingMetaGraph> train = ExtractTrainingMetaGraph(meta);
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(train.status().message(), HasSubstr("'variables' is a node_list"));

  MetaGraphDef bad_train;
  (*bad_train.mutable_collection_def())["train_op"].mutable_int64_list()->add_value(3);
  EXPECT_THAT(ExtractTrainingMetaGraph(bad_train).status().message(), HasSubstr("train_op"));
}

TEST(MetaGraphIoTest, VariableEntryThatIsNotAVariableDefIsInvalid) {
  MetaGraphDef meta;
  auto* list = (*meta.mutable_collection_def())["trainable_variables"].mutable_bytes_list();
  VariableDef good;
  good.set_variable_name("w:0");
  list->add_value(good.SerializeAsString());
  list->add_value("\xff\xff\xff");
  absl::StatusOr<TrainingMetaGraph> train = ExtractTrainingMetaGraph(meta);
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(train.status().message(), HasSubstr("'trainable_variables' entry 1"));
}

TEST(MetaGraphIoTest, GraphWithoutCollectionsExtractsEmpty) {
  MetaGraphDef meta;
  meta.mutable_graph_def()->add_node()->set_name("x");
  absl::StatusOr<TrainingMetaGraph> train = ExtractTrainingMetaGraph(meta);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_FALSE(train->has_saver_def);
  EXPECT_TRUE(train->train_op_names.empty());
  EXPECT_TRUE(train->variables.empty());
  EXPECT_EQ(train->graph_def.node_size(), 1);
}

// A SavedModel with a signature, written as text the way TensorFlow prints
// it, parses; an object graph (field 7, not modeled) survives binary parsing.
TEST(MetaGraphIoTest, ReadsSavedModelWithSignature) {
  const std::string path = TempPath("saved_model.pbtxt");
  ASSERT_TRUE(WriteFileAtomically(path, R"pb(
                saved_model_schema_version: 1
                meta_graphs {
                  meta_info_def {
                    tags: "serve"
                    function_aliases { key: "f" value: "g" }
                  }
                  signature_def {
                    key: "serving_default"
                    value {
                      inputs {
                        key: "x"
                        value {
                          name: "x:0"
                          dtype: DT_FLOAT
                          tensor_shape {
                            dim { size: -1 }
                            dim { size: 3 }
                          }
                        }
                      }
                      outputs {
                        key: "y"
                        value { name: "y:0" dtype: DT_FLOAT }
                      }
                      method_name: "tensorflow/serving/predict"
                    }
                  }
                  asset_file_def {
                    tensor_info { name: "vocab:0" }
                    filename: "vocab.txt"
                  }
                }
              )pb")
                  .ok());
  absl::StatusOr<SavedModel> model = ReadSavedModelFile(path);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->meta_graphs_size(), 1);
  absl::StatusOr<TrainingMetaGraph> train = ExtractTrainingMetaGraph(model->meta_graphs(0));
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_EQ(train->signature_defs.count("serving_default"), 1u);
  const SignatureDef& sig = train->signature_defs.at("serving_default");
  EXPECT_EQ(sig.inputs().at("x").name(), "x:0");
  EXPECT_EQ(sig.inputs().at("x").tensor_shape().dim(1).size(), 3);
  EXPECT_EQ(sig.outputs().at("y").name(), "y:0");
  EXPECT_EQ(model->meta_graphs(0).asset_file_def(0).filename(), "vocab.txt");

  // Field 7 of MetaGraphDef, length 2, holding field 1 = 0: kept, not lost.
  const std::string bytes =
      model->meta_graphs(0).SerializeAsString() + std::string("\x3a\x02\x08\x00", 4);
  absl::StatusOr<MetaGraphDef> meta = ParseMetaGraphDef(bytes, GraphFormat::kBinary);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->SerializeAsString(), bytes);
}

}  // namespace
}  // namespace graphrun
