#include "tools/inspect.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "graph/graph_io.h"

namespace graphrun {
namespace {

// A loop whose body uses an op graphrun does not define; the library also
// holds a function nothing uses.
constexpr char kLoop[] = R"pb(
  node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "w" op: "StatelessWhile" input: "n"
         attr { key: "T" value { list { type: DT_INT32 } } }
         attr { key: "cond" value { func { name: "cond" } } }
         attr { key: "body" value { func { name: "body" } } } }
  node { name: "out" op: "Identity" input: "w" attr { key: "T" value { type: DT_INT32 } } }
  library {
    function {
      signature { name: "cond" input_arg { name: "i" type: DT_INT32 }
                  output_arg { name: "r" type: DT_BOOL } }
      node_def { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} } } } }
      node_def { name: "less" op: "Less" input: "zero:output:0" input: "i"
                 attr { key: "T" value { type: DT_INT32 } } }
      ret { key: "r" value: "less:z:0" }
    }
    function {
      signature { name: "body" input_arg { name: "i" type: DT_INT32 }
                  output_arg { name: "i_next" type: DT_INT32 } }
      node_def { name: "weird" op: "NoSuchOp" input: "i" }
      ret { key: "i_next" value: "weird:y:0" }
    }
    function { signature { name: "unused" } node_def { name: "u" op: "UnusedOp" } }
  })pb";

TEST(InspectTest, LooksInsideTheFunctionsTheGraphUses) {
  auto def = ParseGraphDef(kLoop, GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  InspectReport report = InspectGraph(*def, InspectOptions());
  const std::string& s = report.summary;
  EXPECT_TRUE(absl::StrContains(s, "function library: 3 functions, 2 used")) << s;
  EXPECT_TRUE(absl::StrContains(
      s, "NoSuchOp (the op is not registered in graphrun): weird (in function body)"))
      << s;
  // Lowered at import, so runnable; unused functions do not count.
  EXPECT_FALSE(absl::StrContains(s, "StatelessWhile (")) << s;
  EXPECT_FALSE(absl::StrContains(s, "UnusedOp")) << s;
  // The structure is the graph as written: the loop's output is used.
  EXPECT_TRUE(absl::StrContains(s, "n: int32 <unknown>")) << s;
  EXPECT_TRUE(absl::StrContains(s, "out: int32")) << s;
  // The verdict is the strict import's, which lowers the loop.
  EXPECT_FALSE(report.validation.ok());
  EXPECT_TRUE(absl::StrContains(report.validation.message(),
                                "function 'body': node 'weird' (NoSuchOp): Op type "
                                "not registered 'NoSuchOp'"))
      << report.validation;
}

TEST(InspectTest, RegisteredOpsListsKernelDtypesPerDevice) {
  const std::string table = RegisteredOpsTable();
  // Linked with the segment kernels only: their ops list the CPU dtypes...
  EXPECT_TRUE(absl::StrContains(
      table, "SparseSegmentMean                        CPU: bfloat16,double,float,half GPU: -"))
      << table;
  // ...an op with no kernel in this binary says so.
  EXPECT_TRUE(absl::StrContains(table, "\nMatMul                                   CPU: - GPU: -"))
      << table;
  EXPECT_TRUE(absl::StrContains(table, " ops registered: ")) << table;
}

}  // namespace
}  // namespace graphrun
