// A two-layer perceptron built with graphrun's C++ API and run in a Session:
//
//   x [batch, 4] -> MatMul w1 [4, 3] -> BiasAdd b1 -> Relu    ("hidden")
//                -> MatMul w2 [3, 2] -> BiasAdd b2 -> Softmax ("probs")
//
// It feeds a batch of two rows, fetches both layers, prints them and checks
// them against the same arithmetic done here with plain loops. Exits 0 when
// they agree, 1 when they do not, 2 when graphrun reports an error.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/cc/cc.h"
#include "runtime/session.h"

namespace {

using graphrun::DT_FLOAT;
using graphrun::GraphDef;
using graphrun::PartialShape;
using graphrun::Session;
using graphrun::SessionOptions;
using graphrun::Tensor;
using graphrun::TensorShape;

constexpr int kBatch = 2, kIn = 4, kHidden = 3, kOut = 2;

// Row-major weights and biases, small enough to check by eye.
const std::vector<float> kW1 = {0.5f,  -1.0f, 0.25f,      //
                                1.0f,  0.5f,  -0.5f,      //
                                -0.5f, 0.0f,  1.0f,       //
                                0.25f, 1.0f,  0.5f};      // [4, 3]
const std::vector<float> kB1 = {-1.0f, -0.2f, -4.5f};     // [3]
const std::vector<float> kW2 = {1.0f,  -1.0f,             //
                                0.5f,  0.5f,              //
                                -1.0f, 2.0f};             // [3, 2]
const std::vector<float> kB2 = {0.0f, 0.5f};              // [2]
const std::vector<float> kX = {1.0f,  2.0f, 3.0f, 4.0f,   //
                               -1.0f, 0.5f, 0.0f, 2.0f};  // [2, 4]

// The graph; its first error (it names the node) if a builder failed.
absl::StatusOr<GraphDef> BuildMlp() {
  namespace cc = graphrun::cc;
  cc::Scope root = cc::Scope::NewRootScope();
  cc::Output x =
      cc::Placeholder(root.WithOpName("x"), DT_FLOAT,
                      cc::PlaceholderAttrs().Shape(PartialShape({-1, kIn})));

  cc::Scope l1 = root.NewSubScope("layer1");
  cc::Output w1 =
      cc::Const(l1.WithOpName("w"), kW1, TensorShape({kIn, kHidden}));
  cc::Output b1 = cc::Const(l1.WithOpName("b"), kB1);
  cc::Output hidden = cc::Relu(root.WithOpName("hidden"),
                               cc::BiasAdd(l1, cc::MatMul(l1, x, w1), b1));

  cc::Scope l2 = root.NewSubScope("layer2");
  cc::Output w2 =
      cc::Const(l2.WithOpName("w"), kW2, TensorShape({kHidden, kOut}));
  cc::Output b2 = cc::Const(l2.WithOpName("b"), kB2);
  cc::Softmax(root.WithOpName("probs"),
              cc::BiasAdd(l2, cc::MatMul(l2, hidden, w2), b2));
  return root.ToGraphDef();
}

// out[r][c] = act(sum_k in[r][k] * w[k][c] + b[c]), row-major.
std::vector<float> Dense(const std::vector<float>& in, int rows, int in_dim,
                         const std::vector<float>& w,
                         const std::vector<float>& b, bool relu) {
  const int out_dim = static_cast<int>(b.size());
  std::vector<float> out(rows * out_dim);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < out_dim; ++c) {
      float sum = b[c];
      for (int k = 0; k < in_dim; ++k)
        sum += in[r * in_dim + k] * w[k * out_dim + c];
      out[r * out_dim + c] = relu && sum < 0 ? 0.0f : sum;
    }
  }
  return out;
}

std::vector<float> SoftmaxRows(const std::vector<float>& logits, int rows) {
  const int cols = static_cast<int>(logits.size()) / rows;
  std::vector<float> out(logits.size());
  for (int r = 0; r < rows; ++r) {
    float max = logits[r * cols];
    for (int c = 1; c < cols; ++c) max = std::fmax(max, logits[r * cols + c]);
    float total = 0;
    for (int c = 0; c < cols; ++c) {
      out[r * cols + c] = std::exp(logits[r * cols + c] - max);
      total += out[r * cols + c];
    }
    for (int c = 0; c < cols; ++c) out[r * cols + c] /= total;
  }
  return out;
}

// Prints `got` as a matrix and compares it with `want`; false on mismatch.
bool PrintAndCheck(const std::string& name, const Tensor& got,
                   const std::vector<float>& want) {
  const int rows = got.dims() == 2 ? static_cast<int>(got.dim_size(0)) : 0;
  const int cols = got.dims() == 2 ? static_cast<int>(got.dim_size(1)) : 0;
  std::printf("%s %s:\n", name.c_str(), got.shape().DebugString().c_str());
  if (got.dtype() != DT_FLOAT || rows * cols != static_cast<int>(want.size())) {
    std::printf("  MISMATCH: expected %zu float values in 2 dimensions\n",
                want.size());
    return false;
  }
  bool ok = true;
  auto values = got.flat<float>();
  for (int r = 0; r < rows; ++r) {
    std::printf(" ");
    for (int c = 0; c < cols; ++c) std::printf(" %9.6f", values[r * cols + c]);
    std::printf("\n");
    for (int c = 0; c < cols; ++c) {
      const int i = r * cols + c;
      if (std::fabs(values[i] - want[i]) >
          1e-5f * (1.0f + std::fabs(want[i]))) {
        std::printf("  MISMATCH at [%d,%d]: got %.7f, computed by hand %.7f\n",
                    r, c, values[i], want[i]);
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

int main() {
  absl::StatusOr<GraphDef> graph = BuildMlp();
  if (!graph.ok()) {
    std::fprintf(stderr, "building the graph: %s\n",
                 graph.status().ToString().c_str());
    return 2;
  }
  std::printf("graph: %d nodes\n", graph->node_size());

  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Create(*graph, SessionOptions());
  if (!session.ok()) {
    std::fprintf(stderr, "creating the session: %s\n",
                 session.status().ToString().c_str());
    return 2;
  }

  Tensor x = Tensor::FromVector(kX, TensorShape({kBatch, kIn}));
  std::vector<Tensor> outputs;
  absl::Status run = (*session)->Run({{"x", x}}, {"hidden:0", "probs:0"},
                                     /*targets=*/{}, &outputs);
  if (!run.ok()) {
    std::fprintf(stderr, "running the graph: %s\n", run.ToString().c_str());
    return 2;
  }

  const std::vector<float> want_hidden = Dense(kX, kBatch, kIn, kW1, kB1, true);
  const std::vector<float> want_probs =
      SoftmaxRows(Dense(want_hidden, kBatch, kHidden, kW2, kB2, false), kBatch);
  bool ok = PrintAndCheck("hidden", outputs[0], want_hidden);
  ok = PrintAndCheck("probs", outputs[1], want_probs) && ok;
  std::printf(ok ? "OK: matches the values computed by hand\n"
                 : "FAILED: differs from the values computed by hand\n");
  return ok ? 0 : 1;
}
