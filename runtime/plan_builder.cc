#include "runtime/plan_builder.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/import.h"
#include "graph/status_macros.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "partition/const_copies.h"
#include "runtime/float_env.h"
#include "partition/partition.h"

namespace graphrun {
namespace {

// Float GEMM throughput of one core with -march=native, and memory
// bandwidth per core (shared/reference/machine_measurements.md); the
// placer's model of a CPU device.
constexpr double kCpuFlopsPerCore = 1.3e11;
constexpr double kCpuBytesPerSecondPerCore = 1.4e10;

// Parses the name of a device made as `prefix` + "/device:CPU:i".
// InvalidArgument unless `prefix` is a canonical "/job:J/replica:R/task:T",
// so that the name the placer uses is the device's own.
absl::StatusOr<placer::DeviceName> ParseOwnDeviceName(const std::string& prefix,
                                                      const std::string& name) {
  const std::string context = absl::StrCat("SessionOptions.device_prefix '", prefix,
                                           "' must be a canonical /job:J/replica:R/task:T");
  absl::StatusOr<std::string> canonical = placer::CanonicalizeDeviceName(name);
  if (!canonical.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(context, ": ", canonical.status().message()));
  }
  if (*canonical != name) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, ": device '", name, "' would be named '", *canonical, "'"));
  }
  return placer::ParseDeviceName(name);
}

}  // namespace

absl::StatusOr<placer::DeviceSet> DescribeDevices(const std::vector<Device*>& devices,
                                                  const std::string& device_prefix) {
  placer::DeviceSet set;
  const int cores = NumSchedulableCpus();
  int n = 0;
  for (const Device* d : devices) n += d->device_type() == kDeviceCpu ? 1 : 0;
  // Each virtual CPU gets its share of the cores; tensors between them are
  // handed over, not copied, but a transfer still costs a few microseconds
  // of latency.
  const double share = static_cast<double>(cores) / std::max(n, 1);
  for (const Device* d : devices) {
    GR_RETURN_IF_ERROR(ParseOwnDeviceName(device_prefix, d->name()).status());
    if (d->device_type() == kDeviceCpu) {
      GR_ASSIGN_OR_RETURN(placer::DeviceInfo info, DescribeCpuDevice(d->name(), share));
      GR_RETURN_IF_ERROR(set.AddDevice(info));
      continue;
    }
    // Other devices (GPUs): the type's model, their own memory limit; the
    // links to them are the device set's defaults for the pair's class.
    placer::DeviceInfo info = placer::DefaultDeviceInfo(d->device_type());
    info.name = d->name();
    if (d->memory_limit() > 0) info.memory_bytes = d->memory_limit();
    GR_RETURN_IF_ERROR(set.AddDevice(info));
  }
  placer::LinkRule cpu_link;
  cpu_link.src.has_type = true;  // "/device:CPU:*"
  cpu_link.src.type = "CPU";
  cpu_link.dst = cpu_link.src;
  // A Send/Recv pair plus waking the other device's thread.
  cpu_link.latency_s = 5e-6;
  cpu_link.bandwidth = 0;
  GR_RETURN_IF_ERROR(set.AddLink(cpu_link));
  return set;
}

absl::StatusOr<placer::DeviceInfo> DescribeCpuDevice(const std::string& name, double cores) {
  placer::DeviceInfo info = placer::DefaultDeviceInfo("CPU");
  info.name = name;
  GR_ASSIGN_OR_RETURN(info.parsed, placer::ParseDeviceName(name));
  if (!placer::IsCompleteDeviceName(info.parsed)) {
    return absl::InvalidArgumentError(absl::StrCat("device name '", name, "' is not complete"));
  }
  info.memory_bytes = 0;  // host memory: not modelled as a limit
  info.peak_flops = kCpuFlopsPerCore * cores;
  info.memory_bandwidth = kCpuBytesPerSecondPerCore * cores;
  // A kernel that is worth timing costs about a microsecond beyond its
  // arithmetic (allocation, Eigen setup, scheduling).
  info.launch_overhead_s = 1e-6;
  return info;
}

