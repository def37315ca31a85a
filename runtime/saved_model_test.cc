// LoadSavedModel on SavedModels TensorFlow 2.21 wrote
// (tests/fixtures/saved_models/make_saved_models.py and
// make_text_saved_models.py): a Keras 3 `model.export`, a tf.Module with
// two signatures (one runs a while loop) and int64 state, a TF1
// `simple_save` with ref variables; a Keras StringLookup over a vocabulary
// asset, a Keras TextVectorization and a TF1 Builder graph with three
// tables read from text-file assets, all fed strings. Each signature gives what TensorFlow's loaded
// signature gave; bad directories, tags, signatures, keys, dtypes and
// shapes fail naming them and listing what is there; a missing asset fails
// naming the file; a lookup before the init op fails as in TensorFlow.
#include "runtime/saved_model.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/saved_models";

std::string Path(const std::string& name) { return absl::StrCat(kDir, "/", name); }

Tensor Npy(const std::string& name) {
  auto t = ReadNpyFile(Path(name + ".npy"));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

std::unique_ptr<SavedModelBundle> Load(const std::string& model) {
  auto bundle = LoadSavedModel(SessionOptions(), Path(model));
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return bundle.ok() ? std::move(*bundle) : nullptr;
}

// Runs `signature` of `model` on the fixture's inputs and compares every
// output with TensorFlow's.
void ExpectTensorFlowsOutputs(const SavedModelBundle& bundle, const std::string& model,
                              const std::string& signature,
                              const std::vector<std::string>& input_keys,
                              const std::vector<std::string>& output_keys) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const std::string& k : input_keys) inputs.emplace_back(k, Npy(model + "_" + k));
  std::vector<std::pair<std::string, Tensor>> outputs;
  absl::Status s = bundle.Run(signature, inputs, {}, &outputs);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(outputs.size(), output_keys.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs[i].first, output_keys[i]);
    const Tensor want = Npy(absl::StrCat(model, "_", signature, "__", output_keys[i]));
    std::string why;
    EXPECT_TRUE(testing::AllClose(outputs[i].second, want, 1e-5, 1e-6, &why))
        << model << " " << signature << " " << output_keys[i] << ": " << why;
  }
}

TEST(SavedModelTest, KerasExport) {
  auto bundle = Load("keras_mlp");
  ASSERT_NE(bundle, nullptr);
  EXPECT_EQ(bundle->signatures().size(), 2u);  // serve, serving_default
  ExpectTensorFlowsOutputs(*bundle, "keras_mlp", "serving_default", {"x"}, {"output_0"});
  ExpectTensorFlowsOutputs(*bundle, "keras_mlp", "serve", {"x"}, {"output_0"});
}

// Keras 3 exports BatchNormalization's inference as arithmetic on its
// (trained) moving statistics.
TEST(SavedModelTest, KerasCnnWithBatchNormalization) {
  auto bundle = Load("keras_cnn");
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "keras_cnn", "serving_default", {"x"}, {"output_0"});
}

TEST(SavedModelTest, ModuleWithALoopAndTwoSignatures) {
  auto bundle = Load("module");
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "module", "serving_default", {"n", "x"}, {"h", "norm"});
  ExpectTensorFlowsOutputs(*bundle, "module", "affine", {"x"}, {"y"});
}

TEST(SavedModelTest, Tf1SimpleSaveWithRefVariables) {
  auto bundle = Load("tf1_mlp");
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "tf1_mlp", "serving_default", {"x"}, {"logits", "probs"});
}

TEST(SavedModelTest, KerasStringLookupWithAVocabularyAsset) {
  auto bundle = Load("keras_lookup");  // tokens: NumPy unicode ('U')
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "keras_lookup", "serving_default", {"tokens"}, {"output_0"});
}

TEST(SavedModelTest, Tf1BuilderWithTablesFromTextFileAssets) {
  auto bundle = Load("tf1_table");  // words: NumPy bytes ('S')
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "tf1_table", "serving_default", {"words"},
                           {"back", "ids", "weights"});
}

TEST(SavedModelTest, KerasTextVectorization) {
  auto bundle = Load("keras_text");  // lower, strip, split, look up, pad
  ASSERT_NE(bundle, nullptr);
  ExpectTensorFlowsOutputs(*bundle, "keras_text", "serving_default", {"text"}, {"output_0"});
}

