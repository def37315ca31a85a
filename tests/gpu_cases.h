// The GPU kernels' consistency cases: one node per case (the op on the
// device under test, its float inputs fed, its int and bool arguments as
// constants on the CPU), covering every op with a GPU kernel and the
// layouts, paddings and broadcasts where the GPU kernels take different
// paths. Run on a real GPU by gpu_consistency_test and on the fake GPU (the
// GPU kernels over host launchers) by gpu_kernels_fake_test, each against
// the CPU kernels on the same inputs. Test-only.
#ifndef GRAPHRUN_TESTS_GPU_CASES_H_
#define GRAPHRUN_TESTS_GPU_CASES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "runtime/session.h"

namespace graphrun {
namespace testing {

struct GpuOpCase {
  std::string op;
  std::vector<TensorShape> inputs;  // float placeholders, fed random values
  float lo = -2, hi = 2;
  std::string attrs;  // extra NodeDef attrs, text format
  double tol = 1e-5;
  // Constant inputs (int32/int64 axes, shapes, indices), by input slot; the
  // float inputs fill the other slots in order.
  std::map<int, Tensor> consts;
  std::string type_attr = "T";  // the float type attr ("" for none)
  int outputs = 1;              // outputs compared
  // An NCHW case whose CPU kernel takes only NHWC: on the CPU the op runs
  // with `cpu_attrs` and `cpu_consts` on the 4-D inputs transposed to NHWC,
  // its 4-D outputs transposed back unless `cpu_outputs_as_they_are` (a
  // filter's gradient) (RunNhwcOnCpu).
  bool cpu_in_nhwc = false;
  bool cpu_outputs_as_they_are = false;
  std::string cpu_attrs;
  std::map<int, Tensor> cpu_consts;
};

std::vector<GpuOpCase> AllGpuOpCases();

// The gradients' cases (gpu_grad_cases.cc), part of AllGpuOpCases.
void AddGradientCases(std::vector<GpuOpCase>* cases);

// A cpu_in_nhwc case on the CPU: its outputs in the case's NCHW layout.
absl::StatusOr<std::vector<Tensor>> RunNhwcOnCpu(const GpuOpCase& c,
                                                 const std::vector<Tensor>& inputs);

// A case's float inputs, drawn from [lo, hi) with seeds from `*seed` on.
std::vector<Tensor> InputsOf(const GpuOpCase& c, uint32_t* seed);

// "Op [shape] attrs", for failure messages.
std::string Describe(const GpuOpCase& c);

// Runs the case's graph, its op on `device`, in a session made with
// `options` (the optimizer off); the op's first c.outputs outputs.
absl::StatusOr<std::vector<Tensor>> RunCase(const GpuOpCase& c, const std::string& device,
                                            SessionOptions options,
                                            const std::vector<Tensor>& inputs);

// Every case on the CPU and on /device:GPU:0 of a session made with
// `gpu_options()`: a test failure for each op that fails or disagrees
// beyond its tolerance (other dtypes than float: bit for bit).
void ExpectEveryCaseAgrees(const std::function<SessionOptions()>& gpu_options);

// Whether `got` (a GPU's result) agrees with `want` (the CPU's or
// TensorFlow's): both float, the same shape, NaN exactly where `want` has
// NaN, the same infinities, and every other element within `tol` of
// `want`'s relative to max(1, |want|). Otherwise false, with the first
// disagreement in *why.
bool FloatsAgree(const Tensor& want, const Tensor& got, double tol, std::string* why);

// For a model run with its nodes asked onto GPU 0 (`metadata` with the
// partition graphs): a test failure for each float compute op (a
// convolution, product, batch norm, pooling, softmax, mean) left on a CPU,
// and, where the model has a while loop, unless the GPU's partition has the
// loop's Enter, Merge and Switch nodes.
void ExpectModelOnGpu(const std::string& model, const RunMetadata& metadata);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_GPU_CASES_H_
