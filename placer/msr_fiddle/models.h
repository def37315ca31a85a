// The seven msr-fiddle/dnn-partitioning placement inputs (BERT-3 inference
// and training, GNMT, Inception-V3, ResNet-50 inference at operator level,
// ResNet-50 training at layer and operator level), converted by
// convert.py into a GraphDef, a cost profile and a cluster each, loaded
// for tests and benchmarks. The figures from manifest.json were computed by
// the converter from the original inputs.
#ifndef GRAPHRUN_PLACER_MSR_FIDDLE_MODELS_H_
#define GRAPHRUN_PLACER_MSR_FIDDLE_MODELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/placer.h"

namespace graphrun {
namespace placer {

struct MsrModel {
  std::string name;
  std::unique_ptr<Graph> graph;
  DeviceSet devices;
  CostModel costs;
  // Device indices: the accelerators (GPU) and the first CPU.
  std::vector<int> gpus;
  int cpu0 = -1;
  // From manifest.json.
  int nodes = 0;
  int edges = 0;
  int64_t memory_limit = 0;  // bytes per GPU
  double sum_cpu_s = 0;      // every node's CPU time
  double sum_gpu_s = 0;      // every node's accelerator time
  int64_t total_size = 0;    // every node's bytes
  int colocation_groups = 0;
};

// The model names, smallest first.
std::vector<std::string> MsrModelNames();

// Loads `name` from `dir` (placer/msr_fiddle, relative to the runfiles
// root in tests). Errors name the file.
absl::StatusOr<MsrModel> LoadMsrModel(const std::string& dir, const std::string& name);

// Every node has a kernel on every device type; the profiles' unsupported
// entries say where not.
const KernelAvailability& MsrAvailability();

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_MSR_FIDDLE_MODELS_H_
