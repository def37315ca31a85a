// Text and picture output of a Placement: the log_device_placement lines,
// the `graphrun place` summary and the Graphviz DOT picture (declared in
// placer.h), plus the small formatting helpers they share.
#ifndef GRAPHRUN_PLACER_PLACEMENT_FORMAT_H_
#define GRAPHRUN_PLACER_PLACEMENT_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "placer/device_set.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {

// "830 ns", "12.4 us", "3.21 ms", "1.50 s".
std::string FormatSeconds(double seconds);
// "512 B", "1.5 KiB", "3.0 MiB", "2.00 GiB".
std::string FormatBytes(int64_t bytes);
// "GPU:0" when every device is in one task, else the full name.
std::string ShortDeviceName(const DeviceInfo& device, bool one_task);

// The scheduler's messages speak of "task N" and "device N": names the
// node (and op) and the device instead (full names or "GPU:0").
std::string NameTasksAndDevices(const std::string& msg, const Graph& graph,
                                const DeviceSet& devices, bool full_names);

// Why the winning plan won, for the reasons of the nodes whose device it
// decided: "" for a list-scheduled spread plan (the per-node finish times
// say it); else which plan won against what, or that no spread plan fit in
// memory and why. `plans` are the outcomes with nodes and devices named.
std::string PlanNote(const std::string& plan, double predicted_step_time,
                     const std::vector<PlanOutcome>& plans, double min_spread_gain);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_PLACEMENT_FORMAT_H_
