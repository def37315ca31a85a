#include "placer/msr_fiddle/models.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace placer {

std::vector<std::string> MsrModelNames() {
  return {"gnmt_inference",         "bert3_inference",          "inceptionv3_inference",
          "resnet50_training_layers", "bert3_training",         "resnet50_inference_ops",
          "resnet50_training_ops"};
}

const KernelAvailability& MsrAvailability() {
  static const KernelAvailability* all =
      FunctionAvailability([](const Node&, absl::string_view) { return true; }).release();
  return *all;
}

absl::StatusOr<MsrModel> LoadMsrModel(const std::string& dir, const std::string& name) {
  MsrModel m;
  m.name = name;
  const std::string base = absl::StrCat(dir, "/", name);
  GR_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDefFile(base + ".pbtxt"));
  GR_ASSIGN_OR_RETURN(m.graph, ImportGraphDef(def));
  GR_ASSIGN_OR_RETURN(m.devices, LoadClusterDescription(base + ".cluster.json"));
  GR_RETURN_IF_ERROR(m.costs.LoadProfile(base + ".costs.json"));
  for (int d = 0; d < m.devices.size(); ++d) {
    const std::string& type = m.devices.devices()[d].type;
    if (type == "GPU") m.gpus.push_back(d);
    if (type == "CPU" && m.cpu0 < 0) m.cpu0 = d;
  }

  const std::string manifest_path = absl::StrCat(dir, "/manifest.json");
  GR_ASSIGN_OR_RETURN(std::string json, ReadFileToString(manifest_path));
  google::protobuf::Struct manifest;
  if (!google::protobuf::util::JsonStringToMessage(json, &manifest).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(manifest_path, " is not valid JSON"));
  }
  auto it = manifest.fields().find(name);
  if (it == manifest.fields().end() || !it->second.has_struct_value()) {
    return absl::NotFoundError(absl::StrCat(manifest_path, " has no model '", name, "'"));
  }
  const auto& f = it->second.struct_value().fields();
  auto num = [&](const char* key) -> double {
    auto k = f.find(key);
    return k == f.end() ? 0 : k->second.number_value();
  };
  m.nodes = static_cast<int>(num("nodes"));
  m.edges = static_cast<int>(num("edges"));
  m.memory_limit = static_cast<int64_t>(num("memory_limit_bytes"));
  m.sum_cpu_s = num("sum_cpu_ms") * 1e-3;
  m.sum_gpu_s = num("sum_gpu_ms") * 1e-3;
  m.total_size = static_cast<int64_t>(num("total_size_bytes"));
  m.colocation_groups = static_cast<int>(num("colocation_groups"));
  return m;
}

}  // namespace placer
}  // namespace graphrun