TEST(SavedModelTest, MissingAssetFileIsNamed) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/keras_lookup_no_vocab");
  std::filesystem::remove_all(dir);
  std::filesystem::copy(Path("keras_lookup"), dir, std::filesystem::copy_options::recursive);
  std::filesystem::permissions(dir + "/assets", std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
  ASSERT_TRUE(std::filesystem::remove(dir + "/assets/vocab.txt"));
  auto bundle = LoadSavedModel(SessionOptions(), dir);
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(bundle.status().message().find(dir + "/assets/vocab.txt"), std::string::npos)
      << bundle.status();
}

TEST(SavedModelTest, LookupBeforeTheInitOpFails) {
  auto saved = ReadSavedModelDir(Path("tf1_table"));
  ASSERT_TRUE(saved.ok()) << saved.status();
  auto meta = FindMetaGraph(*saved, {"serve"}, Path("tf1_table"));
  ASSERT_TRUE(meta.ok()) << meta.status();
  auto session = Session::Create((*meta)->graph_def());
  ASSERT_TRUE(session.ok()) << session.status();
  auto sig = FindSignature(**meta, "serving_default");
  ASSERT_TRUE(sig.ok()) << sig.status();
  auto call = MakeSignatureCall(**sig, "serving_default", {{"words", Npy("tf1_table_words")}},
                                {"ids"});
  ASSERT_TRUE(call.ok()) << call.status();
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(call->feeds, call->fetches, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("Table not initialized."), std::string::npos) << s;

  // The init op fills the tables the session keeps; then the lookup runs.
  ASSERT_TRUE(RestoreAndInitialize(session->get(), **meta, Path("tf1_table")).ok());
  s = (*session)->Run(call->feeds, call->fetches, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  std::string why;
  EXPECT_TRUE(testing::AllClose(out[0], Npy("tf1_table_serving_default__ids"), 0, 0, &why))
      << why;
}

TEST(SavedModelTest, BadDirectoriesTagsAndSignatures) {
  auto missing = LoadSavedModel(SessionOptions(), Path("no_such_model"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no_such_model"), std::string::npos);

  auto tags = LoadSavedModel(SessionOptions(), Path("keras_mlp"), {"serve", "gpu"});
  ASSERT_FALSE(tags.ok());
  EXPECT_NE(tags.status().message().find("{gpu, serve}"), std::string::npos) << tags.status();
  EXPECT_NE(tags.status().message().find("its tag sets: {serve}"), std::string::npos)
      << tags.status();

  auto bundle = Load("module");
  ASSERT_NE(bundle, nullptr);
  std::vector<std::pair<std::string, Tensor>> out;
  absl::Status s = bundle->Run("nope", {}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("Please choose from: affine, serving_default"), std::string::npos)
      << s;
}

TEST(SavedModelTest, BadInputsNameTheKey) {
  auto bundle = Load("module");
  ASSERT_NE(bundle, nullptr);
  std::vector<std::pair<std::string, Tensor>> out;
  const Tensor x = Npy("module_x");
  absl::Status s = bundle->Run("affine", {{"z", x}}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("\"z\" is not a valid input key"), std::string::npos) << s;
  EXPECT_NE(s.message().find("choose from: x"), std::string::npos) << s;

  s = bundle->Run("serving_default", {{"x", x}}, {}, &out);  // n missing
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs input 'n' (int32 [])"), std::string::npos) << s;

  s = bundle->Run("affine", {{"x", Tensor::FromVector<double>({1, 2, 3, 4}, TensorShape({1, 4}))}},
                  {}, &out);
  EXPECT_NE(s.message().find("input 'x' of signature 'affine' is float"), std::string::npos) << s;

  s = bundle->Run("affine", {{"x", Tensor::FromVector<float>({1, 2, 3}, TensorShape({1, 3}))}},
                  {}, &out);
  EXPECT_NE(s.message().find("has shape [?,4]; the value fed is [1,3]"), std::string::npos) << s;

  s = bundle->Run("affine", {{"x", x}}, {"nope"}, &out);
  EXPECT_NE(s.message().find("\"nope\" is not an output key"), std::string::npos) << s;
}

}  // namespace
}  // namespace graphrun
