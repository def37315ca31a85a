// Where this build's kernels can run, for the placer: the runtime's
// KernelAvailability (placer/placer.h), asked of the KernelRegistry. The
// placer itself knows no kernels; devices' types, memory and speed reach it
// through the DeviceSet, what they can run through this.
#ifndef GRAPHRUN_RUNTIME_KERNEL_AVAILABILITY_H_
#define GRAPHRUN_RUNTIME_KERNEL_AVAILABILITY_H_

#include <memory>
#include <string>
#include <vector>

#include "placer/placer.h"

namespace graphrun {

// A device type this build has no kernels for at all (GPU in a build
// without GPU kernels) is treated as able to run every op when
// `assume_unbuilt_types_run_everything` (for planning with `graphrun place`
// on hardware described by a file), and as able to run nothing otherwise.
// `cpu_only_ops` lists ops assumed to have no kernel on any other device
// type. HostMemory inputs come from the kernels' registrations.
struct RegistryAvailabilityOptions {
  bool assume_unbuilt_types_run_everything = false;
  std::vector<std::string> cpu_only_ops;
};
std::unique_ptr<placer::KernelAvailability> RegistryAvailability(
    RegistryAvailabilityOptions options = {});

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_KERNEL_AVAILABILITY_H_
