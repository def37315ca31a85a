#include "tools/place_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "kernels/kernel_registry.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"
#include "placer/gpu_select.h"
#include "runtime/gpu/gpu_info_source.h"
#include "placer/placer.h"
#include "runtime/kernel_availability.h"

namespace graphrun {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "graphrun place: %s\n", s.ToString().c_str());
  return 1;
}

// This machine: CPU devices plus the GPUs the selection picks.
absl::StatusOr<placer::DeviceSet> LocalDevices(const PlaceCommandArgs& args,
                                               std::string* note) {
  placer::DeviceSet set = placer::LocalDeviceSet(args.cpu_devices, 0);
  placer::GpuSelectOptions select;
  select.gpus = args.gpus;
  select.num_gpus = args.num_gpus;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    select.has_cuda_visible_devices = true;
    select.cuda_visible_devices = v;
  }
  select.claim = false;  // planning only: nothing runs on them
  std::unique_ptr<placer::GpuInfoSource> source = DefaultGpuInfoSource();
  placer::GpuClaims claims;
  GR_ASSIGN_OR_RETURN(placer::GpuChoice choice,
                      placer::SelectGpus(select, source.get(), &claims));
  *note = placer::FormatGpuChoice(choice);
  auto all = source->Query();
  for (size_t i = 0; i < choice.selected.size(); ++i) {
    placer::DeviceInfo gpu = placer::DefaultDeviceInfo("GPU");
    gpu.name = absl::StrCat("/job:localhost/replica:0/task:0/device:GPU:", i);
    GR_ASSIGN_OR_RETURN(gpu.parsed, placer::ParseDeviceName(gpu.name));
    if (all.ok()) {
      for (const placer::GpuStatus& s : *all) {
        if (s.index == choice.selected[i] && s.total_memory > 0) {
          gpu.memory_bytes = s.total_memory;
        }
      }
    }
    GR_RETURN_IF_ERROR(set.AddDevice(gpu));
  }
  return set;
}

}  // namespace

absl::StatusOr<PlacedGraph> LoadAndPlace(const PlaceCommandArgs& args) {
  PlacedGraph out;
  GR_ASSIGN_OR_RETURN(GraphDef graph_def, ReadGraphDefFile(args.graph));
  GR_ASSIGN_OR_RETURN(out.graph, ImportGraphDef(graph_def));
  std::string gpu_note;
  if (args.devices_file.empty()) {
    GR_ASSIGN_OR_RETURN(out.devices, LocalDevices(args, &gpu_note));
  } else {
    GR_ASSIGN_OR_RETURN(out.devices, placer::LoadClusterDescription(args.devices_file));
  }
  if (!args.costs_file.empty()) GR_RETURN_IF_ERROR(out.costs.LoadProfile(args.costs_file));
  // A described cluster may have device types this build has no kernels
  // for (GPU in a CPU-only build): plan as if every op ran there, except
  // the ops named CPU-only.
  RegistryAvailabilityOptions avail_options;
  avail_options.assume_unbuilt_types_run_everything = true;
  avail_options.cpu_only_ops = args.cpu_only_ops;
  std::unique_ptr<placer::KernelAvailability> avail =
      RegistryAvailability(avail_options);
  placer::PlacerOptions options;
  options.allow_soft_placement = args.allow_soft_placement;
  options.respect_memory = args.respect_memory;
  options.availability = avail.get();
  GR_ASSIGN_OR_RETURN(out.placement,
                      placer::Place(*out.graph, out.devices, out.costs, options));
  out.notes = gpu_note;
  if (!out.notes.empty() && out.notes.back() != '\n') out.notes += '\n';
  for (const std::string& type : out.devices.DeviceTypes()) {
    if (!KernelRegistry::Global()->HasKernelsForDeviceType(type)) {
      absl::StrAppend(&out.notes, "note: this build has no ", type,
                      " kernels; the plan assumes every op has one there",
                      args.cpu_only_ops.empty() ? "" : " except --cpu_only_ops", "\n");
    }
  }
  return out;
}

int PlaceCommand(const PlaceCommandArgs& args) {
  auto placed = LoadAndPlace(args);
  if (!placed.ok()) return Fail(placed.status());
  std::cout << placed->notes;
  if (args.explain) {
    std::cout << placer::FormatPlacementLog(*placed->graph, placed->devices,
                                            placed->placement);
  }
  std::cout << placer::FormatPlacementSummary(*placed->graph, placed->devices,
                                              placed->placement);
  if (!args.dot_path.empty()) {
    absl::Status s = WriteFileAtomically(
        args.dot_path, placer::PlacementToDot(*placed->graph, placed->devices,
                                              placed->placement, placed->costs));
    if (!s.ok()) return Fail(s);
    std::cout << "wrote " << args.dot_path << " (render: dot -Tsvg " << args.dot_path
              << " -o placed.svg)\n";
  }
  return 0;
}

}  // namespace graphrun
