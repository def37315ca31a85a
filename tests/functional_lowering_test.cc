// Runs hand-written TF2-style graphs (functions called from Case, If, While
// and PartitionedCall, nested in ways the TensorFlow fixtures are not) through
// a Session: ImportGraphDef lowers them (graph/lower_functional.h) and the
// executor runs the v1 form. Expected values are computed by hand in the
// comments. Also checks that graphrun's protos model every field of the
// TensorFlow-exported control-flow fixtures (function libraries included).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/message.h"
#include "google/protobuf/unknown_field_set.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

// int32 functions: twice(a) = 2a, negate(a) = -a, add_one(a) = a + 1, and
// step(a) = a < 3 ? add_one(a) : add_one(add_one(a)) (an If calling
// add_one by name, and a PartitionedCall inside a branch).
constexpr char kLibrary[] = R"pb(
  library {
    function {
      signature { name: "twice" input_arg { name: "a" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "two" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
      node_def { name: "mul" op: "Mul" input: "a" input: "two:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "y" value: "mul:z:0" }
    }
    function {
      signature { name: "negate" input_arg { name: "a" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "neg" op: "Neg" input: "a" attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "y" value: "neg:y:0" }
    }
    function {
      signature { name: "add_one" input_arg { name: "a" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
      node_def { name: "add" op: "AddV2" input: "a" input: "one:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "y" value: "add:z:0" }
    }
    function {
      signature { name: "add_two" input_arg { name: "a" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "first" op: "add_one" input: "a" }
      node_def { name: "second" op: "PartitionedCall" input: "first:y:0"
                 attr { key: "Tin" value { list { type: DT_INT32 } } }
                 attr { key: "Tout" value { list { type: DT_INT32 } } }
                 attr { key: "f" value { func { name: "add_one" } } } }
      ret { key: "y" value: "second:output:0" }
    }
    function {
      signature { name: "step" input_arg { name: "a" type: DT_INT32 }
                  output_arg { name: "y" type: DT_INT32 } }
      node_def { name: "three" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } }
      node_def { name: "small" op: "Less" input: "a" input: "three:output:0"
                 attr { key: "T" value { type: DT_INT32 } } }
      node_def { name: "pick" op: "If" input: "small:z:0" input: "a"
                 attr { key: "Tcond" value { type: DT_BOOL } }
                 attr { key: "Tin" value { list { type: DT_INT32 } } }
                 attr { key: "Tout" value { list { type: DT_INT32 } } }
                 attr { key: "then_branch" value { func { name: "add_one" } } }
                 attr { key: "else_branch" value { func { name: "add_two" } } } }
      ret { key: "y" value: "pick:output:0" }
    }
    function {
      signature { name: "below" input_arg { name: "i" type: DT_INT32 }
                  input_arg { name: "limit" type: DT_INT32 } output_arg { name: "r" type: DT_BOOL } }
      node_def { name: "less" op: "Less" input: "i" input: "limit"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "r" value: "less:z:0" }
    }
    function {
      signature { name: "loop_body" input_arg { name: "i" type: DT_INT32 }
                  input_arg { name: "limit" type: DT_INT32 }
                  output_arg { name: "i_next" type: DT_INT32 }
                  output_arg { name: "limit_out" type: DT_INT32 } }
      node_def { name: "call" op: "StatefulPartitionedCall" input: "i"
                 attr { key: "Tin" value { list { type: DT_INT32 } } }
                 attr { key: "Tout" value { list { type: DT_INT32 } } }
                 attr { key: "f" value { func { name: "step" } } } }
      ret { key: "i_next" value: "call:output:0" }
      ret { key: "limit_out" value: "limit" }
    }
    function {
      signature { name: "second_half" input_arg { name: "x" type_attr: "T" }
                  output_arg { name: "y" type_attr: "T" } attr { name: "T" type: "type" } }
      node_def { name: "dim" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
      node_def { name: "split" op: "Split" input: "dim:output:0" input: "x"
                 attr { key: "T" value { placeholder: "T" } } attr { key: "num_split" value { i: 2 } } }
      ret { key: "y" value: "split:output:1" }
    }
  })pb";

constexpr char kNodes[] = R"pb(
  node { name: "k" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "shape" value { shape {} } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "shape" value { shape {} } } }
  node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
  node { name: "case" op: "StatelessCase" input: "k" input: "x"
         attr { key: "Tin" value { list { type: DT_INT32 } } }
         attr { key: "Tout" value { list { type: DT_INT32 } } }
         attr { key: "branches" value { list {
           func { name: "twice" } func { name: "negate" } func { name: "add_one" } } } } }
  node { name: "loop" op: "While" input: "zero" input: "x"
         attr { key: "T" value { list { type: DT_INT32 type: DT_INT32 } } }
         attr { key: "cond" value { func { name: "below" } } }
         attr { key: "body" value { func { name: "loop_body" } } }
         attr { key: "parallel_iterations" value { i: 1 } } }
  node { name: "half" op: "second_half" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

class FunctionalLoweringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto def = ParseGraphDef(absl::StrCat(kNodes, kLibrary), GraphFormat::kText);
    ASSERT_TRUE(def.ok()) << def.status();
    auto session = Session::Create(*def, SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
  }

  int32_t RunInt(const std::string& fetch, int32_t k, int32_t x) {
    std::vector<Tensor> out;
    absl::Status s = session_->Run({{"k", Tensor::Scalar<int32_t>(k)},
                                    {"x", Tensor::Scalar<int32_t>(x)}},
                                   {fetch}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || out.size() != 1 || out[0].dtype() != DT_INT32) return -12345;
    return out[0].flat<int32_t>()[0];
  }

  std::unique_ptr<Session> session_;
};

TEST_F(FunctionalLoweringTest, CaseRunsTheIndexedBranchAndTheLastOutOfRange) {
  EXPECT_EQ(RunInt("case:0", 0, 5), 10);  // twice
  EXPECT_EQ(RunInt("case:0", 1, 5), -5);  // negate
  EXPECT_EQ(RunInt("case:0", 2, 5), 6);   // add_one
  EXPECT_EQ(RunInt("case:0", 7, 5), 6);   // out of range: the last branch
  EXPECT_EQ(RunInt("case:0", -1, 5), 6);
}

// i = 0; while (i < x) i = step(i): 0 1 2 3 5 7 9 for x = 8; the limit
// goes around unchanged.
TEST_F(FunctionalLoweringTest, LoopOverCallOfCondOfCalls) {
  EXPECT_EQ(RunInt("loop:0", 0, 8), 9);
  EXPECT_EQ(RunInt("loop:1", 0, 8), 8);
  EXPECT_EQ(RunInt("loop:0", 0, 0), 0);  // the body never runs
  EXPECT_EQ(RunInt("loop:0", 0, 3), 3);
}

// A polymorphic function called by name: the call's T binds its
// argument type and the placeholder attr of its Split.
TEST_F(FunctionalLoweringTest, DirectCallBindsAttrs) {
  std::vector<Tensor> out;
  absl::Status s = session_->Run({{"v", Tensor::FromVector<float>({1, 2, 3, 4})}},
                                 {"half"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].NumElements(), 2);
  EXPECT_EQ(out[0].flat<float>()[0], 3.0f);
  EXPECT_EQ(out[0].flat<float>()[1], 4.0f);
}

constexpr char kFixtures[] = "tests/fixtures/control_flow/";

// Fields of `m` (recursively) that graphrun's protos do not model; "" if
// none.
std::string UnknownFields(const google::protobuf::Message& m, const std::string& path) {
  const google::protobuf::Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) return path.empty() ? "<top>" : path;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string sub = absl::StrCat(path, "/", f->name());
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        std::string u = UnknownFields(r->GetRepeatedMessage(m, f, i), sub);
        if (!u.empty()) return u;
      }
    } else {
      std::string u = UnknownFields(r->GetMessage(m, f), sub);
      if (!u.empty()) return u;
    }
  }
  return "";
}

// Every field TensorFlow wrote into the fixtures, function libraries
// included, is one graphrun models: nothing is carried as unknown bytes.
TEST(TfFixtureProtoTest, EveryFieldIsModelled) {
  int checked = 0;
  for (const testing::FixtureModel& m : testing::ReadFixtureManifest(kFixtures)) {
    auto def = ReadGraphDefFile(absl::StrCat(kFixtures, m.name, ".pb"));
    ASSERT_TRUE(def.ok()) << m.name << ": " << def.status();
    EXPECT_EQ(UnknownFields(*def, ""), "") << m.name;
    if (m.form == "functional") {
      EXPECT_GT(def->library().function_size(), 0) << m.name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace graphrun
