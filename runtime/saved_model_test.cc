// LoadSavedModel on SavedModels TensorFlow 2.21 wrote
// (tests/fixtures/saved_models/make_saved_models.py): a Keras 3
// `model.export`, a tf.Module with two signatures (one runs a while loop)
// and int64 state, a TF1 `simple_save` with ref variables. Each signature
// gives what TensorFlow's loaded signature gave; bad directories, tags,
// signatures, keys, dtypes and shapes fail naming them and listing what is
// there.
#include "runtime/saved_model.h"

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
