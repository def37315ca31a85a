#include "runtime/step_costs.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace graphrun {

StepCostRecorder::StepCostRecorder(const GraphDef& graph) {
  for (const NodeDef& n : graph.node()) {
    op_of_[n.name()] = n.op();
    // Constants and variables hold their buffers for the whole step.
    const int64_t held = placer::HeldBytes(n);
    if (held >= 0) costs_.SetPersistentBytes(n.name(), n.op(), held);
  }
}

void StepCostRecorder::Add(const StepStats& stats) {
  for (const DeviceStepStats& dev : stats.dev_stats()) {
    for (const NodeExecStats& n : dev.node_stats()) {
      auto it = op_of_.find(n.node_name());
      if (it == op_of_.end()) continue;
      std::vector<int64_t> bytes;
      for (const NodeOutput& out : n.output()) {
        bytes.push_back(out.tensor_description().allocation_description().requested_bytes());
      }
      const int64_t nanos = n.op_end_rel_nanos() - n.op_start_rel_nanos();
      costs_.AddMeasurement(n.node_name(), it->second, dev.device(),
                            static_cast<double>(std::max<int64_t>(nanos, 0)) * 1e-9, bytes);
    }
  }
}

}  // namespace graphrun
