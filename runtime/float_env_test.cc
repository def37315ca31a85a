// Kernels run as TensorFlow's do: subnormal results flushed to zero and
// subnormal inputs read as zero, on the calling thread, on the intra-op
// pool's threads and in constant folding, while the caller's own
// floating-point mode is left as it was. The expected values are
// TensorFlow's (2.21, CPU, a v1 Session): for x = [1e-30, 3e-30, 1e-39, 1],
// x * 1e-10 gave [0, 0, 0, 1e-10] and x * 1e10 gave [1e-20, 3e-20, 0, 1e10]
// (float32 values, printed rounded).
#include "runtime/float_env.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

std::string ScalarConst(const std::string& name, float v) {
  return "node { name: '" + name +
         "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: " +
         std::to_string(v) + " } } } }\n";
}

std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                   const std::string& b) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

// y = x * 1e-10, z = x * 1e10, folded = 1e-30 * 1e-10 (all constants).
GraphDef TestGraph() {
  std::string text =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  text += "node { name: 'tiny' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
          "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } "
          "float_val: 1e-10 } } } }\n";
  text += "node { name: 'small' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
          "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } "
          "float_val: 1e-30 } } } }\n";
  text += ScalarConst("big", 1e10f);
  text += Binary("y", "Mul", "x", "tiny") + Binary("z", "Mul", "x", "big") +
          Binary("folded", "Mul", "small", "tiny");
  auto g = ParseGraphDef(text, GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

Tensor Floats(const std::vector<float>& v) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[static_cast<int64_t>(i)] = v[i];
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

TEST(FloatEnvTest, SubnormalsAreFlushedAsTensorFlowDoes) {
  auto s = Session::Create(TestGraph(), SessionOptions());
  ASSERT_TRUE(s.ok()) << s.status();
  const unsigned before = float_env::Get();
  std::vector<Tensor> out;
  const absl::Status st =
      (*s)->Run({{"x", Floats({1e-30f, 3e-30f, 1e-39f, 1.0f})}}, {"y", "z", "folded"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  // The caller's mode is its own again.
  EXPECT_EQ(float_env::Get(), before);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0.0f, 0.0f, 0.0f, 1e-10f}));
  // A subnormal input reads as zero: 1e-39 * 1e10 is 0, not 1e-29.
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1e-30f * 1e10f, 3e-30f * 1e10f, 0.0f, 1e10f}));
  EXPECT_EQ(out[2].flat<float>()[0], 0.0f);
}

TEST(FloatEnvTest, IntraOpPoolThreadsFlushToo) {
  // Large enough that the Mul runs in pieces on the device's pool: every
  // element, whichever thread computed it, is flushed.
  SessionOptions options;
  options.intra_op_threads = 4;
  auto s = Session::Create(TestGraph(), options);
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t n = 1 << 20;
  Tensor x(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) x.flat<float>()[i] = 1e-30f;
  std::vector<Tensor> out;
  const absl::Status st = (*s)->Run({{"x", x}}, {"y"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += out[0].flat<float>()[i] != 0.0f ? 1 : 0;
  EXPECT_EQ(nonzero, 0);
}

TEST(FloatEnvTest, ScopeSetsAndRestores) {
  volatile float a = 1e-30f, b = 1e-10f;
  {
    const ScopedKernelFloatEnv env;
    EXPECT_EQ(a * b, 0.0f);
  }
#ifdef GRAPHRUN_HAVE_MXCSR
  // Outside, this thread keeps IEEE subnormals (the test's default mode).
  EXPECT_GT(a * b, 0.0f);
  EXPECT_LT(a * b, 1.2e-38f);
#endif
}

}  // namespace
}  // namespace graphrun