NodeEvaluator KernelEvaluator(Device* device) {
  return [device](const NodeDef& node, const OpDef& op_def,
                  std::vector<Tensor> inputs) -> absl::StatusOr<std::vector<Tensor>> {
    if (device == nullptr) return absl::UnavailableError("no CPU device");
    std::vector<DataType> in_types, out_types;
    GR_RETURN_IF_ERROR(
        ComputeArgTypes(op_def, AttrSlice(&node.attr(), &op_def), &in_types, &out_types));
    GR_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        KernelRegistry::Global()->CreateKernel(device, node, &op_def,
                                                               in_types, out_types));
    if (kernel->AsAsync() != nullptr) return absl::UnimplementedError("async kernel");
    OpKernelContext::Params params;
    params.device = device;
    params.op_kernel = kernel.get();
    params.inputs = inputs.data();
    params.num_inputs = static_cast<int>(inputs.size());
    CancellationManager cancellation;
    params.cancellation = &cancellation;
    OpKernelContext ctx(&params);
    {
      // Folded as the step would compute it.
      const ScopedKernelFloatEnv float_env;
      kernel->Compute(&ctx);
    }
    GR_RETURN_IF_ERROR(ctx.status());
    return std::vector<Tensor>(ctx.mutable_outputs()->begin(), ctx.mutable_outputs()->end());
  };
}

absl::StatusOr<PartitionedStep> PlaceAndPartition(const Graph& graph,
                                                  const placer::DeviceSet& devices,
                                                  const placer::CostModel& cost_model,
                                                  const PlanOptions& options) {
  GR_ASSIGN_OR_RETURN(placer::Placement placement,
                      placer::Place(graph, devices, cost_model, options.placer));
  if (options.placement_log) {
    std::string log = placer::FormatPlacementLog(graph, devices, placement, options.log_names,
                                                 options.log_removed);
    for (const std::string& w : placement.warnings) absl::StrAppend(&log, w, "\n");
    options.placement_log(log);
  }
  PartitionedStep step;
  step.summary.set_predicted_step_seconds(placement.predicted_step_time);
  step.summary.set_lower_bound_seconds(placement.lower_bound.best());
  step.summary.set_cross_device_tensors(placement.schedule.num_transfers);
  step.summary.set_cross_device_bytes(placement.schedule.transfer_bytes);
  std::set<int> used(placement.device.begin(), placement.device.end());
  for (int d : used) step.summary.add_devices(devices.devices()[d].name);
  // One CPU: the graph as it is. One device with memory of its own is still
  // partitioned, so that its kernels' host-memory arguments (a LoopCond's,
  // a Switch's predicate) get their same-device copies.
  const placer::DeviceInfo& only = devices.devices()[used.empty() ? 0 : *used.begin()];
  if (used.size() <= 1 && (only.type == "CPU" || options.placer.availability == nullptr)) {
    const std::string& device = only.name;
    GraphDef def = graph.ToGraphDef();
    for (NodeDef& n : *def.mutable_node()) n.set_device(device);
    step.partitions.emplace(device, std::move(def));
    return step;
  }
  PartitionOptions popts;
  popts.node_to_loc = [&](const Node& n) {
    return devices.devices()[placement.device[n.id()]].name;
  };
  for (const auto& d : devices.devices()) popts.devices.push_back(d.name);
  popts.get_incarnation = options.incarnation;
  if (const placer::KernelAvailability* kernels = options.placer.availability) {
    // HostMemory arguments of non-CPU kernels travel as _HostSend/_HostRecv.
    popts.host_memory = [&devices, kernels](const Node& node, bool is_output, int index,
                                            const std::string& device) {
      const int d = devices.Find(device);
      if (d < 0) return false;
      const std::string& type = devices.devices()[d].type;
      return is_output ? kernels->OutputInHostMemory(node, index, type)
                       : kernels->InputInHostMemory(node, index, type);
    };
  }
  // Consts read on other tasks are copied there instead of sent each step.
  GR_ASSIGN_OR_RETURN(step.partitions, PartitionCopyingConsts(graph, popts));
  return step;
}

absl::StatusOr<std::vector<PartitionPlan>> CreatePartitionExecutors(
    const std::map<std::string, GraphDef>& partitions, const std::vector<Device*>& devices,
    const ExecutorOptions& executor_options) {
  std::vector<PartitionPlan> out;
  for (const auto& [device_name, def] : partitions) {
    Device* device = nullptr;
    for (Device* d : devices) {
      if (d->name() == device_name) device = d;
    }
    if (device == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("a partition for device '", device_name, "', which is not here"));
    }
    PartitionPlan part;
    ImportOptions import;
    import.infer_shapes = false;
    import.allow_internal_names = true;
    GR_ASSIGN_OR_RETURN(part.graph, ImportGraphDef(def, import));
    GR_ASSIGN_OR_RETURN(part.executor, Executor::Create(part.graph.get(), device, executor_options));
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace graphrun
